// Dense linear algebra: products as NumPy's matmul (OpenBLAS for floats),
// BLAS-style symmetric/triangular products, and LU factorization as SciPy's
// (LAPACK).
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

/// The operand converted to the product's element kind when it differs
/// (NumPy converts before multiplying too).
std::string converted(const Expr& operand, ScalarKind k, const std::string& text) {
  if (operand.type.elem() == k) return text;
  return std::string("pydd::astype<") + cxxScalarType(k) + ">(" + text + ")";
}

/// Ranks each product accepts: 0 means "1 or 2" (matmult and @).
struct ProductShape {
  const char* name;
  int lhsRank, rhsRank;
};
const ProductShape kProducts[] = {
    {"matmult", 0, 0}, {"innerprod", 1, 1}, {"matvect", 2, 1}, {"vectmat", 1, 2}, {"matmat", 2, 2}};

Type productType(const Call& c, TypeRuleError& err) {
  const ProductShape* shape = nullptr;
  for (auto& p : kProducts)
    if (c.callee == p.name) shape = &p;
  const Type &a = c.args[0]->type, &b = c.args[1]->type;
  int want[2] = {shape->lhsRank, shape->rhsRank};
  const Type* ts[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    const Type& t = *ts[i];
    bool ok = t.isArray() && (want[i] ? t.rank() == want[i] : t.rank() <= 2);
    if (!ok)
      return fail(err, i, std::string(c.callee) + "() expects " +
                              (want[i] ? std::to_string(want[i]) + "-D" : std::string("a 1-D or 2-D")) +
                              " array as operand " + std::to_string(i + 1) + ", got " + t.str());
  }
  ScalarKind k = promote(a.elem(), b.elem());
  int rank = a.rank() + b.rank() - 2;
  return rank ? Type::array(k, rank) : Type::scalar(k);
}
std::string emitProduct(const Call& c, llvm::ArrayRef<std::string> args) {
  ScalarKind k = c.type.elem();
  return std::string("pydd::matmul<") + cxxScalarType(k) + ">(" + converted(*c.args[0], k, args[0]) + ", " +
         converted(*c.args[1], k, args[1]) + ")";
}

Type transposeType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray() && !a.isSparse()) return fail(err, 0, "transpose() expects an array or a SparseMat, got " + a.str());
  return arg(c, 0)->type;
}
std::string emitTranspose(const Call&, llvm::ArrayRef<std::string> args) { return "pydd::transpose(" + args[0] + ")"; }

// The pieces of a short dot product as the `dots` pass writes it
// (opt/ShortDots.h): whether an array's last axis is contiguous, and one
// step of the sum as OpenBLAS's ddot adds a short vector's products
// (blas_dot_step); fused_mul_add is C's fma.
Type unitStrideType(const Call& c, TypeRuleError& err) {
  if (!c.args[0]->type.isArray()) return fail(err, 0, "unit_stride() expects an array, got " + c.args[0]->type.str());
  return Type::boolTy();
}
std::string emitUnitStride(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::detail::unit_stride(" + args[0] + ")";
}
Type fmaType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 3; ++i)
    if (c.args[i]->type != Type::float64())
      return fail(err, static_cast<int>(i), c.callee + "() takes three float64 numbers, got " + c.args[i]->type.str());
  return Type::float64();
}
std::string emitFma(const Call&, llvm::ArrayRef<std::string> args) {
  return "std::fma(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}
std::string emitBlasDotStep(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::detail::blas_dot_step(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}
/// blas_dot_inline_limit(): the length below which blas_dot_step's loop is
/// OpenBLAS's ddot (16, or 0 where this OpenBLAS orders short sums otherwise).
Type dotLimitType(const Call&, TypeRuleError&) { return Type::int64(); }
std::string emitDotLimit(const Call&, llvm::ArrayRef<std::string>) { return "pydd::detail::blas_dot_inline_limit()"; }

/// syrk(A), syr2k(A, B), symm(A, B), trmm(A, B): 2-D float operands of one kind.
Type blasType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isArray() || t.rank() != 2 || !isFloatKind(t.elem()))
      return fail(err, static_cast<int>(i), std::string(c.callee) + "() expects 2-D float32 or float64 arrays, got " + t.str());
    if (t.elem() != c.args[0]->type.elem())
      return fail(err, static_cast<int>(i), std::string(c.callee) + "() operands must have one element type, got " +
                                                c.args[0]->type.str() + " and " + t.str());
  }
  return c.args[0]->type;
}
std::string emitBlas(const Call& c, llvm::ArrayRef<std::string> args) {
  return callText(std::string("pydd::") + c.callee, args);
}

/// lu(A) -> (P, L, U) and ludcmp(A) -> (LU, piv): float64, or float32 kept.
ScalarKind factorKind(const Type& a) { return a.elem() == ScalarKind::Float32 ? a.elem() : ScalarKind::Float64; }
Type factorType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray() || a.rank() != 2) return fail(err, 0, std::string(c.callee) + "() expects a 2-D array, got " + a.str());
  Type m = Type::array(factorKind(a), 2);
  if (std::string(c.callee) == "lu") return Type::tuple({m, m, m});
  return Type::tuple({m, Type::array(ScalarKind::Int32, 1)});
}
std::string emitFactor(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::") + c.callee + "(" + converted(*c.args[0], factorKind(c.args[0]->type), args[0]) + ")";
}

/// numpy.linalg.det / inv / solve: float64, or float32 when every operand
/// is float32 (NumPy's linalg result types).
ScalarKind linalgKind(const Call& c) {
  for (auto& a : c.args)
    if (a->type.elem() != ScalarKind::Float32) return ScalarKind::Float64;
  return ScalarKind::Float32;
}
Type solverType(const Call& c, TypeRuleError& err) {
  std::string name = c.callee;
  const Type& a = arg(c, 0)->type;
  if (!a.isArray() || a.rank() != 2) return fail(err, 0, name + "() expects a 2-D array, got " + a.str());
  ScalarKind k = linalgKind(c);
  if (name == "det") return Type::scalar(k);
  if (name == "inv") return Type::array(k, 2);
  const Type& b = arg(c, 1)->type;
  if (!b.isArray() || b.rank() > 2) return fail(err, 1, "solve() expects a 1-D or 2-D right-hand side, got " + b.str());
  return Type::array(k, b.rank());
}
std::string emitSolver(const Call& c, llvm::ArrayRef<std::string> args) {
  ScalarKind k = linalgKind(c);
  std::string s = std::string("pydd::") + c.callee + "(" + converted(*c.args[0], k, args[0]);
  if (args.size() > 1) s += ", " + converted(*c.args[1], k, args[1]);
  return s + ")";
}

/// numpy.linalg.norm(x, ord=None, axis=None): the 2-norm (Frobenius for a
/// matrix), float64 unless float32; along one axis when it is given.
Type normType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "norm() expects an array, got " + a.str());
  if (arg(c, 1) && !arg(c, 1)->type.isTuple())
    return fail(err, 1, "norm() supports the default ord only (the 2-norm, Frobenius for a matrix)");
  ScalarKind k = a.elem() == ScalarKind::Float32 ? ScalarKind::Float32 : ScalarKind::Float64;
  if (!axisGiven(c, 2)) return Type::scalar(k);
  if (!checkAxis(c, 2, a.rank(), err)) return Type();
  return a.rank() == 1 ? Type::scalar(k) : Type::array(k, a.rank() - 1);
}
std::string emitNorm(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& a = c.args[0]->type;
  std::string r = cxxScalarType(c.type.elem());
  if (!axisGiven(c, 2)) return "pydd::norm<" + r + ">(" + args[0] + ")";
  std::string axis = axisText(c, 2, a.rank(), args[2], "ValueError");
  if (a.rank() == 1) return "(" + axis + ", pydd::norm<" + r + ">(" + args[0] + "))";
  return "pydd::norm_axis<" + r + ">(" + args[0] + ", " + axis + ")";
}

/// The adjoint of a product's operand from the adjoint g of a @ b, by the
/// operands' ranks (frontend/Gradient.h): the reverse pass is products too,
/// and so goes through BLAS as the forward one does.
std::string productDerivative(const Call& c, unsigned operand) {
  int ra = c.args[0]->type.rank(), rb = c.args[1]->type.rank();
  if (ra == 1 && rb == 1) return operand == 0 ? "g * b" : "g * a";
  if (ra == 2 && rb == 1) return operand == 0 ? "outer(g, b)" : "transpose(a) @ g";
  if (ra == 1 && rb == 2) return operand == 0 ? "b @ g" : "outer(a, g)";
  return operand == 0 ? "g @ transpose(b)" : "transpose(a) @ g";
}

}  // namespace

void addLinearAlgebraFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  const char* numpy[] = {"numpy.matmul", "numpy.dot (1-D)", "numpy.matmul (2-D @ 1-D)", "numpy.matmul (1-D @ 2-D)",
                         "numpy.matmul (2-D)"};
  for (size_t i = 0; i < std::size(kProducts); ++i) {
    LibraryFunction product = entry(kProducts[i].name, C::LinearAlgebra, {"a", "b"}, 2, numpy[i], productType, emitProduct);
    if (kProducts[i].lhsRank != 1 && kProducts[i].rhsRank != 1) product.sampled = "sampled_matmul";
    static const DerivativeRule kProductDerivative{nullptr, nullptr, false, productDerivative};
    product.derivative = &kProductDerivative;
    out.push_back(product);
  }
  LibraryFunction t = entry("transpose", C::LinearAlgebra, {"a"}, 1, "numpy.transpose", transposeType, emitTranspose);
  t.returnsView = true;
  t.raisesOnlyOnAxis = true;  // one argument, no axes: it never raises
  static const DerivativeRule kTransposeDerivative{"transpose(g)"};
  t.derivative = &kTransposeDerivative;
  out.push_back(t);
  LibraryFunction unit = entry("unit_stride", C::Query, {"a"}, 1, "pydd.unit_stride", unitStrideType, emitUnitStride);
  unit.raisesOnlyOnAxis = true;  // one argument: it never raises
  out.push_back(unit);
  out.push_back(entry("fused_mul_add", C::LinearAlgebra, {"a", "b", "c"}, 3, "pydd.fused_mul_add", fmaType, emitFma));
  out.push_back(entry("blas_dot_step", C::LinearAlgebra, {"a", "b", "c"}, 3, "pydd.blas_dot_step", fmaType, emitBlasDotStep));
  LibraryFunction limit = entry("blas_dot_inline_limit", C::Query, {}, 0, "pydd.blas_dot_inline_limit", dotLimitType,
                                emitDotLimit);
  limit.raisesOnlyOnAxis = true;  // no arguments: it never raises
  out.push_back(limit);
  out.push_back(entry("syrk", C::LinearAlgebra, {"a"}, 1, "a @ a.T", blasType, emitBlas));
  out.push_back(entry("syr2k", C::LinearAlgebra, {"a", "b"}, 2, "a @ b.T + b @ a.T", blasType, emitBlas));
  out.push_back(entry("symm", C::LinearAlgebra, {"a", "b"}, 2, "(tril(a) + tril(a, -1).T) @ b", blasType, emitBlas));
  out.push_back(entry("trmm", C::LinearAlgebra, {"a", "b"}, 2, "tril(a) @ b", blasType, emitBlas));
  out.push_back(entry("lu", C::LinearAlgebra, {"a"}, 1, "scipy.linalg.lu", factorType, emitFactor));
  out.push_back(entry("ludcmp", C::LinearAlgebra, {"a"}, 1, "scipy.linalg.lu_factor", factorType, emitFactor));
  out.push_back(entry("det", C::LinearAlgebra, {"a"}, 1, "numpy.linalg.det", solverType, emitSolver));
  out.push_back(entry("inv", C::LinearAlgebra, {"a"}, 1, "numpy.linalg.inv", solverType, emitSolver));
  out.push_back(entry("solve", C::LinearAlgebra, {"a", "b"}, 2, "numpy.linalg.solve", solverType, emitSolver));
  LibraryFunction norm = entry("norm", C::Reduction, {"x", "ord", "axis"}, 1, "numpy.linalg.norm", normType, emitNorm);
  norm.defaults = {{"ord", "all_axes()"}, {"axis", "all_axes()"}};
  out.push_back(norm);
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"matmult", "innerprod", "matvect", "vectmat", "matmat", "transpose"});
}

}  // namespace pydd::catalog
