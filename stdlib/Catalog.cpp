#include "stdlib/Catalog.h"

#include "llvm/ADT/StringMap.h"

namespace pydd {

const char* cxxScalarType(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int32: return "int32_t";
    case ScalarKind::Int64: return "int64_t";
    case ScalarKind::Float32: return "float";
    case ScalarKind::Float64: return "double";
  }
  return "void";
}

std::string cxxType(const Type& t) {
  if (t.isScalar()) return cxxScalarType(t.elem());
  if (t.isArray()) return std::string("pydd::Array<") + cxxScalarType(t.elem()) + ", " + std::to_string(t.rank()) + ">";
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

namespace {

const Expr* arg(const Call& c, size_t i) { return i < c.args.size() ? c.args[i].get() : nullptr; }

Type fail(TypeRuleError& err, int index, std::string message) {
  err.argIndex = index;
  err.message = std::move(message);
  return Type();
}

// ---- allocation: zeros / ones / empty (shape, dtype=float64) ----------------

/// Rank from the shape argument: an integer (1-D) or a tuple/list of them.
int shapeRank(const Expr& shape, TypeRuleError& err) {
  if (shape.type.isInteger()) return 1;
  if (shape.type.isTuple()) {
    for (auto& e : shape.type.elems())
      if (!e.isInteger()) return fail(err, 0, "shape entries must be integers, got " + e.str()), 0;
    size_t n = shape.type.elems().size();
    if (n < 1 || n > 8) return fail(err, 0, "arrays must have 1 to 8 dimensions"), 0;
    return static_cast<int>(n);
  }
  fail(err, 0, "shape must be an integer or a tuple of integers, got " + shape.type.str());
  return 0;
}

Type allocationType(const Call& c, TypeRuleError& err) {
  int rank = shapeRank(*arg(c, 0), err);
  if (!rank) return Type();
  ScalarKind elem = ScalarKind::Float64;
  if (const Expr* dtype = arg(c, 1)) {
    if (!dtype->type.isScalar()) return fail(err, 1, "dtype must be a type such as float64 or int32(), got " + dtype->type.str());
    elem = dtype->type.elem();
  }
  return Type::array(elem, rank);
}

template <const char* Method>
std::string emitAllocation(const Call& c, llvm::ArrayRef<std::string> args) {
  // The shape arrives as C++ text of a braced list (tuple) or an integer.
  std::string shape = c.args[0]->type.isTuple() ? args[0] : "{int64_t(" + args[0] + ")}";
  return cxxType(c.type) + "::" + Method + "(" + shape + ")";
}
constexpr char kZeros[] = "zeros";
constexpr char kOnes[] = "ones";
constexpr char kEmpty[] = "empty";

// ---- queries ------------------------------------------------------------------

Type shapeType(const Call& c, TypeRuleError& err) {
  const Expr* a = arg(c, 0);
  if (!a->type.isArray()) return fail(err, 0, "shape() expects an array, got " + a->type.str());
  const Expr* k = arg(c, 1);
  if (!k->type.isInteger()) return fail(err, 1, "axis must be an integer, got " + k->type.str());
  if (auto* lit = dyn_cast<IntLit>(k)) {
    int rank = a->type.rank();
    if (lit->value < -rank || lit->value >= rank)
      return fail(err, 1, "axis " + std::to_string(lit->value) + " is out of bounds for array of dimension " + std::to_string(rank));
  }
  return Type::int64();
}

std::string emitShape(const Call& c, llvm::ArrayRef<std::string> args) {
  int rank = c.args[0]->type.rank();
  if (auto* lit = dyn_cast<IntLit>(c.args[1].get())) {
    int64_t k = lit->value < 0 ? lit->value + rank : lit->value;
    return "(" + args[0] + ").shape(" + std::to_string(k) + ")";
  }
  return "(" + args[0] + ").shape(pydd::normalize_axis(" + args[1] + ", " + std::to_string(rank) + "))";
}

Type lenType(const Call& c, TypeRuleError& err) {
  if (!arg(c, 0)->type.isArray()) return fail(err, 0, "len() expects an array, got " + arg(c, 0)->type.str());
  return Type::int64();
}
std::string emitLen(const Call&, llvm::ArrayRef<std::string> args) { return "(" + args[0] + ").shape(0)"; }

Type ndimType(const Call& c, TypeRuleError& err) {
  if (!arg(c, 0)->type.isArray()) return fail(err, 0, "ndim() expects an array, got " + arg(c, 0)->type.str());
  return Type::int64();
}
std::string emitNdim(const Call& c, llvm::ArrayRef<std::string>) {
  return "int64_t(" + std::to_string(c.args[0]->type.rank()) + ")";
}

// ---- scalar builtins ------------------------------------------------------------

Type printType(const Call& c, TypeRuleError& err) {
  for (size_t i = 0; i < c.args.size(); ++i)
    if (!c.args[i]->type.isScalar() && !c.args[i]->type.isString())
      return fail(err, static_cast<int>(i), "print() of " + c.args[i]->type.str() + " is not supported yet");
  return Type::voidTy();
}
std::string emitPrint(const Call&, llvm::ArrayRef<std::string> args) {
  std::string s = "pydd::print(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

Type absType(const Call& c, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  if (!t.isScalar()) return fail(err, 0, "abs() of " + t.str() + " is not supported yet");
  return t.isBool() ? Type::int64() : t;
}
std::string emitAbs(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::abs_value(") + cxxType(c.type) + "(" + args[0] + "))";
}

/// min/max of two or more scalars: the promoted type (sema inserts casts).
Type minMaxType(const Call& c, TypeRuleError& err) {
  if (c.args.size() < 2) return fail(err, -1, std::string(c.callee) + "() of fewer than two scalars is not supported yet");
  ScalarKind k = ScalarKind::Bool;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (!c.args[i]->type.isScalar())
      return fail(err, static_cast<int>(i), c.callee + "() of " + c.args[i]->type.str() + " is not supported yet");
    k = i ? promote(k, c.args[i]->type.elem()) : c.args[i]->type.elem();
  }
  return Type::scalar(k);
}
template <const char* Fn>
std::string emitMinMax(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string t = cxxType(c.type);
  std::string s = t + "(" + args[0] + ")";
  for (size_t i = 1; i < args.size(); ++i) s = std::string("pydd::") + Fn + "(" + s + ", " + t + "(" + args[i] + "))";
  return s;
}
constexpr char kMin[] = "min_value";
constexpr char kMax[] = "max_value";

const std::vector<LibraryFunction>& catalog() {
  static const std::vector<LibraryFunction> entries = {
      {"zeros", LibraryCategory::Allocation, {"shape", "dtype"}, 1, "numpy.zeros", false, allocationType, emitAllocation<kZeros>},
      {"ones", LibraryCategory::Allocation, {"shape", "dtype"}, 1, "numpy.ones", false, allocationType, emitAllocation<kOnes>},
      {"empty", LibraryCategory::Allocation, {"shape", "dtype"}, 1, "numpy.empty", false, allocationType, emitAllocation<kEmpty>},
      {"shape", LibraryCategory::Query, {"a", "axis"}, 2, "numpy.shape(a)[axis]", false, shapeType, emitShape},
      {"len", LibraryCategory::Query, {"a"}, 1, "len", false, lenType, emitLen},
      {"ndim", LibraryCategory::Query, {"a"}, 1, "numpy.ndim", false, ndimType, emitNdim},
      {"print", LibraryCategory::IO, {"*"}, 0, "print", true, printType, emitPrint},
      {"abs", LibraryCategory::Elementwise, {"x"}, 1, "abs", false, absType, emitAbs},
      {"min", LibraryCategory::Reduction, {"*"}, 0, "min", false, minMaxType, emitMinMax<kMin>},
      {"max", LibraryCategory::Reduction, {"*"}, 0, "max", false, minMaxType, emitMinMax<kMax>},
  };
  return entries;
}

}  // namespace

const LibraryFunction* lookupLibraryFunction(llvm::StringRef name) {
  static const llvm::StringMap<const LibraryFunction*> index = [] {
    llvm::StringMap<const LibraryFunction*> m;
    for (auto& f : catalog()) m[f.name] = &f;
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace pydd
