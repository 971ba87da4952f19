// The pass pipeline over typed IR: which passes run at each -O level, and
// the switches a programmer uses to watch them (--dump-after, --time-passes,
// --disable-pass, --stats, --verify-each).
#pragma once

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/IR.h"
#include "llvm/Support/raw_ostream.h"

namespace pydd {

struct PassOptions {
  unsigned optLevel = 3;
  std::vector<std::string> disabled;
  std::vector<std::string> dumpAfter;  // pass names; "sema" dumps the input
  bool timePasses = false;
  bool verifyEach = false;   // run the IR verifier after sema and every pass
  bool printStats = false;   // what each pass did, after the pipeline
  bool boundsCheck = false;  // indices may raise IndexError (passes must not move them freely)
};

/// What a pass sees besides the function it rewrites.
struct PassContext {
  PassContext(const Module& m, const PassOptions& o, std::map<std::string, unsigned>& s)
      : module(m), options(o), stats(s) {}

  const Module& module;
  const PassOptions& options;
  /// Counters a pass bumps ("expressions hoisted"); --stats prints them.
  std::map<std::string, unsigned>& stats;
  /// Declares a new local of `f` for a compiler temporary and returns its
  /// name: `hint` followed by `__` and the smallest number no variable of
  /// `f` has (the source cannot hold a `__`-numbered name that sema would
  /// not have seen).
  std::string newLocal(Function& f, const std::string& hint, const Type& type, SourceLoc loc);
  /// Moves the expression in `slot` into a new local of `f` (named after
  /// `hint`): returns the assignment `local = expression`, for the pass to
  /// place, and leaves a read of the local in `slot`.
  StmtPtr spill(Function& f, ExprPtr& slot, const std::string& hint);

 private:
  std::string freshName(const Function& f, const std::string& hint);
  /// The names a function binds and the next number to try per hint, so a
  /// fresh name costs O(1) rather than a scan of every local per candidate
  /// (which made a function with thousands of temporaries cubic to compile).
  struct NameTable {
    size_t indexed = 0;  // params and locals already in `names`
    std::unordered_set<std::string> names;
    std::map<std::string, unsigned> next;
  };
  std::map<const Function*, NameTable> Names;
};

/// Names of every registered pass, in pipeline order.
std::vector<std::string> passNames();

/// Runs the pipeline on `m`, printing the IR after each pass named in
/// `dumpAfter` to `dump`. Returns false (with a message on `errs`) when an
/// option names a pass that does not exist, or when the verifier finds a
/// pass broke the IR (an internal error).
bool runPasses(Module& m, const PassOptions& options, llvm::raw_ostream& dump, llvm::raw_ostream& errs);

}  // namespace pydd
