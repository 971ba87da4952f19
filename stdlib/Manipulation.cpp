// NumPy's sorting, order statistics and array manipulation
// (runtime/include/pydd/manipulation.h): sort, argsort, median, unique,
// reshape, ravel, flatten, concatenate, stack, vstack, hstack, array (from
// nested lists), nonzero, unravel_index, searchsorted, tile, repeat, roll,
// around (np.round) and the builtin round.
#include "stdlib/Rules.h"

namespace pydd::catalog {
namespace {

Type expectArray(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  if (!a.isArray()) return fail(err, 0, std::string(c.callee) + "() expects an array, got " + a.str());
  return a;
}

std::string axisOrDefault(const Call& c, llvm::ArrayRef<std::string> args, size_t index, const char* fallback) {
  return axisGiven(c, index) ? "int64_t(" + args[index] + ")" : fallback;
}

/// sort(a, axis=-1) / argsort: along one axis, the input's shape.
Type sortType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  if (arg(c, 1) && !axisGiven(c, 1))
    return fail(err, 1, std::string(c.callee) + "(a, axis=None) is not supported; sort a.ravel()");
  if (axisGiven(c, 1) && !checkAxis(c, 1, a.rank(), err)) return Type();
  return std::string(c.callee) == "argsort" ? Type::array(ScalarKind::Int64, a.rank()) : a;
}
std::string emitSort(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::") + c.callee + "(" + args[0] + ", " + axisOrDefault(c, args, 1, "int64_t(-1)") + ")";
}

/// median(a, axis=None): float64 unless float32, as NumPy's mean.
Type medianType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  ScalarKind k = a.elem() == ScalarKind::Float32 ? ScalarKind::Float32 : ScalarKind::Float64;
  if (!axisGiven(c, 1)) return Type::scalar(k);
  if (!checkAxis(c, 1, a.rank(), err)) return Type();
  return a.rank() == 1 ? Type::scalar(k) : Type::array(k, a.rank() - 1);
}
std::string emitMedian(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& a = c.args[0]->type;
  std::string r = cxxScalarType(c.type.elem());
  if (!axisGiven(c, 1)) return "pydd::median<" + r + ">(" + args[0] + ")";
  std::string axis = axisText(c, 1, a.rank(), args[1], "ValueError");
  if (a.rank() == 1) return "(" + axis + ", pydd::median<" + r + ">(" + args[0] + "))";
  return "pydd::median_axis<" + r + ">(" + args[0] + ", " + axis + ")";
}

Type uniqueType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  return a.isUnknown() ? a : Type::array(a.elem(), 1);
}

/// reshape(a, shape) with shape a tuple, or a.reshape(d0, d1, ...): the
/// result's rank is the number of dimensions given.
Type reshapeType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  if (c.args.size() < 2) return fail(err, -1, "reshape() needs the new shape");
  int rank = 0;
  const Type& first = arg(c, 1)->type;
  if (c.args.size() == 2 && first.isTuple()) {
    for (const Type& d : first.elems())
      if (!d.isScalar() || !isIntegerKind(d.elem())) return fail(err, 1, "reshape() dimensions must be integers, got " + first.str());
    rank = static_cast<int>(first.elems().size());
  } else {
    for (size_t i = 1; i < c.args.size(); ++i) {
      const Type& d = arg(c, i)->type;
      if (!d.isScalar() || !isIntegerKind(d.elem()))
        return fail(err, static_cast<int>(i), "reshape() dimensions must be integers (or one tuple of them), got " + d.str());
    }
    rank = static_cast<int>(c.args.size()) - 1;
  }
  if (rank < 1 || rank > 8) return fail(err, 1, "reshape() gives arrays of 1 to 8 dimensions in pydd, not " + std::to_string(rank));
  return Type::array(a.elem(), rank);
}
std::string emitReshape(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string s = "pydd::reshape<" + std::to_string(c.type.rank()) + ">(" + args[0];
  for (size_t i = 1; i < args.size(); ++i) s += ", " + args[i];
  return s + ")";
}

std::string emitUnary(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::") + c.callee + "(" + args[0] + ")";
}

/// A tuple or list of arrays of one rank (argument 0): their promoted
/// element kind and the rank.
bool arraySequence(const Call& c, ScalarKind& kind, int& rank, TypeRuleError& err) {
  const Type& t = arg(c, 0)->type;
  std::vector<Type> parts = t.isTuple() ? t.elems() : t.isList() ? t.elems() : std::vector<Type>{};
  if (parts.empty()) {
    fail(err, 0, std::string(c.callee) + "() takes a tuple or list of arrays, got " + t.str());
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const Type& p = parts[i];
    if (!p.isArray() || p.rank() != parts[0].rank()) {
      fail(err, 0, std::string(c.callee) + "() needs arrays of one rank, got " + t.str());
      return false;
    }
    kind = i ? promote(kind, p.elem()) : p.elem();
  }
  rank = parts[0].rank();
  return true;
}

/// concatenate(arrays, axis=0), stack(arrays, axis=0), vstack, hstack.
Type joinType(const Call& c, TypeRuleError& err) {
  ScalarKind k;
  int rank;
  if (!arraySequence(c, k, rank, err)) return Type();
  std::string name = c.callee;
  int result = name == "stack" ? rank + 1 : name == "vstack" ? std::max(rank, 2) : rank;
  if (result > 8) return fail(err, 0, name + "() would give more than 8 dimensions");
  if (axisGiven(c, 1) && !checkAxis(c, 1, result, err)) return Type();
  if (arg(c, 1) && !axisGiven(c, 1)) return fail(err, 1, name + "(arrays, axis=None) is not supported in pydd");
  return Type::array(k, result);
}
std::string emitJoin(const Call& c, llvm::ArrayRef<std::string> args) {
  const Type& t = c.args[0]->type;
  int rank = t.elems()[0].rank();
  std::string s = std::string("pydd::") + c.callee + "<" + cxxScalarType(c.type.elem()) + ", " + std::to_string(rank) +
                  ">(" + args[0];
  if (axisGiven(c, 1)) s += ", int64_t(" + args[1] + ")";
  return s + ")";
}

/// array(object, dtype=None): from nested lists (one level per axis) or a copy of an array.
Type arrayType(const Call& c, TypeRuleError& err) {
  Type t = arg(c, 0)->type;
  int rank = 0;
  if (t.isArray()) {
    rank = t.rank();
  } else {
    while (t.isList()) {
      ++rank;
      t = t.elems()[0];
    }
    if (!rank || !t.isScalar())
      return fail(err, 0, "array() takes a list (of lists) of numbers or an array, got " + arg(c, 0)->type.str());
  }
  if (rank > 8) return fail(err, 0, "arrays must have 1 to 8 dimensions");
  const Expr* d = arg(c, 1);
  if (d && !d->type.isScalar()) return fail(err, 1, "dtype must be a type such as float64, got " + d->type.str());
  return Type::array(d ? d->type.elem() : t.elem(), rank);
}
std::string emitArray(const Call& c, llvm::ArrayRef<std::string> args) {
  return std::string("pydd::array<") + cxxScalarType(c.type.elem()) + ">(" + args[0] + ")";
}

Type nonzeroType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  return Type::tuple(std::vector<Type>(static_cast<size_t>(a.rank()), Type::array(ScalarKind::Int64, 1)));
}

std::string emitNonzero(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::nonzero_tuple(" + args[0] + ")";
}

/// unravel_index(indices, shape): the coordinates of a flat index (a scalar) in a shape tuple.
Type unravelType(const Call& c, TypeRuleError& err) {
  const Type &i = arg(c, 0)->type, &s = arg(c, 1)->type;
  if (!i.isScalar() || !(isIntegerKind(i.elem())))
    return fail(err, 0, "unravel_index() takes one integer index (a flat index such as argmax's), got " + i.str());
  if (!s.isTuple()) return fail(err, 1, "unravel_index() takes the shape as a tuple (such as A.shape), got " + s.str());
  for (const Type& d : s.elems())
    if (!d.isScalar() || !isIntegerKind(d.elem())) return fail(err, 1, "unravel_index() shape must hold integers, got " + s.str());
  return Type::tuple(std::vector<Type>(s.elems().size(), Type::int64()));
}
std::string emitUnravel(const Call&, llvm::ArrayRef<std::string> args) {
  return "pydd::unravel_index(int64_t(" + args[0] + "), " + args[1] + ")";
}

/// searchsorted(a, v, side='left'): int64 positions in the sorted 1-D a,
/// compared in the common kind of a and v.
Type searchsortedType(const Call& c, TypeRuleError& err) {
  const Type &a = arg(c, 0)->type, &v = arg(c, 1)->type;
  if (!a.isArray() || a.rank() != 1) return fail(err, 0, "searchsorted() expects a sorted 1-D array, got " + a.str());
  if (!v.isArray() && !v.isScalar()) return fail(err, 1, "searchsorted() looks up numbers or an array of them, got " + v.str());
  if (const Expr* side = arg(c, 2)) {
    auto* text = dyn_cast<StrLit>(side);
    if (!text || (text->value != "left" && text->value != "right"))
      return fail(err, 2, "searchsorted() side must be the literal 'left' or 'right'");
  }
  return v.isArray() ? Type::array(ScalarKind::Int64, v.rank()) : Type::int64();
}
std::string emitSearchsorted(const Call& c, llvm::ArrayRef<std::string> args) {
  const Expr &a = *c.args[0], &v = *c.args[1];
  ScalarKind k = commonKind(a.type.elem(), false, v.type.elem(), isWeakLiteral(v));
  auto* side = c.args.size() > 2 ? dyn_cast<StrLit>(c.args[2].get()) : nullptr;
  bool right = side && side->value == "right";
  return std::string("pydd::searchsorted<") + (right ? "true" : "false") + ", " + cxxScalarType(k) + ">(" + args[0] + ", " +
         args[1] + ")";
}

bool integerScalar(const Call& c, size_t i, const char* what, TypeRuleError& err) {
  const Expr* e = arg(c, i);
  if (e && (!e->type.isScalar() || !isIntegerKind(e->type.elem()))) {
    fail(err, static_cast<int>(i), std::string(c.callee) + "() " + what + " must be an integer, got " + e->type.str());
    return false;
  }
  return true;
}

/// tile(A, reps): reps an integer or a tuple of them; the rank is the larger of A's and len(reps).
Type tileType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  const Type& r = arg(c, 1)->type;
  int k = 1;
  if (r.isTuple()) {
    for (const Type& d : r.elems())
      if (!d.isScalar() || !isIntegerKind(d.elem())) return fail(err, 1, "tile() reps must be integers, got " + r.str());
    k = static_cast<int>(r.elems().size());
  } else if (!integerScalar(c, 1, "reps", err)) {
    return Type();
  }
  int rank = std::max(a.rank(), k);
  if (rank > 8) return fail(err, 1, "tile() would give more than 8 dimensions");
  return Type::array(a.elem(), rank);
}
std::string emitTile(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string reps = c.args[1]->type.isTuple() ? args[1] : "int64_t(" + args[1] + ")";
  return "pydd::tile<" + std::to_string(c.type.rank()) + ">(" + args[0] + ", " + reps + ")";
}

/// repeat(a, repeats, axis=None) / roll(a, shift, axis=None): flattened
/// (repeat) or the input's shape (roll) without an axis.
Type repeatRollType(const Call& c, TypeRuleError& err) {
  Type a = expectArray(c, err);
  if (a.isUnknown()) return a;
  bool roll = std::string(c.callee) == "roll";
  if (!integerScalar(c, 1, roll ? "shift" : "repeats", err)) return Type();
  if (!axisGiven(c, 2)) return roll ? a : Type::array(a.elem(), 1);
  if (!checkAxis(c, 2, a.rank(), err)) return Type();
  return a;
}
std::string emitRepeatRoll(const Call& c, llvm::ArrayRef<std::string> args) {
  std::string s = std::string("pydd::") + c.callee + (axisGiven(c, 2) ? "_axis(" : "(") + args[0] + ", int64_t(" + args[1] + ")";
  if (axisGiven(c, 2)) s += ", int64_t(" + args[2] + ")";
  return s + ")";
}

/// around(a, decimals=0) (np.round): NumPy's rounding, the input's type.
/// round(x) is Python's builtin: an int64 for a scalar (arrays have no
/// __round__ in Python, so they are refused).
Type roundType(const Call& c, TypeRuleError& err) {
  const Type& a = arg(c, 0)->type;
  std::string name = c.callee;
  if ((!a.isArray() && !a.isScalar()) || a.elem() == ScalarKind::Bool)
    return fail(err, 0, name + "() expects numbers or an array of them, got " + a.str());
  if (!integerScalar(c, 1, "decimals", err)) return Type();
  if (name == "round" && a.isArray())
    return fail(err, 0, "round() of an array is a TypeError in Python (ndarray has no __round__); write np.round(a)");
  if (name == "round" && a.isScalar()) {
    if (arg(c, 1))
      return fail(err, 1, "round(x, ndigits) of a scalar rounds in decimal, as Python does, which pydd does not; write np.round(x, ndigits)");
    return Type::int64();
  }
  return a;
}
std::string emitRound(const Call& c, llvm::ArrayRef<std::string> args) {
  if (std::string(c.callee) == "round" && c.type.isScalar())
    return "pydd::round_to_int(" + args[0] + ")";
  return "pydd::around(" + args[0] + (args.size() > 1 ? ", int64_t(" + args[1] + ")" : std::string()) + ")";
}

}  // namespace

void addManipulationFunctions(std::vector<LibraryFunction>& out) {
  using C = LibraryCategory;
  LibraryFunction sort = entry("sort", C::Reduction, {"a", "axis"}, 1, "numpy.sort", sortType, emitSort);
  sort.functionOnly = true;
  out.push_back(sort);
  out.push_back(entry("argsort", C::Reduction, {"a", "axis"}, 1, "numpy.argsort", sortType, emitSort));
  out.push_back(entry("median", C::Reduction, {"a", "axis"}, 1, "numpy.median", medianType, emitMedian));
  out.back().defaults = {{"axis", "all_axes()"}};  // NumPy's None: every axis
  out.push_back(entry("unique", C::Reduction, {"a"}, 1, "numpy.unique", uniqueType, emitUnary));
  LibraryFunction reshape = entry("reshape", C::Query, {"a", "*"}, 1, "numpy.reshape", reshapeType, emitReshape);
  reshape.returnsView = true;
  out.push_back(reshape);
  LibraryFunction ravel = entry("ravel", C::Query, {"a"}, 1, "numpy.ravel", uniqueType, emitUnary);
  ravel.returnsView = true;
  out.push_back(ravel);
  out.push_back(entry("flatten", C::Allocation, {"a"}, 1, "numpy.ndarray.flatten", uniqueType, emitUnary));
  for (const char* name : {"concatenate", "stack"})
    out.push_back(entry(name, C::Allocation, {"arrays", "axis"}, 1, name == std::string("stack") ? "numpy.stack" : "numpy.concatenate",
                        joinType, emitJoin));
  out.push_back(entry("vstack", C::Allocation, {"tup"}, 1, "numpy.vstack", joinType, emitJoin));
  out.push_back(entry("hstack", C::Allocation, {"tup"}, 1, "numpy.hstack", joinType, emitJoin));
  out.push_back(entry("array", C::Allocation, {"object", "dtype"}, 1, "numpy.array", arrayType, emitArray));
  out.push_back(entry("nonzero", C::Query, {"a"}, 1, "numpy.nonzero", nonzeroType, emitNonzero));
  out.push_back(entry("searchsorted", C::Query, {"a", "v", "side"}, 2, "numpy.searchsorted", searchsortedType, emitSearchsorted));
  out.push_back(entry("tile", C::Allocation, {"A", "reps"}, 2, "numpy.tile", tileType, emitTile));
  out.push_back(entry("repeat", C::Allocation, {"a", "repeats", "axis"}, 2, "numpy.repeat", repeatRollType, emitRepeatRoll));
  out.back().defaults = {{"axis", "all_axes()"}};  // NumPy's None: the flattened array
  out.push_back(entry("roll", C::Allocation, {"a", "shift", "axis"}, 2, "numpy.roll", repeatRollType, emitRepeatRoll));
  out.back().defaults = {{"axis", "all_axes()"}};
  out.push_back(entry("around", C::Elementwise, {"a", "decimals"}, 1, "numpy.around", roundType, emitRound));
  out.push_back(entry("round", C::Elementwise, {"number", "ndigits"}, 1, "round", roundType, emitRound));
  out.push_back(entry("unravel_index", C::Query, {"indices", "shape"}, 2, "numpy.unravel_index", unravelType, emitUnravel));
  // Generic over the element type: complex numbers too.
  acceptComplex(out, {"reshape", "ravel", "flatten"});
}

}  // namespace pydd::catalog
