// Element-wise functions: NumPy ufuncs on any mix of arrays and scalars,
// with broadcasting. Operators on arrays arrive here too: sema rewrites
// `a + b` to add(a, b) when an operand is an array.
#include <algorithm>
#include <cmath>
#include <iterator>

#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

using Compute = ElementRule::Compute;

/// The element-wise functions NumPy defines on complex numbers that pydd
/// implements: arithmetic, equality, logic, the transcendentals and the
/// complex-only ones. Not the orderings (complex numbers have none, in
/// Python), floor division and modulo (Python refuses them), rounding,
/// sign (NumPy 1 and 2 disagree), arctan2, hypot or the bitwise functions.
bool definedOnComplex(llvm::StringRef name) {
  static const llvm::StringRef names[] = {
      "add", "sub", "mul", "div", "pow", "eq", "neq", "logical_and", "logical_or", "logical_xor", "logical_not",
      "elemwise_not", "minus", "abs", "isnan", "isinf", "sqrt", "exp", "log", "cos", "sin", "tan", "acos", "asin",
      "atan", "tanh", "sinh", "cosh", "log2", "log10", "exp2", "expm1", "log1p", "square", "conj", "conjugate",
      "angle"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// Why a function is missing on complex operands, for the error.
const char* complexNote(llvm::StringRef name) {
  static const llvm::StringRef ordered[] = {"lt", "gt", "le", "ge", "maximum", "minimum"};
  if (std::find(std::begin(ordered), std::end(ordered), name) != std::end(ordered))
    return "complex numbers have no order (compare .real or abs(...))";
  return "take .real, .imag or abs(...) first";
}

Type elementwiseType(const Call& c, TypeRuleError& err) {
  const ElementRule& rule = *c.library->element;
  int rank = 0;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (t.isArray()) rank = std::max(rank, t.rank());
    else if (!t.isScalar())
      return fail(err, static_cast<int>(i), std::string(c.callee) + "() of " + t.str() + " is not supported");
  }
  ScalarKind compute = elementComputeKind(c);
  ScalarKind operands = elementOperandKind(c);
  if (rule.compute == Compute::Float && isIntegerKind(operands) && bitWidth(operands) == 8)
    return fail(err, -1, std::string(c.callee) + " (" + rule.formula + ") of " + scalarName(operands) +
                             " operands is float16 in NumPy, which pydd lacks; convert them to float32 first");
  if (rule.rejectsBool && compute == ScalarKind::Bool)
    return fail(err, -1, std::string(c.callee) + " (" + rule.formula +
                             ") is not supported on bool operands; convert them to a number type first");
  if (rule.rejectsFloat && isFloatKind(compute))
    return fail(err, -1, std::string(c.callee) + " (" + rule.formula + ") is not supported on " + scalarName(compute) +
                             " operands; NumPy defines it on integers and bools only");
  if (isComplexKind(compute) && !definedOnComplex(c.library->name))
    return fail(err, -1, std::string(c.callee) + " (" + rule.formula + ") is not supported on " + scalarName(compute) +
                             " operands: " + complexNote(c.library->name));
  ScalarKind result = rule.resultBool ? ScalarKind::Bool : compute;
  if (rule.realResult) result = complexPartKind(result);
  return rank ? Type::array(result, rank) : Type::scalar(result);
}

/// Arrays go through the runtime's broadcasting loops; scalars apply the
/// same functor directly.
std::string emitElementwise(const Call& c, llvm::ArrayRef<std::string> args) {
  const ElementRule& rule = *c.library->element;
  ScalarKind compute = elementComputeKind(c);
  std::string functor = std::string(rule.functor) + "{}";
  if (!c.type.isArray()) {
    std::string s = functor + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + castTo(compute, args[i]);
    return castTo(c.type.elem(), s + ")");
  }
  std::vector<std::string> operands = {quoted(c.library->name), functor};
  operands.insert(operands.end(), args.begin(), args.end());
  std::string map = args.size() == 1 ? "pydd::map1<" : "pydd::map2<";
  return callText(map + cxxScalarType(c.type.elem()) + ", " + cxxScalarType(compute) + ">", operands);
}

// ---- builtins whose scalar meaning is Python's ------------------------------------

/// abs(x): Python's abs for a scalar (bool gives int), NumPy's absolute
/// for an array (bool stays bool).
Type absType(const Call& c, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  if (t.isScalar()) return t.isBool() ? Type::int64() : Type::scalar(complexPartKind(t.elem()));
  return elementwiseType(c, err);
}
std::string emitAbs(const Call& c, llvm::ArrayRef<std::string> args) {
  if (c.type.isScalar() && arg(c, 0)->type.isComplex()) return std::string("pydd::abs_value(") + args[0] + ")";
  if (c.type.isScalar()) return std::string("pydd::abs_value(") + castTo(c.type.elem(), args[0]) + ")";
  return emitElementwise(c, args);
}

/// pow(a, b): `a ** b` for scalars (the language's power), NumPy's power
/// on arrays.
Type powType(const Call& c, TypeRuleError& err) {
  Type t = elementwiseType(c, err);
  if (t.isScalar() && !t.isFloat() && !arg(c, 0)->type.isArray()) return t.isBool() ? Type::int64() : t;
  return t;
}
std::string emitPow(const Call& c, llvm::ArrayRef<std::string> args) {
  if (c.type.isScalar())
    return "pydd::power(" + castTo(c.type.elem(), args[0]) + ", " + castTo(c.type.elem(), args[1]) + ")";
  return emitElementwise(c, args);
}

/// log_base(x, base), which `log(x, base)` calls: Python's math.log(x,
/// base) on two scalars (float64; ValueError for a value <= 0,
/// ZeroDivisionError for base 1), NumPy's log(x) / log(base) when an
/// operand is an array (float32 only when both operands are float32).
ScalarKind logKind(const Type& t) { return t.elem() == ScalarKind::Float32 ? ScalarKind::Float32 : ScalarKind::Float64; }
Type logBaseType(const Call& c, TypeRuleError& err) {
  int rank = 0;
  for (size_t i = 0; i < 2; ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isScalar() && !t.isArray())
      return fail(err, static_cast<int>(i), "log() of " + t.str() + " is not supported");
    if (t.isArray() && t.isBool())
      return fail(err, static_cast<int>(i), "log (log(a)) is not supported on bool arrays; convert them to a number type first");
    if (t.isArray()) rank = std::max(rank, t.rank());
  }
  if (!rank) return Type::float64();
  return Type::array(promote(logKind(c.args[0]->type), logKind(c.args[1]->type)), rank);
}
std::string emitLogBase(const Call& c, llvm::ArrayRef<std::string> args) {
  if (!c.type.isArray()) return "pydd::log_base_value(double(" + args[0] + "), double(" + args[1] + "))";
  auto logOf = [&](size_t i) {
    std::string k = cxxScalarType(logKind(c.args[i]->type));
    return "pydd::map1<" + k + ", " + k + ">(\"log\", pydd::op::log{}, " + args[i] + ")";
  };
  std::string r = cxxScalarType(c.type.elem());
  return "pydd::map2<" + r + ", " + r + ">(\"log\", pydd::op::truediv{}, " + logOf(0) + ", " + logOf(1) + ")";
}

// ---- parts of complex numbers ------------------------------------------------

/// real(x), imag(x) (and x.real, x.imag): of a scalar, the part (of a real
/// number, itself and zero); of a complex array, a view of the parts'
/// memory (as NumPy's, so stores through it change x); of a real array,
/// x itself and a new array of zeros.
Type partType(const Call& c, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  if (t.isScalar()) return Type::scalar(complexPartKind(t.elem()));
  if (t.isArray()) return Type::array(complexPartKind(t.elem()), t.rank());
  return fail(err, 0, std::string(c.callee) + "() expects a number or an array, got " + t.str());
}
std::string emitPart(const Call& c, llvm::ArrayRef<std::string> args) {
  bool imag = std::string(c.library->name) == "imag";
  const char* fn = c.type.isArray() ? (imag ? "pydd::imag_view" : "pydd::real_view") : (imag ? "pydd::imag_part" : "pydd::real_part");
  return std::string(fn) + "(" + args[0] + ")";
}

/// complex(re, im) on two real scalars: Python's complex(re, im), complex128.
Type complexPartsType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < 2; ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isScalar() || t.isComplex())
      return fail(err, static_cast<int>(i), "complex() takes two real numbers, got " + t.str() +
                                                 (t.isArray() ? " (for arrays write re + 1j * im)" : ""));
  }
  return Type::complex128();
}
std::string emitComplexParts(const Call&, llvm::ArrayRef<std::string> args) {
  return "std::complex<double>(double(" + args[0] + "), double(" + args[1] + "))";
}

/// x.astype(T): a new array of x's elements converted to T (a complex
/// array to a real type keeps the real part, as NumPy's astype does).
Type astypeType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  const Type& d = arg(c, 1)->type;
  if (!a.isArray()) return fail(err, 0, "astype() expects an array, got " + a.str());
  if (!d.isScalar() || c.args[1]->kind != ExprKind::Cast)
    return fail(err, 1, "astype() takes a dtype, such as float64 or np.complex128");
  return Type::array(d.elem(), a.rank());
}
std::string emitAstype(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::astype<") + cxxScalarType(c.type.elem()) + ">(" + args[0] + ")";
}

void addComplexParts(std::vector<LibraryFunction>& out) {
  for (const char* name : {"real", "imag"}) {
    LibraryFunction f = entry(name, LibraryCategory::Query, {"val"}, 1, std::string(name) == "real" ? "numpy.real" : "numpy.imag",
                              partType, emitPart);
    f.returnsView = true;
    out.push_back(std::move(f));
  }
  out.push_back(entry("complex_parts", LibraryCategory::Query, {"real", "imag"}, 2, "complex(real, imag)",
                      complexPartsType, emitComplexParts));
  LibraryFunction astype = entry("astype", LibraryCategory::Allocation, {"a", "dtype"}, 2, "numpy.ndarray.astype",
                                 astypeType, emitAstype);
  astype.returnsNew = true;
  out.push_back(std::move(astype));
  acceptComplex(out, {"real", "imag", "complex_parts", "astype"});
}

}  // namespace

void addElementwiseFunctions(std::vector<LibraryFunction>& out) {
  struct Spec {
    const char* name;
    const char* numpy;
    ElementRule rule;
    /// The reverse-mode rule (frontend/Gradient.h), beside the formula; none
    /// for comparisons, logic and the bitwise and complex-only functions.
    DerivativeRule derivative = {};
  };
  // Static storage: entries point at their rules.
  static const Spec binary[] = {
      {"add", "numpy.add", {"pydd::op::add", "a + b", Compute::Common, false, false}, {"g", "g"}},
      {"sub", "numpy.subtract", {"pydd::op::sub", "a - b", Compute::Common, false, true}, {"g", "-g"}},
      {"mul", "numpy.multiply", {"pydd::op::mul", "a * b", Compute::Common, false, false}, {"g * b", "g * a"}},
      {"div", "numpy.true_divide", {"pydd::op::truediv", "a / b", Compute::TrueDivide, false, false}, {"g / b", "-g * a / (b * b)"}},
      {"floordiv", "numpy.floor_divide", {"pydd::op::floordiv", "a // b", Compute::Common, false, true}},
      {"mod", "numpy.mod", {"pydd::op::mod", "a % b", Compute::Common, false, true}},
      {"pow", "numpy.power", {"pydd::op::power", "a ** b", Compute::Common, false, true, false, false, 0, false, true}, {"g * b * a ** (b - 1.0)", "g * r * log(a)"}},
      {"maximum", "numpy.maximum", {"pydd::op::maximum", "maximum(a, b)", Compute::Common, false, false}, {"g * (1.0 * (a > b) + 0.5 * (a == b))", "g * (1.0 * (b > a) + 0.5 * (a == b))"}},
      {"minimum", "numpy.minimum", {"pydd::op::minimum", "minimum(a, b)", Compute::Common, false, false}, {"g * (1.0 * (a < b) + 0.5 * (a == b))", "g * (1.0 * (b < a) + 0.5 * (a == b))"}},
      {"eq", "numpy.equal", {"pydd::op::eq", "a == b", Compute::Common, true, false}},
      {"neq", "numpy.not_equal", {"pydd::op::ne", "a != b", Compute::Common, true, false}},
      {"lt", "numpy.less", {"pydd::op::lt", "a < b", Compute::Common, true, false}},
      {"gt", "numpy.greater", {"pydd::op::gt", "a > b", Compute::Common, true, false}},
      {"le", "numpy.less_equal", {"pydd::op::le", "a <= b", Compute::Common, true, false}},
      {"ge", "numpy.greater_equal", {"pydd::op::ge", "a >= b", Compute::Common, true, false}},
      {"logical_and", "numpy.logical_and", {"pydd::op::logical_and", "a and b", Compute::Bool, true, false}},
      {"logical_or", "numpy.logical_or", {"pydd::op::logical_or", "a or b", Compute::Bool, true, false}},
      // runtime/include/pydd/ufuncs.h
      {"arctan2", "numpy.arctan2", {"pydd::op::arctan2", "arctan2(a, b)", Compute::Float, false, true}, {"g * b / (a * a + b * b)", "-g * a / (a * a + b * b)"}},
      {"hypot", "numpy.hypot", {"pydd::op::hypot", "hypot(a, b)", Compute::Float, false, true}, {"g * a / r", "g * b / r"}},
      {"logical_xor", "numpy.logical_xor", {"pydd::op::logical_xor", "logical_xor(a, b)", Compute::Bool, true, false}},
      {"bitwise_and", "numpy.bitwise_and", {"pydd::op::bitwise_and", "a & b", Compute::Common, false, false, true}},
      {"bitwise_or", "numpy.bitwise_or", {"pydd::op::bitwise_or", "a | b", Compute::Common, false, false, true}},
      {"bitwise_xor", "numpy.bitwise_xor", {"pydd::op::bitwise_xor", "a ^ b", Compute::Common, false, false, true}},
  };
  // After `rejectsBool`: rejectsFloat, preservesZero (ElementRule).
  static const Spec unary[] = {
      {"minus", "numpy.negative", {"pydd::op::negative", "-a", Compute::Common, false, true, false, true}, {"-g"}},
      {"abs", "numpy.absolute", {"pydd::op::absolute", "abs(a)", Compute::Common, false, false, false, true, 0, true}, {"g * sign(a)"}},
      {"isnan", "numpy.isnan", {"pydd::op::isnan", "isnan(a)", Compute::Common, true, false}},
      {"isinf", "numpy.isinf", {"pydd::op::isinf", "isinf(a)", Compute::Common, true, false}},
      {"logical_not", "numpy.logical_not", {"pydd::op::logical_not", "not a", Compute::Bool, true, false}},
      {"elemwise_not", "numpy.logical_not", {"pydd::op::logical_not", "not a", Compute::Bool, true, false}},
      {"sqrt", "numpy.sqrt", {"pydd::op::sqrt", "sqrt(a)", Compute::Float, false, true, false, true}, {"0.5 * g / r"}},
      {"exp", "numpy.exp", {"pydd::op::exp", "exp(a)", Compute::Float, false, true}, {"g * r"}},
      {"log", "numpy.log", {"pydd::op::log", "log(a)", Compute::Float, false, true}, {"g / a"}},
      {"cos", "numpy.cos", {"pydd::op::cos", "cos(a)", Compute::Float, false, true}, {"-g * sin(a)"}},
      {"sin", "numpy.sin", {"pydd::op::sin", "sin(a)", Compute::Float, false, true, false, true}, {"g * cos(a)"}},
      {"tan", "numpy.tan", {"pydd::op::tan", "tan(a)", Compute::Float, false, true, false, true}, {"g * (1.0 + r * r)"}},
      {"acos", "numpy.arccos", {"pydd::op::arccos", "acos(a)", Compute::Float, false, true}, {"-g / sqrt(1.0 - a * a)"}},
      {"asin", "numpy.arcsin", {"pydd::op::arcsin", "asin(a)", Compute::Float, false, true, false, true}, {"g / sqrt(1.0 - a * a)"}},
      {"atan", "numpy.arctan", {"pydd::op::arctan", "atan(a)", Compute::Float, false, true, false, true}, {"g / (1.0 + a * a)"}},
      {"floor", "numpy.floor", {"pydd::op::floor", "floor(a)", Compute::Common, false, true, false, true}, {nullptr, nullptr, true}},
      {"ceil", "numpy.ceil", {"pydd::op::ceil", "ceil(a)", Compute::Common, false, true, false, true}, {nullptr, nullptr, true}},
      // runtime/include/pydd/ufuncs.h
      {"tanh", "numpy.tanh", {"pydd::op::tanh", "tanh(a)", Compute::Float, false, true, false, true}, {"g * (1.0 - r * r)"}},
      {"sinh", "numpy.sinh", {"pydd::op::sinh", "sinh(a)", Compute::Float, false, true, false, true}, {"g * cosh(a)"}},
      {"cosh", "numpy.cosh", {"pydd::op::cosh", "cosh(a)", Compute::Float, false, true}, {"g * sinh(a)"}},
      {"log2", "numpy.log2", {"pydd::op::log2", "log2(a)", Compute::Float, false, true}, {"g / (a * 0.6931471805599453)"}},
      {"log10", "numpy.log10", {"pydd::op::log10", "log10(a)", Compute::Float, false, true}, {"g / (a * 2.302585092994046)"}},
      {"exp2", "numpy.exp2", {"pydd::op::exp2", "exp2(a)", Compute::Float, false, true}, {"g * r * 0.6931471805599453"}},
      {"expm1", "numpy.expm1", {"pydd::op::expm1", "expm1(a)", Compute::Float, false, true, false, true}, {"g * (r + 1.0)"}},
      {"log1p", "numpy.log1p", {"pydd::op::log1p", "log1p(a)", Compute::Float, false, true, false, true}, {"g / (1.0 + a)"}},
      {"square", "numpy.square", {"pydd::op::square", "a * a", Compute::Common, false, true, false, true}, {"2.0 * g * a"}},
      {"sign", "numpy.sign", {"pydd::op::sign", "sign(a)", Compute::Common, false, true, false, true}, {nullptr, nullptr, true}},
      // runtime/include/pydd/complex.h
      {"conj", "numpy.conj", {"pydd::op::conjugate", "conj(a)", Compute::Common, false, false, false, true}},
      {"conjugate", "numpy.conjugate", {"pydd::op::conjugate", "conjugate(a)", Compute::Common, false, false, false, true}},
      {"angle", "numpy.angle", {"pydd::op::angle", "angle(a)", Compute::Float, false, false, false, false, 0, true}},
  };
  // What opt/ZeroProducts.h may compute about real operands. Error bounds
  // from glibc's libm-test-ulps for x86_64 (double), rounded up to the
  // next power of two; arithmetic, sqrt and rounding are exact.
  using Order = RealFunction::Order;
  static const std::pair<const char*, RealFunction> reals[] = {
      {"add", {Order::Increasing, Order::Increasing, [](double a, double b) { return a + b; }}},
      {"sub", {Order::Increasing, Order::Decreasing, [](double a, double b) { return a - b; }}},
      {"mul", {Order::BySignOfOther, Order::BySignOfOther, [](double a, double b) { return a * b; }, 0, false, true}},
      {"div", {Order::BySignOfOther, Order::None, [](double a, double b) { return a / b; }}},
      {"minus", {Order::Decreasing, Order::None, [](double a, double) { return -a; }}},
      {"sqrt", {Order::Increasing, Order::None, [](double a, double) { return std::sqrt(a); }}},
      {"floor", {Order::Increasing, Order::None, [](double a, double) { return std::floor(a); }}},
      {"ceil", {Order::Increasing, Order::None, [](double a, double) { return std::ceil(a); }}},
      {"exp", {Order::Increasing, Order::None, [](double a, double) { return std::exp(a); }, 2, true}},
      {"exp2", {Order::Increasing, Order::None, [](double a, double) { return std::exp2(a); }, 2, true}},
      {"expm1", {Order::Increasing, Order::None, [](double a, double) { return std::expm1(a); }, 2, true}},
      {"log", {Order::Increasing, Order::None, [](double a, double) { return std::log(a); }, 2, true}},
      {"log2", {Order::Increasing, Order::None, [](double a, double) { return std::log2(a); }, 2, true}},
      {"log10", {Order::Increasing, Order::None, [](double a, double) { return std::log10(a); }, 4, true}},
      {"log1p", {Order::Increasing, Order::None, [](double a, double) { return std::log1p(a); }, 2, true}},
      {"tanh", {Order::Increasing, Order::None, [](double a, double) { return std::tanh(a); }, 4, true}},
      {"sinh", {Order::Increasing, Order::None, [](double a, double) { return std::sinh(a); }, 4, true}},
      {"atan", {Order::Increasing, Order::None, [](double a, double) { return std::atan(a); }, 2, true}},
      {"asin", {Order::Increasing, Order::None, [](double a, double) { return std::asin(a); }, 2, true}},
      {"acos", {Order::Decreasing, Order::None, [](double a, double) { return std::acos(a); }, 2, true}},
      // Costly but not monotone: nothing is computed about their values.
      {"cos", {Order::None, Order::None, nullptr, 2, true}},
      {"sin", {Order::None, Order::None, nullptr, 2, true}},
      {"tan", {Order::None, Order::None, nullptr, 2, true}},
      {"cosh", {Order::None, Order::None, nullptr, 4, true}},
      {"pow", {Order::None, Order::None, nullptr, 2, true}},
      {"arctan2", {Order::None, Order::None, nullptr, 2, true}},
      {"hypot", {Order::None, Order::None, nullptr, 2, true}},
  };
  auto realOf = [](const char* name) -> const RealFunction* {
    for (auto& [n, r] : reals)
      if (std::string(n) == name) return &r;
    return nullptr;
  };
  for (const Spec& s : binary) {
    bool isPow = std::string(s.name) == "pow";
    LibraryFunction f = entry(s.name, LibraryCategory::Elementwise, {"a", "b"}, 2, s.numpy,
                              isPow ? powType : elementwiseType, isPow ? emitPow : emitElementwise);
    f.element = &s.rule;
    if (s.derivative.da || s.derivative.zero) f.derivative = &s.derivative;
    f.real = realOf(s.name);
    f.acceptsComplex = true;  // elementwiseType says which (definedOnComplex)
    out.push_back(std::move(f));
  }
  for (const Spec& s : unary) {
    bool isAbs = std::string(s.name) == "abs";
    LibraryFunction f = entry(s.name, LibraryCategory::Elementwise, {"a"}, 1, s.numpy,
                              isAbs ? absType : elementwiseType, isAbs ? emitAbs : emitElementwise);
    f.element = &s.rule;
    if (s.derivative.da || s.derivative.zero) f.derivative = &s.derivative;
    f.real = realOf(s.name);
    if (std::string(s.name) == "log") f.moreArgumentsEntry = "log_base";
    f.acceptsComplex = true;  // elementwiseType says which (definedOnComplex)
    out.push_back(std::move(f));
  }
  out.push_back(entry("log_base", LibraryCategory::Elementwise, {"a", "base"}, 2,
                      "math.log(a, base) on scalars, numpy.log(a) / numpy.log(base) on arrays", logBaseType, emitLogBase));
  static const DerivativeRule kLogBaseDerivative{"g / (a * log(b))", "-g * r / (b * log(b))"};
  out.back().derivative = &kLogBaseDerivative;
  addComplexParts(out);
}

}  // namespace pydd::catalog
