// The library catalog: one entry per library function a kernel can call.
//
// Every stage reads this table instead of knowing function names: sema asks
// an entry to type a call, optimizations ask what it reads and writes and
// what it computes per element, codegen asks it for C++, and the Python
// shim implements its NumPy equivalent. Adding a function means adding an
// entry (in the file of its category) and its runtime implementation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace pydd {

enum class LibraryCategory { Allocation, Query, Elementwise, Reduction, LinearAlgebra, Sparse, Container, IO };

/// What a type rule may report; sema turns it into a diagnostic at `argIndex`
/// (or at the call when argIndex < 0).
struct TypeRuleError {
  int argIndex = -1;
  std::string message;
};

/// The per-element meaning of an element-wise function: what fusion
/// composes and what the runtime's broadcasting loops apply.
struct ElementRule {
  /// C++ functor in the runtime (pydd::op::...) applied to one element of
  /// each operand, all converted to the compute kind (empty for where, whose
  /// catalog entry emits its own element form).
  const char* functor;
  /// The same formula in pydd, over operands named a and b.
  const char* formula;
  /// The kind operands are converted to before the formula: their common
  /// kind (NumPy promotion, literals weak), that kind widened to a float
  /// when it is not one (sqrt, exp...: float32 for 16-bit integers, float64
  /// for wider ones, as NumPy's loops; 8-bit ones would be float16), or bool.
  /// TrueDivide is Float, except that every integer kind gives float64.
  enum class Compute { Common, Float, Bool, TrueDivide } compute;
  /// Comparisons, logic and isnan/isinf yield bool; the rest the compute kind.
  bool resultBool;
  /// NumPy refuses bool operands, or gives int8/float16 which pydd lacks.
  bool rejectsBool;
  /// NumPy refuses float operands (the bitwise functions).
  bool rejectsFloat = false;
  /// One-operand functions with f(0) == 0 (sqrt, abs, negation, sin...):
  /// on a SparseMat they map its stored values and keep its structure, as
  /// SciPy's S.sqrt() and abs(S); the others (exp, cos) have a dense result.
  bool preservesZero = false;
  /// When nonzero, only calls with this many arguments are element-wise:
  /// where(c, a, b) is, the one-argument where(c) (the indices) is not.
  unsigned arity = 0;
  /// Complex operands give a result of their parts' kind (abs, angle:
  /// complex64 -> float32); other operands the compute kind as usual.
  bool realResult = false;
  /// On integer operands one element may raise (a negative exponent of
  /// `**`), so computing the elements one at a time between other effects
  /// would move the error; float and bool elements never raise.
  bool raisesOnIntegers = false;
};

/// An element-wise function of real numbers as passes may reason about its
/// values (opt/ZeroProducts.h): how its float64 result orders with each
/// operand while the other is fixed, the function as the runtime computes it
/// (the same libm), and how far that may be from the exact result.
struct RealFunction {
  /// BySignOfOther: increasing when the other operand is positive,
  /// decreasing when it is negative, neither when it is zero (mul, div's a).
  enum class Order : uint8_t { None, Increasing, Decreasing, BySignOfOther };
  Order a = Order::None, b = Order::None;
  /// Null for functions nothing computes values of (not monotone).
  double (*evaluate)(double a, double b) = nullptr;
  /// The largest error of the runtime's result in units in the last place,
  /// as glibc documents it, rounded up; 0 for correctly rounded functions
  /// (IEEE arithmetic, sqrt, floor), which give the compiler's values.
  unsigned ulps = 0;
  /// A libm routine of tens of cycles that loops cannot vectorize (exp,
  /// log): a test that skips a call pays for itself.
  bool costly = false;
  /// A zero operand makes a finite other operand's result a zero (mul).
  bool zeroAnnihilates = false;
};

/// How a reduction over all elements folds them one at a time, for fusion:
/// `acc = combine(acc, element)` starting from `identity` (converted to the
/// result type). When orderFree, any order gives the same result; otherwise
/// only integer results do (a float sum is NumPy's pairwise order, which a
/// loop does not reproduce bit for bit).
struct FoldRule {
  const char* combine;  // an element-wise catalog function of (acc, element)
  int64_t identity;
  bool orderFree;
  /// The accumulator's kind when it is not the result's: any and all fold
  /// each element's truth value (0 or 1) into an int64 with bitwise or/and,
  /// which vectorizes where a bool accumulator does not; the result is the
  /// accumulator's truth value.
  std::optional<ScalarKind> accumulator = std::nullopt;
  /// When the order matters (a float sum), the order NumPy's reduction
  /// uses: the elements in C order pass through buffers of this many, each
  /// buffer is reduced by the function itself and the buffers' results are
  /// combined in order. A fold that fills such a buffer and reduces it gives
  /// the same result bit for bit. 0: no such order.
  int64_t window = 0;
};

/// How a catalog function reaches the stored entries of its SparseMat
/// operands: row by row, each row's entries in column order (S.row(i),
/// spmv); every entry in CSR order (S.nonzeros(), multiply, a map of the
/// values); or not at all (None: shape queries, construction).
enum class SparseAccess : uint8_t { None, Rows, NonZeros };

/// Reverse mode (frontend/Gradient.h): what one call adds to the adjoint of
/// each float operand, as pydd source over the operands `a`, `b` (`c` for
/// a third), the call's value `r` and the adjoint `g` of that value. An
/// element-wise contribution has the result's shape and is summed back to a
/// broadcast operand's shape; a reduction's has its operand's. Null: the
/// operand carries no derivative (an index, an exponent written as an
/// integer), or, with `zero`, the derivative is zero almost everywhere
/// (floor, sign: JAX's choice). `custom` chooses the formula from the
/// operands' ranks (products).
struct DerivativeRule {
  const char* da = nullptr;
  const char* db = nullptr;
  bool zero = false;
  std::string (*custom)(const Call& call, unsigned operand) = nullptr;
};

struct LibraryFunction {
  const char* name = "";
  LibraryCategory category = LibraryCategory::Query;
  /// Parameter names, for keyword arguments; "*" marks a variadic tail.
  std::vector<const char*> params;
  /// How many leading parameters are required.
  unsigned required = 0;
  /// How many leading parameters NumPy or Python take only by position
  /// (`numpy.where(condition, x, y, /)`, `list.pop(index, /)`): a keyword
  /// for one of them is an error, as it is there.
  unsigned positionalOnly = 0;
  /// Default values of optional parameters, by name, as pydd literals
  /// ("0", "False", "all_axes()" for NumPy's axis=None): what sema puts in
  /// for an omitted argument that a later keyword argument skips
  /// (`np.var(x, ddof=1)`). A trailing omitted argument stays omitted.
  std::vector<std::pair<const char*, const char*>> defaults;
  /// The NumPy/SciPy/Python equivalent, as the Python shim implements it.
  const char* numpy = "";
  /// Def/use: bit i is set when the function writes the memory of argument
  /// i (fill, append, heappush); every argument is read.
  uint32_t writesArgs = 0;
  /// Acts outside the program's values: writes to standard output (print)
  /// or reads the clock (time); no pass moves, merges or drops such a call.
  bool io = false;
  /// The result shares memory with argument 0 (a transpose is a view).
  bool returnsView = false;
  /// Only callable as a method: `l.append(x)`, `d.get(k, v)`.
  bool methodOnly = false;
  /// Not callable as a method: NumPy's method of that name means something
  /// else (`a.sort()` sorts in place and returns None).
  bool functionOnly = false;
  /// Never raises when every argument after the first is a literal (an
  /// axis, checked at compile time): a query of a value's shape or memory.
  /// Other calls may raise (shapes that do not broadcast, empty reductions,
  /// missing keys...).
  bool raisesOnlyOnAxis = false;
  /// Answers from a value's header alone (its shape, length or address) in
  /// constant time, reading no element: a loop that calls it on every
  /// iteration does no more work per iteration for bigger data (a scan's
  /// `i < len(a)`, opt/ScanLoops.h).
  bool readsHeaderOnly = false;
  /// A function that returns a new array of the shape its arguments give,
  /// and what its elements start as (the allocation pass reuses one such
  /// array across a loop's iterations and refills it): uninitialized
  /// (empty), zeros, ones, or argument 1 (full's fill value).
  enum class NewArray { No, Uninitialized, Zeros, Ones, FillArgument };
  NewArray newArray = NewArray::No;
  /// The result is always a new array that nothing else refers to (arange,
  /// copy; every newArray function and element-wise call is one too): licm
  /// may share one across a loop's iterations where only element-wise
  /// operations read it.
  bool returnsNew = false;
  /// For a function f whose two-scalar form f(s, e) is associative and
  /// commutative (max, min): OpenMP's reduction identifier for
  /// `s = f(s, e)` in a pfor (opt/Privatization.h). Null otherwise.
  const char* ompReduction = nullptr;
  /// A product of a SparseMat and a dense operand whose result keeps the
  /// SparseMat's structure (SciPy's multiply): the dense operand is needed
  /// only at the stored positions, which sampled fusion computes alone.
  bool keepsSparseStructure = false;
  /// Bit i: the function reads the rows of 2-D argument i contiguously,
  /// copying a strided one on every call; bit 16 + i: its columns. The
  /// sparse layout pass (opt/SparseLayout.h) makes the copy of an argument
  /// that a loop does not change once, before the loop.
  uint32_t readsContiguous = 0;
  /// Dense @ sparse products: the catalog function computing the same
  /// product from the dense operand's transpose, f(a.T, S), which it reads
  /// row by row (the product itself transposes a on every call).
  const char* transposedForm = nullptr;
  /// Sparse functions: how they read their SparseMat operands.
  SparseAccess sparseAccess = SparseAccess::None;
  /// A loop's iterable only (`for j, v in S.row(i)`): yields each entry it
  /// reaches, in sparseAccess's order, as a tuple of the entry's indices
  /// that order does not fix (a row's column; a row and a column) and its
  /// value.
  bool yieldsEntries = false;
  /// With one 1-D argument, the indices of its non-zero elements in
  /// increasing order (`where(c)`): a loop over them can test each element
  /// of `c` instead (opt/FilterLoops.h).
  bool nonzeroIndices = false;
  /// Products of 2-D arrays: the catalog function computing the product
  /// only at a SparseMat's stored positions, f(S, a, b), one value per
  /// entry in S's order (sampled fusion).
  const char* sampled = nullptr;
  /// Products of two SparseMats: the catalog function computing
  /// spm_mul(M, product(a, b)) only at M's stored positions,
  /// f(M, a, b, mask_first) (mask_first: M is spm_mul's first operand).
  const char* masked = nullptr;
  /// Element-wise functions only: the per-element formula.
  const ElementRule* element = nullptr;
  /// Element-wise functions of real numbers that passes may evaluate.
  const RealFunction* real = nullptr;
  /// Reductions that fusion can fold into an element-wise loop.
  const FoldRule* fold = nullptr;
  /// Functions with a derivative (frontend/Gradient.h); null: a call of
  /// it on a differentiated value is a located error.
  const DerivativeRule* derivative = nullptr;
  /// Result type from the typed arguments (null for omitted optional ones);
  /// `call` gives access to literal arguments such as a shape or an axis.
  Type (*resultType)(const Call& call, TypeRuleError& error) = nullptr;
  /// C++ for a call, given the C++ text of each argument (empty for an
  /// omitted optional argument).
  std::string (*emitCpp)(const Call& call, llvm::ArrayRef<std::string> args) = nullptr;

  /// Where pydd follows NumPy and the original Intrepydd did not, what code
  /// written for the original meets when it subscripts the result: added
  /// to the error when the result cannot be subscripted (argmax's flat
  /// index), or (with warnOnFirstSubscript) a warning when a call with only
  /// its required arguments is subscripted with [0] (where(c)[0], NumPy's
  /// tuple spelling, takes the first index instead).
  const char* subscriptNote = nullptr;
  bool warnOnFirstSubscript = false;

  /// A call by this name with more arguments than `params` names is a call
  /// of the entry named here instead: `log(x, base)` is log_base(x, base).
  /// Only pydd's spelling: NumPy's function of the name (np.log) has no
  /// such argument, so `np.log(x, b)` stays an error.
  const char* moreArgumentsEntry = nullptr;

  /// Takes complex scalars and arrays (complex64, complex128). Sema
  /// rejects a complex argument of any other function at the argument, so
  /// that a function pydd has not implemented for complex numbers is a
  /// located error rather than a C++ one.
  bool acceptsComplex = false;

  bool hasSideEffects() const { return io || writesArgs != 0; }
};

/// The entry named `name`, or null.
const LibraryFunction* lookupLibraryFunction(llvm::StringRef name);
/// The entry that implements NumPy's `numpy.<name>` (`np.subtract` is sub,
/// `np.linalg.norm` is "linalg.norm"), or null: what `np.name(...)` and a
/// name from `from numpy import ...` resolve to.
const LibraryFunction* lookupNumpyFunction(llvm::StringRef name);
/// The element-wise entry an operator on arrays calls (`a * b` is mul), or
/// null for an operator that has none.
const char* elementwiseOperatorName(BinaryOp op);
/// Every entry, in catalog order (for documentation and tests).
const std::vector<LibraryFunction>& libraryFunctions();

/// The kind an element-wise call computes in (see ElementRule::Compute).
ScalarKind elementComputeKind(const Call& call);
/// The common kind of an element-wise call's operands, before its rule.
ScalarKind elementOperandKind(const Call& call);
/// The same for operands whose common kind is `operands`.
ScalarKind elementComputeKind(const ElementRule& rule, ScalarKind operands);

/// The catalog function a loop iterates to visit a SparseMat's entries in
/// the given order (S.row(i) for Rows, S.nonzeros() for NonZeros).
const LibraryFunction* entryIterator(SparseAccess access);

/// C++ spelling of a scalar kind: bool, int32_t, int64_t, float, double.
const char* cxxScalarType(ScalarKind s);
/// C++ spelling of a value type: scalars, `pydd::Array<double, 2>`,
/// `pydd::List<int64_t>`, `std::tuple<...>`.
std::string cxxType(const Type& t);

}  // namespace pydd
