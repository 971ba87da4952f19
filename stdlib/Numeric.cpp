// NumPy's statistics, scans and constructors beyond single ufuncs and
// reductions (runtime/include/pydd/numeric.h): var, std, count_nonzero,
// trace, cumsum, cumprod, diff, linspace, eye, identity, outer, isclose,
// clip, expand_dims (np.newaxis), extract and take (x[mask], x[idx]);
// and all_axes(), NumPy's `axis=None`.
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

Type allAxesType(const Call&, TypeRuleError&) { return Type::tuple({}); }
std::string emitAllAxes(const Call&, llvm::ArrayRef<std::string>) { return "std::tuple<>{}"; }

bool integerArg(const Call& c, size_t index, const char* what, TypeRuleError& err) {
  const Expr* a = arg(c, index);
  if (a && !a->type.isInteger() && !a->type.isBool()) {
    fail(err, static_cast<int>(index), std::string(c.callee) + "() " + what + " must be an integer, got " + a->type.str());
    return false;
  }
  return true;
}

/// var(a, axis, ddof) / std: float64 unless float32, as NumPy's mean.
Type varianceType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + a.str());
  if (!integerArg(c, 2, "ddof", err)) return Type();
  ScalarKind k = a.elem() == ScalarKind::Float32 ? ScalarKind::Float32 : ScalarKind::Float64;
  if (!checkAxes(c, 1, a.rank(), err)) return Type();
  return keepdimsType(c, reducedType(c, 1, a.rank(), k), 1, 3, err);
}
std::string emitReducedVariance(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& a = c.args[0]->type;
  std::string fn = std::string("pydd::") + (std::string(c.callee) == "std" ? "stddev" : "var");
  std::string ddof = args.size() > 2 ? "int64_t(" + args[2] + ")" : "int64_t(0)";
  std::string r = cxxScalarType(c.type.elem());
  if (!axisGiven(c, 1)) return fn + "<" + r + ">(" + args[0] + ", " + ddof + ")";
  if (axisTupleSize(c, 1)) return fn + "_axes<" + r + ">(" + args[0] + ", " + args[1] + ", " + ddof + ")";
  std::string axis = axisText(c, 1, a.rank(), args[1], "ValueError");
  if (a.rank() == 1) return "(" + axis + ", " + fn + "<" + r + ">(" + args[0] + ", " + ddof + "))";
  return fn + "_axis<" + r + ">(" + args[0] + ", " + axis + ", " + ddof + ")";
}
std::string emitVariance(const Call& c, llvm::ArrayRef<std::string> args) {
  return keepdimsText(c, 1, 3, emitReducedVariance(c, args), args);
}

Type countNonzeroType(const Call& c, TypeRuleError& err) {
  if (!arg(c, 0)->type.isArray()) return fail(err, 0, "count_nonzero() expects an array, got " + arg(c, 0)->type.str());
  return Type::int64();
}
std::string emitCountNonzero(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::count_nonzero(" + args[0] + ")";
}

/// NumPy's sum/cumsum accumulator: floats and complex numbers keep their
/// kind, unsigned integers go to uint64, signed ones and bools to int64.
ScalarKind sumKind(ScalarKind k) {
  if (isFloatKind(k) || isComplexKind(k)) return k;
  return isUnsignedKind(k) ? ScalarKind::UInt64 : ScalarKind::Int64;
}

Type traceType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray() || a.rank() != 2) return fail(err, 0, "trace() expects a 2-D array, got " + a.str());
  return Type::scalar(sumKind(a.elem()));
}
std::string emitTrace(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::trace<") + cxxScalarType(c.type.elem()) + ">(" + args[0] + ")";
}

/// cumsum(a, axis) / cumprod: flattened without an axis; in the kind sum
/// accumulates in.
Type scanType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + a.str());
  ScalarKind k = sumKind(a.elem());
  if (!axisGiven(c, 1)) return Type::array(k, 1);
  if (!checkAxis(c, 1, a.rank(), err)) return Type();
  return Type::array(k, a.rank());
}
std::string emitScan(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string r = cxxScalarType(c.type.elem());
  if (!axisGiven(c, 1)) return std::string("pydd::") + c.callee + "<" + r + ">(" + args[0] + ")";
  std::string axis = axisText(c, 1, c.args[0]->type.rank(), args[1], "ValueError");
  return std::string("pydd::") + c.callee + "_axis<" + r + ">(" + args[0] + ", " + axis + ")";
}

/// diff(a, n=1, axis=-1): the input's type and rank.
Type diffType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "diff() expects an array, got " + a.str());
  if (!integerArg(c, 1, "n", err)) return Type();
  if (axisGiven(c, 2) && !checkAxis(c, 2, a.rank(), err)) return Type();
  return a;
}
std::string emitDiff(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string n = args.size() > 1 ? "int64_t(" + args[1] + ")" : "int64_t(1)";
  std::string axis = axisGiven(c, 2) ? axisText(c, 2, c.args[0]->type.rank(), args[2], "ValueError") : "-1";
  return "pydd::diff(" + args[0] + ", " + n + ", " + axis + ")";
}

/// linspace(start, stop, num=50, endpoint=True): float64.
Type linspaceType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 2; ++i)
    if (!arg(c, i)->type.isScalar() || arg(c, i)->type.isBool())
      return fail(err, static_cast<int>(i), "linspace() bounds must be numbers, got " + arg(c, i)->type.str());
  if (!integerArg(c, 2, "num", err)) return Type();
  if (arg(c, 3) && !arg(c, 3)->type.isBool()) return fail(err, 3, "linspace() endpoint must be a bool, got " + arg(c, 3)->type.str());
  return Type::array(ScalarKind::Float64, 1);
}
std::string emitLinspace(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string s = "pydd::linspace(double(" + args[0] + "), double(" + args[1] + ")";
  if (c.args.size() > 2) s += ", int64_t(" + args[2] + ")";
  if (c.args.size() > 3) s += ", bool(" + args[3] + ")";
  return s + ")";
}

/// eye(N, M=N, k=0, dtype=float64) and identity(n, dtype=float64).
Type eyeType(const Call& c, TypeRuleError& err) {
  bool identity = std::string(c.callee) == "identity";
  size_t dtype = identity ? 1 : 3;
  for (size_t i = 0; i < dtype; ++i)
    if (!(i == 1 && !axisGiven(c, 1)) && !integerArg(c, i, "size and diagonal", err)) return Type();
  const Expr* d = arg(c, dtype);
  if (d && !d->type.isScalar()) return fail(err, static_cast<int>(dtype), "dtype must be a type such as float64, got " + d->type.str());
  return Type::array(d ? d->type.elem() : ScalarKind::Float64, 2);
}
std::string emitEye(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string t = cxxScalarType(c.type.elem());
  std::string n = "int64_t(" + args[0] + ")";
  if (std::string(c.callee) == "identity") return "pydd::eye<" + t + ">(" + n + ", " + n + ")";
  std::string m = axisGiven(c, 1) ? "int64_t(" + args[1] + ")" : n;  // M=None: square
  std::string k = c.args.size() > 2 ? "int64_t(" + args[2] + ")" : "int64_t(0)";
  return "pydd::eye<" + t + ">(" + n + ", " + m + ", " + k + ")";
}

/// outer(a, b): 2-D in the promoted kind (NumPy's multiply of the ravels).
Type outerType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 2; ++i)
    if (!arg(c, i)->type.isArray()) return fail(err, static_cast<int>(i), "outer() expects arrays, got " + arg(c, i)->type.str());
  return Type::array(promote(arg(c, 0)->type.elem(), arg(c, 1)->type.elem()), 2);
}
std::string emitOuter(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string k = cxxScalarType(c.type.elem());
  return "pydd::outer<" + k + ", " + k + ">(" + args[0] + ", " + args[1] + ")";
}

/// isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False): bool, compared in
/// the operands' common kind widened to a float (NumPy's result_type(b, 1.)).
ScalarKind closeKind(const Call& c) {
  const Expr &a = *c.args[0], &b = *c.args[1];
  ScalarKind k = commonKind(a.type.elem(), isWeakLiteral(a), b.type.elem(), isWeakLiteral(b));
  return isFloatKind(k) ? k : ScalarKind::Float64;
}
Type iscloseType(const Call& c, TypeRuleError& err) {
  int rank = 0;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (i < 2 ? !(t.isArray() || t.isScalar()) : !t.isScalar())
      return fail(err, static_cast<int>(i), "isclose() does not take " + t.str());
    if (t.isArray()) rank = std::max(rank, t.rank());
  }
  return rank ? Type::array(ScalarKind::Bool, rank) : Type::boolTy();
}
std::string emitIsclose(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string k = cxxScalarType(closeKind(c));
  std::string test = "pydd::op::isclose<" + k + ">{" + k + "(" + (c.args.size() > 2 ? args[2] : "1e-05") + "), " + k + "(" +
                     (c.args.size() > 3 ? args[3] : "1e-08") + "), " + (c.args.size() > 4 ? "bool(" + args[4] + ")" : "false") + "}";
  if (!c.type.isArray()) return test + "(" + castTo(closeKind(c), args[0]) + ", " + castTo(closeKind(c), args[1]) + ")";
  return "pydd::map2<bool, " + k + ">(\"isclose\", " + test + ", " + args[0] + ", " + args[1] + ")";
}

/// clip(a, lo, hi): minimum(maximum(a, lo), hi) in the common kind, NaN
/// propagating, as NumPy's clip.
Type clipType(const Call& c, TypeRuleError& err) {
  int rank = 0;
  ScalarKind k = ScalarKind::Bool;
  bool weak = true;
  for (size_t i = 0; i < 3; ++i) {
    const Expr& e = *c.args[i];
    if (e.type.isArray()) rank = std::max(rank, e.type.rank());
    else if (!e.type.isScalar()) return fail(err, static_cast<int>(i), "clip() does not take " + e.type.str());
    bool w = isWeakLiteral(e);
    k = i ? commonKind(k, weak, e.type.elem(), w) : e.type.elem();
    weak = i ? weak && w : w;
  }
  return rank ? Type::array(k, rank) : Type::scalar(k);
}
std::string emitClip(const Call& c, llvm::ArrayRef<std::string> args) {
  ScalarKind k = c.type.elem();
  std::string t = cxxScalarType(k);
  if (!c.type.isArray())
    return "pydd::op::minimum{}(pydd::op::maximum{}(" + castTo(k, args[0]) + ", " + castTo(k, args[1]) + "), " +
           castTo(k, args[2]) + ")";
  std::string lower = "pydd::map2<" + t + ", " + t + ">(\"clip\", pydd::op::maximum{}, " + args[0] + ", " + args[1] + ")";
  return "pydd::map2<" + t + ", " + t + ">(\"clip\", pydd::op::minimum{}, " + lower + ", " + args[2] + ")";
}

/// expand_dims(a, axis) (also `a[:, np.newaxis]`): a view with a new
/// length-1 axis; the axis is a literal, as it decides the result's rank.
Type expandDimsType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "expand_dims() (or indexing with np.newaxis) needs an array, got " + a.str());
  int64_t axis;
  if (!constantInt(*arg(c, 1), axis)) return fail(err, 1, "expand_dims() needs a literal axis");
  if (a.rank() >= 8) return fail(err, 0, "arrays must have 1 to 8 dimensions");
  if (!checkAxis(c, 1, a.rank() + 1, err)) return Type();
  return Type::array(a.elem(), a.rank() + 1);
}
std::string emitExpandDims(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::keep_axis_dim(" + args[0] + ", " + axisText(c, 1, c.type.rank(), args[1], "ValueError") + ")";
}

/// extract(condition, arr): arr[condition] for a bool mask of arr's shape.
Type extractType(const Call& c, TypeRuleError& err) {
  const Type &m = arg(c, 0)->type, &a = arg(c, 1)->type;
  if (!a.isArray()) return fail(err, 1, "extract() needs an array, got " + a.str());
  if (!m.isArray() || m.elem() != ScalarKind::Bool || m.rank() != a.rank())
    return fail(err, 0, "a boolean mask must be a bool array of the indexed array's rank (" + std::to_string(a.rank()) +
                            "), got " + m.str());
  return Type::array(a.elem(), 1);
}
std::string emitExtract(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::extract(" + args[0] + ", " + args[1] + ")";
}

Type complexIntoReal(const Type& a, const Type& v, TypeRuleError& err);

/// The rank of a[..., indices, ...] for an index array of rank m on one
/// axis of a (np.take's result), or 0 (reported) above the largest rank.
int gatheredRank(const Type& a, int consumed, int m, TypeRuleError& err) {
  int r = a.rank() - consumed + m;
  if (r > 8) return fail(err, 0, "the result would have " + std::to_string(r) + " dimensions; arrays have at most 8"), 0;
  return r;
}

/// When argument 0 is a view that integer indices make (sema's A[i, :]
/// for A[i, idx]): how many axes they removed before `axis`, the view's
/// axis the selection applies to, as ", n" for the runtime, which names
/// A's axis in its IndexError as NumPy does. Empty otherwise.
std::string axisShift(const Call& c, size_t axisIndex) {
  int64_t axis;
  auto* view = dyn_cast<Index>(c.args[0].get());
  if (!view || !constantInt(*arg(c, axisIndex), axis)) return "";
  int slices = 0, ints = 0;
  for (auto& i : view->indices) {
    if (i->kind == ExprKind::Slice) {
      if (slices++ == axis) break;
    } else {
      ++ints;
    }
  }
  return ints ? ", " + std::to_string(ints) : "";
}

/// take(a, indices, axis): a[indices] for a 1-D array a, and along `axis`
/// of any array (a[:, indices] is take(a, indices, 1)); integer indices.
/// Without an axis NumPy flattens a, which pydd does not.
Type takeType(const Call& c, TypeRuleError& err) {
  const Type &a = arg(c, 0)->type, &i = arg(c, 1)->type;
  if (!a.isArray()) return fail(err, 0, "take() needs an array, got " + a.str());
  if (!i.isArray() || !isIntegerKind(i.elem())) return fail(err, 1, "take() indices must be an integer array, got " + i.str());
  if (!axisGiven(c, 2)) {
    if (a.rank() != 1)
      return fail(err, 0, "take() without an axis flattens " + a.str() + ", which pydd does not support; give the axis");
    return Type::array(a.elem(), i.rank());
  }
  if (!checkAxis(c, 2, a.rank(), err)) return Type();
  int r = gatheredRank(a, 1, i.rank(), err);
  return r ? Type::array(a.elem(), r) : Type();
}
std::string emitTake(const Call& c, llvm::ArrayRef<std::string> args) {
  if (!axisGiven(c, 2)) return "pydd::take(" + args[0] + ", " + args[1] + ")";
  return "pydd::take(" + args[0] + ", " + args[1] + ", " + axisText(c, 2, c.args[0]->type.rank(), args[2], "ValueError") +
         axisShift(c, 2) + ")";
}

/// A boolean mask on the axes [axis, axis + mask's rank) of a: the axis a
/// literal, the mask's rank within a's.
bool maskOnAxes(const Call& c, size_t maskIndex, size_t axisIndex, TypeRuleError& err) {
  const Type &a = arg(c, 0)->type, &m = arg(c, maskIndex)->type;
  int64_t axis;
  if (!m.isArray() || m.elem() != ScalarKind::Bool)
    return fail(err, static_cast<int>(maskIndex), "a boolean mask must be a bool array, got " + m.str()), false;
  if (!constantInt(*arg(c, axisIndex), axis) || axis < 0 || axis + m.rank() > a.rank())
    return fail(err, static_cast<int>(maskIndex), "a " + std::to_string(m.rank()) + "-D mask does not fit the axes of " +
                                                      a.str() + " from its position on"),
           false;
  return true;
}

/// mask_take(a, mask, axis): a[mask] (a[:, mask] for axis 1...) for a bool
/// mask of a lower rank than a, what sema makes of that read: the mask's
/// axes become one, of the selected positions.
Type maskTakeType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "indexing with a boolean mask needs an array, got " + a.str());
  if (!maskOnAxes(c, 1, 2, err)) return Type();
  return Type::array(a.elem(), a.rank() - arg(c, 1)->type.rank() + 1);
}
std::string emitMaskTake(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::mask_take(" + args[0] + ", " + args[1] + ", " + args[2] + axisShift(c, 2) + ")";
}

/// Values stored through an index array or a mask: a scalar or an array
/// that may broadcast to the indexing result (of rank r).
Type storedValues(const Type& a, const Type& v, int r, TypeRuleError& err) {
  if (!v.isScalar() && !(v.isArray() && v.rank() <= r))
    return fail(err, 2, "the values stored through an index array or a mask must be a scalar or an array that broadcasts "
                        "to the indexing result (" + std::to_string(r) + "-D), got " + v.str());
  if (isComplexKind(v.elem()) && !isComplexKind(a.elem())) return complexIntoReal(a, v, err);
  return Type::voidTy();
}

/// NumPy's setitem refuses complex values for a real array (TypeError).
Type complexIntoReal(const Type& a, const Type& v, TypeRuleError& err) {
  return fail(err, 2, "cannot store " + v.str() + " into an array of " + scalarName(a.elem()) + "; take .real, .imag or abs(...)");
}

/// mask_assign(a, mask, values): `a[mask] = values` (what sema makes of
/// that store); values a scalar or a 1-D array, as NumPy requires.
Type maskAssignType(const Call& c, TypeRuleError& err) {
  const Type &a = arg(c, 0)->type, &m = arg(c, 1)->type, &v = arg(c, 2)->type;
  if (!a.isArray()) return fail(err, 0, "mask_assign() needs an array, got " + a.str());
  if (arg(c, 3)) {  // a[mask] = v for a mask of a lower rank, a[:, mask] = v...
    if (!maskOnAxes(c, 1, 3, err)) return Type();
    return storedValues(a, v, a.rank() - m.rank() + 1, err);
  }
  if (!m.isArray() || m.elem() != ScalarKind::Bool || m.rank() != a.rank())
    return fail(err, 1, "a boolean mask must be a bool array of the indexed array's rank (" + std::to_string(a.rank()) +
                            "), got " + m.str());
  if (!v.isScalar() && !(v.isArray() && v.rank() == 1))
    return fail(err, 2, "storing through a boolean mask takes a scalar or a 1-D array (one value per selected element), got " +
                            v.str());
  if (isComplexKind(v.elem()) && !isComplexKind(a.elem())) return complexIntoReal(a, v, err);
  return Type::voidTy();
}
/// index_assign(a, indices, values): `a[indices] = values` for a 1-D a;
/// values broadcast to the shape of indices.
Type indexAssignType(const Call& c, TypeRuleError& err) {
  const Type &a = arg(c, 0)->type, &i = arg(c, 1)->type, &v = arg(c, 2)->type;
  if (arg(c, 3)) {  // a[idx] = v, a[:, idx] = v on an array of any rank
    if (!a.isArray()) return fail(err, 0, "index_assign() needs an array, got " + a.str());
    if (!i.isArray() || !isIntegerKind(i.elem()))
      return fail(err, 1, "index_assign() indices must be an integer array, got " + i.str());
    if (!checkAxis(c, 3, a.rank(), err)) return Type();
    int r = gatheredRank(a, 1, i.rank(), err);
    return r ? storedValues(a, v, r, err) : Type();
  }
  if (!a.isArray() || a.rank() != 1)
    return fail(err, 0, "storing through an integer index array is supported on 1-D arrays, got " + a.str());
  if (!i.isArray() || !isIntegerKind(i.elem()))
    return fail(err, 1, "index_assign() indices must be an integer array, got " + i.str());
  if (!v.isScalar() && !(v.isArray() && v.rank() <= i.rank()))
    return fail(err, 2, "the values stored through an index array must be a scalar or an array that broadcasts to the "
                            "indices' shape, got " + v.str());
  if (isComplexKind(v.elem()) && !isComplexKind(a.elem())) return complexIntoReal(a, v, err);
  return Type::voidTy();
}
std::string emitAssignThrough(const Call& c, llvm::ArrayRef<std::string> args) {
  if (args.size() > 3 && !args[3].empty())
    return std::string("pydd::") + c.callee + "(" + args[0] + ", " + args[1] + ", " + args[2] + ", " +
           axisText(c, 3, c.args[0]->type.rank(), args[3], "ValueError") + axisShift(c, 3) + ")";
  return std::string("pydd::") + c.callee + "(" + args[0] + ", " + args[1] + ", " + args[2] + ")";
}

}  // namespace

void addNumericFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  out.push_back(entry("all_axes", C::Query, {}, 0, "None (as an axis)", allAxesType, emitAllAxes));
  for (const char* name : {"var", "std"}) {
    LibraryFunction f = entry(name, C::Reduction, {"a", "axis", "ddof", "keepdims"}, 1,
                              name == std::string("var") ? "numpy.var" : "numpy.std", varianceType, emitVariance);
    f.defaults = {{"axis", "all_axes()"}, {"ddof", "0"}};
    out.push_back(f);
  }
  out.push_back(entry("count_nonzero", C::Reduction, {"a"}, 1, "numpy.count_nonzero", countNonzeroType, emitCountNonzero));
  out.push_back(entry("trace", C::Reduction, {"a"}, 1, "numpy.trace", traceType, emitTrace));
  // axis=None (NumPy's default): the flattened array.
  out.push_back(entry("cumsum", C::Reduction, {"a", "axis"}, 1, "numpy.cumsum", scanType, emitScan));
  out.back().defaults = {{"axis", "all_axes()"}};
  out.push_back(entry("cumprod", C::Reduction, {"a", "axis"}, 1, "numpy.cumprod", scanType, emitScan));
  out.back().defaults = {{"axis", "all_axes()"}};
  LibraryFunction diff = entry("diff", C::Reduction, {"a", "n", "axis"}, 1, "numpy.diff", diffType, emitDiff);
  diff.defaults = {{"n", "1"}};
  out.push_back(diff);
  LibraryFunction linspace = entry("linspace", C::Allocation, {"start", "stop", "num", "endpoint"}, 2, "numpy.linspace",
                                   linspaceType, emitLinspace);
  linspace.defaults = {{"num", "50"}};
  linspace.returnsNew = true;
  out.push_back(linspace);
  LibraryFunction eye = entry("eye", C::Allocation, {"N", "M", "k", "dtype"}, 1, "numpy.eye", eyeType, emitEye);
  eye.defaults = {{"M", "all_axes()"}, {"k", "0"}};  // all_axes() is None: M = N
  eye.returnsNew = true;
  out.push_back(eye);
  out.push_back(entry("identity", C::Allocation, {"n", "dtype"}, 1, "numpy.identity", eyeType, emitEye));
  out.back().returnsNew = true;
  LibraryFunction expand = entry("expand_dims", C::Query, {"a", "axis"}, 2, "numpy.expand_dims", expandDimsType, emitExpandDims);
  expand.returnsView = true;
  out.push_back(expand);
  out.push_back(entry("extract", C::Query, {"condition", "arr"}, 2, "numpy.extract", extractType, emitExtract));
  out.push_back(entry("take", C::Query, {"a", "indices", "axis"}, 2, "numpy.take", takeType, emitTake));
  out.back().defaults = {{"axis", "all_axes()"}};  // NumPy's None: the flattened array
  // The read x[mask] for a mask of a lower rank, x[:, mask] (sema writes it
  // as this call; numpy.extract flattens instead).
  out.push_back(entry("mask_take", C::Query, {"a", "mask", "axis"}, 3, "a[(slice(None),) * axis + (mask,)]", maskTakeType,
                      emitMaskTake));
  // The stores x[mask] = v and x[idx] = v, x[:, idx] = v... (sema writes
  // them as these calls, with the axis when x has more than the index's).
  LibraryFunction maskAssign = entry("mask_assign", C::Query, {"a", "mask", "values", "axis"}, 3, "a[mask] = values",
                                     maskAssignType, emitAssignThrough);
  maskAssign.writesArgs = 1;
  out.push_back(maskAssign);
  LibraryFunction indexAssign = entry("index_assign", C::Query, {"a", "indices", "values", "axis"}, 3, "a[indices] = values",
                                      indexAssignType, emitAssignThrough);
  indexAssign.writesArgs = 1;
  out.push_back(indexAssign);
  out.push_back(entry("outer", C::LinearAlgebra, {"a", "b"}, 2, "numpy.outer", outerType, emitOuter));
  LibraryFunction isclose = entry("isclose", C::Elementwise, {"a", "b", "rtol", "atol", "equal_nan"}, 2, "numpy.isclose",
                                  iscloseType, emitIsclose);
  isclose.defaults = {{"rtol", "1e-05"}, {"atol", "1e-08"}};
  out.push_back(isclose);
  out.push_back(entry("clip", C::Elementwise, {"a", "a_min", "a_max"}, 3, "numpy.clip", clipType, emitClip));
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"expand_dims", "extract", "take", "mask_take", "mask_assign", "index_assign", "all_axes"});
}

}  // namespace pydd::catalog
