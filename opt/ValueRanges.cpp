#include "opt/ValueRanges.h"

#include "ir/Visitor.h"

namespace pydd {

std::set<std::string> nonNegativeVars(const Function& f) {
  struct Finder : Visitor {
    using Visitor::visit;
    std::set<std::string> candidates, rejected;
    void visit(const Stmt& s) override {
      if (auto* loop = dyn_cast<For>(&s)) {
        auto* start = dyn_cast<IntLit>(loop->start.get());
        auto* step = dyn_cast<IntLit>(loop->step.get());
        if (loop->isRange && start && start->value >= 0 && step && step->value > 0)
          candidates.insert(loop->var);
        else
          rejected.insert(loop->var);
      } else if (auto* a = dyn_cast<Assign>(&s)) {
        for (auto& t : a->targets)
          if (auto* v = dyn_cast<VarRef>(t.get())) rejected.insert(v->name);
      }
      visitChildren(s);
    }
  } finder;
  // A parameter holds the caller's value before any loop rebinds it.
  for (auto& p : f.params) finder.rejected.insert(p.name);
  finder.visit(*f.body);
  std::set<std::string> out;
  for (auto& name : finder.candidates)
    if (!finder.rejected.count(name)) out.insert(name);
  return out;
}

}  // namespace pydd
