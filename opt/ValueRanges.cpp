#include "opt/ValueRanges.h"

#include <map>
#include <utility>
#include <vector>

#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// Which parts of the tuples a sparse iteration yields are indices into the
/// matrix (non-negative): the column of `S.row(i)`'s (column, value), the
/// row and column of `S.nonzeros()`'s (row, column, value). Empty for other
/// loops.
std::vector<bool> sparseIndexParts(const For& loop) {
  auto* c = dyn_cast<Call>(loop.iterable.get());
  if (loop.isRange || !c || c->target != CallTarget::Library || !c->library->yieldsEntries) return {};
  if (c->library->sparseAccess == SparseAccess::Rows) return {true, false};
  if (c->library->sparseAccess == SparseAccess::NonZeros) return {true, true, false};
  return {};
}

}  // namespace

std::set<std::string> nonNegativeVars(const Function& f) {
  struct Finder : Visitor {
    using Visitor::visit;
    std::set<std::string> candidates, rejected;
    std::map<std::string, std::vector<bool>> sparseTuples;  // loop variable -> its index parts
    std::vector<std::pair<std::string, std::string>> unpacked;  // (index variable, tuple variable)
    void visit(const Stmt& s) override {
      if (auto* loop = dyn_cast<For>(&s)) {
        auto* start = dyn_cast<IntLit>(loop->start.get());
        auto* step = dyn_cast<IntLit>(loop->step.get());
        std::vector<bool> parts = sparseIndexParts(*loop);
        if (loop->isRange && start && start->value >= 0 && step && step->value > 0)
          candidates.insert(loop->var);
        else if (!parts.empty() && !sparseTuples.count(loop->var))
          sparseTuples[loop->var] = parts;
        else
          rejected.insert(loop->var);
      } else if (auto* a = dyn_cast<Assign>(&s)) {
        // `c, v = t` for a tuple t of a sparse iteration: its index parts.
        auto* from = a->targets.size() > 1 ? dyn_cast<VarRef>(a->value.get()) : nullptr;
        auto parts = from ? sparseTuples.find(from->name) : sparseTuples.end();
        for (size_t i = 0; i < a->targets.size(); ++i) {
          auto* v = dyn_cast<VarRef>(a->targets[i].get());
          if (!v) continue;
          if (parts != sparseTuples.end() && i < parts->second.size() && parts->second[i]) {
            candidates.insert(v->name);
            unpacked.push_back({v->name, from->name});
          } else {
            rejected.insert(v->name);
          }
        }
      }
      visitChildren(s);
    }
  } finder;
  // A parameter holds the caller's value before any loop rebinds it.
  for (auto& p : f.params) finder.rejected.insert(p.name);
  finder.visit(*f.body);
  // A tuple variable bound elsewhere too (assigned, or another loop's) may
  // hold other values where it is unpacked.
  for (auto& [index, tuple] : finder.unpacked)
    if (finder.rejected.count(tuple)) finder.rejected.insert(index);
  std::set<std::string> out;
  for (auto& name : finder.candidates)
    if (!finder.rejected.count(name)) out.insert(name);
  return out;
}

}  // namespace pydd
