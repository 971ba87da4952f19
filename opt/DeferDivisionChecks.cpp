#include "opt/DeferDivisionChecks.h"

#include <set>
#include <string>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

bool isRealFloatDivision(const Expr& e) {
  auto* b = dyn_cast<Binary>(&e);
  return b && b->op == BinaryOp::Div && b->type.isFloat() && b->lhs->type.isFloat() && b->rhs->type.isFloat();
}

bool containsDivision(const Expr& e) {
  if (auto* b = dyn_cast<Binary>(&e); b && b->op == BinaryOp::Div) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || containsDivision(c); });
  return found;
}

/// An element-wise library function of real scalars that cannot raise:
/// only integer `**` can (ElementRule::raisesOnIntegers), so such a
/// function needs float operands.
bool isNonRaisingElementCall(const Call& c) {
  if (c.target != CallTarget::Library || !c.library || !c.library->element || c.library->hasSideEffects() ||
      !c.type.isScalar())
    return false;
  for (auto& a : c.args)
    if (!a->type.isScalar() || a->type.isComplex() || (c.library->element->raisesOnIntegers && !a->type.isFloat()))
      return false;
  return true;
}

/// `a // k` or `a % k` with a nonzero literal `k`: no zero divisor.
bool isLiteralDivisorDivision(const Expr& e) {
  auto* b = dyn_cast<Binary>(&e);
  if (!b || (b->op != BinaryOp::FloorDiv && b->op != BinaryOp::Mod)) return false;
  const Expr* k = b->rhs.get();
  while (auto* c = dyn_cast<Cast>(k)) k = c->operand.get();
  if (auto* i = dyn_cast<IntLit>(k)) return i->value != 0;
  if (auto* f = dyn_cast<FloatLit>(k)) return f->value != 0;
  return false;
}

/// Checks one loop body against the conditions in the header.
class BodyCheck {
 public:
  BodyCheck(const For& loop, bool boundsCheck) : BoundsCheck(boundsCheck), Assigned(assignedVars(*loop.body)) {}

  bool block(const Block& b) {
    for (auto& s : b.stmts)
      if (!stmt(*s)) return false;
    return true;
  }
  /// Whether the body divides at all (otherwise there is nothing to defer).
  bool divides() const { return Divisions > 0; }

 private:
  bool stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Assign: {
        auto& a = static_cast<const Assign&>(s);
        for (auto& t : a.targets)
          if (t->kind != ExprKind::Var || !t->type.isScalar()) return false;
        return !a.value || expr(*a.value);
      }
      case StmtKind::If: {
        auto& i = static_cast<const If&>(s);
        return expr(*i.cond) && block(*i.thenBody) && (!i.elseBody || block(*i.elseBody));
      }
      case StmtKind::Block: return block(static_cast<const Block&>(s));
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Pass: return true;
      default: return false;  // loops, returns, expression statements, tasks
    }
  }

  bool expr(const Expr& e) {
    if (isRealFloatDivision(e)) {
      ++Divisions;
    } else if (auto* c = dyn_cast<Call>(&e)) {
      if (!isNonRaisingElementCall(*c) && (nodeHasSideEffects(e) || nodeMayRaise(e, BoundsCheck))) return false;
    } else if (!isLiteralDivisorDivision(e) && (nodeHasSideEffects(e) || nodeMayRaise(e, BoundsCheck))) {
      return false;
    }
    if (auto* x = dyn_cast<Index>(&e)) {
      for (auto& i : x->indices) {
        std::set<std::string> reads;
        collectReads(*i, reads);
        for (auto& r : reads)
          if (Assigned.count(r)) return false;  // the loop variable only when the body assigns it
      }
    }
    bool ok = true;
    forEachChild(e, [&](const Expr& c) { ok = ok && expr(c); });
    return ok;
  }

  bool BoundsCheck;
  std::set<std::string> Assigned;  // variables the body assigns
  int Divisions = 0;
};

bool defersDivisions(const For& loop, bool boundsCheck) {
  if (!loop.isRange || loop.parallel || loop.independent || !loop.foldsInto.empty()) return false;
  for (const ExprPtr* bound : {&loop.start, &loop.stop, &loop.step})
    if (*bound && containsDivision(**bound)) return false;
  BodyCheck check(loop, boundsCheck);
  return check.block(*loop.body) && check.divides();
}

}  // namespace

void deferDivisionChecks(Function& f, PassContext& context) {
  markOutermost(*f.body, [&](Stmt& s) {
    auto* loop = dyn_cast<For>(&s);
    if (!loop || !defersDivisions(*loop, context.options.boundsCheck)) return false;
    loop->defersDivisionChecks = true;
    ++context.stats["divcheck: loops that test divisors after the loop"];
    return true;  // its body runs no loop
  });
}

}  // namespace pydd
