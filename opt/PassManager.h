// The pass pipeline over typed IR: which passes run at each -O level, and
// the switches a programmer uses to watch them (--dump-after, --time-passes,
// --disable-pass).
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/Support/raw_ostream.h"

namespace pydd {

struct PassOptions {
  unsigned optLevel = 3;
  std::vector<std::string> disabled;
  std::vector<std::string> dumpAfter;  // pass names; "sema" dumps the input
  bool timePasses = false;
};

/// Names of every registered pass, in pipeline order.
std::vector<std::string> passNames();

/// Runs the pipeline on `m`, printing the IR after each pass named in
/// `dumpAfter` to `dump`. Returns false (with a message on `errs`) when an
/// option names a pass that does not exist.
bool runPasses(Module& m, const PassOptions& options, llvm::raw_ostream& dump, llvm::raw_ostream& errs);

}  // namespace pydd
