#include "opt/ElementTree.h"

#include "ir/Builder.h"
#include "stdlib/Catalog.h"

namespace pydd {

bool isElementwiseArrayCall(const Expr& e) {
  auto* c = dyn_cast<Call>(&e);
  if (!c || c->target != CallTarget::Library || !c->library->element || !c->type.isArray()) return false;
  const unsigned arity = c->library->element->arity;
  return arity == 0 || c->args.size() == arity;
}

bool isLiteral(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return true;
    case ExprKind::Unary: return isLiteral(*cast<Unary>(e).operand);
    case ExprKind::Cast: return isLiteral(*cast<Cast>(e).operand);
    default: return false;
  }
}

bool sameIndex(const Expr& a, const Expr& b) {
  if (auto* va = dyn_cast<VarRef>(&a)) {
    auto* vb = dyn_cast<VarRef>(&b);
    return vb && va->name == vb->name;
  }
  int64_t x, y;
  return constantInt(a, x) && constantInt(b, y) && x == y;
}

bool sameArrayLeaf(const Expr& a, const Expr& b) {
  auto* xa = dyn_cast<Index>(&a);
  auto* xb = dyn_cast<Index>(&b);
  if (!xa || !xb) return a.kind == ExprKind::Var && b.kind == ExprKind::Var && sameIndex(a, b);
  if (!sameIndex(*xa->base, *xb->base) || xa->base->kind != ExprKind::Var || xa->indices.size() != xb->indices.size())
    return false;
  for (size_t k = 0; k < xa->indices.size(); ++k)
    if (!xa->indices[k]->type.isInteger() || !sameIndex(*xa->indices[k], *xb->indices[k])) return false;
  return true;
}

bool typesPerElement(const Expr& e) {
  if (!isElementwiseArrayCall(e)) return true;
  auto& c = cast<Call>(e);
  Call scalar(c.loc, c.callee);
  scalar.target = c.target;
  scalar.library = c.library;
  for (auto& a : c.args) {
    if (!typesPerElement(*a)) return false;
    if (!a->type.isArray() && !a->type.isScalar()) return false;
    scalar.args.push_back(isLiteral(*a) ? cloneExpr(*a) : build::var(a->loc, "_", Type::scalar(a->type.elem())));
  }
  TypeRuleError err;
  Type t = c.library->resultType(scalar, err);
  return err.message.empty() && t == Type::scalar(c.type.elem());
}

ExprPtr instantiateElement(const Expr& e, llvm::function_ref<ExprPtr(const Expr& leaf)> arrayLeaf) {
  if (isElementwiseArrayCall(e)) {
    auto& c = cast<Call>(e);
    std::vector<ExprPtr> scalarArgs;
    for (auto& a : c.args) scalarArgs.push_back(instantiateElement(*a, arrayLeaf));
    return build::libraryCall(c.loc, c.library, c.library->name, std::move(scalarArgs), Type::scalar(c.type.elem()));
  }
  if (!e.type.isArray()) return cloneExpr(e);
  return arrayLeaf(e);
}

}  // namespace pydd
