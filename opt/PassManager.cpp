#include "opt/PassManager.h"

#include <algorithm>

#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Timer.h"
#include "opt/AllocHoist.h"
#include "opt/ConstantFold.h"
#include "opt/DCE.h"
#include "opt/DeferDivisionChecks.h"
#include "opt/FilterLoops.h"
#include "opt/ForwardSubst.h"
#include "opt/Fuse.h"
#include "opt/SampledFusion.h"
#include "opt/PrefetchGathers.h"
#include "opt/ScanLoops.h"
#include "opt/SparseLayout.h"
#include "opt/LICM.h"
#include "opt/MergeLoops.h"
#include "opt/NonzeroRows.h"
#include "opt/PairedRows.h"
#include "opt/OverwrittenZeros.h"
#include "opt/PromoteAccumulators.h"
#include "opt/ShortDots.h"
#include "opt/ZeroProducts.h"

namespace pydd {
namespace {

struct PassInfo {
  const char* name;
  const char* description;
  unsigned minLevel;  // runs at -O<minLevel> and above
  void (*run)(Function&, PassContext&);
};

const std::vector<PassInfo>& registry() {
  static const std::vector<PassInfo> passes = {
      {"fold", "constant folding", 1, [](Function& f, PassContext&) { constantFold(f); }},
      // Substitution first: it puts a named array back into the expression
      // that uses it, where sampling and fusion see the whole computation.
      {"subst", "forward substitution of single-use arrays", 2, forwardSubstitute},
      // Before fusion and LICM, which would compute where(c)'s argument
      // into an array that the filtered loop never needs.
      {"filter", "loops over where(c) test the elements of c", 2, filterWhereLoops},
      // Sampling comes first: a product that LICM hoisted whole would be
      // computed densely once, where sampling computes only nnz entries.
      {"sample", "sampled fusion of dense operands of sparse products", 2, sampleSparseProducts},
      // After sampling, which makes the sampled products whose operands it
      // copies once per loop.
      {"layout", "layout conversions of sparse products' dense operands", 2, exposeSparseLayouts},
      // LICM runs before fusion, so that a whole-array operation that is
      // invariant leaves the loop before fusion makes it a loop nest of its
      // own, and again after it, for the extents and the run-time tests
      // fusion evaluates before each fused loop. --disable-pass=licm
      // disables both.
      {"licm", "loop-invariant code motion", 2, loopInvariantCodeMotion},
      {"fuse", "dense element-wise fusion", 2, fuseElementwise},
      // Straight after fusion, whose loops it merges: LICM would move the
      // statements between them.
      {"merge", "merging of consecutive fused loops", 2, mergeFusedLoops},
      // After fusion and merging, which give the element trees their final
      // shape; a product's guard reads the same elements the product does.
      {"zeromul", "products with a zero skip their costly operand", 2, guardZeroProducts},
      // Before LICM, which hoists the extents and stride tests it writes.
      {"dots", "short dot products of rows written as loops", 2, expandShortDots},
      {"licm", "loop-invariant code motion (after fusion)", 2, loopInvariantCodeMotion},
      // Before allocation hoisting, so that an array it hoists out of a
      // loop is not refilled with zeros each iteration.
      {"overwrite", "arrays of zeros a loop overwrites whole are allocated empty", 2, skipOverwrittenZeroFills},
      {"alloc", "allocation hoisting", 2, hoistAllocations},
      // Beside promote, which keeps other accumulators in registers; after
      // overwrite, which must see the row loop's read of out[r].
      {"nzrows", "sums into out[r] over S.nonzeros() or S.row(r) run row by row", 2, sumNonzeroRows},
      // Last: the element loops it unrolls are fusion's, with the extents
      // LICM hoisted; it copies the loops around them.
      {"promote", "short array accumulators kept in registers", 2, promoteAccumulators},
      {"dce", "dead code elimination", 1, eliminateDeadCode},
      // Last: these mark loops as they will be emitted (no pass moves code
      // into or out of them afterwards).
      {"divcheck", "float division checks tested after the loop", 2, deferDivisionChecks},
      {"scan", "while loops that step an index through an array", 2, markScanLoops},
      {"pairs", "row loops that fold each row run two rows at a time", 2, pairRowFolds},
      {"prefetch", "sparse loops prefetch the vectors they gather from", 2, prefetchGathers},
  };
  return passes;
}

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

}  // namespace

std::string PassContext::freshName(const Function& f, const std::string& hint) {
  NameTable& table = Names[&f];
  // Locals are only appended, except that a pass may drop the ones it added
  // when it gives up (promote): then start again, so the smallest free
  // number is reused as before.
  const size_t bound = f.params.size() + f.locals.size();
  if (bound < table.indexed) table = NameTable();
  for (; table.indexed < bound; ++table.indexed)
    table.names.insert(table.indexed < f.params.size() ? f.params[table.indexed].name
                                                       : f.locals[table.indexed - f.params.size()].name);
  for (unsigned& n = table.next[hint];; ++n) {
    std::string name = hint + "__" + std::to_string(n);
    if (table.names.insert(name).second) return name;
  }
}

std::string PassContext::newLocal(Function& f, const std::string& hint, const Type& type, SourceLoc loc) {
  std::string name = freshName(f, hint);
  f.locals.push_back({name, type, loc});
  return name;
}

StmtPtr PassContext::spill(Function& f, ExprPtr& slot, const std::string& hint) {
  SourceLoc loc = slot->loc;
  Type type = slot->type;
  std::string name = newLocal(f, hint, type, loc);
  StmtPtr assign = build::assign(loc, build::var(loc, name, type), std::move(slot));
  slot = build::var(loc, name, type);
  return assign;
}

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (auto& p : registry())
    if (!contains(names, p.name)) names.push_back(p.name);
  return names;
}

bool runPasses(Module& m, const PassOptions& options, llvm::raw_ostream& dump, llvm::raw_ostream& errs) {
  auto known = [](const std::string& n) { return n == "sema" || contains(passNames(), n); };
  for (auto* list : {&options.disabled, &options.dumpAfter})
    for (auto& n : *list)
      if (!known(n)) {
        errs << "pyddc: error: unknown pass '" << n << "' (passes: sema";
        for (auto& p : passNames()) errs << ", " << p;
        errs << ")\n";
        return false;
      }
  auto verify = [&](const char* after) {
    if (!options.verifyEach) return true;
    std::string problem = verifyModule(m);
    if (problem.empty()) return true;
    errs << "pyddc: internal error: invalid IR after " << after << ": " << problem << "\n";
    return false;
  };
  if (contains(options.dumpAfter, "sema")) dump << "# IR after sema\n" << printModule(m);
  if (!verify("sema")) return false;

  std::map<std::string, unsigned> stats;
  llvm::TimerGroup group("pyddc", "pyddc passes");
  for (auto& pass : registry()) {
    if (options.optLevel < pass.minLevel || contains(options.disabled, pass.name)) continue;
    llvm::Timer timer(pass.name, pass.description, group);
    {
      llvm::TimeRegion region(options.timePasses ? &timer : nullptr);
      PassContext context{m, options, stats};
      for (auto& f : m.functions) pass.run(*f, context);
    }
    if (contains(options.dumpAfter, pass.name)) dump << "# IR after " << pass.name << "\n" << printModule(m);
    if (!verify(pass.name)) return false;
  }
  if (options.timePasses) group.print(errs);
  if (options.printStats) {
    errs << "===- pyddc pass statistics -===\n";
    for (auto& [what, count] : stats) errs << llvm::format_decimal(count, 8) << " " << what << "\n";
  }
  return true;
}

}  // namespace pydd
