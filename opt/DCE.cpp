#include "opt/DCE.h"

#include <set>
#include <string>

#include "ir/Visitor.h"
#include "opt/Effects.h"

namespace pydd {
namespace {

/// Every variable some expression reads; a plain assignment target is a
/// write, not a read (an element store's base is a read of the array).
std::set<std::string> readVariables(const Function& f) {
  struct Finder : Visitor {
    using Visitor::visit;
    std::set<std::string> names;
    void visit(const Stmt& s) override {
      if (auto* a = dyn_cast<Assign>(&s)) {
        if (a->value) collectReads(*a->value, names);
        for (auto& t : a->targets)
          if (t->kind != ExprKind::Var) collectReads(*t, names);
        return;
      }
      visitChildren(s);
    }
    void visit(const Expr& e) override { collectReads(e, names); }
  } finder;
  finder.visit(*f.body);
  return finder.names;
}

class Remover : public StmtMutator {
 public:
  Remover(const std::set<std::string>& read, bool boundsCheck) : Read(read), BoundsCheck(boundsCheck) {}
  unsigned removed = 0;

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    if (auto* a = dyn_cast<Assign>(s.get()); a && a->value && a->targets.size() == 1) {
      auto* v = dyn_cast<VarRef>(a->targets[0].get());
      if (v && !Read.count(v->name) && !hasSideEffects(*a->value) && !mayRaise(*a->value, BoundsCheck)) {
        ++removed;
        return {};
      }
    }
    return StmtMutator::mutateStmt(std::move(s));
  }

 private:
  const std::set<std::string>& Read;
  bool BoundsCheck;
};

}  // namespace

void eliminateDeadCode(Function& f, PassContext& context) {
  for (;;) {
    std::set<std::string> read = readVariables(f);
    Remover remover(read, context.options.boundsCheck);
    remover.mutateBlock(*f.body);
    if (!remover.removed) return;
    context.stats["dce: assignments removed"] += remover.removed;
  }
}

}  // namespace pydd
