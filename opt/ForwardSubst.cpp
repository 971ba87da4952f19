#include "opt/ForwardSubst.h"

#include <functional>
#include <map>
#include <set>
#include <string>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/ElementTree.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// An element-wise tree that is cheap to compute twice per element: its
/// leaves are variables, literals, scalars without calls, and views of
/// variables.
bool cheapTree(const Expr& e) {
  if (isElementwiseArrayCall(e)) {
    for (auto& a : cast<Call>(e).args)
      if (!cheapTree(*a)) return false;
    return true;
  }
  if (e.kind == ExprKind::Var || isLiteral(e)) return true;
  bool callFree = true;
  std::function<void(const Expr&)> walk = [&](const Expr& n) {
    if (n.kind == ExprKind::Call) callFree = false;
    forEachChild(n, walk);
  };
  walk(e);
  if (e.type.isScalar()) return callFree;
  auto* x = dyn_cast<Index>(&e);
  return x && x->base->kind == ExprKind::Var && callFree;
}

/// Finds the reads of `name` in a statement's value, in evaluation order,
/// and whether substituting each one keeps Python's semantics (see the
/// header).
class UseFinder {
 public:
  explicit UseFinder(const std::string& name, bool boundsCheck) : Name(name), BoundsCheck(boundsCheck) {}
  std::vector<ExprPtr*> uses;
  bool ok = true;
  bool elementwiseParents = true;

  void find(ExprPtr& e, bool onPath, bool elementwiseParent) {
    if (auto* v = dyn_cast<VarRef>(e.get()); v && v->name == Name) {
      if (!onPath || Risky) ok = false;
      elementwiseParents = elementwiseParents && elementwiseParent;
      uses.push_back(&e);
      return;
    }
    auto* c = dyn_cast<Call>(e.get());
    const bool pureCall = c && c->target == CallTarget::Library && c->library && !c->library->hasSideEffects();
    const bool elementwise = isElementwiseArrayCall(*e);
    forEachChild(*e, [&](ExprPtr& child) { find(child, onPath && pureCall, elementwise); });
    // What this node does happens after its operands, before later siblings.
    if (mayRaise(*e, BoundsCheck) || hasSideEffects(*e)) Risky = true;
  }

 private:
  const std::string& Name;
  bool BoundsCheck;
  bool Risky = false;
};

class Substituter {
 public:
  Substituter(Function& f, PassContext& ctx) : F(f), Ctx(ctx) {
    Counts.count(*f.body);
  }

  void block(Block& b) {
    for (auto& s : b.stmts)
      forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { block(inner); });
    for (size_t i = 0; i + 1 < b.stmts.size();) {
      if (substitute(*b.stmts[i], *b.stmts[i + 1])) {
        b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(i));
        ++Ctx.stats["subst: arrays substituted"];
      } else {
        ++i;
      }
    }
  }

 private:
  /// Substitutes `t = E` (the statement `def`) into `use`; false when it
  /// may not.
  bool substitute(Stmt& def, Stmt& use) {
    auto* a = dyn_cast<Assign>(&def);
    if (!a || a->targets.size() != 1 || !a->value) return false;
    auto* t = dyn_cast<VarRef>(a->targets[0].get());
    if (!t || !t->type.isArray() || a->value->type != t->type || hasSideEffects(*a->value)) return false;
    const std::string name = t->name;
    if (Counts.binds[name] != 1) return false;
    ExprPtr* value = nullptr;
    if (auto* u = dyn_cast<Assign>(&use)) {
      for (auto& target : u->targets)
        if (target->kind != ExprKind::Var && reads(*target, name)) return false;
      value = &u->value;
    } else if (auto* r = dyn_cast<Return>(&use)) {
      value = &r->value;
    } else if (auto* x = dyn_cast<ExprStmt>(&use)) {
      value = &x->expr;
    }
    if (!value || !*value) return false;
    UseFinder finder(name, Ctx.options.boundsCheck);
    finder.find(*value, true, false);
    if (!finder.ok || finder.uses.empty() || static_cast<int>(finder.uses.size()) != Counts.reads[name]) return false;
    if (finder.uses.size() > 1 &&
        !(finder.elementwiseParents && isElementwiseArrayCall(*a->value) && typesPerElement(*a->value) &&
          cheapTree(*a->value)))
      return false;
    for (size_t k = 0; k + 1 < finder.uses.size(); ++k) *finder.uses[k] = cloneExpr(*a->value);
    *finder.uses.back() = std::move(a->value);
    return true;
  }

  static bool reads(const Expr& e, const std::string& name) {
    std::set<std::string> names;
    collectReads(e, names);
    return names.count(name) != 0;
  }

  Function& F;
  PassContext& Ctx;
  VarCounts Counts;
};

}  // namespace

void forwardSubstitute(Function& f, PassContext& context) {
  Substituter(f, context).block(*f.body);
}

}  // namespace pydd
