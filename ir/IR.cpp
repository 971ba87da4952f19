#include "ir/IR.h"

#include <cassert>

namespace pydd {

const char* spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
  }
  return "?";
}

const char* spelling(CmpOp op) {
  switch (op) {
    case CmpOp::Lt: return "<";
    case CmpOp::Le: return "<=";
    case CmpOp::Gt: return ">";
    case CmpOp::Ge: return ">=";
    case CmpOp::Eq: return "==";
    case CmpOp::In: return "in";
    case CmpOp::NotIn: return "not in";
    case CmpOp::Ne: return "!=";
  }
  return "?";
}

const Type* Function::lookup(const std::string& var) const {
  const size_t bindings = params.size() + locals.size();
  if (bindings < LookupIndexed || (LookupIndexed > 0 && bindingName(LookupIndexed - 1) != LookupLast)) {
    LookupIndex.clear();
    LookupIndexed = 0;
  }
  if (LookupIndexed < bindings) {
    for (; LookupIndexed < bindings; ++LookupIndexed) LookupIndex.emplace(bindingName(LookupIndexed), LookupIndexed);
    LookupLast = bindingName(LookupIndexed - 1);
  }
  auto found = LookupIndex.find(var);
  if (found == LookupIndex.end()) return nullptr;
  const size_t k = found->second;
  assert(bindingName(k) == var && "params or locals edited in place; lookup's index is stale");
  return k < params.size() ? &params[k].type : &locals[k - params.size()].type;
}

Function* Module::find(const std::string& fn) const {
  for (auto& f : functions)
    if (f->name == fn) return f.get();
  return nullptr;
}

bool constantInt(const Expr& e, int64_t& value) {
  if (auto* i = dyn_cast<IntLit>(&e)) {
    value = i->value;
    return true;
  }
  if (auto* u = dyn_cast<Unary>(&e); u && u->op == UnaryOp::Neg && constantInt(*u->operand, value)) {
    value = static_cast<int64_t>(0ull - static_cast<uint64_t>(value));
    return true;
  }
  if (auto* c = dyn_cast<Cast>(&e)) return constantInt(*c->operand, value);
  return false;
}

bool isWeakLiteral(const Expr& e) {
  if (e.kind == ExprKind::IntLit || e.kind == ExprKind::FloatLit || e.kind == ExprKind::BoolLit) return true;
  if (auto* u = dyn_cast<Unary>(&e)) return u->op != UnaryOp::Invert && isWeakLiteral(*u->operand);
  return isComplexLiteral(e);
}

namespace {
/// A number literal, possibly negated or converted to complex (as sema
/// converts the `3` of `3 + 4j`); `imaginary` tells which kind.
bool literalPart(const Expr& e, bool& imaginary) {
  if (auto* c = dyn_cast<Cast>(&e)) return c->target.isComplex() && literalPart(*c->operand, imaginary);
  if (auto* u = dyn_cast<Unary>(&e)) return u->op != UnaryOp::Invert && literalPart(*u->operand, imaginary);
  if (auto* f = dyn_cast<FloatLit>(&e)) return imaginary = f->imaginary, true;
  imaginary = false;
  return e.kind == ExprKind::IntLit || e.kind == ExprKind::BoolLit;
}
}  // namespace

bool isComplexLiteral(const Expr& e) {
  auto* b = dyn_cast<Binary>(&e);
  if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return false;
  bool li = false, ri = false;
  return literalPart(*b->lhs, li) && literalPart(*b->rhs, ri) && li != ri;
}

const char* kindName(ExprKind k) {
  switch (k) {
#define PYDD_EXPR(Class, Kind) \
  case ExprKind::Kind: return #Class;
#include "ir/Nodes.def"
  }
  return "?";
}

const char* kindName(StmtKind k) {
  switch (k) {
#define PYDD_STMT(Class, Kind) \
  case StmtKind::Kind: return #Class;
#include "ir/Nodes.def"
  }
  return "?";
}

}  // namespace pydd
