// The pydd IR: a structured tree close to the source.
//
// Loops, whole-array operations and library calls stay visible until code
// generation, because the optimizations pydd cares about (LICM of array
// operations, fusion, allocation hoisting, privatization) are stated at
// this level. Every node carries the source location it came from; after
// sema every expression carries its type.
//
// Ownership: each node owns its children through unique_ptr. Passes rewrite
// in place or replace a child through the Mutator (ir/Visitor.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ir/Type.h"

namespace pydd {

struct LibraryFunction;  // stdlib/Catalog.h

/// 1-based line and column (in bytes) in the .pydd file.
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
};

// ----------------------------------------------------------------------------
// Expressions

enum class ExprKind {
#define PYDD_EXPR(Class, Kind) Kind,
#include "ir/Nodes.def"
};
/// "Binary", "Call", ... (for dumps and the verifier's messages).
const char* kindName(ExprKind k);

struct Expr {
  explicit Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
  const ExprKind kind;
  SourceLoc loc;
  Type type;  // filled in by sema
};
using ExprPtr = std::unique_ptr<Expr>;

/// A literal written in the source, possibly negated: weak in arithmetic.
bool isWeakLiteral(const Expr& e);
/// `3 + 4j`, `-1.5 - 2j`: a real and an imaginary literal added or
/// subtracted, which Python evaluates to one complex constant (weak, as a
/// literal is).
bool isComplexLiteral(const Expr& e);
/// The value of an integer literal, possibly negated or converted (an axis,
/// a tuple position); false for anything computed.
bool constantInt(const Expr& e, int64_t& value);

/// Numeric literals are "weak" in arithmetic (NumPy 2's NEP 50): `x * 2.0`
/// keeps x's float32. A literal with a fixed type is a Cast of a literal.
struct IntLit : Expr {
  IntLit(SourceLoc l, int64_t v) : Expr(ExprKind::IntLit, l), value(v) {}
  int64_t value;
};
/// A float literal, or with `imaginary` an imaginary one (`2.5j`, `1j`:
/// the complex128 value 0 + value*1j, weak like every literal).
struct FloatLit : Expr {
  FloatLit(SourceLoc l, double v, bool imag = false) : Expr(ExprKind::FloatLit, l), value(v), imaginary(imag) {}
  double value;
  bool imaginary;
};
struct BoolLit : Expr {
  BoolLit(SourceLoc l, bool v) : Expr(ExprKind::BoolLit, l), value(v) {}
  bool value;
};
/// Only as an argument of print.
struct StrLit : Expr {
  StrLit(SourceLoc l, std::string v) : Expr(ExprKind::StrLit, l), value(std::move(v)) {}
  std::string value;
};
struct VarRef : Expr {
  VarRef(SourceLoc l, std::string n) : Expr(ExprKind::Var, l), name(std::move(n)) {}
  std::string name;
};

enum class UnaryOp { Neg, Pos, Invert };
struct Unary : Expr {
  Unary(SourceLoc l, UnaryOp o, ExprPtr a) : Expr(ExprKind::Unary, l), op(o), operand(std::move(a)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, MatMul, BitAnd, BitOr, BitXor, Shl, Shr };
/// The operator as written in pydd source: "+", "//", "**"...
const char* spelling(BinaryOp op);

struct Binary : Expr {
  Binary(SourceLoc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
};

enum class CmpOp { Lt, Le, Gt, Ge, Eq, Ne, In, NotIn };
/// "<", "<=", ...
const char* spelling(CmpOp op);
/// A comparison chain `a < b <= c`: each operand is evaluated at most once
/// and evaluation stops at the first false link, as in Python.
struct Compare : Expr {
  Compare(SourceLoc l) : Expr(ExprKind::Compare, l) {}
  std::vector<CmpOp> ops;          // ops.size() == operands.size() - 1
  std::vector<ExprPtr> operands;
  std::vector<Type> linkTypes;     // per link: the type compared in (sema)
};

/// Short-circuit `and` / `or` (on bools after sema).
struct Logical : Expr {
  Logical(SourceLoc l, bool isAnd, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::Logical, l), isAnd(isAnd), lhs(std::move(a)), rhs(std::move(b)) {}
  bool isAnd;
  ExprPtr lhs, rhs;
};
struct Not : Expr {
  Not(SourceLoc l, ExprPtr a) : Expr(ExprKind::Not, l), operand(std::move(a)) {}
  ExprPtr operand;
};
/// `trueValue if cond else falseValue`.
struct Select : Expr {
  Select(SourceLoc l, ExprPtr c, ExprPtr t, ExprPtr f)
      : Expr(ExprKind::Select, l), cond(std::move(c)), trueValue(std::move(t)), falseValue(std::move(f)) {}
  ExprPtr cond, trueValue, falseValue;
};

struct KeywordArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

enum class CallTarget { Unresolved, User, Library };
struct Call : Expr {
  Call(SourceLoc l, std::string c) : Expr(ExprKind::Call, l), callee(std::move(c)) {}
  std::string callee;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> keywords;   // moved into args by sema
  CallTarget target = CallTarget::Unresolved;
  const LibraryFunction* library = nullptr;  // CallTarget::Library
  /// Written as a method, `x.sum(1)`: args[0] is the receiver `x`.
  bool isMethod = false;
};

/// Subscript `A[i, j]`, `A[i, :]`, `A[a:b:s]`, `L[i]`, `d[k]`. With one
/// integer index per dimension it is an element; with slices or fewer
/// indices than dimensions it is a view that aliases A (NumPy's basic
/// indexing).
struct Index : Expr {
  Index(SourceLoc l, ExprPtr b) : Expr(ExprKind::Index, l), base(std::move(b)) {}
  ExprPtr base;
  std::vector<ExprPtr> indices;
  /// What remains of a subscript with np.newaxis entries (the resolver
  /// made those expand_dims calls, counting every other non-slice index
  /// as an integer): an index array or a mask here is refused by sema.
  bool besideNewaxis = false;
  /// Set by the pass that built an element read or store whose indices it
  /// knows are in [0, extent) (a fused loop's buffer position): code
  /// generation reads the element without wrapping negative indices. A
  /// hint, like For::independent: the source form shows a plain subscript.
  bool inRange = false;
};
/// `A.shape` and friends; sema rewrites every Attribute to a library call.
struct Attribute : Expr {
  Attribute(SourceLoc l, ExprPtr b, std::string n)
      : Expr(ExprKind::Attribute, l), base(std::move(b)), name(std::move(n)) {}
  ExprPtr base;
  std::string name;
};
/// A scalar conversion to `type`: written `int32(x)` or inserted by sema.
struct Cast : Expr {
  Cast(SourceLoc l, Type to, ExprPtr a) : Expr(ExprKind::Cast, l), target(to), operand(std::move(a)) { type = to; }
  Type target;  // kept apart from `type`, which inference may reset
  ExprPtr operand;
};
/// `(a, b)` or `[a, b]`: a tuple, a List literal, or a shape.
struct TupleLit : Expr {
  TupleLit(SourceLoc l, bool list) : Expr(ExprKind::TupleLit, l), isList(list) {}
  std::vector<ExprPtr> elems;
  bool isList;
};
/// `start:stop:step` inside a subscript; each part may be omitted (null).
struct Slice : Expr {
  explicit Slice(SourceLoc l) : Expr(ExprKind::Slice, l) {}
  ExprPtr start, stop, step;
};
/// `{k1: v1, k2: v2}` (a Dict literal).
struct DictLit : Expr {
  explicit DictLit(SourceLoc l) : Expr(ExprKind::DictLit, l) {}
  std::vector<ExprPtr> keys, values;
};

// ----------------------------------------------------------------------------
// Statements

enum class StmtKind {
#define PYDD_STMT(Class, Kind) Kind,
#include "ir/Nodes.def"
};
const char* kindName(StmtKind k);

struct Stmt {
  explicit Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
  const StmtKind kind;
  SourceLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
  explicit Block(SourceLoc l) : Stmt(StmtKind::Block, l) {}
  std::vector<StmtPtr> stmts;
};
using BlockPtr = std::unique_ptr<Block>;

/// `t = v`, `A[i] = v`, `a, b = v1, v2` (several targets, value a tuple),
/// and `x: T = v` / `x: T` (a declaration: `declared` set, value maybe null).
struct Assign : Stmt {
  explicit Assign(SourceLoc l) : Stmt(StmtKind::Assign, l) {}
  std::vector<ExprPtr> targets;  // VarRef or Index
  ExprPtr value;                 // null for a bare declaration
  Type declared;                 // from an annotation or a `# type:` comment
  /// `x op= v` lowered to `x = x op v`: for an array x, NumPy updates the
  /// array in place, which aliases see.
  bool augmented = false;
};
struct ExprStmt : Stmt {
  ExprStmt(SourceLoc l, ExprPtr e) : Stmt(StmtKind::ExprStmt, l), expr(std::move(e)) {}
  ExprPtr expr;
};
struct If : Stmt {
  explicit If(SourceLoc l) : Stmt(StmtKind::If, l) {}
  ExprPtr cond;
  BlockPtr thenBody;
  BlockPtr elseBody;  // may be null; `elif` is an If alone in an else block
  /// The else branch is the rare case (a pass's general fallback): code
  /// generation compiles it for size, out of line.
  bool rareElse = false;
};
struct While : Stmt {
  explicit While(SourceLoc l) : Stmt(StmtKind::While, l) {}
  ExprPtr cond;
  BlockPtr body;
  /// Set by markScanLoops on a scan: an innermost loop whose body steps
  /// the int64 variable `scanIndex` by the literal `scanStep` on every
  /// iteration and whose condition, whenever it holds, has read an element
  /// of an array at that index. It runs at most about 2 * extent / |step|
  /// times before that read would leave the array, like a counted loop,
  /// so code generation checks no Ctrl-C inside it; with a positive step
  /// and an index non-negative at entry it stays non-negative, so code
  /// generation may run a copy that reads without wrapping negative
  /// indices. A hint: the source form (the printer) shows a plain `while`.
  std::string scanIndex;
  int64_t scanStep = 0;
};

/// `for var in range(start, stop, step)` or `for var in array` (1-D).
/// `parallel` marks `pfor`: iterations may run in any order or at once.
struct For : Stmt {
  explicit For(SourceLoc l) : Stmt(StmtKind::For, l) {}
  std::string var;
  SourceLoc varLoc;
  bool isRange = true;
  ExprPtr start, stop, step;  // range form (start and step always set)
  ExprPtr iterable;           // element form
  bool parallel = false;
  /// Set by fusion on the outer loop of an element-wise loop nest: its
  /// iterations write disjoint elements that no iteration reads, raise
  /// nothing but MemoryError, and assign only scalars and arrays that each
  /// iteration assigns before reading them (so each thread may have its
  /// own), so code generation may run a large one on all threads. A hint,
  /// like If::rareElse: the source form (the printer) shows a plain `for`.
  bool independent = false;
  /// With `independent`: the elements one iteration computes when its body
  /// is not a perfect loop nest (a window of a fused sum); code generation
  /// weighs the loop's work by it. 0: the nest's trip counts tell.
  int64_t elementsPerIteration = 0;
  /// Set by fusion on the outer loop of a fold's nest (any, all, an integer
  /// sum of an element-wise tree): the nest only updates this scalar, as
  /// `v = combine(v, x)` with x raising nothing, and combine is exact in any
  /// order (bitwise or and and, wrapping integer addition) with identity
  /// `foldIdentity`. Code generation may fold parts of a large one on all
  /// threads and combine the parts. A hint, like `independent`.
  std::string foldsInto;
  int64_t foldIdentity = 0;
  /// Set by filterWhereLoops on `for j in range(0, n): if test(j): ...`:
  /// the test has no effects, cannot raise, and reads nothing the loop
  /// writes, so its value for every j is known before any iteration runs.
  /// Code generation may then test a chunk of j first, storing the taken
  /// ones without a branch, and run the body for those: a branch that goes
  /// either way at random (a neighbour list's 0/1 row) mispredicts in
  /// neither loop. A hint, like `independent`.
  bool testsFirst = false;
  /// Set by fusion on a loop whose body is one store into a buffer the
  /// fusion allocated and no expression of the loop reads: an element may
  /// be stored twice, the first value overwritten. Code generation may then
  /// store the cheap side of a select whose other side is costly for every
  /// element first, and the costly one only where it is needed (a chunk's
  /// indices kept without a branch, as with testsFirst). A hint.
  bool storesFresh = false;
  /// Set by deferDivisionChecks on an innermost range loop whose only
  /// possible error is a float division by zero and whose iterations after
  /// that error change nothing a caller can see: code generation may record
  /// zero divisors in a flag and raise ZeroDivisionError after the loop, so
  /// that the loop has no exit and vectorizes. A hint.
  bool defersDivisionChecks = false;
  /// Set by pairRowFolds on a loop over a sparse matrix's rows whose every
  /// row folds its entries into a scalar stored in the row's own element
  /// of a private array: the rows are independent, so code generation may
  /// run two at a time (pydd::detail::sp_rows_in_pairs). A hint.
  bool rowsInPairs = false;
  /// Set by prefetchGathers on a loop over S.row(i) or S.nonzeros() whose
  /// body reads x[j], j the entry's column: the 1-D arrays so read. Code
  /// generation may prefetch them at the column of an entry further on
  /// (pydd::detail::prefetch_gather). A hint.
  std::vector<std::string> gathersFrom;
  BlockPtr body;
};
struct Return : Stmt {
  Return(SourceLoc l, ExprPtr v) : Stmt(StmtKind::Return, l), value(std::move(v)) {}
  ExprPtr value;  // null for a bare return
};
struct Break : Stmt {
  explicit Break(SourceLoc l) : Stmt(StmtKind::Break, l) {}
};
struct Continue : Stmt {
  explicit Continue(SourceLoc l) : Stmt(StmtKind::Continue, l) {}
};
struct Pass : Stmt {
  explicit Pass(SourceLoc l) : Stmt(StmtKind::Pass, l) {}
};

/// Intrepydd's task-parallel blocks.
enum class TaskKind { Async, Finish, Isolated };
struct Task : Stmt {
  Task(SourceLoc l, TaskKind k) : Stmt(StmtKind::Task, l), taskKind(k) {}
  TaskKind taskKind;
  BlockPtr body;
};

// ----------------------------------------------------------------------------
// Functions and modules

struct Param {
  std::string name;
  Type type;
  SourceLoc loc;
  /// A default value, as Python literal text ("3", "-0.5", "True"); empty
  /// when the parameter is required. Only constants of a scalar parameter.
  std::string defaultValue;
  /// Annotated `Array(T)` without a rank: the function is compiled once per
  /// rank its body supports (Function::generic), and Python calls dispatch
  /// on the argument's ndim.
  bool anyRank = false;
};

struct Local {
  std::string name;
  Type type;
  SourceLoc loc;  // first definition
};

struct Function {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  Type returnType = Type::voidTy();
  /// No return annotation: sema infers the return type from the values
  /// returned (none: the function returns nothing).
  bool inferReturn = false;
  /// The return annotation is `Array(T)` without a rank: each instance
  /// returns the rank its body computes.
  bool returnAnyRank = false;
  /// An instance of a function with `Array(T)` parameters (Param::anyRank)
  /// for one combination of ranks: the name written in the source, which
  /// the instances share (Python dispatches on ndim between them; C++
  /// overloads them); `name` is the instance's own, unique in the module.
  std::string generic;
  BlockPtr body;
  /// Every variable that is not a parameter, in order of first definition
  /// (filled by sema).
  std::vector<Local> locals;

  /// The type of a parameter or local, or null: O(1), through an index
  /// that follows appends to `params` and `locals` and is rebuilt when
  /// they shrink or their last entry changes (the ways passes edit them).
  const Type* lookup(const std::string& var) const;
  /// The name the source gives it (shared by the instances of a generic
  /// function).
  const std::string& sourceName() const { return generic.empty() ? name : generic; }

 private:
  const std::string& bindingName(size_t k) const {
    return k < params.size() ? params[k].name : locals[k - params.size()].name;
  }
  mutable std::unordered_map<std::string, size_t> LookupIndex;  // name -> first binding
  mutable size_t LookupIndexed = 0;
  mutable std::string LookupLast;  // the name of binding LookupIndexed - 1
};

struct Module {
  std::string name;  // the file stem: Python module and C++ namespace name
  std::string path;
  std::vector<std::unique_ptr<Function>> functions;
  /// The names `import numpy` / `import numpy as np` bound: `np.sum(x)` is
  /// the library's sum (resolved by sema).
  std::vector<std::string> numpyAliases;

  Function* find(const std::string& fn) const;
};

// Casting helpers in the LLVM style: isa / cast / dyn_cast on node kinds.
template <typename T> struct NodeTraits;
#define PYDD_EXPR(Class, Kind) \
  template <> struct NodeTraits<Class> { static bool is(const Expr& e) { return e.kind == ExprKind::Kind; } };
#define PYDD_STMT(Class, Kind) \
  template <> struct NodeTraits<Class> { static bool is(const Stmt& s) { return s.kind == StmtKind::Kind; } };
#include "ir/Nodes.def"

template <typename T, typename N> bool isa(const N& n) { return NodeTraits<T>::is(n); }
/// The node as a T (asserting in debug builds), keeping its constness.
template <typename T, typename N> auto& cast(N& n) {
  using Result = std::conditional_t<std::is_const_v<N>, const T, T>;
  return static_cast<Result&>(n);
}
template <typename T, typename N> T* dyn_cast(N* n) {
  return n && NodeTraits<T>::is(*n) ? static_cast<T*>(n) : nullptr;
}
template <typename T, typename N> const T* dyn_cast(const N* n) {
  return n && NodeTraits<T>::is(*n) ? static_cast<const T*>(n) : nullptr;
}

}  // namespace pydd
