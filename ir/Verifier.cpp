#include "ir/Verifier.h"

#include "ir/Visitor.h"

namespace pydd {
namespace {

class Checker : public Visitor {
 public:
  using Visitor::visit;
  Checker(const Module& m, const Function& f) : M(m), F(f) {}
  std::string problem;

  void visit(const Expr& e) override {
    if (!problem.empty()) return;
    if (e.type.isUnknown()) return fail(e.loc, std::string(kindName(e.kind)) + " has no type");
    if (e.type.isVoid() && e.kind != ExprKind::Call) return fail(e.loc, std::string(kindName(e.kind)) + " is void");
    switch (e.kind) {
      case ExprKind::Attribute: return fail(e.loc, "attribute left after sema");
      case ExprKind::Var: {
        auto& v = cast<VarRef>(e);
        if (!F.lookup(v.name)) return fail(e.loc, "variable '" + v.name + "' is neither a parameter nor a local");
        break;
      }
      case ExprKind::Call: {
        auto& c = cast<Call>(e);
        if (!c.keywords.empty()) return fail(e.loc, "call of " + c.callee + " keeps keyword arguments");
        if (c.target == CallTarget::Unresolved) return fail(e.loc, "call of " + c.callee + " is unresolved");
        if (c.target == CallTarget::Library && !c.library)
          return fail(e.loc, "library call of " + c.callee + " has no catalog entry");
        if (c.target == CallTarget::User && !M.find(c.callee))
          return fail(e.loc, "call of " + c.callee + " names no function of the module");
        break;
      }
      default: break;
    }
    visitChildren(e);
  }

  void visit(const Stmt& s) override {
    if (!problem.empty()) return;
    if (auto* loop = dyn_cast<For>(&s)) {
      if (!F.lookup(loop->var)) return fail(s.loc, "loop variable '" + loop->var + "' is not a local");
      if (loop->isRange ? !(loop->start && loop->stop && loop->step) : !loop->iterable)
        return fail(s.loc, "for loop without its range or iterable");
    }
    if (auto* a = dyn_cast<Assign>(&s))
      for (auto& t : a->targets)
        if (t->kind != ExprKind::Var && t->kind != ExprKind::Index)
          return fail(t->loc, std::string("assignment to a ") + kindName(t->kind));
    bool missing = false;
    switch (s.kind) {
      case StmtKind::If: missing = !cast<If>(s).thenBody || !cast<If>(s).cond; break;
      case StmtKind::While: missing = !cast<While>(s).body || !cast<While>(s).cond; break;
      case StmtKind::For: missing = !cast<For>(s).body; break;
      case StmtKind::Task: missing = !cast<Task>(s).body; break;
      default: break;
    }
    if (missing) return fail(s.loc, std::string(kindName(s.kind)) + " without its body or condition");
    visitChildren(s);
  }

 private:
  void fail(SourceLoc loc, const std::string& what) {
    if (problem.empty())
      problem = F.name + " at " + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": " + what;
  }
  const Module& M;
  const Function& F;
};

}  // namespace

std::string verifyFunction(const Module& m, const Function& f) {
  Checker checker(m, f);
  if (!f.body) return f.name + ": no body";
  // Sema gives every rank-less Array(T) a rank (one per instance).
  for (auto& p : f.params)
    if (p.type.isAnyRankArray()) return f.name + ": parameter '" + p.name + "' has no rank";
  if (f.returnType.isAnyRankArray()) return f.name + ": the result has no rank";
  checker.visit(*f.body);
  return checker.problem;
}

std::string verifyModule(const Module& m) {
  for (auto& f : m.functions)
    if (std::string p = verifyFunction(m, *f); !p.empty()) return p;
  return "";
}

}  // namespace pydd
