#include "stdlib/Catalog.h"

#include <algorithm>

#include "llvm/ADT/StringMap.h"
#include "stdlib/Rules.h"

namespace pydd {

const char* cxxScalarType(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int32: return "int32_t";
    case ScalarKind::Int64: return "int64_t";
    case ScalarKind::Float32: return "float";
    case ScalarKind::Float64: return "double";
    case ScalarKind::Complex64: return "std::complex<float>";
    case ScalarKind::Complex128: return "std::complex<double>";
    case ScalarKind::Int8: return "int8_t";
    case ScalarKind::Int16: return "int16_t";
    case ScalarKind::UInt8: return "uint8_t";
    case ScalarKind::UInt16: return "uint16_t";
    case ScalarKind::UInt32: return "uint32_t";
    case ScalarKind::UInt64: return "uint64_t";
  }
  return "void";
}

std::string cxxType(const Type& t) {
  if (t.isScalar()) return cxxScalarType(t.elem());
  if (t.isArray()) return std::string("pydd::Array<") + cxxScalarType(t.elem()) + ", " + std::to_string(t.rank()) + ">";
  if (t.isSparse()) return std::string("pydd::SparseMat<") + cxxScalarType(t.elem()) + ">";
  if (t.isVoid()) return "void";
  if (t.isString()) return "const char*";
  auto join = [](const std::vector<Type>& ts) {
    std::string s;
    for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + cxxType(ts[i]);
    return s;
  };
  if (t.isList()) return "pydd::List<" + join(t.elems()) + ">";
  if (t.isDict()) return "pydd::Dict<" + join(t.elems()) + ">";
  if (t.isHeap()) return (t.isKeyValueHeap() ? "pydd::KVHeap<" : "pydd::Heap<") + join(t.elems()) + ">";
  if (t.isTuple()) return "std::tuple<" + join(t.elems()) + ">";
  return "<unsupported>";
}

ScalarKind elementComputeKind(const Call& c) { return elementComputeKind(*c.library->element, elementOperandKind(c)); }

ScalarKind elementOperandKind(const Call& c) {
  ScalarKind k = ScalarKind::Bool;
  bool weak = true;
  bool first = true;
  for (auto& a : c.args) {
    if (!a->type.isScalar() && !a->type.isArray()) continue;
    bool w = isWeakLiteral(*a);
    k = first ? a->type.elem() : commonKind(k, weak, a->type.elem(), w);
    weak = first ? w : weak && w;
    first = false;
  }
  return k;
}

ScalarKind elementComputeKind(const ElementRule& rule, ScalarKind operands) {
  switch (rule.compute) {
    case ElementRule::Compute::Common: return operands;
    case ElementRule::Compute::Float:
      if (isFloatKind(operands) || isComplexKind(operands)) return operands;
      return isIntegerKind(operands) && bitWidth(operands) <= 16 ? ScalarKind::Float32 : ScalarKind::Float64;
    case ElementRule::Compute::TrueDivide:
      return isFloatKind(operands) || isComplexKind(operands) ? operands : ScalarKind::Float64;
    case ElementRule::Compute::Bool: return ScalarKind::Bool;
  }
  return operands;
}

namespace catalog {

std::string callText(const std::string& callee, llvm::ArrayRef<std::string> args) {
  std::string s = callee + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

namespace {
/// A literal axis `v` of a rank-`rank` array in range, else NumPy's AxisError.
// NumPy reads axis=() as "reduce over no axis" (the array itself, in the
// reduction's dtype); that is rare enough to reject rather than ignore.
std::string noAxisMessage(const Call& c) {
  return std::string(c.callee) + "(): axis=() names no axis, which is not supported; leave axis out (or pass None) "
                                 "for every axis";
}

bool axisInRange(const Expr& a, int rank, int index, TypeRuleError& err) {
  int64_t v;
  if (constantInt(a, v) && (v < -rank || v >= rank)) {
    fail(err, index, "axis " + std::to_string(v) + " is out of bounds for array of dimension " + std::to_string(rank));
    return false;
  }
  return true;
}
}  // namespace

bool checkAxis(const Call& c, size_t index, int rank, TypeRuleError& err) {
  const Expr* a = arg(c, index);
  if (!a) return true;
  int i = static_cast<int>(index);
  if (isAllAxes(*a)) return true;
  if (a->type.isTuple() && a->type.elems().empty()) return fail(err, i, noAxisMessage(c)), false;
  if (a->type.isTuple())
    return fail(err, i, std::string(c.callee) + "() takes one axis, an integer: a tuple of axes is not supported here"), false;
  if (!a->type.isInteger()) return fail(err, i, "axis must be an integer, got " + a->type.str()), false;
  return axisInRange(*a, rank, i, err);
}

bool checkAxes(const Call& c, size_t index, int rank, TypeRuleError& err) {
  const Expr* a = arg(c, index);
  if (!a || !a->type.isTuple() || isAllAxes(*a)) return checkAxis(c, index, rank, err);
  int i = static_cast<int>(index);
  const std::vector<Type>& elems = a->type.elems();
  if (elems.empty()) return fail(err, i, noAxisMessage(c)), false;
  for (const Type& t : elems)
    if (!t.isInteger()) return fail(err, i, "each axis in a tuple of axes must be an integer, got " + a->type.str()), false;
  if (static_cast<int>(elems.size()) > rank)
    return fail(err, i, "a tuple of " + std::to_string(elems.size()) + " axes for an array of dimension " +
                            std::to_string(rank)),
           false;
  auto* lit = dyn_cast<TupleLit>(a);
  if (!lit) return true;  // a tuple variable: its values are checked at run time
  std::vector<int64_t> seen;
  for (const ExprPtr& e : lit->elems) {
    if (!axisInRange(*e, rank, i, err)) return false;
    int64_t v;
    if (!constantInt(*e, v)) continue;
    v = v < 0 ? v + rank : v;
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) return fail(err, i, "duplicate value in 'axis'"), false;
    seen.push_back(v);
  }
  return true;
}

Type reducedType(const Call& c, size_t index, int rank, ScalarKind k) {
  int left = !axisGiven(c, index) ? 0 : rank - std::max(1, axisTupleSize(c, index));
  return left == 0 ? Type::scalar(k) : Type::array(k, left);
}

std::string axisText(const Call& c, size_t index, int rank, const std::string& text, const char* errorKind) {
  int64_t v;
  if (arg(c, index) && constantInt(*arg(c, index), v)) return std::to_string(v < 0 ? v + rank : v);
  return "pydd::normalize_axis(" + text + ", " + std::to_string(rank) + ", pydd::ErrorKind::" + errorKind + ")";
}

void acceptComplex(std::vector<LibraryFunction>& entries, std::initializer_list<const char*> names) {
  for (LibraryFunction& f : entries)
    for (const char* n : names)
      if (std::string(f.name) == n) f.acceptsComplex = true;
}

namespace {
bool keepdims(const Call& c, size_t keepIndex) {
  auto* lit = dyn_cast<BoolLit>(arg(c, keepIndex));
  return lit && lit->value;
}
}  // namespace

Type keepdimsType(const Call& c, Type reduced, size_t axisIndex, size_t keepIndex, TypeRuleError& err) {
  const Expr* keep = arg(c, keepIndex);
  if (!keep || reduced.isUnknown()) return reduced;
  if (keep->kind != ExprKind::BoolLit)
    return fail(err, static_cast<int>(keepIndex), "keepdims must be True or False written out: it decides the result's rank");
  const Type& a = arg(c, 0)->type;
  if (!keepdims(c, keepIndex)) return reduced;
  if (!a.isArray()) return fail(err, static_cast<int>(keepIndex), "keepdims needs an array, got " + a.str());
  (void)axisIndex;
  return Type::array(reduced.elem(), a.rank());
}

std::string keepdimsText(const Call& c, size_t axisIndex, size_t keepIndex, const std::string& text,
                         llvm::ArrayRef<std::string> args) {
  if (!keepdims(c, keepIndex)) return text;
  int rank = arg(c, 0)->type.rank();
  std::string r = cxxScalarType(c.type.elem());
  // A scalar result (every axis, or the one axis of a 1-D array) fills a
  // (1, ..., 1) array; an (N-1)-D one gets its axis back as a view.
  if (reducedType(c, axisIndex, rank, c.type.elem()).isScalar())
    return "pydd::keep_all_dims<" + std::to_string(rank) + ">(" + r + "(" + text + "))";
  if (axisTupleSize(c, axisIndex))
    return "pydd::keep_axes_dims<" + std::to_string(rank) + ">(" + text + ", " + args[axisIndex] + ")";
  return "pydd::keep_axis_dim(" + text + ", " + axisText(c, axisIndex, rank, args[axisIndex], "ValueError") + ")";
}

}  // namespace catalog

const std::vector<LibraryFunction>& libraryFunctions() {
  static const std::vector<LibraryFunction> entries = [] {
    std::vector<LibraryFunction> all;
    catalog::addAllocationFunctions(all);
    catalog::addElementwiseFunctions(all);
    catalog::addReductionFunctions(all);
    catalog::addLinearAlgebraFunctions(all);
    catalog::addContainerFunctions(all);
    catalog::addSparseFunctions(all);
    catalog::addNumericFunctions(all);
    catalog::addManipulationFunctions(all);
    return all;
  }();
  return entries;
}

const LibraryFunction* lookupLibraryFunction(llvm::StringRef name) {
  static const llvm::StringMap<const LibraryFunction*> index = [] {
    llvm::StringMap<const LibraryFunction*> m;
    for (auto& f : libraryFunctions()) m[f.name] = &f;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const char* elementwiseOperatorName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::FloorDiv: return "floordiv";
    case BinaryOp::Mod: return "mod";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::MatMul: return "matmult";
    default: return nullptr;
  }
}

const LibraryFunction* entryIterator(SparseAccess access) {
  for (auto& f : libraryFunctions())
    if (f.yieldsEntries && f.sparseAccess == access) return &f;
  return nullptr;
}

const LibraryFunction* lookupNumpyFunction(llvm::StringRef name) {
  static const llvm::StringMap<const LibraryFunction*> index = [] {
    llvm::StringMap<const LibraryFunction*> m;
    // From each entry's NumPy equivalent when it is exactly one NumPy
    // function ("numpy.subtract", "numpy.min / min"; not "numpy.dot (1-D)").
    for (auto& f : libraryFunctions()) {
      llvm::StringRef eq = llvm::StringRef(f.numpy).split(" / ").first;
      if (!eq.consume_front("numpy.") || eq.contains(' ') || eq.startswith("ndarray.")) continue;
      m.try_emplace(eq, &f);
    }
    // NumPy's other spellings of the same functions.
    static const std::pair<const char*, const char*> aliases[] = {
        {"divide", "div"}, {"abs", "abs"}, {"amax", "max"}, {"amin", "min"}, {"dot", "matmult"}, {"pow", "pow"}, {"round", "around"}, {"round_", "around"}};
    for (auto& [alias, entry] : aliases)
      if (const LibraryFunction* f = lookupLibraryFunction(entry)) m.try_emplace(alias, f);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace pydd
