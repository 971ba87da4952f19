// Unit tests for semantic analysis: type inference (constants seed it,
// assignments unify by NumPy's promotion, literals are weak), annotations,
// call resolution (keywords, conversions, typed zeros, `.shape`), the
// explicit casts sema leaves in the IR, and the errors a user sees.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "llvm/Support/MemoryBuffer.h"
#include "stdlib/Catalog.h"

namespace {

using namespace pydd;

// ---- helpers ---------------------------------------------------------------

struct Analyzed {
  std::unique_ptr<Module> module;  // null if parsing failed
  bool parsed = false;
  bool ok = false;  // parsed and analyzed without errors
  unsigned errors = 0;
  std::string messages;

  /// The first function, or the one named `name`.
  const Function* fn(const char* name = nullptr) const {
    if (!module || module->functions.empty()) return nullptr;
    return name ? module->find(name) : module->functions[0].get();
  }
  /// The type of a parameter or local of the first function (unknown if none).
  Type typeOf(const std::string& var) const {
    const Function* f = fn();
    const Type* t = f ? f->lookup(var) : nullptr;
    return t ? *t : Type();
  }
  /// Statement `i` of the first function's body, or null.
  const Stmt* stmt(size_t i) const {
    const Function* f = fn();
    return f && i < f->body->stmts.size() ? f->body->stmts[i].get() : nullptr;
  }
  /// The value assigned by statement `i` of the first function, or null.
  const Expr* value(size_t i) const {
    auto* a = dyn_cast<Assign>(stmt(i));
    return a ? a->value.get() : nullptr;
  }
};

Analyzed analyze(const std::string& source) {
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(source, "test.pydd");
  Diagnostics diag("test.pydd", std::move(buf));
  Analyzed a;
  testing::internal::CaptureStderr();
  a.module = parseModule(diag, "test");
  a.parsed = a.module != nullptr;
  a.ok = a.parsed && analyzeModule(*a.module, diag);
  a.messages = testing::internal::GetCapturedStderr();
  a.errors = diag.errorCount();
  return a;
}

/// Analyzes a source that must be accepted.
Analyzed accept(const std::string& source) {
  Analyzed a = analyze(source);
  EXPECT_TRUE(a.ok) << a.messages;
  return a;
}

/// Expects that sema (not the parser) rejects `source` with `message` at
/// line:col.
void expectError(const std::string& source, int line, int col, const std::string& message) {
  Analyzed a = analyze(source);
  ASSERT_TRUE(a.parsed) << "the parser rejected it already:\n" << a.messages;
  EXPECT_FALSE(a.ok);
  EXPECT_GE(a.errors, 1u);
  std::string where = "test.pydd:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_NE(a.messages.find(where + message), std::string::npos)
      << "expected '" << where << message << "' in:\n" << a.messages;
}

const Type i32 = Type::int32(), i64 = Type::int64(), f32 = Type::float32(), f64 = Type::float64(),
           boolean = Type::boolTy(), c64 = Type::scalar(ScalarKind::Complex64), c128 = Type::complex128();

// ---- inference: constants seed it ------------------------------------------------

TEST(Infer, ConstantsSeedTypes) {
  Analyzed a = accept(
      "def f():\n"
      "    x = 0\n"
      "    y = 0.0\n"
      "    z = True\n"
      "    w = -3\n"
      "    v = 1e3\n");
  EXPECT_EQ(a.typeOf("x"), i64);
  EXPECT_EQ(a.typeOf("y"), f64);
  EXPECT_EQ(a.typeOf("z"), boolean);
  EXPECT_EQ(a.typeOf("w"), i64);
  EXPECT_EQ(a.typeOf("v"), f64);
}

TEST(Infer, LaterFloatAssignmentPromotesTheVariable) {
  Analyzed a = accept(
      "def f():\n"
      "    x = 0\n"
      "    x = 1.5\n");
  EXPECT_EQ(a.typeOf("x"), f64);
  // The first assignment now stores a float: the literal is converted.
  const Expr* first = a.value(0);
  ASSERT_NE(dyn_cast<FloatLit>(first), nullptr) << (first ? printExpr(*first) : "null");
  EXPECT_EQ(dyn_cast<FloatLit>(first)->value, 0.0);
  EXPECT_EQ(first->type, f64);
}

TEST(Infer, BoolThenIntPromotesToInt) {
  Analyzed a = accept("def f():\n    b = True\n    b = 2\n");
  EXPECT_EQ(a.typeOf("b"), i64);
}

TEST(Infer, FixedPointAcrossLoopIterations) {
  // `s` only becomes float64 once `t` is known to be float64, which is
  // assigned after its use: inference must iterate.
  Analyzed a = accept(
      "def f(n: int) -> float64:\n"
      "    s = 0\n"
      "    t = 0\n"
      "    for i in range(n):\n"
      "        s = s + t\n"
      "        t = 0.5 * i\n"
      "    return s\n");
  EXPECT_EQ(a.typeOf("t"), f64);
  EXPECT_EQ(a.typeOf("s"), f64);
  EXPECT_EQ(a.typeOf("i"), i64);
}

TEST(Infer, TupleAssignmentTypesEachTarget) {
  Analyzed a = accept("def f():\n    a, b = 1, 2.5\n    c, d = b, a\n");
  EXPECT_EQ(a.typeOf("a"), i64);
  EXPECT_EQ(a.typeOf("b"), f64);
  EXPECT_EQ(a.typeOf("c"), f64);
  EXPECT_EQ(a.typeOf("d"), i64);
}

TEST(Infer, UserFunctionResultType) {
  Analyzed a = accept(
      "def g(x: float32) -> float32:\n"
      "    return x\n"
      "\n"
      "def f(y: float32):\n"
      "    z = g(y)\n");
  const Function* f = a.fn("f");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->locals.size(), 1u);
  EXPECT_EQ(f->locals[0].type, f32);
  auto* as = dyn_cast<Assign>(f->body->stmts[0].get());
  ASSERT_NE(as, nullptr);
  auto* call = dyn_cast<Call>(as->value.get());
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->target, CallTarget::User);
}

// ---- NumPy promotion ----------------------------------------------------------------

/// The type of `y = EXPR` in a function with parameters of several types.
Type exprType(const std::string& expression) {
  Analyzed a = accept(
      "def f(i: int32, l: int64, s: float32, d: float64, b: bool, c: bool):\n"
      "    y = " + expression + "\n");
  return a.typeOf("y");
}

TEST(Promotion, MixedStrongOperands) {
  EXPECT_EQ(exprType("i + l"), i64);
  EXPECT_EQ(exprType("l + s"), f64);
  EXPECT_EQ(exprType("i + s"), f64);
  EXPECT_EQ(exprType("s * d"), f64);
  EXPECT_EQ(exprType("i * i"), i32);
  EXPECT_EQ(exprType("s - s"), f32);
  EXPECT_EQ(exprType("b + i"), i32);
}

TEST(Promotion, LiteralsAreWeak) {
  EXPECT_EQ(exprType("s * 2.0"), f32);
  EXPECT_EQ(exprType("2.0 * s"), f32);
  EXPECT_EQ(exprType("s * 2"), f32);
  EXPECT_EQ(exprType("i + 1"), i32);
  EXPECT_EQ(exprType("i + -1"), i32);
  EXPECT_EQ(exprType("i + True"), i32);
  // A float literal cannot be held by an integer type: float64.
  EXPECT_EQ(exprType("i + 2.5"), f64);
  EXPECT_EQ(exprType("b + 1.5"), f64);
  // Two literals promote between themselves.
  EXPECT_EQ(exprType("1 + 2.0"), f64);
}

// numpy.promote_types over every pair of pydd's 13 element types (the table
// printed by NumPy 1.24 and 2.x alike).
TEST(Promotion, PromoteMatchesNumpyPromoteTypes) {
  using K = ScalarKind;
  const K B = K::Bool, I8 = K::Int8, I16 = K::Int16, I32 = K::Int32, I64 = K::Int64, U8 = K::UInt8,
          U16 = K::UInt16, U32 = K::UInt32, U64 = K::UInt64, F32 = K::Float32, F64 = K::Float64,
          C64 = K::Complex64, C128 = K::Complex128;
  const K kinds[13] = {B, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128};
  const K expected[13][13] = {
      {B, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128},  // bool
      {I8, I8, I16, I32, I64, I16, I32, I64, F64, F32, F64, C64, C128},  // int8
      {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F64, C64, C128},  // int16
      {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, C128, C128},  // int32
      {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, C128, C128},  // int64
      {U8, I16, I16, I32, I64, U8, U16, U32, U64, F32, F64, C64, C128},  // uint8
      {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F64, C64, C128},  // uint16
      {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, C128, C128},  // uint32
      {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, C128, C128},  // uint64
      {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F64, C64, C128},  // float32
      {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128},  // float64
      {C64, C64, C64, C128, C128, C64, C64, C128, C128, C64, C128, C64, C128},  // complex64
      {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128},  // complex128
  };
  for (int a = 0; a < 13; ++a)
    for (int b = 0; b < 13; ++b) {
      EXPECT_EQ(promote(kinds[a], kinds[b]), expected[a][b]) << scalarName(kinds[a]) << " + " << scalarName(kinds[b]);
      // Two operands of equal strength promote; so do two weak ones.
      EXPECT_EQ(commonKind(kinds[a], false, kinds[b], false), expected[a][b]);
      EXPECT_EQ(commonKind(kinds[a], true, kinds[b], true), expected[a][b]);
    }
}

// NEP 50: a weak (literal) integer takes any integer kind, a weak float
// takes float kinds and gives float64 beside an integer.
TEST(Promotion, CommonKindWithWeakLiterals) {
  using K = ScalarKind;
  for (K k : {K::Int8, K::Int16, K::UInt8, K::UInt16, K::UInt32, K::UInt64}) {
    EXPECT_EQ(commonKind(k, false, K::Int64, true), k) << scalarName(k);
    EXPECT_EQ(commonKind(K::Int64, true, k, false), k) << scalarName(k);
    EXPECT_EQ(commonKind(k, false, K::Bool, true), k) << scalarName(k);
    EXPECT_EQ(commonKind(k, false, K::Float64, true), K::Float64) << scalarName(k);
    // A weak complex beside an integer is complex128 (NEP 50's int8 * 1j).
    EXPECT_EQ(commonKind(k, false, K::Complex128, true), K::Complex128) << scalarName(k);
    // A small or unsigned integer stored into a complex is fine; never back.
    EXPECT_TRUE(canAssignImplicitly(k, K::Complex64)) << scalarName(k);
    EXPECT_FALSE(canAssignImplicitly(K::Complex64, k)) << scalarName(k);
    EXPECT_TRUE(canAssignImplicitly(k, K::Int8)) << scalarName(k);
    EXPECT_TRUE(canAssignImplicitly(K::UInt64, k)) << scalarName(k);
  }
  EXPECT_EQ(commonKind(K::Bool, false, K::Int64, true), K::Int64);
  EXPECT_EQ(commonKind(K::Float32, false, K::Int64, true), K::Float32);
}

TEST(Promotion, IntegerRanges) {
  using K = ScalarKind;
  EXPECT_TRUE(integerFits(255, K::UInt8));
  EXPECT_FALSE(integerFits(256, K::UInt8));
  EXPECT_FALSE(integerFits(-1, K::UInt64));
  EXPECT_TRUE(integerFits(INT64_MAX, K::UInt64));
  EXPECT_TRUE(integerFits(-128, K::Int8));
  EXPECT_FALSE(integerFits(128, K::Int8));
  EXPECT_TRUE(integerFits(-32768, K::Int16));
  EXPECT_FALSE(integerFits(65536, K::UInt16));
  EXPECT_FALSE(integerFits(int64_t(1) << 32, K::UInt32));
  EXPECT_EQ(bitWidth(K::UInt16), 16);
  EXPECT_TRUE(isUnsignedKind(K::UInt32));
  EXPECT_FALSE(isUnsignedKind(K::Int8));
}

/// The type of `y = EXPR` with parameters of the small and unsigned types.
Type smallIntExprType(const std::string& expression) {
  Analyzed a = accept(
      "def f(a: int8, b: uint8, h: int16, w: uint16, u: uint32, q: uint64, l: int64, s: float32):\n"
      "    y = " + expression + "\n");
  return a.typeOf("y");
}

TEST(Promotion, SmallAndUnsignedOperands) {
  EXPECT_EQ(smallIntExprType("a + b"), Type::scalar(ScalarKind::Int16));
  EXPECT_EQ(smallIntExprType("u + l"), i64);
  EXPECT_EQ(smallIntExprType("q + l"), f64);
  EXPECT_EQ(smallIntExprType("s * w"), f32);
  EXPECT_EQ(smallIntExprType("s * u"), f64);
  EXPECT_EQ(smallIntExprType("b + 1"), Type::scalar(ScalarKind::UInt8));
  EXPECT_EQ(smallIntExprType("-b"), Type::scalar(ScalarKind::UInt8));
  EXPECT_EQ(smallIntExprType("b / b"), f64);
  EXPECT_EQ(smallIntExprType("h // 2"), Type::scalar(ScalarKind::Int16));
  EXPECT_EQ(smallIntExprType("uint8(l)"), Type::scalar(ScalarKind::UInt8));
}

TEST(Promotion, OutOfRangeLiteralIsAnError) {
  for (const char* body : {"    y = b + 256\n", "    y = b - -1\n", "    y = a * 128\n", "    y = uint8(300)\n",
                           "    y: uint16 = 70000\n"}) {
    Analyzed a = analyze(std::string("def f(a: int8, b: uint8):\n") + body);
    EXPECT_FALSE(a.ok) << body;
    EXPECT_NE(a.messages.find("integer literal"), std::string::npos) << body << a.messages;
  }
  EXPECT_TRUE(analyze("def f(b: uint8):\n    y = b + 255\n").ok);
}

/// The type of `y = EXPR` with complex parameters beside real ones.
Type complexExprType(const std::string& expression) {
  Analyzed a = accept(
      "def f(z: complex64, w: complex128, i: int32, l: int64, s: float32, d: float64, b: bool):\n"
      "    y = " + expression + "\n");
  return a.typeOf("y");
}

TEST(Promotion, ComplexAsNumPy) {
  // complex64 keeps what float32 holds: float32 and bool.
  EXPECT_EQ(complexExprType("z * s"), c64);
  EXPECT_EQ(complexExprType("z + b"), c64);
  EXPECT_EQ(complexExprType("z - z"), c64);
  // float64 and 32- or 64-bit integers need complex128.
  EXPECT_EQ(complexExprType("z * d"), c128);
  EXPECT_EQ(complexExprType("z + i"), c128);
  EXPECT_EQ(complexExprType("l / z"), c128);
  EXPECT_EQ(complexExprType("z + w"), c128);
  EXPECT_EQ(complexExprType("w * s"), c128);
  EXPECT_EQ(complexExprType("z ** 2"), c64);
  EXPECT_EQ(complexExprType("-z"), c64);
  EXPECT_EQ(complexExprType("z == w"), boolean);
  EXPECT_EQ(promote(ScalarKind::Complex64, ScalarKind::Float32), ScalarKind::Complex64);
  EXPECT_EQ(promote(ScalarKind::Int64, ScalarKind::Complex64), ScalarKind::Complex128);
  EXPECT_EQ(promote(ScalarKind::Complex128, ScalarKind::Complex64), ScalarKind::Complex128);
  EXPECT_TRUE(canAssignImplicitly(ScalarKind::Float64, ScalarKind::Complex64));
  EXPECT_FALSE(canAssignImplicitly(ScalarKind::Complex64, ScalarKind::Float64));
}

TEST(Promotion, ComplexLiteralsAreWeak) {
  EXPECT_EQ(complexExprType("1j"), c128);
  EXPECT_EQ(complexExprType("z * 2.5"), c64);
  EXPECT_EQ(complexExprType("z * 1j"), c64);
  EXPECT_EQ(complexExprType("z * (3 + 4j)"), c64);
  EXPECT_EQ(complexExprType("z * (-1.5 - 2j)"), c64);
  // A complex literal with float32 gives complex64, with anything else complex128.
  EXPECT_EQ(complexExprType("s * 1j"), c64);
  EXPECT_EQ(complexExprType("d * 1j"), c128);
  EXPECT_EQ(complexExprType("i * 1j"), c128);
  EXPECT_EQ(complexExprType("b * 2j"), c128);
  EXPECT_EQ(complexExprType("3 + 4j"), c128);
}

TEST(Promotion, ComplexParts) {
  EXPECT_EQ(complexExprType("abs(z)"), f32);
  EXPECT_EQ(complexExprType("abs(w)"), f64);
  EXPECT_EQ(complexExprType("z.real"), f32);
  EXPECT_EQ(complexExprType("w.imag"), f64);
  EXPECT_EQ(complexExprType("conj(z)"), c64);
  EXPECT_EQ(complexExprType("angle(z)"), f32);
  EXPECT_EQ(complexExprType("complex(d, s)"), c128);
  EXPECT_EQ(complexExprType("complex64(s)"), c64);
  EXPECT_EQ(complexExprType("sqrt(z)"), c64);
}

TEST(Errors, ComplexNumbersHaveNoOrder) {
  expectError("def f(z: complex128):\n    y = z < 1\n", 2, 9,
              "'<' is not supported between complex128 and int64: complex numbers have no order");
  expectError("def f(z: complex128):\n    y = z // 2\n", 2, 9, "unsupported operand types for //: complex128 and int64");
  expectError("def f(z: complex128):\n    y = float(z)\n", 2, 9,
              "cannot convert complex128 to float64; take z.real, z.imag or abs(z) first");
  expectError("def f(z: Array(complex64, 1)):\n    y = max(z)\n", 2, 13, "max() does not support complex numbers");
  expectError("def f(z: Array(complex64, 1)):\n    y = maximum(z, z)\n", 2, 9,
              "maximum (maximum(a, b)) is not supported on complex64 operands: complex numbers have no order");
}

TEST(Promotion, BoolArithmeticIsIntArithmetic) {
  EXPECT_EQ(exprType("b + c"), i64);
  EXPECT_EQ(exprType("b * c"), i64);
  EXPECT_EQ(exprType("-b"), i64);
  // Bitwise operators keep bools, shifts do not.
  EXPECT_EQ(exprType("b & c"), boolean);
  EXPECT_EQ(exprType("b << c"), i64);
}

TEST(Promotion, TrueDivisionOfIntegersIsFloat64) {
  EXPECT_EQ(exprType("l / l"), f64);
  EXPECT_EQ(exprType("i / i"), f64);
  EXPECT_EQ(exprType("i / 2"), f64);
  EXPECT_EQ(exprType("s / 2"), f32);
  EXPECT_EQ(exprType("l // 2"), i64);
  EXPECT_EQ(exprType("i % 3"), i32);
  EXPECT_EQ(exprType("l ** 2"), i64);
  EXPECT_EQ(exprType("d ** 2"), f64);
}

TEST(Promotion, ComparisonsAndLogicAreBool) {
  EXPECT_EQ(exprType("i < d"), boolean);
  EXPECT_EQ(exprType("0 <= i < l"), boolean);
  EXPECT_EQ(exprType("i and d"), boolean);
  EXPECT_EQ(exprType("not l"), boolean);
}

TEST(Promotion, ConditionalExpression) {
  EXPECT_EQ(exprType("1 if b else 2.5"), f64);
  EXPECT_EQ(exprType("s if b else 0"), f32);
  EXPECT_EQ(exprType("i if b else l"), i64);
}

TEST(Promotion, CastsAreMadeExplicit) {
  Analyzed a = accept(
      "def f(i: int32, l: int64, s: float32):\n"
      "    y = i + l\n"
      "    z = s * 2.0\n"
      "    w = l / l\n");
  auto* y = dyn_cast<Binary>(a.value(0));
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->type, i64);
  auto* yl = dyn_cast<Cast>(y->lhs.get());
  ASSERT_NE(yl, nullptr) << printExpr(*y);
  EXPECT_EQ(yl->type, i64);
  EXPECT_NE(dyn_cast<VarRef>(yl->operand.get()), nullptr);
  EXPECT_NE(dyn_cast<VarRef>(y->rhs.get()), nullptr);

  auto* z = dyn_cast<Binary>(a.value(1));
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(printExpr(*z), "s * float32(2.0)");
  EXPECT_EQ(z->rhs->type, f32);

  ASSERT_NE(a.value(2), nullptr);
  EXPECT_EQ(printExpr(*a.value(2)), "float64(l) / float64(l)");
}

TEST(Promotion, CompareRecordsLinkTypes) {
  Analyzed a = accept("def f(i: int32, d: float64, s: float32):\n    y = i < d <= s\n");
  auto* c = dyn_cast<Compare>(a.value(0));
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->linkTypes.size(), 2u);
  EXPECT_EQ(c->linkTypes[0], f64);
  EXPECT_EQ(c->linkTypes[1], f64);
  EXPECT_EQ(c->type, boolean);
}

TEST(Promotion, WeakLiteralThatDoesNotFit) {
  // NumPy 2 (NEP 50, which pydd follows for weak literals) raises
  // OverflowError for `int32(1) + 3000000000`; pyddc reports it at compile
  // time instead of wrapping the literal.
  expectError("def f(i: int32):\n    y = i + 3000000000\n", 2, 13, "integer literal 3000000000 does not fit in int32");
}

// ---- annotations ---------------------------------------------------------------------

TEST(Annotations, DeclaredTypeIsKept) {
  Analyzed a = accept(
      "def f():\n"
      "    x: float32 = 0\n"
      "    x = 1.5\n"
      "    y = 0  # type: int32\n"
      "    y = y + 1\n"
      "    z: Array(float64, 2)\n");
  EXPECT_EQ(a.typeOf("x"), f32);
  EXPECT_EQ(a.typeOf("y"), i32);
  EXPECT_EQ(a.typeOf("z"), Type::array(ScalarKind::Float64, 2));
  // The stored values are converted to the declared types.
  ASSERT_NE(a.value(0), nullptr);
  EXPECT_EQ(printExpr(*a.value(0)), "float32(0.0)");
  ASSERT_NE(a.value(1), nullptr);
  EXPECT_EQ(printExpr(*a.value(1)), "float32(1.5)");
  ASSERT_NE(a.value(2), nullptr);
  EXPECT_EQ(printExpr(*a.value(2)), "int32(0)");
  ASSERT_NE(a.value(3), nullptr);
  EXPECT_EQ(printExpr(*a.value(3)), "y + int32(1)");
}

TEST(Annotations, ParametersKeepTheirTypes) {
  Analyzed a = accept("def f(x: int32, s: float32):\n    x = x + 1\n    s = s * 3\n");
  EXPECT_EQ(a.typeOf("x"), i32);
  EXPECT_EQ(a.typeOf("s"), f32);
  EXPECT_TRUE(a.fn()->locals.empty());
}

TEST(Annotations, ConflictingDeclarations) {
  expectError("def f():\n    x: int32 = 0\n    x: float64 = 1.0\n", 3, 5,
              "'x' was declared int32 and is now declared float64");
}

TEST(Annotations, ParameterCannotBeRedeclared) {
  expectError("def f(x: int32):\n    x: int64 = 0\n", 2, 5, "cannot re-declare parameter 'x'");
}

TEST(Annotations, StoringAFloatIntoAnIntVariable) {
  expectError("def f(x: int32):\n    x = 1.5\n", 2, 9,
              "cannot implicitly convert float64 to int32 for 'x'; write int32(...) to convert");
  expectError("def f():\n    n: int64 = 0\n    n = 2.0 * n\n", 3, 9, "cannot implicitly convert float64 to int64 for 'n'");
}

// ---- loops ---------------------------------------------------------------------------

TEST(Loops, RangeVariablesAreInt64) {
  Analyzed a = accept("def f(n: int32):\n    for i in range(n):\n        pass\n    pfor j in range(1, n, 2):\n        pass\n");
  EXPECT_EQ(a.typeOf("i"), i64);
  EXPECT_EQ(a.typeOf("j"), i64);
  auto* loop = dyn_cast<For>(a.stmt(0));
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(printExpr(*loop->stop), "int64(n)");
  EXPECT_EQ(loop->start->type, i64);
  EXPECT_EQ(loop->step->type, i64);
}

TEST(Loops, ForEachTakesTheElementType) {
  Analyzed a = accept(
      "def f(A: Array(float32), B: Array(int32)):\n"
      "    for v in A:\n"
      "        pass\n"
      "    for w in B:\n"
      "        pass\n");
  EXPECT_EQ(a.typeOf("v"), f32);
  EXPECT_EQ(a.typeOf("w"), i32);
}

TEST(Loops, RangeBoundsMustBeIntegers) {
  expectError("def f(x: float64):\n    for i in range(x):\n        pass\n", 2, 20, "range() arguments must be integers, got float64");
}

TEST(Loops, ForEachNeedsAnIterable) {
  // `v` is declared so that its type is known (see
  // Errors.CauseOfAnUninferableVariableIsReported).
  expectError("def f(n: int):\n    v: int\n    for v in n:\n        pass\n", 3, 14,
              "a for loop iterates over range(...), an array, a list or a dict, not int64");
  // Rows of a 2-D array are 1-D views, not scalars.
  expectError("def f(A: Array(float64, 2)):\n    v: float64\n    for v in A:\n        pass\n", 3, 9,
              "cannot implicitly convert Array(float64, 1) to float64 for 'v'");
}

TEST(Loops, ForEachOverRowsListsAndDicts) {
  Analyzed a = accept(
      "def f(A: Array(float32, 2), l: List(int32), d: Dict(int64, float64)):\n"
      "    for r in A:\n        pass\n    for x in l:\n        pass\n    for k in d:\n        pass\n");
  EXPECT_EQ(a.typeOf("r"), Type::array(ScalarKind::Float32, 1));
  EXPECT_EQ(a.typeOf("x"), i32);
  EXPECT_EQ(a.typeOf("k"), i64);
}

TEST(Loops, ForEachIntoADeclaredNarrowerVariable) {
  // `for v in A` stores each element into v, so it obeys the rule of
  // `v = A[0]`: a float64 element cannot go implicitly into an int32 v.
  expectError("def f(A: Array(float64)):\n    v: int32 = 0\n    for v in A:\n        pass\n", 3, 9,
              "cannot implicitly convert float64 to int32");
}

TEST(Loops, BreakAndContinueOutsideALoop) {
  expectError("def f():\n    break\n", 2, 5, "'break' outside loop");
  expectError("def f(x: int):\n    if x:\n        continue\n", 3, 9, "'continue' outside loop");
  accept("def f(n: int):\n    while True:\n        if n > 3:\n            break\n        n += 1\n");
}

TEST(Loops, BreakOutOfAParallelLoopOrATask) {
  // `break` has no meaning in the body of a pfor (whose iterations may run
  // in any order or at once), nor from a task out of its enclosing loop.
  expectError("def f(n: int):\n    pfor i in range(n):\n        break\n", 3, 9, "'break' is not allowed in a pfor loop");
  expectError("def f(n: int):\n    for i in range(n):\n        async:\n            break\n", 4, 13,
              "'break' cannot leave an async, finish or isolated block");
}

// ---- locals ------------------------------------------------------------------------------

TEST(Locals, ListedInSourceOrderWithTypes) {
  Analyzed a = accept(
      "def f(n: int, A: Array(float32)) -> float64:\n"
      "    b = 1.0\n"
      "    a = 0\n"
      "    for i in range(n):\n"
      "        c, z = a + i, A[i]\n"
      "        if c > 2:\n"
      "            flag = True\n"
      "    B = zeros((n, 2), int32)\n"
      "    return b\n");
  const Function* f = a.fn();
  ASSERT_NE(f, nullptr);
  std::vector<std::pair<std::string, Type>> expected = {
      {"b", f64}, {"a", i64}, {"i", i64}, {"c", i64}, {"z", f32}, {"flag", boolean},
      {"B", Type::array(ScalarKind::Int32, 2)}};
  ASSERT_EQ(f->locals.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(f->locals[k].name, expected[k].first);
    EXPECT_EQ(f->locals[k].type, expected[k].second) << expected[k].first;
  }
  EXPECT_EQ(f->locals[0].loc.line, 2u);
  EXPECT_EQ(f->locals[0].loc.col, 5u);
  EXPECT_EQ(f->locals[2].loc.line, 4u);
  EXPECT_EQ(f->locals[2].loc.col, 9u);
  EXPECT_EQ(f->locals[4].loc.line, 5u);
  EXPECT_EQ(f->locals[4].loc.col, 12u);
}

TEST(Locals, AnnotationAfterFirstAssignment) {
  // A variable annotated after its first assignment is placed in
  // Function::locals at its first definition, as IR.h documents.
  Analyzed a = accept("def f():\n    x = 0\n    y = 1\n    x: float64 = 2\n");
  const Function* f = a.fn();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->locals.size(), 2u);
  EXPECT_EQ(f->locals[0].name, "x");
  EXPECT_EQ(f->locals[0].loc.line, 2u);
  EXPECT_EQ(f->locals[1].name, "y");
}

// ---- resolution: calls, conversions, shape -------------------------------------------------

TEST(Resolve, KeywordArgumentsAreBoundToPositions) {
  Analyzed a = accept("def f():\n    A = zeros(shape=3, dtype=int32())\n    B = zeros(dtype=float32(), shape=(2, 2))\n");
  EXPECT_EQ(a.typeOf("A"), Type::array(ScalarKind::Int32, 1));
  EXPECT_EQ(a.typeOf("B"), Type::array(ScalarKind::Float32, 2));
  auto* c = dyn_cast<Call>(a.value(0));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->target, CallTarget::Library);
  ASSERT_NE(c->library, nullptr);
  EXPECT_STREQ(c->library->name, "zeros");
  EXPECT_TRUE(c->keywords.empty());
  ASSERT_EQ(c->args.size(), 2u);
  EXPECT_NE(dyn_cast<IntLit>(c->args[0].get()), nullptr);
  EXPECT_EQ(c->args[1]->type, i32);
  auto* d = dyn_cast<Call>(a.value(1));
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->args.size(), 2u);
  EXPECT_NE(dyn_cast<TupleLit>(d->args[0].get()), nullptr);
  EXPECT_EQ(d->args[1]->type, f32);
}

TEST(Resolve, BareTypeNameAsDtype) {
  Analyzed a = accept("def f(n: int):\n    A = ones(n, int32)\n    B = empty(n)\n");
  EXPECT_EQ(a.typeOf("A"), Type::array(ScalarKind::Int32, 1));
  EXPECT_EQ(a.typeOf("B"), Type::array(ScalarKind::Float64, 1));
  ASSERT_NE(a.value(0), nullptr);
  EXPECT_EQ(printExpr(*a.value(0)), "ones(n, int32(0))");
}

TEST(Resolve, KeywordArgumentsForUserFunctions) {
  Analyzed a = accept(
      "def g(x: float64, n: int32) -> float64:\n"
      "    return x * n\n"
      "\n"
      "def f() -> float64:\n"
      "    return g(n=2, x=1)\n");
  const Function* f = a.fn("f");
  ASSERT_NE(f, nullptr);
  auto* r = dyn_cast<Return>(f->body->stmts[0].get());
  ASSERT_NE(r, nullptr);
  // Positions follow the parameters; the arguments are converted to them.
  EXPECT_EQ(printExpr(*r->value), "g(1.0, int32(2))");
}

TEST(Resolve, ScalarTypeCallIsACast) {
  Analyzed a = accept("def f(x: float64):\n    y = int32(x)\n");
  auto* c = dyn_cast<Cast>(a.value(0));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type, i32);
  auto* operand = dyn_cast<VarRef>(c->operand.get());
  ASSERT_NE(operand, nullptr);
  EXPECT_EQ(operand->name, "x");
  EXPECT_EQ(a.typeOf("y"), i32);
}

TEST(Resolve, TypeCallWithoutArgumentsIsATypedZero) {
  Analyzed a = accept("def f():\n    y = float64()\n    z = int32()\n");
  auto* c = dyn_cast<Cast>(a.value(0));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->type, f64);
  auto* zero = dyn_cast<IntLit>(c->operand.get());
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->value, 0);
  EXPECT_EQ(a.typeOf("y"), f64);
  EXPECT_EQ(a.typeOf("z"), i32);
}

TEST(Resolve, ShapeIndexIsALibraryCall) {
  Analyzed a = accept("def f(A: Array(float64, 2)):\n    m = A.shape[1]\n    d = A.ndim\n");
  auto* c = dyn_cast<Call>(a.value(0));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->callee, "shape");
  EXPECT_EQ(c->target, CallTarget::Library);
  EXPECT_EQ(c->type, i64);
  ASSERT_EQ(c->args.size(), 2u);
  auto* base = dyn_cast<VarRef>(c->args[0].get());
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->name, "A");
  auto* axis = dyn_cast<IntLit>(c->args[1].get());
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->value, 1);
  EXPECT_EQ(a.typeOf("m"), i64);
  auto* nd = dyn_cast<Call>(a.value(1));
  ASSERT_NE(nd, nullptr);
  EXPECT_EQ(nd->callee, "ndim");
}

TEST(Resolve, ElementStoresConvertToTheElementType) {
  Analyzed a = accept("def f(A: Array(int32), x: float64):\n    A[0] = x\n    A[1] = 2\n");
  ASSERT_NE(a.value(0), nullptr);
  EXPECT_EQ(printExpr(*a.value(0)), "int32(x)");
  ASSERT_NE(a.value(1), nullptr);
  EXPECT_EQ(printExpr(*a.value(1)), "int32(2)");
}

// ---- errors ---------------------------------------------------------------------------------

TEST(Errors, UndefinedName) {
  expectError("def f() -> int:\n    return y\n", 2, 12, "name 'y' is not defined");
  expectError("def f():\n    print(1 + undefined_name)\n", 2, 15, "name 'undefined_name' is not defined");
  expectError("def f(A: Array(int)):\n    A[0] = undefined_name\n", 2, 12, "name 'undefined_name' is not defined");
}

TEST(Errors, UninferableVariableAsksForAnAnnotation) {
  Analyzed a = analyze("def f():\n    pass\n    x = x + 1\n");
  ASSERT_TRUE(a.parsed);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.messages.find("test.pydd:3:5: error: cannot infer the type of 'x'; add an annotation 'x: Type'"),
            std::string::npos)
      << a.messages;
}

TEST(Errors, CauseOfAnUninferableVariableIsReported) {
  // When the value assigned to a variable has an error of its own, that
  // error is reported, not "cannot infer the type of 'x'" (whose advice
  // to annotate would be wrong).
  expectError("def f():\n    x = 1 + undefined_name\n", 2, 13, "name 'undefined_name' is not defined");
  expectError("def f(A: Array(float64)):\n    B = A & A\n", 2, 9, "operator '&' on arrays is not supported");
  expectError("def f(A: Array(float64)):\n    x = int32(A)\n", 2, 9, "cannot convert Array(float64, 1) to int32");
  expectError("def f():\n    x = int32\n", 2, 9, "type 'int32' cannot be used as a value here");
  expectError("def f(n: int):\n    for v in n:\n        pass\n", 2, 14,
              "a for loop iterates over range(...), an array, a list or a dict, not int64");
}

TEST(Errors, EmptyContainersNeedAnAnnotation) {
  expectError("def f():\n    xs = []\n", 2, 5, "cannot infer the element type of an empty List; annotate it, as in 'xs: List(int64) = ...'");
  expectError("def f():\n    d = {}\n", 2, 5, "cannot infer the element type of an empty Dict");
  expectError("def f():\n    h = heapinit()\n", 2, 5, "cannot infer the element type of an empty Heap");
}

TEST(Errors, ArrayScalarConflict) {
  expectError("def f():\n    x = zeros(3)\n    x = 1.0\n", 3, 5,
              "'x' is Array(float64, 1) (from line 2) but is assigned float64 here; a variable keeps one type");
  expectError("def f():\n    A = zeros(3)\n    A = zeros((3, 3))\n", 3, 5,
              "'A' is Array(float64, 1) (from line 2) but is assigned Array(float64, 2) here");
}

TEST(Errors, ParameterAssignedAnArray) {
  expectError("def f(x: float64):\n    x = zeros(3)\n", 2, 5, "parameter 'x' is float64 but is assigned Array(float64, 1)");
}

TEST(Errors, FloatReturnIntoIntFunction) {
  expectError("def f(x: float64) -> int:\n    return x\n", 2, 12,
              "cannot implicitly convert float64 to int64 for the return value of 'f'; write int64(...) to convert");
  accept("def f(x: float64) -> int:\n    return int64(x)\n");
}

TEST(Errors, ReturnValueAndSignatureDisagree) {
  expectError("def f() -> int:\n    return\n", 2, 5, "'f' must return a value of type int64");
  expectError("def f() -> None:\n    return 1.5\n", 2, 12,
              "'f' is declared '-> None' but returns a value; declare '-> float64' (or leave the return type out to infer it)");
  accept("def f():\n    return 1.5\n");  // the return type is inferred
  expectError("def f(A: Array(float64, 1)) -> Array(float64, 2):\n    return A\n", 2, 12,
              "expected Array(float64, 2) for the return value of 'f', got Array(float64, 1)");
}

TEST(Errors, WrongNumberOfIndices) {
  // A[0] of a 2-D array is a row view, which a float64 cannot hold.
  expectError("def f(A: Array(float64, 2)) -> float64:\n    return A[0]\n", 2, 12,
              "expected float64 for the return value of 'f', got Array(float64, 1)");
  expectError("def f(A: Array(float64, 1)) -> float64:\n    return A[0, 1]\n", 2, 12,
              "too many indices for array: array is 1-dimensional, but 2 were indexed");
}

TEST(Errors, BadIndexing) {
  expectError("def f(A: Array(float64)) -> float64:\n    return A[1.5]\n", 2, 14, "array indices must be integers, got float64");
  expectError("def f(x: float64) -> float64:\n    return x[0]\n", 2, 12, "float64 cannot be indexed");
}

TEST(Errors, UnknownFunction) {
  expectError("def f():\n    y = foo(1)\n", 2, 9, "unknown function 'foo'");
}

TEST(Errors, UserFunctionArgumentCount) {
  const std::string g = "def g(x: int) -> int:\n    return x\n\n";
  expectError(g + "def f():\n    y = g(1, 2)\n", 5, 14, "g() takes 1 positional argument but 2 were given");
  expectError(g + "def f():\n    y = g()\n", 5, 9, "g() missing required argument 'x'");
  expectError(g + "def f():\n    y = g(y=1)\n", 5, 11, "g() got an unexpected keyword argument 'y'");
  expectError(g + "def f():\n    y = g(1, x=2)\n", 5, 14, "g() got multiple values for argument 'x'");
}

TEST(Errors, UserFunctionArgumentType) {
  expectError("def g(n: int) -> int:\n    return n\n\ndef f():\n    y = g(1.5)\n", 5, 11,
              "cannot implicitly convert float64 to int64 for argument 'n' of g()");
}

TEST(Errors, LibraryKeywordMistakes) {
  expectError("def f():\n    A = zeros(3, dtipe=int32())\n", 2, 18, "zeros() got an unexpected keyword argument 'dtipe'");
  expectError("def f():\n    A = zeros(3, shape=4)\n", 2, 18, "zeros() got multiple values for argument 'shape'");
  expectError("def f():\n    A = zeros(dtype=int32())\n", 2, 9, "zeros() missing required argument 'shape'");
}

TEST(Errors, ConversionCalls) {
  expectError("def f():\n    x = int32(1, 2)\n", 2, 9, "int32() takes at most 1 argument");
  expectError("def f(A: Array(float64)):\n    print(int32(A))\n", 2, 11, "cannot convert Array(float64, 1) to int32");
}

TEST(Errors, NamesThatAreNotValues) {
  expectError("def g() -> int:\n    return 1\n\ndef f():\n    print(g)\n", 5, 11, "function 'g' cannot be used as a value");
  expectError("def f():\n    print(int32)\n", 2, 11, "type 'int32' cannot be used as a value here; write int32() for a typed zero");
}

TEST(Errors, UnknownAttributesAndMethods) {
  expectError("def f(A: Array(float64)):\n    x = A.flat\n", 2, 9, "attribute 'flat' is not supported in pydd kernels");
  expectError("def f(A: Array(float64)):\n    x = A.frobnicate()\n", 2, 9, "unknown method 'frobnicate'");
  expectError("def f(l: List(int64)):\n    append(l, 1)\n", 2, 5, "'append' is a method; call it as x.append(...)");
}

TEST(Errors, OperatorsOnArraysAndBadOperands) {
  expectError("def f(A: Array(float64)) -> Array(float64):\n    return A | A\n", 2, 12,
              "operator '|' on arrays is not supported; use logical_and/logical_or for bool arrays");
  expectError("def f(A: Array(float64), B: Array(float64)) -> bool:\n    return A < B < A\n", 2, 12,
              "a comparison chain on arrays is ambiguous");
  expectError("def f(A: Array(bool)) -> Array(bool):\n    return A - A\n", 2, 12,
              "sub (a - b) is not supported on bool operands");
  expectError("def f(x: float64) -> float64:\n    return x & 1\n", 2, 12, "unsupported operand types for &: float64 and int64");
  expectError("def f(x: float64):\n    print(~x)\n", 2, 11, "bad operand type for unary ~: float64");
}

TEST(Errors, TruthValueOfAnArray) {
  expectError("def f(A: Array(float64)):\n    if A:\n        pass\n", 2, 8, "the truth value of Array(float64, 1) is ambiguous");
}

TEST(Errors, RangeOutsideAForLoop) {
  expectError("def f():\n    r = range(3)\n", 2, 9, "range() can only be used as the iterable of a for loop");
}

TEST(Errors, DuplicateFunction) {
  expectError("def f():\n    pass\n\ndef f():\n    pass\n", 4, 1, "function 'f' is defined twice");
}

TEST(Errors, UseBeforeAssignment) {
  // Python raises UnboundLocalError when `x` is read before any assignment
  // to it; pyddc reports it at compile time when no path assigns it first.
  expectError("def f() -> int:\n    y = x + 1\n    x = 2\n    return y\n", 2, 9, "'x'");
}

TEST(Errors, SeveralFunctionsReportIndependently) {
  Analyzed a = analyze("def f() -> int:\n    return 1.5\n\ndef g() -> int:\n    return q\n");
  ASSERT_TRUE(a.parsed);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.errors, 2u) << a.messages;
  EXPECT_NE(a.messages.find("test.pydd:2:12: error: cannot implicitly convert"), std::string::npos) << a.messages;
  EXPECT_NE(a.messages.find("test.pydd:5:12: error: name 'q' is not defined"), std::string::npos) << a.messages;
}

}  // namespace

namespace {

// ---- arrays as values --------------------------------------------------------------

/// The callee sema wrote for `y = EXPR` (operators become library calls).
std::string loweredCallee(const std::string& params, const std::string& expression) {
  Analyzed a = accept("def f(" + params + "):\n    y = " + expression + "\n");
  if (!a.module) return "";
  auto& assign = static_cast<const Assign&>(*a.module->functions[0]->body->stmts[0]);
  const Expr* v = assign.value.get();
  if (auto* n = dyn_cast<Not>(v)) v = n->operand.get();
  auto* c = dyn_cast<Call>(v);
  return c && c->target == CallTarget::Library ? c->callee : "<not a library call>";
}

TEST(ArrayOperators, BecomeLibraryCalls) {
  const std::string p = "A: Array(float64, 2), v: Array(int32), x: float64, l: List(int64)";
  EXPECT_EQ(loweredCallee(p, "A + x"), "add");
  EXPECT_EQ(loweredCallee(p, "x - A"), "sub");
  EXPECT_EQ(loweredCallee(p, "A // 2"), "floordiv");
  EXPECT_EQ(loweredCallee(p, "A ** 2"), "pow");
  EXPECT_EQ(loweredCallee(p, "A @ A"), "matmult");
  EXPECT_EQ(loweredCallee(p, "-A"), "minus");
  EXPECT_EQ(loweredCallee(p, "A <= x"), "le");
  EXPECT_EQ(loweredCallee(p, "A != A"), "neq");
  EXPECT_EQ(loweredCallee(p, "(A > 0) and (A < 1)"), "logical_and");
  EXPECT_EQ(loweredCallee(p, "not (A > 0)"), "logical_not");
  EXPECT_EQ(loweredCallee(p, "x in A"), "contains");
  EXPECT_EQ(loweredCallee(p, "3 not in l"), "contains");
  EXPECT_EQ(loweredCallee(p, "A.T"), "transpose");
  EXPECT_EQ(loweredCallee(p, "A.sum(1)"), "sum");
  // Scalars keep their operators.
  EXPECT_EQ(loweredCallee(p, "abs(x) + x"), "<not a library call>");
}

TEST(ArrayOperators, BroadcastRankAndNumPyPromotion) {
  Analyzed a = accept(
      "def f(A: Array(float32, 2), v: Array(int32), w: Array(int64), b: Array(bool), x: float64):\n"
      "    p = A + v\n    q = v * 2\n    r = v / w\n    s = A * 2.0\n    t = A * x\n    u = b + b\n"
      "    c = v < 3\n    m = sqrt(v)\n    n = v @ w\n");
  EXPECT_EQ(a.typeOf("p"), Type::array(ScalarKind::Float64, 2));  // float32 with int32 -> float64
  EXPECT_EQ(a.typeOf("q"), Type::array(ScalarKind::Int32, 1));    // a literal is weak
  EXPECT_EQ(a.typeOf("r"), Type::array(ScalarKind::Float64, 1));  // true division
  EXPECT_EQ(a.typeOf("s"), Type::array(ScalarKind::Float32, 2));
  EXPECT_EQ(a.typeOf("t"), Type::array(ScalarKind::Float64, 2));  // a float64 variable is strong
  EXPECT_EQ(a.typeOf("u"), Type::array(ScalarKind::Bool, 1));     // bool + bool is logical or
  EXPECT_EQ(a.typeOf("c"), Type::array(ScalarKind::Bool, 1));
  EXPECT_EQ(a.typeOf("m"), Type::array(ScalarKind::Float64, 1));
  EXPECT_EQ(a.typeOf("n"), i64);                                  // 1-D @ 1-D is a scalar
}

TEST(Subscripts, ViewsElementsAndContainers) {
  Analyzed a = accept(
      "def f(A: Array(float64, 3), l: List(int32), d: Dict(int64, bool), i: int64):\n"
      "    e = A[i, 0, -1]\n    row = A[i]\n    col = A[:, 1, 2]\n    s = A[1:3, ::2, i]\n"
      "    x = l[i]\n    y = d[3]\n    t = (i, 2.5)\n    z = t[1]\n");
  EXPECT_EQ(a.typeOf("e"), f64);
  EXPECT_EQ(a.typeOf("row"), Type::array(ScalarKind::Float64, 2));
  EXPECT_EQ(a.typeOf("col"), Type::array(ScalarKind::Float64, 1));
  EXPECT_EQ(a.typeOf("s"), Type::array(ScalarKind::Float64, 2));
  EXPECT_EQ(a.typeOf("x"), i32);
  EXPECT_EQ(a.typeOf("y"), boolean);
  EXPECT_EQ(a.typeOf("z"), f64);
}

TEST(Containers, LiteralsTakeTheAnnotatedType) {
  Analyzed a = accept(
      "def f():\n    l: List(float64) = [1, 2]\n    d: Dict(int64, float32) = {}\n    h: Heap(float64, int64) = heapinit()\n"
      "    m = [1, 2.5]\n    n = {1: True}\n");
  EXPECT_EQ(a.typeOf("l"), Type::list(f64));
  EXPECT_EQ(a.typeOf("d"), Type::dict(i64, f32));
  EXPECT_EQ(a.typeOf("h"), Type::heap(f64, i64));
  EXPECT_EQ(a.typeOf("m"), Type::list(f64));
  EXPECT_EQ(a.typeOf("n"), Type::dict(i64, boolean));
}

TEST(Containers, HeapOperationsAndTuples) {
  Analyzed a = accept(
      "def f(x: float64):\n    h: Heap(float64, int64) = heapinit()\n    heappush(h, x, 3)\n"
      "    k, v = heappop(h)\n    top = heappeek(h)\n");
  EXPECT_EQ(a.typeOf("k"), f64);
  EXPECT_EQ(a.typeOf("v"), i64);
  EXPECT_EQ(a.typeOf("top"), Type::tuple({f64, i64}));
  expectError("def f(x: float64):\n    h: Heap(int64) = heapinit()\n    heappush(h, x)\n", 3, 17,
              "cannot store float64 into a container of int64");
}

TEST(Errors, AxisOutOfRangeIsReportedAtTheAxis) {
  expectError("def f(A: Array(float64, 2)) -> Array(float64):\n    return A.sum(2)\n", 2, 18,
              "axis 2 is out of bounds for array of dimension 2");
  expectError("def f(A: Array(float64, 2)) -> Array(float64):\n    return sum(A, axis=-3)\n", 2, 24,
              "axis -3 is out of bounds for array of dimension 2");
}

TEST(Errors, HeapsStayInsideKernels) {
  expectError("def f(h: Heap(float64)):\n    pass\n", 1, 7, "parameter 'h' is a Heap(float64), which has no Python equivalent");
  expectError("def f() -> Heap(int64):\n    h: Heap(int64) = heapinit()\n    return h\n", 1, 1, "'f' returns a Heap(int64)");
}

TEST(Containers, ForOverItemsUnpacksPairs) {
  Analyzed a = accept("def f(d: Dict(int64, float32)) -> float64:\n    s = 0.0\n    for k, v in d.items():\n        s += k * v\n    return s\n");
  EXPECT_EQ(a.typeOf("k"), i64);
  EXPECT_EQ(a.typeOf("v"), f32);
}

TEST(Errors, InPlaceOperatorsKeepTheArrayType) {
  expectError("def f(A: Array(int64)):\n    A += 1.5\n", 2, 7,
              "cannot store the float64 result of 'A op= ...' into Array(int64, 1) in place");
  accept("def f(A: Array(float64), B: Array(int32)):\n    A += B\n    A *= 2\n");
}

}  // namespace

namespace {

// ---- sparse matrices ------------------------------------------------------------------

TEST(Sparse, OperatorsBecomeSparseCalls) {
  const std::string p = "S: SparseMat(float64), T: SparseMat(float32), x: Array(float64), D: Array(float64, 2)";
  EXPECT_EQ(loweredCallee(p, "S @ x"), "spmv");
  EXPECT_EQ(loweredCallee(p, "S @ T"), "spmm");
  EXPECT_EQ(loweredCallee(p, "S @ D"), "spmm_dense");
  EXPECT_EQ(loweredCallee(p, "D @ S"), "spmm_dense");
  EXPECT_EQ(loweredCallee(p, "S * 2.0"), "spm_mul");
  EXPECT_EQ(loweredCallee(p, "2.0 * S"), "spm_mul");
  EXPECT_EQ(loweredCallee(p, "S + T"), "spm_add");
  EXPECT_EQ(loweredCallee(p, "S.T"), "transpose");
}

TEST(Sparse, ResultTypes) {
  Analyzed a = accept(
      "def f(S: SparseMat(float32), T: SparseMat(float64), x: Array(float32), D: Array(float64, 2), i: int):\n"
      "    y = S @ x\n    P = S @ T\n    Q = S * 2.0\n    R = S + D\n    e = S[i, 0]\n    n = nnz(S)\n"
      "    s = S.sum()\n    c = S.sum(0)\n    m = S.shape[1]\n");
  EXPECT_EQ(a.typeOf("y"), Type::array(ScalarKind::Float32, 1));
  EXPECT_EQ(a.typeOf("P"), Type::sparse(ScalarKind::Float64));
  EXPECT_EQ(a.typeOf("Q"), Type::sparse(ScalarKind::Float32));  // the literal is weak
  EXPECT_EQ(a.typeOf("R"), Type::array(ScalarKind::Float64, 2));
  EXPECT_EQ(a.typeOf("e"), f32);
  EXPECT_EQ(a.typeOf("n"), i64);
  EXPECT_EQ(a.typeOf("s"), f32);
  EXPECT_EQ(a.typeOf("c"), Type::array(ScalarKind::Float32, 1));
  EXPECT_EQ(a.typeOf("m"), i64);
}

TEST(Sparse, RowAndNonzerosAreLoopSources) {
  Analyzed a = accept(
      "def f(S: SparseMat(int64)) -> int64:\n    t = 0\n    for j, v in S.row(0):\n        t += j * v\n"
      "    for r, c, w in S.nonzeros():\n        t += r + c + w\n    return t\n");
  EXPECT_EQ(a.typeOf("v"), i64);
  EXPECT_EQ(a.typeOf("c"), i64);
  expectError("def f(S: SparseMat(float64)):\n    r = S.row(0)\n", 2, 9, "S.row(i) can only be the iterable of a for loop");
  expectError("def f(S: SparseMat(float64)) -> float64:\n    return S[0]\n", 2, 12,
              "a SparseMat is indexed by a row and a column, as in S[r, c]");
  expectError("def f(S: SparseMat(float64)):\n    T = S - S\n", 2, 9, "operator '-' on a SparseMat is not supported");
}

}  // namespace
