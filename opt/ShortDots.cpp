#include "opt/ShortDots.h"

#include <set>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Loops.h"
#include "opt/ValueRanges.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// One vector of a dot product: an array variable read whole, or a row of
/// one, `var[indices...]`, its indices variables or integer literals (read
/// twice: in the test and in the loop).
struct Vector {
  std::string var;
  Type type;  // of var
  std::vector<const Expr*> indices;
};

bool simpleIndex(const Expr& e) {
  if (e.kind == ExprKind::Var) return e.type.isInteger() && e.type.isScalar();
  return e.kind == ExprKind::IntLit;
}

std::optional<Vector> asVector(const Expr& e) {
  if (e.type != Type::array(ScalarKind::Float64, 1)) return std::nullopt;
  if (auto* v = dyn_cast<VarRef>(&e)) return Vector{v->name, v->type, {}};
  auto* x = dyn_cast<Index>(&e);
  if (!x || x->base->kind != ExprKind::Var || !x->base->type.isArray()) return std::nullopt;
  if (static_cast<int>(x->indices.size()) != x->base->type.rank() - 1) return std::nullopt;
  Vector out{cast<VarRef>(*x->base).name, x->base->type, {}};
  for (auto& i : x->indices) {
    if (!simpleIndex(*i)) return std::nullopt;
    out.indices.push_back(i.get());
  }
  return out;
}

bool isShortDot(const Expr& e) {
  auto* c = dyn_cast<Call>(&e);
  if (!c || c->target != CallTarget::Library || !c->library || c->args.size() != 2) return false;
  if (c->callee != "matmult" && c->callee != "innerprod") return false;
  return c->type == Type::float64() && asVector(*c->args[0]) && asVector(*c->args[1]);
}

/// The dot product an assignment computes, when it is one to rewrite.
const Call* shortDotCandidate(const Assign& a) {
  if (a.targets.size() != 1 || !a.value || !isShortDot(*a.value)) return nullptr;
  return &cast<Call>(*a.value);
}

/// In `t = e`, the slot of a dot product inside e that can be computed
/// first: the rest of e is float arithmetic that neither raises nor has an
/// effect (`s = s + F[j] @ F[i]`, what `s += F[j] @ F[i]` is), so nothing
/// observable moves across it. Null when there is none.
ExprPtr* nestedShortDot(ExprPtr& e, int& dots) {
  if (isShortDot(*e)) {
    ++dots;
    return &e;
  }
  switch (e->kind) {
    case ExprKind::Var:
    case ExprKind::IntLit:
    case ExprKind::FloatLit: return nullptr;
    case ExprKind::Unary:
      if (!e->type.isFloat()) break;
      return nestedShortDot(cast<Unary>(*e).operand, dots);
    case ExprKind::Binary: {
      auto& b = cast<Binary>(*e);
      if (!b.type.isFloat() || (b.op != BinaryOp::Add && b.op != BinaryOp::Sub && b.op != BinaryOp::Mul)) break;
      ExprPtr* l = nestedShortDot(b.lhs, dots);
      ExprPtr* r = nestedShortDot(b.rhs, dots);
      return l ? l : r;
    }
    default: break;
  }
  dots = 2;  // anything else: leave the statement alone
  return nullptr;
}

class ShortDots : public StmtMutator {
 public:
  ShortDots(Function& f, PassContext& ctx) : F(f), Ctx(ctx), NonNegative(nonNegativeVars(f)) {}

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    auto* a = dyn_cast<Assign>(s.get());
    if (a && shortDotCandidate(*a)) return rewrite(std::move(s));
    // `t = ... F[j] @ F[i] ...`: the product into a temporary first.
    int dots = 0;
    ExprPtr* slot = a && a->targets.size() == 1 && a->targets[0]->kind == ExprKind::Var && a->value
                        ? nestedShortDot(a->value, dots)
                        : nullptr;
    if (!slot || dots != 1) return StmtMutator::mutateStmt(std::move(s));
    std::vector<StmtPtr> out = rewrite(Ctx.spill(F, *slot, "dot"));
    out.push_back(std::move(s));
    return out;
  }

 private:
  /// `x = dot(a, b)`: the test, the loop and the library call.
  std::vector<StmtPtr> rewrite(StmtPtr s) {
    auto* a = &cast<Assign>(*s);
    const Call* dot = shortDotCandidate(*a);
    Loc = a->loc;
    const Vector x = *asVector(*dot->args[0]), y = *asVector(*dot->args[1]);
    std::vector<StmtPtr> out;
    std::string n = temp("n", Type::int64());
    out.push_back(build::assign(Loc, var(n, Type::int64()), lastExtent(x)));

    // OpenBLAS's 16-wide block, or 0 where its kernel does not add short
    // vectors in index order (the runtime asks it once, at load).
    ExprPtr limit = build::libraryCall(Loc, lookupLibraryFunction("blas_dot_inline_limit"), "blas_dot_inline_limit",
                                       {}, Type::int64());
    ExprPtr test = build::compare(Loc, CmpOp::Lt, var(n, Type::int64()), std::move(limit));
    if (y.var != x.var)  // one array's rows all have its last extent
      test = build::logicalAnd(Loc, std::move(test),
                               build::compare(Loc, CmpOp::Eq, lastExtent(y), var(n, Type::int64())));
    test = indicesInRange(std::move(test), x);
    test = indicesInRange(std::move(test), y);
    test = build::logicalAnd(Loc, std::move(test), unitStride(x));
    if (y.var != x.var) test = build::logicalAnd(Loc, std::move(test), unitStride(y));

    // acc = blas_dot_step(y[c], x[c], acc) for c in order: OpenBLAS's ddot(x, y).
    std::string acc = temp("d", Type::float64()), c = temp("c", Type::int64());
    std::vector<StmtPtr> loop, fast;
    std::vector<ExprPtr> fmaArgs;
    fmaArgs.push_back(element(y, c));
    fmaArgs.push_back(element(x, c));
    fmaArgs.push_back(var(acc, Type::float64()));
    loop.push_back(build::assign(Loc, var(acc, Type::float64()),
                                 build::libraryCall(Loc, lookupLibraryFunction("blas_dot_step"), "blas_dot_step", std::move(fmaArgs),
                                                    Type::float64())));
    fast.push_back(build::assign(Loc, var(acc, Type::float64()), build::floatLit(Loc, 0.0)));
    fast.push_back(build::rangeLoop(Loc, c, build::intLit(Loc, 0), var(n, Type::int64()), std::move(loop)));
    StmtPtr store = cloneStmt(*a);
    cast<Assign>(*store).value = var(acc, Type::float64());
    fast.push_back(std::move(store));

    std::vector<StmtPtr> library;
    library.push_back(std::move(s));
    out.push_back(build::ifThen(Loc, std::move(test), std::move(fast), std::move(library)));
    ++Ctx.stats["dots: dot products written as loops"];
    return out;
  }

  Function& F;
  PassContext& Ctx;
  std::set<std::string> NonNegative;  // of the function as the pass found it
  SourceLoc Loc;

  ExprPtr var(const std::string& name, const Type& t) { return build::var(Loc, name, t); }

  std::string temp(const std::string& hint, const Type& t) {
    return Ctx.newLocal(F, hint, t, F.loc);
  }

  ExprPtr lastExtent(const Vector& v) { return shapeQuery(Loc, var(v.var, v.type), v.type.rank() - 1); }

  ExprPtr unitStride(const Vector& v) {
    std::vector<ExprPtr> args;
    args.push_back(var(v.var, v.type));
    return build::libraryCall(Loc, lookupLibraryFunction("unit_stride"), "unit_stride", std::move(args),
                              Type::boolTy());
  }

  /// test and -shape(V, k) <= i < shape(V, k) for each index i of the row
  /// (no lower bound for an index that cannot be negative).
  ExprPtr indicesInRange(ExprPtr test, const Vector& v) {
    for (size_t k = 0; k < v.indices.size(); ++k) {
      const Expr& i = *v.indices[k];
      ExprPtr extent = shapeQuery(Loc, var(v.var, v.type), static_cast<int>(k));
      test = build::logicalAnd(Loc, std::move(test), build::compare(Loc, CmpOp::Lt, cloneExpr(i), cloneExpr(*extent)));
      if (nonNegative(i, NonNegative)) continue;
      test = build::logicalAnd(
          Loc, std::move(test),
          build::compare(Loc, CmpOp::Ge, cloneExpr(i),
                         build::binary(Loc, BinaryOp::Sub, build::intLit(Loc, 0), std::move(extent), Type::int64())));
    }
    return test;
  }

  /// v[indices..., c]
  ExprPtr element(const Vector& v, const std::string& c) {
    std::vector<ExprPtr> indices;
    for (auto* i : v.indices) indices.push_back(cloneExpr(*i));
    indices.push_back(var(c, Type::int64()));
    return build::index(Loc, var(v.var, v.type), std::move(indices), Type::float64());
  }
};

}  // namespace

void expandShortDots(Function& f, PassContext& context) {
  ShortDots dots(f, context);
  dots.mutateBlock(*f.body);
}

}  // namespace pydd
