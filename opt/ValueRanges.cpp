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
    std::vector<std::pair<std::string, const Expr*>> copies;    // `x = e`
    std::set<const Stmt*> scanSteps;  // `i = i + k` stepping an ascending scan's index
    void visit(const Stmt& s) override {
      if (auto* w = dyn_cast<While>(&s); w && w->scanStep > 0) {
        for (auto& st : w->body->stmts)
          if (auto* a = dyn_cast<Assign>(st.get()); a && a->targets.size() == 1)
            if (auto* v = dyn_cast<VarRef>(a->targets[0].get()); v && v->name == w->scanIndex) scanSteps.insert(a);
      } else if (scanSteps.count(&s)) {
        // A scan's index that was non-negative at entry stays so
        // (opt/ScanLoops.h): this step adds no negative value.
        return;
      }
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
        // `x = e`: non-negative when e is, which may depend on other
        // variables' membership (decided by the fixed point below).
        if (a->targets.size() == 1 && !a->augmented && a->value)
          if (auto* v = dyn_cast<VarRef>(a->targets[0].get())) {
            copies.push_back({v->name, a->value.get()});
            candidates.insert(v->name);
            visitChildren(s);
            return;
          }
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
  // Optimistic fixed point over the assignments: every variable is defined
  // before it is read (the IR verifier checks it), so if every definition
  // of each variable left in the set is non-negative given the set, every
  // value they ever hold is.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, value] : finder.copies)
      if (out.count(name) && !nonNegative(*value, out)) {
        out.erase(name);
        changed = true;
      }
  }
  return out;
}

bool nonNegative(const Expr& e, const std::set<std::string>& nonNegativeVars) {
  if (auto* i = dyn_cast<IntLit>(&e)) return i->value >= 0;
  if (auto* v = dyn_cast<VarRef>(&e))
    return v->type.isScalar() && v->type.isInteger() && nonNegativeVars.count(v->name) > 0;
  if (auto* c = dyn_cast<Cast>(&e)) {
    const Type &to = c->type, &from = c->operand->type;
    if (from.isBool()) return true;
    if (!to.isScalar() || !from.isScalar() || !to.isInteger() || !from.isInteger()) return false;
    // A wider integer keeps the sign, as does the same width and
    // signedness; narrowing may not.
    const int toBits = bitWidth(to.elem()), fromBits = bitWidth(from.elem());
    const bool keepsSign = toBits > fromBits || (toBits == fromBits && isUnsignedKind(to.elem()) == isUnsignedKind(from.elem()));
    return keepsSign && nonNegative(*c->operand, nonNegativeVars);
  }
  return false;
}

}  // namespace pydd
