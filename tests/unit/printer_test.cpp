// Unit tests for the IR printer: its output must be valid pydd that reads
// back as the same tree.
//
// Expressions are checked through a structural dump (an S-expression of the
// tree): printing, parsing the text again and dumping must give the tree we
// started from, which is exactly what parenthesization has to guarantee.
// Whole modules are checked for a fixed point: print, compile the text
// again, print again, and the two texts must be equal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "llvm/Support/MemoryBuffer.h"
#include "opt/ConstantFold.h"

namespace {

using namespace pydd;

// ---- helpers ---------------------------------------------------------------

struct Compiled {
  std::unique_ptr<Module> module;  // null if parsing failed
  bool ok = false;                 // parsed and analyzed without errors
  std::string messages;
};

/// Parses `source` and, with `analyze`, runs sema on it.
Compiled compile(const std::string& source, bool analyze = true) {
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(source, "test.pydd");
  Diagnostics diag("test.pydd", std::move(buf));
  Compiled c;
  testing::internal::CaptureStderr();
  c.module = parseModule(diag, "test");
  c.ok = c.module && (!analyze || analyzeModule(*c.module, diag));
  c.messages = testing::internal::GetCapturedStderr();
  return c;
}

/// An S-expression of the tree, to compare shapes independently of spelling.
std::string dump(const Expr& e) {
  auto list = [](const std::vector<ExprPtr>& xs) {
    std::string s;
    for (auto& x : xs) s += " " + dump(*x);
    return s;
  };
  switch (e.kind) {
    case ExprKind::IntLit: return std::to_string(static_cast<const IntLit&>(e).value);
    case ExprKind::FloatLit: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17gf", static_cast<const FloatLit&>(e).value);
      return buf;
    }
    case ExprKind::BoolLit: return static_cast<const BoolLit&>(e).value ? "True" : "False";
    case ExprKind::StrLit: return "'" + static_cast<const StrLit&>(e).value + "'";
    case ExprKind::Var: return static_cast<const VarRef&>(e).name;
    case ExprKind::Unary: {
      auto& u = static_cast<const Unary&>(e);
      // The parser folds `-2` but not `-2.5`; a negated float literal and a
      // negative one are the same value.
      if (auto* f = dyn_cast<FloatLit>(u.operand.get()); f && u.op == UnaryOp::Neg && !std::signbit(f->value)) {
        FloatLit negated(SourceLoc{}, -f->value);
        return dump(negated);
      }
      const char* op = u.op == UnaryOp::Neg ? "neg" : u.op == UnaryOp::Pos ? "pos" : "inv";
      return std::string("(") + op + " " + dump(*u.operand) + ")";
    }
    case ExprKind::Binary: {
      auto& b = static_cast<const Binary&>(e);
      return "(b" + std::to_string(int(b.op)) + " " + dump(*b.lhs) + " " + dump(*b.rhs) + ")";
    }
    case ExprKind::Compare: {
      auto& c = static_cast<const Compare&>(e);
      std::string s = "(cmp " + dump(*c.operands[0]);
      for (size_t i = 0; i < c.ops.size(); ++i) s += " c" + std::to_string(int(c.ops[i])) + " " + dump(*c.operands[i + 1]);
      return s + ")";
    }
    case ExprKind::Logical: {
      auto& l = static_cast<const Logical&>(e);
      return std::string(l.isAnd ? "(and " : "(or ") + dump(*l.lhs) + " " + dump(*l.rhs) + ")";
    }
    case ExprKind::Not: return "(not " + dump(*static_cast<const Not&>(e).operand) + ")";
    case ExprKind::Select: {
      auto& s = static_cast<const Select&>(e);
      return "(if " + dump(*s.cond) + " " + dump(*s.trueValue) + " " + dump(*s.falseValue) + ")";
    }
    case ExprKind::Call: {
      auto& c = static_cast<const Call&>(e);
      std::string s = "(call " + c.callee + list(c.args);
      for (auto& k : c.keywords) s += " " + k.name + "=" + dump(*k.value);
      return s + ")";
    }
    case ExprKind::Index: {
      auto& x = static_cast<const Index&>(e);
      return "(idx " + dump(*x.base) + list(x.indices) + ")";
    }
    case ExprKind::Attribute: {
      auto& a = static_cast<const Attribute&>(e);
      return "(. " + dump(*a.base) + " " + a.name + ")";
    }
    case ExprKind::Cast:
      return "(cast " + e.type.str() + " " + dump(*static_cast<const Cast&>(e).operand) + ")";
    case ExprKind::TupleLit: {
      auto& t = static_cast<const TupleLit&>(e);
      return std::string(t.isList ? "(list" : "(tuple") + list(t.elems) + ")";
    }
    case ExprKind::Slice: {
      auto& sl = static_cast<const Slice&>(e);
      auto part = [](const ExprPtr& p) { return p ? dump(*p) : std::string("_"); };
      return "(slice " + part(sl.start) + " " + part(sl.stop) + " " + part(sl.step) + ")";
    }
    case ExprKind::DictLit: {
      auto& d = static_cast<const DictLit&>(e);
      return "(dict" + list(d.keys) + " :" + list(d.values) + ")";
    }
  }
  return "?";
}

/// An expression parsed from `return TEXT`, kept alive with its module.
struct ParsedExpr {
  std::unique_ptr<Module> module;
  const Expr* expr = nullptr;
  std::string messages;
};

ParsedExpr parseExpr(const std::string& text) {
  Compiled c = compile("def f(a: int, b: int, c: int, d: int, x: int, y: int) -> int:\n    return " + text + "\n",
                       /*analyze=*/false);
  ParsedExpr p;
  p.messages = c.messages;
  p.module = std::move(c.module);
  if (p.module && p.module->functions.size() == 1 && p.module->functions[0]->body->stmts.size() == 1)
    if (auto* r = dyn_cast<Return>(p.module->functions[0]->body->stmts[0].get())) p.expr = r->value.get();
  return p;
}

/// Prints `e`, parses the text and checks that the tree is the same and
/// that printing it again gives the same text. Returns the text.
std::string roundTrip(const Expr& e) {
  std::string text = printExpr(e);
  ParsedExpr again = parseExpr(text);
  if (!again.expr) {
    ADD_FAILURE() << "printed text does not parse: " << text << "\n" << again.messages;
    return text;
  }
  EXPECT_EQ(dump(*again.expr), dump(e)) << "printed as: " << text;
  EXPECT_EQ(printExpr(*again.expr), text);
  return text;
}

/// Parses `source`, checks the round trip and returns the printed text.
std::string printed(const std::string& source) {
  ParsedExpr p = parseExpr(source);
  if (!p.expr) {
    ADD_FAILURE() << "does not parse: " << source << "\n" << p.messages;
    return "";
  }
  return roundTrip(*p.expr);
}

// Builders for trees the parser never produces.
ExprPtr var(const char* n) { return std::make_unique<VarRef>(SourceLoc{}, n); }
ExprPtr intLit(int64_t v) { return std::make_unique<IntLit>(SourceLoc{}, v); }
ExprPtr floatLit(double v) { return std::make_unique<FloatLit>(SourceLoc{}, v); }
ExprPtr binary(BinaryOp op, ExprPtr l, ExprPtr r) {
  return std::make_unique<Binary>(SourceLoc{}, op, std::move(l), std::move(r));
}
ExprPtr neg(ExprPtr e) { return std::make_unique<Unary>(SourceLoc{}, UnaryOp::Neg, std::move(e)); }

// ---- precedence and parentheses ------------------------------------------------

TEST(PrintExpr, ArithmeticKeepsOnlyNeededParentheses) {
  EXPECT_EQ(printed("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(printed("a + b * c"), "a + b * c");
  EXPECT_EQ(printed("((a + b)) + c"), "a + b + c");
  EXPECT_EQ(printed("a + (b + c)"), "a + (b + c)");
  EXPECT_EQ(printed("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(printed("(a - b) - c"), "a - b - c");
  EXPECT_EQ(printed("a / (b * c)"), "a / (b * c)");
  EXPECT_EQ(printed("a // b % c"), "a // b % c");
  EXPECT_EQ(printed("a % (b // c)"), "a % (b // c)");
}

TEST(PrintExpr, ArrayValues) {
  EXPECT_EQ(printed("A[1:3, :]"), "A[1:3, :]");
  EXPECT_EQ(printed("A[::-1]"), "A[::-1]");
  EXPECT_EQ(printed("A[i, a:b:2]"), "A[i, a:b:2]");
  EXPECT_EQ(printed("a @ b + c"), "a @ b + c");
  EXPECT_EQ(printed("x not in l"), "x not in l");
  EXPECT_EQ(printed("{1: 2.5, k: v}"), "{1: 2.5, k: v}");
  EXPECT_EQ(printed("x.abs().sqrt()"), "x.abs().sqrt()");
  EXPECT_EQ(printed("(a + b).sum(1)"), "(a + b).sum(1)");
}

TEST(PrintExpr, PowerAndUnaryMinus) {
  // `-a ** 2` is `-(a ** 2)` in Python: both spellings are one tree.
  EXPECT_EQ(printed("-(a ** 2)"), "-a ** 2");
  EXPECT_EQ(printed("-a ** 2"), "-a ** 2");
  EXPECT_EQ(printed("(-a) ** 2"), "(-a) ** 2");
  EXPECT_EQ(printed("a ** b ** c"), "a ** b ** c");
  EXPECT_EQ(printed("(a ** b) ** c"), "(a ** b) ** c");
  EXPECT_EQ(printed("-(a + b)"), "-(a + b)");
  EXPECT_EQ(printed("-a * b"), "-a * b");
  EXPECT_EQ(printed("a * -b"), "a * -b");
  EXPECT_EQ(printed("- -a"), "--a");
  EXPECT_EQ(printed("+a"), "+a");
  EXPECT_EQ(printed("~a & b"), "~a & b");
  EXPECT_EQ(printed("~(a & b)"), "~(a & b)");
}

TEST(PrintExpr, NegativeExponentsReadBack) {
  // Any spelling will do as long as it reads back as the same tree.
  printed("a ** -b");
  printed("2 ** -1");
  printed("-a ** -b");
  printed("a ** -b ** c");
}

TEST(PrintExpr, NegativeLiteralsAsPowerBase) {
  // The parser folds `-2` into one literal; as a base it needs parentheses
  // or it would read back as -(2 ** 2).
  EXPECT_EQ(printed("(-2) ** 2"), "(-2) ** 2");
  EXPECT_EQ(printed("-2 ** 2"), "-2 ** 2");
  EXPECT_EQ(roundTrip(*binary(BinaryOp::Pow, floatLit(-2.5), var("b"))), "(-2.5) ** b");
  EXPECT_EQ(roundTrip(*binary(BinaryOp::Pow, intLit(-3), var("b"))), "(-3) ** b");
}

TEST(PrintExpr, FoldedNegativeLiterals) {
  EXPECT_EQ(printed("a - -1"), "a - -1");
  EXPECT_EQ(printed("-9223372036854775808"), "-9223372036854775808");
  roundTrip(*binary(BinaryOp::Sub, var("a"), intLit(std::numeric_limits<int64_t>::min())));
  roundTrip(*neg(intLit(-5)));  // - (-5)
  roundTrip(*neg(floatLit(-0.5)));
}

TEST(PrintExpr, BitwiseAndShifts) {
  EXPECT_EQ(printed("a << b + c"), "a << b + c");
  EXPECT_EQ(printed("(a << b) + c"), "(a << b) + c");
  EXPECT_EQ(printed("a | b ^ c"), "a | b ^ c");
  EXPECT_EQ(printed("(a | b) ^ c"), "(a | b) ^ c");
  EXPECT_EQ(printed("a | b & c"), "a | b & c");
  EXPECT_EQ(printed("(a | b) & c"), "(a | b) & c");
  EXPECT_EQ(printed("(a ^ b) ^ c"), "a ^ b ^ c");
  EXPECT_EQ(printed("a & b & c"), "a & b & c");
  // `&` binds tighter than `^` in Python. These trees are built by hand:
  // tree-sitter-python reads `^` tighter than `&` (see the frontend test
  // Parse.BitwiseAndBindsTighterThanXor), so they cannot round-trip yet.
  EXPECT_EQ(printExpr(*binary(BinaryOp::BitXor, var("a"), binary(BinaryOp::BitAnd, var("b"), var("c")))), "a ^ b & c");
  EXPECT_EQ(printExpr(*binary(BinaryOp::BitAnd, binary(BinaryOp::BitXor, var("a"), var("b")), var("c"))), "(a ^ b) & c");
  EXPECT_EQ(printExpr(*binary(BinaryOp::BitAnd, var("a"), binary(BinaryOp::BitXor, var("b"), var("c")))), "a & (b ^ c)");
  EXPECT_EQ(printed("a >> (b >> c)"), "a >> (b >> c)");
}

TEST(PrintExpr, LogicalAndNot) {
  EXPECT_EQ(printed("not (a and b)"), "not (a and b)");
  EXPECT_EQ(printed("not a and b"), "not a and b");
  EXPECT_EQ(printed("a or b and c"), "a or b and c");
  EXPECT_EQ(printed("(a or b) and c"), "(a or b) and c");
  EXPECT_EQ(printed("a and b and c"), "a and b and c");
  EXPECT_EQ(printed("a and (b and c)"), "a and (b and c)");
  EXPECT_EQ(printed("not not a"), "not not a");
  EXPECT_EQ(printed("not a == b"), "not a == b");
  EXPECT_EQ(printed("(not a) == b"), "(not a) == b");
  EXPECT_EQ(printed("-(not a)"), "-(not a)");
}

TEST(PrintExpr, Conditional) {
  EXPECT_EQ(printed("x if c else y"), "x if c else y");
  EXPECT_EQ(printed("x if a < b else y"), "x if a < b else y");
  EXPECT_EQ(printed("x if a else y if b else c"), "x if a else y if b else c");
  EXPECT_EQ(printed("(x if a else y) if b else c"), "(x if a else y) if b else c");
  EXPECT_EQ(printed("x if (a if b else c) else y"), "x if (a if b else c) else y");
  EXPECT_EQ(printed("(x if c else y) + 1"), "(x if c else y) + 1");
  EXPECT_EQ(printed("(x if c else y) or a"), "(x if c else y) or a");
  EXPECT_EQ(printed("x if a or b else y"), "x if a or b else y");
}

TEST(PrintExpr, ComparisonChains) {
  EXPECT_EQ(printed("a < b < c"), "a < b < c");
  EXPECT_EQ(printed("a < b <= c != d"), "a < b <= c != d");
  EXPECT_EQ(printed("(a < b) < c"), "(a < b) < c");
  EXPECT_EQ(printed("a < (b < c)"), "a < (b < c)");
  EXPECT_EQ(printed("a + 1 < b * 2 >= c"), "a + 1 < b * 2 >= c");
  EXPECT_EQ(printed("a | b < c"), "a | b < c");
  EXPECT_EQ(printed("-(a < b)"), "-(a < b)");
  EXPECT_EQ(printed("(a == b) == (c == d)"), "(a == b) == (c == d)");
}

TEST(PrintExpr, CallsIndexingAndTuples) {
  EXPECT_EQ(printed("g(a + b, (c, d), [x, y])"), "g(a + b, (c, d), [x, y])");
  EXPECT_EQ(printed("g(a, n=b + 1)"), "g(a, n=b + 1)");
  EXPECT_EQ(printed("g()"), "g()");
  EXPECT_EQ(printed("A[i + 1, j]"), "A[i + 1, j]");
  EXPECT_EQ(printed("(a + b)[0]"), "(a + b)[0]");
  EXPECT_EQ(printed("A.shape[0]"), "A.shape[0]");
  EXPECT_EQ(printed("g((a,))"), "g((a,))");
  EXPECT_EQ(printed("True and False"), "True and False");
}

TEST(PrintExpr, CastsSpellTheirType) {
  Cast c(SourceLoc{}, Type::int32(), binary(BinaryOp::Add, var("a"), var("b")));
  EXPECT_EQ(printExpr(c), "int32(a + b)");
  Cast z(SourceLoc{}, Type::float32(), intLit(0));
  EXPECT_EQ(printExpr(z), "float32(0)");
}

TEST(PrintExpr, StringLiteralsEscape) {
  StrLit s(SourceLoc{}, "say \"hi\"\\\n\tend");
  EXPECT_EQ(printExpr(s), R"("say \"hi\"\\\n\tend")");
  // And it reads back as the same string.
  Compiled c = compile("def f():\n    print(" + printExpr(s) + ")\n", false);
  ASSERT_TRUE(c.module) << c.messages;
  auto* st = dyn_cast<ExprStmt>(c.module->functions[0]->body->stmts[0].get());
  ASSERT_NE(st, nullptr);
  auto* call = dyn_cast<Call>(st->expr.get());
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 1u);
  ASSERT_NE(dyn_cast<StrLit>(call->args[0].get()), nullptr);
  EXPECT_EQ(dyn_cast<StrLit>(call->args[0].get())->value, s.value);
}

TEST(PrintExpr, StringLiteralsWithControlCharacters) {
  // Control characters inside the quotes must be escaped: Python rejects a
  // NUL byte in source and reads a raw CR as a line break.
  StrLit s(SourceLoc{}, std::string("a\rb\0c\x01", 6));
  std::string text = printExpr(s);
  for (char ch : text) EXPECT_GE(static_cast<unsigned char>(ch), 0x20) << "raw control character in " << text;
}

// ---- float literals ---------------------------------------------------------------

TEST(FormatFloat, ShortestSpellings) {
  EXPECT_EQ(formatFloatLiteral(0.1), "0.1");
  EXPECT_EQ(formatFloatLiteral(1.0), "1.0");
  EXPECT_EQ(formatFloatLiteral(0.0), "0.0");
  EXPECT_EQ(formatFloatLiteral(-0.0), "-0.0");
  EXPECT_EQ(formatFloatLiteral(1.5), "1.5");
  EXPECT_EQ(formatFloatLiteral(-2.25), "-2.25");
  EXPECT_EQ(formatFloatLiteral(1e-05), "1e-05");
  EXPECT_EQ(formatFloatLiteral(1e16), "1e+16");
  EXPECT_EQ(formatFloatLiteral(123456789.0), "123456789.0");
  EXPECT_EQ(formatFloatLiteral(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(formatFloatLiteral(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(formatFloatLiteral(5e-324), "5e-324");
}

TEST(FormatFloat, StaysAFloatLiteralAndReadsBackExactly) {
  const double values[] = {0.1, 1e-05, 1e16, 1e+22, 100.0, 2.0, 0.5, 3.141592653589793, 1.0 / 3.0, 6.02214076e23,
                           2.2250738585072014e-308, 4.9406564584124654e-324, 1.7976931348623157e308, 9007199254740993.0,
                           std::numeric_limits<double>::infinity()};
  for (double v : values) {
    std::string s = formatFloatLiteral(v);
    SCOPED_TRACE(s);
    EXPECT_NE(s.find_first_of(".e"), std::string::npos);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v);
    // The pydd parser reads it as a float literal of the same value.
    ParsedExpr p = parseExpr(s);
    ASSERT_NE(p.expr, nullptr) << p.messages;
    ASSERT_NE(dyn_cast<FloatLit>(p.expr), nullptr) << dump(*p.expr);
    EXPECT_EQ(dyn_cast<FloatLit>(p.expr)->value, v);
  }
}

TEST(FormatFloat, NegativeValuesReadBackAsNegation) {
  for (double v : {-0.1, -1e-05, -1e16, -0.0}) {
    std::string s = formatFloatLiteral(v);
    SCOPED_TRACE(s);
    ParsedExpr p = parseExpr(s);
    ASSERT_NE(p.expr, nullptr) << p.messages;
    auto* u = dyn_cast<Unary>(p.expr);
    ASSERT_NE(u, nullptr) << dump(*p.expr);
    ASSERT_NE(dyn_cast<FloatLit>(u->operand.get()), nullptr);
    EXPECT_EQ(-dyn_cast<FloatLit>(u->operand.get())->value, v);
    EXPECT_EQ(std::signbit(-dyn_cast<FloatLit>(u->operand.get())->value), std::signbit(v));
  }
}

TEST(FormatFloat, NanIsValidPydd) {
  // NaN prints as `float64("nan")`, which sema reads back as a NaN literal.
  // See also PrintModule.ConstantFoldedNanIsValidPydd.
  std::string s = formatFloatLiteral(std::nan(""));
  Compiled c = compile("def f() -> float64:\n    return " + s + "\n");
  EXPECT_TRUE(c.ok) << s << "\n" << c.messages;
}

// ---- whole modules: printing is a fixed point ----------------------------------------

/// The same signature and the same locals with the same types.
void expectSameTyping(const Function& a, const Function& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.returnType, a.returnType);
  ASSERT_EQ(b.params.size(), a.params.size());
  for (size_t k = 0; k < a.params.size(); ++k) {
    EXPECT_EQ(b.params[k].name, a.params[k].name);
    EXPECT_EQ(b.params[k].type, a.params[k].type);
  }
  ASSERT_EQ(b.locals.size(), a.locals.size());
  for (size_t k = 0; k < a.locals.size(); ++k) {
    EXPECT_EQ(b.locals[k].name, a.locals[k].name);
    EXPECT_EQ(b.locals[k].type, a.locals[k].type) << a.locals[k].name;
  }
}

/// Compiles `source` (constant-folded with `fold`) and prints it.
std::string printCompiled(const std::string& source, bool fold, Compiled& first) {
  first = compile(source);
  if (!first.ok) {
    ADD_FAILURE() << "source does not compile:\n" << first.messages;
    return "";
  }
  if (fold)
    for (auto& f : first.module->functions) constantFold(*f);
  return printModule(*first.module);
}

/// Compiles `source`, prints it and compiles the printed text again: it
/// must be accepted and type every function the same way (signature and
/// locals). Returns the printed text.
std::string expectPrintedRecompiles(const std::string& source, bool fold = false) {
  Compiled first;
  std::string text = printCompiled(source, fold, first);
  if (!first.ok) return text;
  Compiled second = compile(text);
  if (!second.ok) {
    ADD_FAILURE() << "printed module does not compile:\n" << second.messages << "\n--- printed:\n" << text;
    return text;
  }
  EXPECT_EQ(second.module->functions.size(), first.module->functions.size());
  for (size_t i = 0; i < first.module->functions.size() && i < second.module->functions.size(); ++i)
    expectSameTyping(*first.module->functions[i], *second.module->functions[i]);
  return text;
}

/// Print, compile the text, print again: the two prints must be equal.
void expectFixedPoint(const std::string& source, bool fold = false) {
  Compiled first;
  std::string text = printCompiled(source, fold, first);
  if (!first.ok) return;
  Compiled second = compile(text);
  ASSERT_TRUE(second.ok) << second.messages << "\n--- printed:\n" << text;
  EXPECT_EQ(printModule(*second.module), text);
}

bool contains(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

// Kernels covering every statement form.
const char* const kLoopsAndArrays =
    "from pydd import *\n"
    "\n"
    "def saxpy(a: float32, x: Array(float32), y: Array(float32)) -> None:\n"
    "    n = len(x)\n"
    "    for i in range(n):\n"
    "        y[i] = a * x[i] + y[i]\n"
    "\n"
    "def matmul(A: Array(float64, 2), B: Array(float64, 2)) -> Array(float64, 2):\n"
    "    n = A.shape[0]\n"
    "    m = B.shape[1]\n"
    "    C = zeros((n, m))\n"
    "    pfor i in range(n):\n"
    "        for j in range(m):\n"
    "            s = 0.0\n"
    "            for p in range(A.shape[1]):\n"
    "                s += A[i, p] * B[p, j]\n"
    "            C[i, j] = s\n"
    "    return C\n";

const char* const kIfElifElseAndWhile =
    "def classify(x: int) -> int:\n"
    "    if x < 0:\n"
    "        r = -1\n"
    "    elif x == 0:\n"
    "        r = 0\n"
    "    elif x < 10 and x != 5:\n"
    "        r = 1\n"
    "    else:\n"
    "        if x > 100:\n"
    "            r = 3\n"
    "        r = 2\n"
    "    return r\n"
    "\n"
    "def collatz(n: int) -> int:\n"
    "    steps = 0\n"
    "    while n != 1:\n"
    "        if n % 2 == 0:\n"
    "            n = n // 2\n"
    "        else:\n"
    "            n = 3 * n + 1\n"
    "        steps += 1\n"
    "        if steps > 1000:\n"
    "            break\n"
    "        elif steps < 0:\n"
    "            continue\n"
    "    return steps\n";

const char* const kTupleAssignmentAndCasts =
    "def fib(n: int32) -> int64:\n"
    "    a, b = 0, 1\n"
    "    for i in range(n):\n"
    "        a, b = b, a + b\n"
    "    return a\n"
    "\n"
    "def casts(x: float64, k: int32) -> float32:\n"
    "    i = int32(x)\n"
    "    j = k + 1\n"
    "    y: float32 = 0\n"
    "    z = 0  # type: int32\n"
    "    y = float32(x) * 2.0 + j\n"
    "    z = z + k\n"
    "    if k:\n"
    "        z = -z\n"
    "    return y if i > j else float32(z)\n";

const char* const kTasksAndParallelLoops =
    "def tasks(A: Array(float64), n: int) -> None:\n"
    "    finish:\n"
    "        async:\n"
    "            A[0] = 1.0\n"
    "        async:\n"
    "            A[1] = 2\n"
    "    pfor i in range(2, n):\n"
    "        isolated:\n"
    "            A[0] += A[i]\n";

const char* const kForEachBoolsChainsAndPrint =
    "def stats(A: Array(float64)) -> float64:\n"
    "    total = 0.0\n"
    "    count = 0\n"
    "    for v in A:\n"
    "        if 0.0 <= v < 1.0 or not (v > 2.0):\n"
    "            total += v\n"
    "            count += 1\n"
    "    print(\"mean\\t\\\"x\\\"\", total / count, count)\n"
    "    flag = count > 0\n"
    "    return total / count if flag else -1.0\n";

const char* const kAllocationsAndLibraryCalls =
    "def alloc(n: int32) -> Array(int32, 2):\n"
    "    A = zeros(shape=(n, 3), dtype=int32())\n"
    "    B = ones(n, float32)\n"
    "    C = empty([2, n, 2])\n"
    "    for i in range(min(n, 3)):\n"
    "        A[i, 0] = abs(-i) + max(len(B), ndim(C))\n"
    "    return A\n"
    "\n"
    "def use(n: int32) -> int64:\n"
    "    A = alloc(n)\n"
    "    return len(A)\n";

const char* const kStoresAndIntrepyddSpellings =
    "def stores(x: Array(float64, 1), i: Array(int64, 1), l: List(int64), S: SparseMat(float64)) -> Array(int64, 1):\n"
    "    x[x < 0.0] = 0.0\n"
    "    x[x > 1.0] *= 2.0\n"
    "    x[i] = log(x[i], 2.0)\n"
    "    M: Array(float64, 2) = zeros(l)\n"
    "    b = zeros(3, boolean())\n"
    "    D = spm_diags(get_row(S, 0) + get_col(M, 0)[0])\n"
    "    return argmax(M, axis=1) + int64(b[0]) + nnz(D)\n";

const char* const kEmptyBodiesAndBareReturns =
    "def nothing() -> None:\n"
    "    pass\n"
    "\n"
    "def early(n: int) -> None:\n"
    "    if n > 0:\n"
    "        return\n"
    "    x: float64\n";

const char* const kConstantFolding =
    "def f(y: float64) -> float64:\n"
    "    a = 2 * 3 - 10\n"
    "    b = -(0.5 * 4.0)\n"
    "    c = (0 - 2) ** a + b ** 2\n"
    "    d = 1e308 * 10.0\n"
    "    return (-0.0 - 2.0) ** y + c + d\n";

TEST(PrintModule, LoopsAndArrays) {
  std::string text = expectPrintedRecompiles(kLoopsAndArrays);
  EXPECT_TRUE(contains(text, "def saxpy(a: float32, x: Array(float32, 1), y: Array(float32, 1)):\n")) << text;
  EXPECT_TRUE(contains(text, "    n: int64\n    i: int64\n")) << text;
  EXPECT_TRUE(contains(text, "        y[i] = a * x[i] + y[i]\n")) << text;
  EXPECT_TRUE(contains(text, "def matmul(A: Array(float64, 2), B: Array(float64, 2)) -> Array(float64, 2):\n")) << text;
  EXPECT_TRUE(contains(text, "    n = shape(A, 0)\n")) << text;
  EXPECT_TRUE(contains(text, "    C: Array(float64, 2)\n")) << text;
  EXPECT_TRUE(contains(text, "    pfor i in range(0, n, 1):\n")) << text;
  EXPECT_TRUE(contains(text, "            for p in range(0, shape(A, 1), 1):\n")) << text;
  EXPECT_TRUE(contains(text, "                s = s + A[i, p] * B[p, j]\n")) << text;
}

TEST(PrintModule, IfElifElseAndWhile) {
  std::string text = expectPrintedRecompiles(kIfElifElseAndWhile);
  EXPECT_TRUE(contains(text,
                       "    if x < 0:\n"
                       "        r = -1\n"
                       "    elif x == 0:\n"
                       "        r = 0\n"
                       "    elif x < 10 and x != 5:\n"
                       "        r = 1\n"
                       "    else:\n"
                       "        if x > 100:\n"
                       "            r = 3\n"
                       "        r = 2\n"))
      << text;
  EXPECT_TRUE(contains(text, "    while n != 1:\n")) << text;
  EXPECT_TRUE(contains(text, "            break\n        elif steps < 0:\n            continue\n")) << text;
}

TEST(PrintModule, TupleAssignmentAndCasts) {
  std::string text = expectPrintedRecompiles(kTupleAssignmentAndCasts);
  EXPECT_TRUE(contains(text, "    a, b = 0, 1\n")) << text;
  EXPECT_TRUE(contains(text, "        a, b = b, a + b\n")) << text;
  EXPECT_TRUE(contains(text, "    for i in range(0, int64(n), 1):\n")) << text;
  EXPECT_TRUE(contains(text, "    j = k + int32(1)\n")) << text;
  EXPECT_TRUE(contains(text, "    y: float32 = float32(0.0)\n")) << text;
  EXPECT_TRUE(contains(text, "    z: int32 = int32(0)\n")) << text;
  EXPECT_TRUE(contains(text, "    if bool(k):\n")) << text;
}

TEST(PrintModule, TasksAndParallelLoops) {
  std::string text = expectPrintedRecompiles(kTasksAndParallelLoops);
  EXPECT_TRUE(contains(text,
                       "    finish:\n"
                       "        async:\n"
                       "            A[0] = 1.0\n"
                       "        async:\n"
                       "            A[1] = 2.0\n"
                       "    pfor i in range(2, n, 1):\n"
                       "        isolated:\n"
                       "            A[0] = A[0] + A[i]\n"))
      << text;
}

TEST(PrintModule, ForEachBoolsChainsAndPrint) {
  std::string text = expectPrintedRecompiles(kForEachBoolsChainsAndPrint);
  EXPECT_TRUE(contains(text, "    for v in A:\n")) << text;
  EXPECT_TRUE(contains(text, "    v: float64\n")) << text;
  EXPECT_TRUE(contains(text, "    flag: bool\n")) << text;
  EXPECT_TRUE(contains(text, "        if 0.0 <= v < 1.0 or not v > 2.0:\n")) << text;
  EXPECT_TRUE(contains(text, "    print(\"mean\\t\\\"x\\\"\", total / float64(count), count)\n")) << text;
}

TEST(PrintModule, AllocationsAndLibraryCalls) {
  std::string text = expectPrintedRecompiles(kAllocationsAndLibraryCalls);
  EXPECT_TRUE(contains(text, "    A = zeros((int64(n), 3), int32(0))\n")) << text;
  EXPECT_TRUE(contains(text, "    B = ones(int64(n), float32(0))\n")) << text;
  EXPECT_TRUE(contains(text, "    A: Array(int32, 2)\n")) << text;
  EXPECT_TRUE(contains(text, "    C: Array(float64, 3)\n")) << text;
}

TEST(PrintModule, StoresAndIntrepyddSpellings) {
  std::string text = expectPrintedRecompiles(kStoresAndIntrepyddSpellings);
  EXPECT_TRUE(contains(text, "    mask_assign(x, lt(x, 0.0), 0.0)\n")) << text;
  EXPECT_TRUE(contains(text, "    index_assign(x, i, log_base(take(x, i), 2.0))\n")) << text;
  EXPECT_TRUE(contains(text, "    M: Array(float64, 2) = zeros(shape_from_list(l, 2))\n")) << text;
  EXPECT_TRUE(contains(text, "    b = zeros(3, bool(0))\n")) << text;
}

TEST(PrintModule, EmptyBodiesAndBareReturns) {
  std::string text = expectPrintedRecompiles(kEmptyBodiesAndBareReturns);
  EXPECT_TRUE(contains(text, "def nothing():\n    pass\n")) << text;
  EXPECT_TRUE(contains(text, "        return\n")) << text;
}

TEST(PrintModule, ConstantFoldedModuleRecompiles) {
  std::string text = expectPrintedRecompiles(kConstantFolding,
      /*fold=*/true);
  EXPECT_TRUE(contains(text, "    a = -4\n")) << text;
  EXPECT_TRUE(contains(text, "    b = -2.0\n")) << text;
  EXPECT_TRUE(contains(text, "    c = float64((-2) ** a) + b ** 2.0\n")) << text;
  EXPECT_TRUE(contains(text, "    d = 1e999\n")) << text;
  EXPECT_TRUE(contains(text, "    return (-2.0) ** y + c + d\n")) << text;
}

TEST(PrintModule, PrintingIsAFixedPoint) {
  // print(compile(print(m))) == print(m): the declarations the printer puts
  // at the top of each function (`x: float64`) are consumed by sema when
  // read back, so --emit=ir output can be fed back to reach the same text.
  for (const char* source : {kLoopsAndArrays, kIfElifElseAndWhile, kTupleAssignmentAndCasts, kTasksAndParallelLoops,
                             kForEachBoolsChainsAndPrint, kAllocationsAndLibraryCalls, kEmptyBodiesAndBareReturns,
                             kStoresAndIntrepyddSpellings}) {
    SCOPED_TRACE(source);
    expectFixedPoint(source);
  }
  expectFixedPoint(kConstantFolding, /*fold=*/true);
}

const char* const kRankGeneric =
    "def scale(x: Array(float64), a: float64) -> Array(float64):\n"
    "    return x * a\n"
    "\n"
    "def twice(x: Array(float64)):\n"
    "    return scale(x, 2.0)\n";

TEST(PrintModule, RankGenericInstances) {
  // Each instance is pydd with explicit ranks under its own name, below a
  // comment naming the source signature; the text compiles as it is.
  std::string text = expectPrintedRecompiles(kRankGeneric);
  EXPECT_TRUE(contains(text, "# scale(x: Array(float64), a: float64) -> Array(float64) for x: Array(float64, 3)\n"
                             "def scale__rank3(x: Array(float64, 3), a: float64) -> Array(float64, 3):\n")) << text;
  EXPECT_TRUE(contains(text, "# twice(x: Array(float64)) for x: Array(float64, 2)\n"
                             "def twice__rank2(x: Array(float64, 2)) -> Array(float64, 2):\n"
                             "    return scale__rank2(x, 2.0)\n")) << text;
}

TEST(CloneStmt, CopiesEveryStatementForm) {
  // Sema types each instance of a rank-generic function on a clone of its
  // body: a clone prints as the original does.
  for (const char* source : {kLoopsAndArrays, kIfElifElseAndWhile, kTupleAssignmentAndCasts, kTasksAndParallelLoops,
                             kForEachBoolsChainsAndPrint, kAllocationsAndLibraryCalls, kEmptyBodiesAndBareReturns,
                             kStoresAndIntrepyddSpellings}) {
    SCOPED_TRACE(source);
    Compiled c = compile(source);
    ASSERT_TRUE(c.ok) << c.messages;
    for (auto& f : c.module->functions) {
      Function copy;
      copy.name = f->name;
      copy.params = f->params;
      copy.returnType = f->returnType;
      copy.locals = f->locals;
      copy.body = cloneBlock(*f->body);
      EXPECT_EQ(printFunction(copy), printFunction(*f));
    }
  }
}

TEST(PrintModule, ConstantFoldedNanIsValidPydd) {
  // Constant folding `1e999 - 1e999` yields a NaN literal; the printed
  // module (what --dump-after shows) must still be valid pydd.
  expectPrintedRecompiles("def f() -> float64:\n    x = 1e999 - 1e999\n    return x\n", /*fold=*/true);
}

}  // namespace
