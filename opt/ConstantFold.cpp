#include "opt/ConstantFold.h"

#include <cmath>

#include "ir/Visitor.h"

namespace pydd {
namespace {

bool intValue(const Expr& e, int64_t& v) {
  auto* i = dyn_cast<IntLit>(&e);
  if (i && e.type == Type::int64()) v = i->value;
  return i && e.type == Type::int64();
}
bool floatValue(const Expr& e, double& v) {
  auto* f = dyn_cast<FloatLit>(&e);
  if (f && e.type == Type::float64()) v = f->value;
  return f && e.type == Type::float64();
}

ExprPtr makeInt(SourceLoc loc, int64_t v) {
  auto e = std::make_unique<IntLit>(loc, v);
  e->type = Type::int64();
  return e;
}
ExprPtr makeFloat(SourceLoc loc, double v) {
  auto e = std::make_unique<FloatLit>(loc, v);
  e->type = Type::float64();
  return e;
}
ExprPtr makeBool(SourceLoc loc, bool v) {
  auto e = std::make_unique<BoolLit>(loc, v);
  e->type = Type::boolTy();
  return e;
}

// Wrapping int64 arithmetic without signed overflow in the compiler itself.
int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

class Folder : public Mutator {
 public:
  using Mutator::mutate;
  ExprPtr mutate(ExprPtr e) override {
    mutateChildren(*e);
    SourceLoc loc = e->loc;
    int64_t a, b;
    double x, y;
    if (auto* c = dyn_cast<Cast>(e.get())) {
      if (c->type == Type::float64() && intValue(*c->operand, a)) return makeFloat(loc, static_cast<double>(a));
      if (c->type == Type::boolTy() && intValue(*c->operand, a)) return makeBool(loc, a != 0);
      if (c->type == Type::int64() && dyn_cast<BoolLit>(c->operand.get()))
        return makeInt(loc, static_cast<BoolLit&>(*c->operand).value ? 1 : 0);
      return e;
    }
    if (auto* u = dyn_cast<Unary>(e.get())) {
      if (u->op == UnaryOp::Neg && intValue(*u->operand, a)) return makeInt(loc, wrapSub(0, a));
      if (u->op == UnaryOp::Neg && floatValue(*u->operand, x)) return makeFloat(loc, -x);
      return e;
    }
    if (auto* n = dyn_cast<Not>(e.get())) {
      if (auto* lit = dyn_cast<BoolLit>(n->operand.get())) return makeBool(loc, !lit->value);
      return e;
    }
    if (auto* bin = dyn_cast<Binary>(e.get())) {
      if (intValue(*bin->lhs, a) && intValue(*bin->rhs, b)) {
        switch (bin->op) {
          case BinaryOp::Add: return makeInt(loc, wrapAdd(a, b));
          case BinaryOp::Sub: return makeInt(loc, wrapSub(a, b));
          case BinaryOp::Mul: return makeInt(loc, wrapMul(a, b));
          default: return e;
        }
      }
      if (floatValue(*bin->lhs, x) && floatValue(*bin->rhs, y)) {
        switch (bin->op) {
          case BinaryOp::Add: return makeFloat(loc, x + y);
          case BinaryOp::Sub: return makeFloat(loc, x - y);
          case BinaryOp::Mul: return makeFloat(loc, x * y);
          case BinaryOp::Div:
            if (y != 0) return makeFloat(loc, x / y);
            return e;
          default: return e;
        }
      }
    }
    return e;
  }
};

}  // namespace

void constantFold(Function& f) {
  Folder folder;
  folder.mutate(*f.body);
}

}  // namespace pydd
