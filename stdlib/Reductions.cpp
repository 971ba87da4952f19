// Reductions (sum, min, argmax, any, allclose, mean...), with NumPy's
// optional axis, on arrays; Python's builtins of the same names on lists
// and scalars; where() in both of its forms.
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

/// NumPy's accumulator for sum and prod: signed integers and bools in
/// int64, unsigned integers in uint64, floats in their own kind. mean:
/// float64 unless float32.
ScalarKind accumulatorKind(const LibraryFunction& f, ScalarKind elem) {
  std::string name = f.name;
  if (name == "mean") return elem == ScalarKind::Float32 || isComplexKind(elem) ? elem : ScalarKind::Float64;
  if (name == "sum" || name == "prod")
    return isFloatKind(elem) || isComplexKind(elem) ? elem : isUnsignedKind(elem) ? ScalarKind::UInt64 : ScalarKind::Int64;
  return elem;  // min, max
}

/// sum/prod/mean/min/max of an array (optionally along an axis) or a list.
Type reductionType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  std::string name = c.callee;
  if (a.isList() && c.args.size() == 1 && a.elems()[0].isScalar() && name != "mean" && name != "prod") {
    ScalarKind k = a.elems()[0].elem();
    return Type::scalar(name == "sum" && k == ScalarKind::Bool ? ScalarKind::Int64 : k);
  }
  if (a.isSparse() && name == "sum") {
    // SciPy's S.sum(axis) is a (1, n) or (n, 1) matrix; pydd gives the 1-D array.
    ScalarKind k = accumulatorKind(*c.library, a.elem());
    if (!axisGiven(c, 1)) return Type::scalar(k);
    if (!checkAxis(c, 1, 2, err)) return Type();
    return Type::array(k, 1);
  }
  if (!a.isArray()) return fail(err, 0, name + "() expects an array" + (name == "mean" || name == "prod" ? "" : " or a list") +
                                            ", got " + a.str());
  ScalarKind k = accumulatorKind(*c.library, a.elem());
  if (!checkAxes(c, 1, a.rank(), err)) return Type();
  return keepdimsType(c, reducedType(c, 1, a.rank(), k), 1, 2, err);
}

std::string emitReduced(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& a = c.args[0]->type;
  std::string name = c.callee;
  if (a.isList()) return "pydd::list_" + name + "<" + cxxType(c.type) + ">(" + args[0] + ")";
  bool typed = name != "min" && name != "max";
  std::string targs = typed ? "<" + std::string(cxxScalarType(c.type.elem())) + ">" : "";
  if (!axisGiven(c, 1)) return "pydd::" + name + targs + "(" + args[0] + ")";
  if (axisTupleSize(c, 1)) return "pydd::" + name + "_axes" + targs + "(" + args[0] + ", " + args[1] + ")";
  std::string axis = axisText(c, 1, a.rank(), args[1], "ValueError");
  if (a.isArray() && a.rank() == 1) return "(" + axis + ", pydd::" + name + targs + "(" + args[0] + "))";
  return "pydd::" + name + "_axis" + targs + "(" + args[0] + ", " + axis + ")";
}
std::string emitReduction(const Call& c, llvm::ArrayRef<std::string> args) {
  return keepdimsText(c, 1, 2, emitReduced(c, args), args);
}

/// min/max: of an array or a list (NumPy / Python), or of two or more
/// scalars (Python's builtin, in their promoted type).
Type minMaxType(const Call& c, TypeRuleError& err) {
  if (!c.args[0]->type.isScalar()) return reductionType(c, err);
  if (c.args.size() < 2) return fail(err, 0, std::string(c.callee) + "() of a single scalar is not defined");
  ScalarKind k = ScalarKind::Bool;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.args[i]->type.isScalar())
      return fail(err, static_cast<int>(i), std::string(c.callee) + "() of " + c.args[i]->type.str() + " and scalars is not defined");
    k = i ? promote(k, c.args[i]->type.elem()) : c.args[i]->type.elem();
  }
  return Type::scalar(k);
}
std::string emitMinMax(const Call& c, llvm::ArrayRef<std::string> args) {
  if (!c.args[0]->type.isScalar()) return emitReduction(c, args);
  std::string fn = std::string("pydd::") + c.callee + "_value";
  std::string s = castTo(c.type.elem(), args[0]);
  for (size_t i = 1; i < args.size(); ++i) s = fn + "(" + s + ", " + castTo(c.type.elem(), args[i]) + ")";
  return s;
}

/// argmin/argmax: the flat index (NumPy without axis), or int64 indices
/// along an axis; keepdims as the other reductions.
Type argType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + a.str());
  if (!axisGiven(c, 1)) return keepdimsType(c, Type::int64(), 1, 2, err);
  if (!checkAxis(c, 1, a.rank(), err)) return Type();
  return keepdimsType(c, a.rank() == 1 ? Type::int64() : Type::array(ScalarKind::Int64, a.rank() - 1), 1, 2, err);
}
std::string emitArg(const Call& c, llvm::ArrayRef<std::string> args) {
  int rank = c.args[0]->type.rank();
  std::string text = std::string("pydd::") + c.callee + "(" + args[0] + ")";
  if (axisGiven(c, 1)) {
    std::string axis = axisText(c, 1, rank, args[1], "ValueError");
    int64_t literal;
    // A 1-D array has one axis: a literal one was checked at compile time,
    // another is checked (and dropped) before the flat index.
    if (rank == 1 && !constantInt(*c.args[1], literal)) text = "(" + axis + ", " + text + ")";
    else if (rank > 1) text = std::string("pydd::") + c.callee + "_axis(" + args[0] + ", " + axis + ")";
  }
  return keepdimsText(c, 1, 2, text, args);
}

/// any/all of an array or a list of scalars.
Type anyAllType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (a.isArray() || (a.isList() && a.elems()[0].isScalar())) return Type::boolTy();
  return fail(err, 0, std::string(c.callee) + "() expects an array or a list, got " + a.str());
}
std::string emitAnyAll(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string(c.args[0]->type.isList() ? "pydd::list_" : "pydd::") + c.callee + "(" + args[0] + ")";
}

Type allcloseType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (i < 2 ? !(t.isArray() || t.isScalar()) : !t.isScalar())
      return fail(err, static_cast<int>(i), "allclose() does not take " + t.str());
  }
  return Type::boolTy();
}
std::string emitAllclose(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string rtol = c.args.size() > 2 ? "double(" + args[2] + ")" : "1e-05";
  std::string atol = c.args.size() > 3 ? "double(" + args[3] + ")" : "1e-08";
  return "pydd::allclose(" + args[0] + ", " + args[1] + ", " + rtol + ", " + atol + ")";
}

/// where(condition): indices of the true elements of a 1-D array;
/// where(condition, x, y): element-wise select with broadcasting.
Type whereType(const Call& c, TypeRuleError& err) {
  if (c.args.size() == 2) return fail(err, -1, "where() takes 1 or 3 arguments, got 2");
  if (c.args.size() == 1) {
    const Type& t = c.args[0]->type;
    if (!t.isArray() || t.rank() != 1)
      return fail(err, 0, "where() with one argument expects a 1-D array, got " + t.str());
    return Type::array(ScalarKind::Int64, 1);
  }
  int rank = 0;
  for (size_t i = 0; i < 3; ++i) {
    const Type& t = c.args[i]->type;
    if (t.isArray()) rank = std::max(rank, t.rank());
    else if (!t.isScalar()) return fail(err, static_cast<int>(i), "where() of " + t.str() + " is not supported");
  }
  const Expr &x = *c.args[1], &y = *c.args[2];
  ScalarKind k = commonKind(x.type.elem(), isWeakLiteral(x), y.type.elem(), isWeakLiteral(y));
  return rank ? Type::array(k, rank) : Type::scalar(k);
}
std::string emitWhere(const Call& c, llvm::ArrayRef<std::string> args) {
  if (c.args.size() == 1) return "pydd::nonzero(" + args[0] + ")";
  ScalarKind k = c.type.elem();
  // Both values are evaluated, as NumPy's arguments are (a fused loop computes
  // an element of each, where NumPy computes both arrays whole).
  if (!c.type.isArray())
    return "pydd::select(pydd::truthy(" + args[0] + "), " + castTo(k, args[1]) + ", " + castTo(k, args[2]) + ")";
  std::string r = cxxScalarType(k);
  return "pydd::where<" + r + ", " + r + ">(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

/// Reverse mode for sum, mean, max and min (frontend/Gradient.h): the
/// adjoint spread back over the reduced elements, g expanded at an integer
/// axis. max and min split g equally between tied elements, as JAX does
/// (NumPy defines no derivative). "" for what is not differentiated yet
/// (a tuple of axes; max/min along an axis).
std::string reductionDerivative(const Call& c, unsigned operand) {
  if (operand != 0) return "";
  std::string name = c.library->name;
  const Expr* axis = arg(c, 1);
  int64_t k = 0;
  bool whole = !axis || isAllAxes(*axis);
  if (!whole && !constantInt(*axis, k)) return "";
  const Expr* keep = arg(c, 2);
  bool keepdims = keep && keep->kind == ExprKind::BoolLit && static_cast<const BoolLit&>(*keep).value;
  std::string spread = whole || keepdims ? "g" : "expand_dims(g, " + std::to_string(k) + ")";
  if (name == "sum") return "zeros_like(a) + " + spread;
  if (name == "mean")
    return "zeros_like(a) + " + spread + " / " + (whole ? std::string("size(a)") : "a.shape[" + std::to_string(k) + "]");
  if ((name == "max" || name == "min") && whole && c.args.size() == 1) return "g * (a == r) / sum(a == r)";
  return "";
}

/// where(c, x, y): the adjoint goes to the chosen side (the formula names
/// the operands a, b, c: the condition is a).
std::string whereDerivative(const Call&, unsigned operand) {
  return operand == 1 ? "where(a, g, 0.0 * g)" : operand == 2 ? "where(a, 0.0 * g, g)" : "";
}

}  // namespace

void addReductionFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  // keepdims=True keeps the reduced axes (NumPy's); axis=None is all_axes().
  auto reduction = [&](const char* name, std::vector<const char*> params, const char* numpy, TypeRule rule, EmitRule emit,
                       const char* omp = nullptr) {
    LibraryFunction f = entry(name, C::Reduction, std::move(params), 1, numpy, rule, emit);
    f.defaults = {{"axis", "all_axes()"}};
    f.ompReduction = omp;
    out.push_back(f);
  };
  static const FoldRule kSumFold{"add", 0, false, std::nullopt, 8192}, kAnyFold{"bitwise_or", 0, true, ScalarKind::Int64},
      kAllFold{"bitwise_and", 1, true, ScalarKind::Int64};
  static const DerivativeRule kReductionDerivative{nullptr, nullptr, false, reductionDerivative};
  reduction("sum", {"a", "axis", "keepdims"}, "numpy.sum", reductionType, emitReduction);
  out.back().fold = &kSumFold;
  out.back().derivative = &kReductionDerivative;
  reduction("prod", {"a", "axis", "keepdims"}, "numpy.prod", reductionType, emitReduction);
  reduction("mean", {"a", "axis", "keepdims"}, "numpy.mean", reductionType, emitReduction);
  out.back().derivative = &kReductionDerivative;
  reduction("min", {"a", "axis", "keepdims", "*"}, "numpy.min / min", minMaxType, emitMinMax, "min");
  out.back().derivative = &kReductionDerivative;
  reduction("max", {"a", "axis", "keepdims", "*"}, "numpy.max / max", minMaxType, emitMinMax, "max");
  out.back().derivative = &kReductionDerivative;
  for (const char* name : {"argmin", "argmax"}) {
    LibraryFunction f = entry(name, C::Reduction, {"a", "axis", "keepdims"}, 1,
                              name == std::string("argmin") ? "numpy.argmin" : "numpy.argmax", argType, emitArg);
    f.defaults = {{"axis", "all_axes()"}};
    f.subscriptNote = name == std::string("argmin")
                          ? "argmin gives a flat index, as NumPy's; for coordinates write unravel_index(argmin(A), A.shape)"
                          : "argmax gives a flat index, as NumPy's; for coordinates write unravel_index(argmax(A), A.shape)";
    out.push_back(f);
  }
  out.push_back(entry("any", C::Reduction, {"a"}, 1, "numpy.any", anyAllType, emitAnyAll));
  out.back().fold = &kAnyFold;
  out.push_back(entry("all", C::Reduction, {"a"}, 1, "numpy.all", anyAllType, emitAnyAll));
  out.back().fold = &kAllFold;
  out.push_back(entry("allclose", C::Reduction, {"a", "b", "rtol", "atol"}, 2, "numpy.allclose", allcloseType, emitAllclose));
  out.back().defaults = {{"rtol", "1e-05"}, {"atol", "1e-08"}};  // np.allclose(a, b, atol=...) keeps NumPy's rtol
  LibraryFunction where = entry("where", C::Reduction, {"condition", "x", "y"}, 1, "numpy.where", whereType, emitWhere);
  where.positionalOnly = 3;
  where.subscriptNote =
      "where(c) with one argument gives the indices of the true elements of a 1-D c (the array NumPy's where(c)[0] is), "
      "so [0] takes the first index; write where(c) for the indices";
  where.warnOnFirstSubscript = true;
  // where(c, a, b) is element-wise, so fusion computes it per element.
  static const ElementRule kWhereRule{"", "where(c, a, b)", ElementRule::Compute::Common, false, false, false, false, 3};
  where.element = &kWhereRule;
  where.nonzeroIndices = true;
  static const DerivativeRule kWhereDerivative{nullptr, nullptr, false, whereDerivative};
  where.derivative = &kWhereDerivative;
  out.push_back(where);
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"sum", "prod", "mean", "where"});
}

}  // namespace pydd::catalog
