// Arrays as a whole: allocation (zeros, full, arange...) and shape queries.
#include <algorithm>

#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

/// Rank from a shape argument: an integer (1-D), or a tuple or list of
/// integers written out or held in a tuple value (`A.shape`).
int shapeRank(const Expr& shape, TypeRuleError& err) {
  if (shape.type.isInteger()) return 1;
  std::vector<Type> entries;
  if (auto* lit = dyn_cast<TupleLit>(&shape)) {
    for (auto& e : lit->elems) entries.push_back(e->type);
  } else if (shape.type.isTuple()) {
    entries = shape.type.elems();
  } else if (shape.type.isList() && !shape.type.elems()[0].isInteger()) {
    fail(err, 0, "shape entries must be integers, got " + shape.type.str());
    return 0;
  } else if (shape.type.isList()) {
    // Its length is known only when the program runs: the rank must come
    // from an annotation (sema then passes shape_from_list(l, rank)).
    fail(err, 0, "the rank of an array made from a " + shape.type.str() +
                     " shape is not known at compile time; annotate the target with its rank, as in "
                     "'x: Array(float64, 2) = zeros(l)', or pass a tuple such as (l[0], l[1])");
    return 0;
  } else {
    fail(err, 0, "shape must be an integer or a tuple of integers, got " + shape.type.str());
    return 0;
  }
  for (auto& e : entries)
    if (!e.isInteger()) return fail(err, 0, "shape entries must be integers, got " + e.str()), 0;
  if (entries.empty() || entries.size() > 8) return fail(err, 0, "arrays must have 1 to 8 dimensions"), 0;
  return static_cast<int>(entries.size());
}

/// The element kind from an optional dtype argument (a typed zero after
/// sema: `float64` and `float64()` both arrive as one).
bool dtypeArg(const Call& c, size_t index, ScalarKind& kind, TypeRuleError& err) {
  const Expr* dtype = arg(c, index);
  if (!dtype) return true;
  if (!dtype->type.isScalar()) {
    fail(err, static_cast<int>(index), "dtype must be a type such as float64 or int32(), got " + dtype->type.str());
    return false;
  }
  kind = dtype->type.elem();
  return true;
}

Type allocationType(const Call& c, TypeRuleError& err) {
  int rank = shapeRank(*arg(c, 0), err);
  ScalarKind elem = ScalarKind::Float64;
  if (!rank || !dtypeArg(c, 1, elem, err)) return Type();
  return Type::array(elem, rank);
}

/// The shape as the runtime's std::array<int64_t, N>.
std::string shapeText(const std::string& text) { return "pydd::shape_of(" + text + ")"; }

template <const char* Method>
std::string emitAllocation(const Call& c, llvm::ArrayRef<std::string> args) {
  return cxxType(c.type) + "::" + Method + "(" + shapeText(args[0]) + ")";
}
constexpr char kZeros[] = "zeros";
constexpr char kOnes[] = "ones";
constexpr char kEmpty[] = "empty";

/// full(shape, value, dtype): the value's kind unless dtype says otherwise
/// (a literal 1 gives int64, 1.0 float64, as NumPy's full).
Type fullType(const Call& c, TypeRuleError& err) {
  int rank = shapeRank(*arg(c, 0), err);
  if (!rank) return Type();
  const Expr* value = arg(c, 1);
  if (!value->type.isScalar()) return fail(err, 1, "full() needs a scalar fill value, got " + value->type.str());
  ScalarKind elem = value->type.elem();
  if (!dtypeArg(c, 2, elem, err)) return Type();
  return Type::array(elem, rank);
}
std::string emitFull(const Call& c, llvm::ArrayRef<std::string> args) {
  return cxxType(c.type) + "::filled(" + shapeText(args[0]) + ", " + castTo(c.type.elem(), args[1]) + ")";
}

Type likeType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + a.str());
  ScalarKind elem = a.elem();
  if (!dtypeArg(c, 1, elem, err)) return Type();
  return Type::array(elem, a.rank());
}
template <const char* Method>
std::string emitLike(const Call& c, llvm::ArrayRef<std::string> args) {
  return cxxType(c.type) + "::" + Method + "(" + shapeText(args[0]) + ")";
}

Type copyType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "copy() expects an array, got " + a.str());
  return a;
}
std::string emitCopy(const Call&, llvm::ArrayRef<std::string> args) { return "pydd::copy(" + args[0] + ")"; }

/// ascontiguousarray(a): a, or a C-contiguous copy of it.
Type asContiguousType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "ascontiguousarray() expects an array, got " + a.str());
  return a;
}

/// arange(stop), arange(start, stop[, step]): int64 for integers, float64
/// as soon as one bound is a float, or the dtype given.
Type arangeType(const Call& c, TypeRuleError& err) {
  ScalarKind elem = ScalarKind::Int64;
  for (size_t i = 0; i < 3 && i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (!t.isScalar()) return fail(err, static_cast<int>(i), "arange() bounds must be numbers, got " + t.str());
    if (t.isFloat()) elem = ScalarKind::Float64;
  }
  if (!dtypeArg(c, 3, elem, err)) return Type();
  return Type::array(elem, 1);
}
std::string emitArange(const Call& c, llvm::ArrayRef<std::string> args) {
  // Bounds and step are computed in the wider kind, then the values cast.
  std::string compute = c.args[0]->type.isFloat() || (c.args.size() > 1 && c.args[1]->type.isFloat()) ||
                                (c.args.size() > 2 && c.args[2]->type.isFloat()) || isFloatKind(c.type.elem())
                            ? "double"
                            : "int64_t";
  auto bound = [&](const std::string& t) { return compute + "(" + t + ")"; };
  std::string start = c.args.size() > 1 ? bound(args[0]) : compute + "(0)";
  std::string stop = c.args.size() > 1 ? bound(args[1]) : bound(args[0]);
  std::string step = c.args.size() > 2 && !args[2].empty() ? bound(args[2]) : compute + "(1)";
  return std::string("pydd::arange<") + cxxScalarType(c.type.elem()) + ">(" + start + ", " + stop + ", " + step + ")";
}

Type fillType(const Call& c, TypeRuleError& err) {
  if (!arg(c, 0)->type.isArray()) return fail(err, 0, "fill() expects an array, got " + arg(c, 0)->type.str());
  if (!arg(c, 1)->type.isScalar()) return fail(err, 1, "fill() needs a scalar value, got " + arg(c, 1)->type.str());
  return Type::voidTy();
}
std::string emitFill(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::fill(" + args[0] + ", " + castTo(c.args[0]->type.elem(), args[1]) + ")";
}

// ---- queries ------------------------------------------------------------------

/// shape(A) is the shape tuple; shape(A, k) (also `A.shape[k]`) one extent.
Type mayShareType(const Call& c, TypeRuleError& err) {
  for (int i = 0; i < 2; ++i)
    if (!arg(c, i)->type.isArray())
      return fail(err, i, "may_share_memory() expects arrays, got " + arg(c, i)->type.str());
  return Type::boolTy();
}

Type shapeType(const Call& c, TypeRuleError& err) {
  const Expr* a = arg(c, 0);
  if (!a->type.isArray() && !a->type.isSparse()) return fail(err, 0, "shape() expects an array, got " + a->type.str());
  if (!arg(c, 1)) return Type::tuple(std::vector<Type>(a->type.rank(), Type::int64()));
  if (!checkAxis(c, 1, a->type.rank(), err)) return Type();
  return Type::int64();
}
std::string emitShape(const Call& c, llvm::ArrayRef<std::string> args) {
  if (c.args.size() < 2 && c.args[0]->type.isSparse())
    return "[](const auto& s) { return std::tuple<int64_t, int64_t>{s.shape(0), s.shape(1)}; }(" + args[0] + ")";
  if (c.args.size() < 2) return "pydd::shape_tuple(" + args[0] + ")";
  return "(" + args[0] + ").shape(" + axisText(c, 1, c.args[0]->type.rank(), args[1], "IndexError") + ")";
}

Type arrayQueryType(const Call& c, TypeRuleError& err) {
  if (!arg(c, 0)->type.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + arg(c, 0)->type.str());
  return Type::int64();
}
std::string emitNdim(const Call& c, llvm::ArrayRef<std::string>) {
  return "int64_t(" + std::to_string(c.args[0]->type.rank()) + ")";
}
std::string emitSize(const Call&, llvm::ArrayRef<std::string> args) { return "(" + args[0] + ").size()"; }

/// A.dtype: the typed zero of A's element type, which is how a dtype is a
/// value in pydd (`zeros(n, dtype=A.dtype)`).
Type dtypeType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray() && !a.isSparse()) return fail(err, 0, "'.dtype' needs an array, got " + a.str());
  return Type::scalar(a.elem());
}
std::string emitDtype(const Call& c, llvm::ArrayRef<std::string>) { return castTo(c.type.elem(), "0"); }

/// A shape argument: a tuple of integers, or one integer (a 1-D shape).
int shapeRankOf(const Type& t) {
  if (t.isInteger()) return 1;
  if (!t.isTuple()) return -1;
  for (auto& e : t.elems())
    if (!e.isInteger()) return -1;
  return static_cast<int>(t.elems().size());
}

/// broadcast_shapes_for(op, shape_or_scalar...): the shape tuple of an
/// element-wise operation's result (what fusion checks its operands with).
Type broadcastShapesType(const Call& c, TypeRuleError& err) {
  if (!isa<StrLit>(*arg(c, 0))) return fail(err, 0, "broadcast_shapes_for() expects the operation's name as a string literal");
  size_t rank = 0;
  for (size_t i = 1; i < c.args.size(); ++i) {
    const Type& t = c.args[i]->type;
    if (t.isScalar()) continue;
    int r = t.isTuple() ? shapeRankOf(t) : -1;
    if (r < 0) return fail(err, static_cast<int>(i), "broadcast_shapes_for() expects shape tuples or scalars, got " + t.str());
    rank = std::max(rank, static_cast<size_t>(r));
  }
  return Type::tuple(std::vector<Type>(rank, Type::int64()));
}
std::string emitBroadcastShapes(const Call&, llvm::ArrayRef<std::string> args) {
  return callText("pydd::broadcast_shapes_for", args);
}

Type broadcastToType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, "broadcast_to() expects an array, got " + a.str());
  int rank = shapeRankOf(arg(c, 1)->type);
  if (rank < 0) return fail(err, 1, "broadcast_to() expects a shape (a tuple of integers), got " + arg(c, 1)->type.str());
  if (rank < a.rank())
    return fail(err, 1, "broadcast_to(): the shape has fewer dimensions (" + std::to_string(rank) + ") than the array (" +
                            std::to_string(a.rank()) + ")");
  return Type::array(a.elem(), rank);
}
std::string emitBroadcastTo(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& shape = c.args[1]->type;
  if (shape.isInteger()) return "pydd::broadcast_to(" + args[0] + ", int64_t(" + args[1] + "))";
  std::string t = "std::tuple<";
  for (size_t i = 0; i < shape.elems().size(); ++i) t += (i ? ", int64_t" : "int64_t");
  return "pydd::broadcast_to(" + args[0] + ", " + t + ">(" + args[1] + "))";
}

/// shape_from_list(l, ndim): a List of integers as a shape of `ndim` (a
/// literal) entries; ValueError when the list's length differs. Sema
/// writes it for `x: Array(T, ndim) = zeros(l)`.
Type shapeFromListType(const Call& c, TypeRuleError& err) {
  const Type& l = c.args[0]->type;
  if (!l.isList() || !l.elems()[0].isInteger())
    return fail(err, 0, "shape_from_list() expects a list of integers, got " + l.str());
  int64_t n;
  if (!constantInt(*c.args[1], n) || n < 1 || n > 8) return fail(err, 1, "shape_from_list() needs a literal rank from 1 to 8");
  return Type::tuple(std::vector<Type>(static_cast<size_t>(n), Type::int64()));
}
std::string emitShapeFromList(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::shape_from_list<" + std::to_string(c.type.elems().size()) + ">(" + args[0] + ")";
}

/// unpack(a, n): `x, y = a` for a 1-D array a of n (a literal) elements,
/// its elements as a tuple; Python's ValueError for another length. Sema
/// writes it for a tuple assignment from an array.
Type unpackType(const Call& c, TypeRuleError& err) {
  const Type& a = c.args[0]->type;
  if (!a.isArray() || a.rank() != 1)
    return fail(err, 0, "only a 1-D array unpacks into several targets (x, y = a), got " + a.str() + "; index it instead");
  int64_t n;
  if (!constantInt(*c.args[1], n) || n < 1 || n > 32) return fail(err, 1, "unpack() needs a literal count from 1 to 32");
  return Type::tuple(std::vector<Type>(static_cast<size_t>(n), Type::scalar(a.elem())));
}
std::string emitUnpack(const Call& c, llvm::ArrayRef<std::string> args) {
  return "pydd::unpack<" + std::to_string(c.type.elems().size()) + ">(" + args[0] + ")";
}

}  // namespace

void addAllocationFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  using New = LibraryFunction::NewArray;
  auto fresh = [&](LibraryFunction f, New what) {
    f.newArray = what;
    out.push_back(std::move(f));
  };
  fresh(entry("zeros", C::Allocation, {"shape", "dtype"}, 1, "numpy.zeros", allocationType, emitAllocation<kZeros>),
        New::Zeros);
  fresh(entry("ones", C::Allocation, {"shape", "dtype"}, 1, "numpy.ones", allocationType, emitAllocation<kOnes>),
        New::Ones);
  fresh(entry("empty", C::Allocation, {"shape", "dtype"}, 1, "numpy.empty", allocationType, emitAllocation<kEmpty>),
        New::Uninitialized);
  fresh(entry("full", C::Allocation, {"shape", "fill_value", "dtype"}, 2, "numpy.full", fullType, emitFull),
        New::FillArgument);
  // Reverse mode (frontend/Gradient.h): the *_like arrays depend only on
  // their argument's shape; a copy passes its adjoint through.
  static const DerivativeRule kShapeOnly{nullptr, nullptr, true}, kIdentity{"g"};
  out.push_back(entry("zeros_like", C::Allocation, {"a", "dtype"}, 1, "numpy.zeros_like", likeType, emitLike<kZeros>));
  out.back().derivative = &kShapeOnly;
  out.push_back(entry("ones_like", C::Allocation, {"a", "dtype"}, 1, "numpy.ones_like", likeType, emitLike<kOnes>));
  out.back().derivative = &kShapeOnly;
  out.push_back(entry("empty_like", C::Allocation, {"a", "dtype"}, 1, "numpy.empty_like", likeType, emitLike<kEmpty>));
  out.back().derivative = &kShapeOnly;
  out.push_back(entry("copy", C::Allocation, {"a"}, 1, "numpy.copy", copyType, emitCopy));
  out.back().returnsNew = true;
  out.back().derivative = &kIdentity;
  // The argument itself when it is C-contiguous: a view for aliasing.
  LibraryFunction contiguous = entry("ascontiguousarray", C::Allocation, {"a"}, 1, "numpy.ascontiguousarray",
                                     asContiguousType, [](const Call&, llvm::ArrayRef<std::string> args) {
                                       return "pydd::ascontiguousarray(" + args[0] + ")";
                                     });
  contiguous.returnsView = true;
  contiguous.derivative = &kIdentity;
  out.push_back(contiguous);
  out.push_back(entry("shape_from_list", C::Query, {"l", "ndim"}, 2, "tuple(l), checked to have ndim entries",
                      shapeFromListType, emitShapeFromList));
  out.push_back(entry("unpack", C::Query, {"a", "n"}, 2, "tuple(a), checked to have n elements", unpackType, emitUnpack));
  out.push_back(entry("arange", C::Allocation, {"start", "stop", "step", "dtype"}, 1, "numpy.arange", arangeType, emitArange));
  out.back().returnsNew = true;
  LibraryFunction fill = entry("fill", C::Allocation, {"a", "value"}, 2, "numpy.ndarray.fill", fillType, emitFill);
  fill.writesArgs = 1u << 0;
  out.push_back(fill);
  for (LibraryFunction q : {entry("shape", C::Query, {"a", "axis"}, 1, "numpy.shape", shapeType, emitShape),
                            entry("ndim", C::Query, {"a"}, 1, "numpy.ndim", arrayQueryType, emitNdim),
                            entry("size", C::Query, {"a"}, 1, "numpy.size", arrayQueryType, emitSize)}) {
    q.raisesOnlyOnAxis = q.readsHeaderOnly = true;
    out.push_back(std::move(q));
  }
  // Whether two arrays' memory may overlap (their address ranges meet), as
  // NumPy's bounds check; fusion guards in-place loops with it.
  LibraryFunction share = entry("may_share_memory", C::Query, {"a", "b"}, 2, "numpy.may_share_memory",
                                mayShareType, [](const Call&, llvm::ArrayRef<std::string> args) {
                                  return "pydd::detail::may_overlap(" + args[0] + ", " + args[1] + ")";
                                });
  share.raisesOnlyOnAxis = true;  // of its two arrays, neither is an axis: it never raises
  share.readsHeaderOnly = true;
  out.push_back(std::move(share));
  out.push_back(entry("dtype", C::Query, {"a"}, 1, "numpy.ndarray.dtype", dtypeType, emitDtype));
  // Broadcasting as values: NumPy's broadcast_to (a read-only view with
  // stride-0 axes), and the result shape of an element-wise operation, with
  // its ValueError when the operands do not broadcast. Fusion uses both when
  // operand shapes differ.
  LibraryFunction to = entry("broadcast_to", C::Query, {"array", "shape"}, 2, "numpy.broadcast_to", broadcastToType,
                             emitBroadcastTo);
  to.returnsView = true;
  out.push_back(std::move(to));
  out.push_back(entry("broadcast_shapes_for", C::Query, {"op", "*"}, 1, "pydd.broadcast_shapes_for",
                      broadcastShapesType, emitBroadcastShapes));
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "copy", "ascontiguousarray", "shape_from_list", "fill", "shape", "ndim", "size", "may_share_memory", "dtype", "broadcast_to", "broadcast_shapes_for"});
}

}  // namespace pydd::catalog
