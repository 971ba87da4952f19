// Building blocks shared by the catalog's category files (not for other
// folders: they see entries only through Catalog.h).
#pragma once

#include <string>
#include <vector>

#include "stdlib/Catalog.h"

namespace pydd::catalog {

/// Argument i of the call, or null when omitted.
inline const Expr* arg(const Call& c, size_t i) { return i < c.args.size() ? c.args[i].get() : nullptr; }

/// Records a type error at argument `index` (-1: the call) and yields Unknown.
inline Type fail(TypeRuleError& err, int index, std::string message) {
  err.argIndex = index;
  err.message = std::move(message);
  return Type();
}

/// `static_cast<T>(text)` for a scalar of kind k.
inline std::string castTo(ScalarKind k, const std::string& text) {
  return std::string("static_cast<") + cxxScalarType(k) + ">(" + text + ")";
}

/// `"name"`, as a C++ string literal (function names are identifiers).
inline std::string quoted(const char* name) { return std::string("\"") + name + "\""; }

/// "f(a, b, c)" from a callee and argument texts.
std::string callText(const std::string& callee, llvm::ArrayRef<std::string> args);

/// The axis argument `index` checked against `rank` when it is a literal
/// (NumPy's AxisError, at compile time); false with `err` set if out of range.
bool checkAxis(const Call& c, size_t index, int rank, TypeRuleError& err);
/// The axis as C++: a literal normalized at compile time, else a runtime
/// normalization that raises `errorKind` (a pydd::ErrorKind enumerator) for
/// an out-of-range value: IndexError for `A.shape[k]`, ValueError for a
/// reduction (NumPy's AxisError is both).
std::string axisText(const Call& c, size_t index, int rank, const std::string& text, const char* errorKind);

/// Whether `e` is all_axes(), NumPy's None as an axis: what sema puts in for
/// `axis=None`, and when a later argument is given by keyword, as in
/// `np.var(x, ddof=1)`. Its type is the empty tuple, but a written `()`
/// is not it: NumPy's axis=() names no axis, which checkAxis/checkAxes
/// reject.
inline bool isAllAxes(const Expr& e) {
  auto* call = dyn_cast<Call>(&e);
  return call && call->callee == "all_axes" && call->args.empty();
}
/// Whether the axis argument at `index` names axes: omitted or all_axes()
/// mean every axis. A tuple of axes names axes too: a function that takes
/// only one checks it with checkAxis, which rejects the tuple.
inline bool axisGiven(const Call& c, size_t index) { return arg(c, index) && !isAllAxes(*arg(c, index)); }
/// The number of axes a tuple of axes at `index` names (NumPy's
/// axis=(i, j, ...)), or 0 when that argument is not such a tuple.
inline int axisTupleSize(const Call& c, size_t index) {
  return axisGiven(c, index) && arg(c, index)->type.isTuple() ? static_cast<int>(arg(c, index)->type.elems().size()) : 0;
}
/// The axis argument at `index` of a reduction that takes NumPy's tuples of
/// axes: an integer (as checkAxis) or a tuple of integers, each in range
/// and none repeated where they are literals (checked again at run time).
bool checkAxes(const Call& c, size_t index, int rank, TypeRuleError& err);
/// The type of reducing the axes the argument at `index` names (every axis
/// when it names none) of a rank-`rank` array to elements of kind k.
Type reducedType(const Call& c, size_t index, int rank, ScalarKind k);

/// NumPy's keepdims: the reduction `reduced` of argument 0 (along the axis
/// at `axisIndex`, or all of them) with the reduced axes kept at length 1
/// when the argument at `keepIndex` is True. It decides the result's rank,
/// so it must be a literal.
Type keepdimsType(const Call& c, Type reduced, size_t axisIndex, size_t keepIndex, TypeRuleError& err);
/// The C++ of such a call from `text`, the C++ of the plain reduction.
std::string keepdimsText(const Call& c, size_t axisIndex, size_t keepIndex, const std::string& text,
                         llvm::ArrayRef<std::string> args);

using TypeRule = Type (*)(const Call&, TypeRuleError&);
using EmitRule = std::string (*)(const Call&, llvm::ArrayRef<std::string>);

/// An entry with the common fields; the caller sets the rest.
inline LibraryFunction entry(const char* name, LibraryCategory category, std::vector<const char*> params,
                             unsigned required, const char* numpy, TypeRule rule, EmitRule emit) {
  LibraryFunction f;
  f.name = name;
  f.category = category;
  f.params = std::move(params);
  f.required = required;
  f.numpy = numpy;
  f.resultType = rule;
  f.emitCpp = emit;
  return f;
}

/// Marks the entries named in `names` as taking complex arguments
/// (LibraryFunction::acceptsComplex).
void acceptComplex(std::vector<LibraryFunction>& entries, std::initializer_list<const char*> names);

// Each category file appends its entries.
void addAllocationFunctions(std::vector<LibraryFunction>& out);
void addElementwiseFunctions(std::vector<LibraryFunction>& out);
void addReductionFunctions(std::vector<LibraryFunction>& out);
void addLinearAlgebraFunctions(std::vector<LibraryFunction>& out);
void addContainerFunctions(std::vector<LibraryFunction>& out);
void addSparseFunctions(std::vector<LibraryFunction>& out);
void addNumericFunctions(std::vector<LibraryFunction>& out);
void addManipulationFunctions(std::vector<LibraryFunction>& out);

}  // namespace pydd::catalog
