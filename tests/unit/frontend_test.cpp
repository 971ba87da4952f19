// Unit tests for the frontend: Intrepydd keyword pre-lexing, lowering of
// tree-sitter's tree to the untyped IR (shapes, flags, literals, source
// locations), the subset check with its diagnostics, and type parsing.
//
// Every source below is written with its columns in mind; a location in an
// assertion is 1-based, as the compiler reports it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "frontend/Diagnostics.h"
#include "frontend/Keywords.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "ir/IR.h"
#include "llvm/Support/MemoryBuffer.h"

namespace {

using namespace pydd;

// ---- helpers ---------------------------------------------------------------

struct Parsed {
  std::unique_ptr<Module> module;  // null when parsing reported errors
  unsigned errors = 0;
  std::string messages;  // what the diagnostics printed
};

Parsed parse(const std::string& source) {
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(source, "test.pydd");
  Diagnostics diag("test.pydd", std::move(buf));
  testing::internal::CaptureStderr();
  Parsed p;
  p.module = parseModule(diag, "test");
  p.messages = testing::internal::GetCapturedStderr();
  p.errors = diag.errorCount();
  return p;
}

/// The body of the only function of a source that must parse.
const Function& parseFunction(const std::string& source, std::unique_ptr<Module>& keep) {
  Parsed p = parse(source);
  EXPECT_EQ(p.errors, 0u) << p.messages;
  EXPECT_TRUE(p.module) << p.messages;
  keep = std::move(p.module);
  // A failed parse has already failed the test; an empty function keeps
  // the rest of it from dereferencing null.
  static Function empty = [] {
    Function f;
    f.body = std::make_unique<Block>(SourceLoc{});
    return f;
  }();
  if (!keep || keep->functions.empty()) return empty;
  return *keep->functions[0];
}

/// Expects that `source` is rejected with `message` at line:col.
void expectError(const std::string& source, int line, int col, const std::string& message) {
  Parsed p = parse(source);
  EXPECT_EQ(p.module, nullptr);
  EXPECT_GE(p.errors, 1u);
  std::string where = "test.pydd:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_NE(p.messages.find(where + message), std::string::npos)
      << "expected '" << where << message << "' in:\n" << p.messages;
}

/// Statement `i` of a block, or null (dyn_cast passes null through).
const Stmt* stmtAt(const Block* b, size_t i) { return b && i < b->stmts.size() ? b->stmts[i].get() : nullptr; }

void expectLoc(SourceLoc loc, uint32_t line, uint32_t col) {
  EXPECT_EQ(loc.line, line);
  EXPECT_EQ(loc.col, col);
}

// These abort the current test on a kind mismatch, so that nothing after
// them dereferences a null node.
#define ASSERT_KIND(T, node) ASSERT_NE(dyn_cast<T>(node), nullptr) << #node " is not a " #T
#define ASSERT_INT(node, v)                                  \
  do {                                                       \
    ASSERT_KIND(IntLit, node);                               \
    EXPECT_EQ(dyn_cast<IntLit>(node)->value, int64_t(v));    \
  } while (0)
#define ASSERT_VAR(node, n)                                  \
  do {                                                       \
    ASSERT_KIND(VarRef, node);                               \
    EXPECT_EQ(dyn_cast<VarRef>(node)->name, n);              \
  } while (0)

/// The expression of `return EXPR` in a one-line function.
const Expr* returnedExpr(const std::string& expression, std::unique_ptr<Module>& keep) {
  const Function& f = parseFunction("def f(a: int, b: int, c: int) -> int:\n    return " + expression + "\n", keep);
  if (!f.body || f.body->stmts.size() != 1) return nullptr;
  auto* r = dyn_cast<Return>(stmtAt(f.body.get(), 0));
  return r ? r->value.get() : nullptr;
}

std::string rewrite(const std::string& src, std::vector<KeywordSite>& sites) {
  std::string out = rewriteIntrepyddKeywords(src, sites);
  // Same length and every newline in place: no line or column moves.
  EXPECT_EQ(out.size(), src.size());
  for (size_t i = 0; i < src.size() && i < out.size(); ++i)
    EXPECT_EQ(src[i] == '\n', out[i] == '\n') << "newline moved at offset " << i;
  return out;
}

// ---- keyword pre-lexing ----------------------------------------------------------

TEST(Keywords, PforBecomesForOfTheSameLength) {
  std::vector<KeywordSite> sites;
  std::string src = "def f(n: int):\n    pfor i in range(n):\n        pass\n";
  EXPECT_EQ(rewrite(src, sites), "def f(n: int):\n    for  i in range(n):\n        pass\n");
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].kind, KeywordKind::Pfor);
  expectLoc(sites[0].loc, 2, 5);
}

TEST(Keywords, BlockKeywordsBecomeIfOneOfTheSameLength) {
  std::vector<KeywordSite> sites;
  std::string src =
      "def f():\n"
      "    finish:\n"
      "        async:\n"
      "            pass\n"
      "    isolated :\n"
      "        pass\n";
  EXPECT_EQ(rewrite(src, sites),
            "def f():\n"
            "    if 1  :\n"
            "        if 1 :\n"
            "            pass\n"
            "    if 1     :\n"
            "        pass\n");
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(sites[0].kind, KeywordKind::Finish);
  expectLoc(sites[0].loc, 2, 5);
  EXPECT_EQ(sites[1].kind, KeywordKind::Async);
  expectLoc(sites[1].loc, 3, 9);
  EXPECT_EQ(sites[2].kind, KeywordKind::Isolated);
  expectLoc(sites[2].loc, 5, 5);
}

TEST(Keywords, KeywordAfterSemicolonStartsAStatement) {
  std::vector<KeywordSite> sites;
  std::string src = "x = 1; pfor i in y: pass\n";
  EXPECT_EQ(rewrite(src, sites), "x = 1; for  i in y: pass\n");
  ASSERT_EQ(sites.size(), 1u);
  expectLoc(sites[0].loc, 1, 8);
}

TEST(Keywords, StringsAndCommentsAreLeftAlone) {
  std::vector<KeywordSite> sites;
  std::string src =
      "s = \"pfor i in x\"\n"
      "t = 'async:'\n"
      "# pfor i in range(3):\n"
      "    # finish:\n"
      "u = \"\"\"\n"
      "pfor i in range(3):\n"
      "async:\n"
      "\"\"\"\n"
      "v = '''x\n"
      "finish:\n"
      "'''\n"
      "print(\"isolated:\")\n";
  EXPECT_EQ(rewrite(src, sites), src);
  EXPECT_TRUE(sites.empty());
}

TEST(Keywords, KeywordAfterTripleQuotedStringIsStillFound) {
  // The scanner must leave the string at the right place and keep counting
  // lines inside it.
  std::vector<KeywordSite> sites;
  std::string src = "s = \"\"\"a\nb \\\"\"\" c\n\"\"\"\npfor i in y:\n    pass\n";
  std::string out = rewrite(src, sites);
  ASSERT_EQ(sites.size(), 1u);
  expectLoc(sites[0].loc, 4, 1);
  EXPECT_EQ(out.substr(out.find("for ")), "for  i in y:\n    pass\n");
}

TEST(Keywords, IdentifiersAndAssignmentsAreNotKeywords) {
  std::vector<KeywordSite> sites;
  std::string src =
      "pfor_count = 3\n"
      "finish = 3\n"
      "isolated_x = 1\n"
      "asyncio = 2\n"
      "finish.x = 1\n"
      "y = pfor\n"
      "f(a,\n"
      "  pfor)\n"
      "z = a + \\\n"
      "pfor\n";
  EXPECT_EQ(rewrite(src, sites), src);
  EXPECT_TRUE(sites.empty());
}

TEST(Keywords, BracketsInStringsAndCommentsDoNotHideStatements) {
  std::vector<KeywordSite> sites;
  std::string src =
      "x = f(\"(\")  # [\n"
      "pfor i in y:\n"
      "    isolated:\n"
      "        z = ')'\n";
  EXPECT_EQ(rewrite(src, sites),
            "x = f(\"(\")  # [\n"
            "for  i in y:\n"
            "    if 1    :\n"
            "        z = ')'\n");
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].kind, KeywordKind::Pfor);
  expectLoc(sites[0].loc, 2, 1);
  EXPECT_EQ(sites[1].kind, KeywordKind::Isolated);
  expectLoc(sites[1].loc, 3, 5);
}

// ---- functions and parameters ------------------------------------------------------

TEST(Parse, FunctionSignature) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction(
      "from pydd import *\n"
      "\n"
      "def kernel(A: Array(float64, 2), n: int, x: float32, flag: bool) -> float64:\n"
      "    return x\n",
      m);
  ASSERT_EQ(m->functions.size(), 1u);
  EXPECT_EQ(m->name, "test");
  EXPECT_EQ(f.name, "kernel");
  expectLoc(f.loc, 3, 1);
  EXPECT_EQ(f.returnType, Type::float64());
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.params[0].name, "A");
  EXPECT_EQ(f.params[0].type, Type::array(ScalarKind::Float64, 2));
  expectLoc(f.params[0].loc, 3, 12);
  EXPECT_EQ(f.params[1].name, "n");
  EXPECT_EQ(f.params[1].type, Type::int64());
  expectLoc(f.params[1].loc, 3, 34);
  EXPECT_EQ(f.params[2].name, "x");
  EXPECT_EQ(f.params[2].type, Type::float32());
  expectLoc(f.params[2].loc, 3, 42);
  EXPECT_EQ(f.params[3].name, "flag");
  EXPECT_EQ(f.params[3].type, Type::boolTy());
  expectLoc(f.params[3].loc, 3, 54);
  EXPECT_TRUE(f.locals.empty());  // sema's job
}

TEST(Parse, NoReturnAnnotationOrNoneIsVoid) {
  Parsed p = parse("def f():\n    pass\n\ndef g() -> None:\n    return\n");
  ASSERT_TRUE(p.module) << p.messages;
  ASSERT_EQ(p.module->functions.size(), 2u);
  EXPECT_TRUE(p.module->functions[0]->returnType.isVoid());
  EXPECT_TRUE(p.module->functions[1]->returnType.isVoid());
  expectLoc(p.module->functions[1]->loc, 4, 1);
  auto* r = dyn_cast<Return>(p.module->functions[1]->body->stmts[0].get());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->value, nullptr);
}

TEST(Parse, DocstringsAreDropped) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("\"\"\"module\"\"\"\ndef f():\n    \"\"\"doc\"\"\"\n    pass\n", m);
  ASSERT_EQ(f.body->stmts.size(), 1u);
  EXPECT_TRUE(isa<Pass>(*f.body->stmts[0]));
}

// ---- loops --------------------------------------------------------------------------

/// The For statement of `for i in ITER:` inside a function with a, b, c.
const For* parseFor(const std::string& header, std::unique_ptr<Module>& keep) {
  const Function& f = parseFunction("def f(a: int, b: int, c: int, A: Array(float64)):\n    " + header + "\n        pass\n", keep);
  if (!f.body || f.body->stmts.empty()) return nullptr;
  return dyn_cast<For>(stmtAt(f.body.get(), 0));
}

TEST(Parse, RangeWithOneArgument) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("for i in range(a):", m);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->var, "i");
  expectLoc(f->loc, 2, 5);
  expectLoc(f->varLoc, 2, 9);
  EXPECT_FALSE(f->parallel);
  EXPECT_TRUE(f->isRange);
  ASSERT_INT(f->start.get(), 0);
  ASSERT_VAR(f->stop.get(), "a");
  ASSERT_INT(f->step.get(), 1);
  EXPECT_EQ(f->iterable, nullptr);
  ASSERT_EQ(f->body->stmts.size(), 1u);
  EXPECT_TRUE(isa<Pass>(*f->body->stmts[0]));
}

TEST(Parse, RangeWithTwoArguments) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("for i in range(a, b):", m);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->isRange);
  ASSERT_VAR(f->start.get(), "a");
  ASSERT_VAR(f->stop.get(), "b");
  ASSERT_INT(f->step.get(), 1);
}

TEST(Parse, RangeWithThreeArguments) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("for i in range(a, b, c):", m);
  ASSERT_NE(f, nullptr);
  ASSERT_VAR(f->start.get(), "a");
  ASSERT_VAR(f->stop.get(), "b");
  ASSERT_VAR(f->step.get(), "c");
  expectLoc(f->step->loc, 2, 26);
}

TEST(Parse, RangeWithNegativeLiteralStep) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("for i in range(10, -1, -2):", m);
  ASSERT_NE(f, nullptr);
  ASSERT_INT(f->start.get(), 10);
  ASSERT_INT(f->stop.get(), -1);
  ASSERT_INT(f->step.get(), -2);
  expectLoc(f->step->loc, 2, 28);
}

TEST(Parse, PforIsAParallelForAtTheKeywordsColumn) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("pfor j in range(a, b):", m);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->parallel);
  EXPECT_EQ(f->var, "j");
  expectLoc(f->loc, 2, 5);
  expectLoc(f->varLoc, 2, 10);
  ASSERT_VAR(f->start.get(), "a");
  ASSERT_VAR(f->stop.get(), "b");
}

TEST(Parse, ForOverAnArray) {
  std::unique_ptr<Module> m;
  const For* f = parseFor("for v in A:", m);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->isRange);
  EXPECT_FALSE(f->parallel);
  ASSERT_VAR(f->iterable.get(), "A");
  expectLoc(f->iterable->loc, 2, 14);
}

TEST(Parse, RangeArgumentErrors) {
  expectError("def f():\n    for i in range():\n        pass\n", 2, 14, "range expected 1 to 3 arguments, got 0");
  expectError("def f():\n    for i in range(1, 2, 3, 4):\n        pass\n", 2, 14, "range expected 1 to 3 arguments, got 4");
  expectError("def f():\n    for i in range(stop=3):\n        pass\n", 2, 20, "range() takes no keyword arguments");
  expectError("def f(A: Array(int)):\n    for A[0] in A:\n        pass\n", 2, 9,
              "a for loop must bind a variable or a tuple of variables in pydd kernels");
}

TEST(Parse, ForWithATupleTargetUnpacksFirstThing) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(d: Dict(int64, float64)):\n    for k, v in d.items():\n        pass\n", m);
  auto& loop = static_cast<const For&>(*f.body->stmts[0]);
  auto& unpack = static_cast<const Assign&>(*loop.body->stmts[0]);
  ASSERT_EQ(unpack.targets.size(), 2u);
  EXPECT_EQ(static_cast<const VarRef&>(*unpack.value).name, loop.var);
}

TEST(Parse, While) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(n: int):\n    while n > 1:\n        n = n // 2\n", m);
  ASSERT_EQ(f.body->stmts.size(), 1u);
  auto* w = dyn_cast<While>(stmtAt(f.body.get(), 0));
  ASSERT_NE(w, nullptr);
  expectLoc(w->loc, 2, 5);
  ASSERT_KIND(Compare, w->cond.get());
  ASSERT_EQ(w->body->stmts.size(), 1u);
  auto* a = dyn_cast<Assign>(stmtAt(w->body.get(), 0));
  ASSERT_NE(a, nullptr);
  ASSERT_KIND(Binary, a->value.get());
  EXPECT_EQ(dyn_cast<Binary>(a->value.get())->op, BinaryOp::FloorDiv);
}

// ---- if / elif / else ----------------------------------------------------------------

TEST(Parse, ElifIsAnIfAloneInTheElseBlock) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction(
      "def f(x: int) -> int:\n"
      "    if x < 0:\n"
      "        return -1\n"
      "    elif x == 0:\n"
      "        return 0\n"
      "    elif x < 10:\n"
      "        x = 10\n"
      "    else:\n"
      "        return 1\n"
      "    return x\n",
      m);
  ASSERT_EQ(f.body->stmts.size(), 2u);
  auto* top = dyn_cast<If>(stmtAt(f.body.get(), 0));
  ASSERT_NE(top, nullptr);
  expectLoc(top->loc, 2, 5);
  ASSERT_EQ(top->thenBody->stmts.size(), 1u);
  ASSERT_NE(top->elseBody, nullptr);
  ASSERT_EQ(top->elseBody->stmts.size(), 1u);

  auto* elif1 = dyn_cast<If>(stmtAt(top->elseBody.get(), 0));
  ASSERT_NE(elif1, nullptr);
  expectLoc(elif1->loc, 4, 5);
  ASSERT_KIND(Compare, elif1->cond.get());
  EXPECT_EQ(dyn_cast<Compare>(elif1->cond.get())->ops[0], CmpOp::Eq);
  ASSERT_NE(elif1->elseBody, nullptr);
  ASSERT_EQ(elif1->elseBody->stmts.size(), 1u);

  auto* elif2 = dyn_cast<If>(stmtAt(elif1->elseBody.get(), 0));
  ASSERT_NE(elif2, nullptr);
  expectLoc(elif2->loc, 6, 5);
  ASSERT_EQ(elif2->thenBody->stmts.size(), 1u);
  EXPECT_TRUE(isa<Assign>(*elif2->thenBody->stmts[0]));
  ASSERT_NE(elif2->elseBody, nullptr);
  ASSERT_EQ(elif2->elseBody->stmts.size(), 1u);
  auto* last = dyn_cast<Return>(stmtAt(elif2->elseBody.get(), 0));
  ASSERT_NE(last, nullptr);
  ASSERT_INT(last->value.get(), 1);
  expectLoc(last->loc, 9, 9);
}

TEST(Parse, IfWithoutElseHasNoElseBlock) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(x: int):\n    if x:\n        pass\n", m);
  auto* i = dyn_cast<If>(stmtAt(f.body.get(), 0));
  ASSERT_NE(i, nullptr);
  ASSERT_VAR(i->cond.get(), "x");
  EXPECT_EQ(i->elseBody, nullptr);
}

// ---- tasks -----------------------------------------------------------------------------

TEST(Parse, TaskBlocksBecomeTaskNodes) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction(
      "def f(A: Array(float64)):\n"
      "    finish:\n"
      "        async:\n"
      "            A[0] = 1.0\n"
      "        async:\n"
      "            A[1] = 2.0\n"
      "    isolated:\n"
      "        A[2] = 3.0\n",
      m);
  ASSERT_EQ(f.body->stmts.size(), 2u);
  auto* finish = dyn_cast<Task>(stmtAt(f.body.get(), 0));
  ASSERT_NE(finish, nullptr);
  EXPECT_EQ(finish->taskKind, TaskKind::Finish);
  expectLoc(finish->loc, 2, 5);
  ASSERT_EQ(finish->body->stmts.size(), 2u);
  auto* a1 = dyn_cast<Task>(stmtAt(finish->body.get(), 0));
  auto* a2 = dyn_cast<Task>(stmtAt(finish->body.get(), 1));
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(a2, nullptr);
  EXPECT_EQ(a1->taskKind, TaskKind::Async);
  EXPECT_EQ(a2->taskKind, TaskKind::Async);
  expectLoc(a1->loc, 3, 9);
  expectLoc(a2->loc, 5, 9);
  ASSERT_EQ(a1->body->stmts.size(), 1u);
  EXPECT_TRUE(isa<Assign>(*a1->body->stmts[0]));
  auto* iso = dyn_cast<Task>(stmtAt(f.body.get(), 1));
  ASSERT_NE(iso, nullptr);
  EXPECT_EQ(iso->taskKind, TaskKind::Isolated);
  expectLoc(iso->loc, 7, 5);
}

TEST(Parse, RealIfOneIsNotATask) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f():\n    if 1 :\n        pass\n", m);
  auto* i = dyn_cast<If>(stmtAt(f.body.get(), 0));
  ASSERT_NE(i, nullptr);
  ASSERT_INT(i->cond.get(), 1);
}

// ---- assignments -------------------------------------------------------------------------

TEST(Parse, TupleAssignment) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(a: int, b: int):\n    a, b = b, a\n", m);
  auto* as = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(as, nullptr);
  ASSERT_EQ(as->targets.size(), 2u);
  ASSERT_VAR(as->targets[0].get(), "a");
  ASSERT_VAR(as->targets[1].get(), "b");
  expectLoc(as->targets[1]->loc, 2, 8);
  ASSERT_KIND(TupleLit, as->value.get());
  auto* t = dyn_cast<TupleLit>(as->value.get());
  EXPECT_FALSE(t->isList);
  ASSERT_EQ(t->elems.size(), 2u);
  ASSERT_VAR(t->elems[0].get(), "b");
  ASSERT_VAR(t->elems[1].get(), "a");
  EXPECT_TRUE(as->declared.isUnknown());
}

TEST(Parse, ParenthesizedTupleTargets) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(int)):\n    (x, A[0]) = (1, 2)\n", m);
  auto* as = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(as, nullptr);
  ASSERT_EQ(as->targets.size(), 2u);
  ASSERT_VAR(as->targets[0].get(), "x");
  ASSERT_KIND(Index, as->targets[1].get());
}

TEST(Parse, ChainedAssignmentStoresLeftToRight) {
  // Python stores the one value into each target, left to right.
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f():\n    a = b = 5\n", m);
  ASSERT_EQ(f.body->stmts.size(), 2u);
  auto* first = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  auto* second = dyn_cast<Assign>(stmtAt(f.body.get(), 1));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_VAR(first->targets[0].get(), "a");
  ASSERT_INT(first->value.get(), 5);
  ASSERT_VAR(second->targets[0].get(), "b");
  ASSERT_INT(second->value.get(), 5);
}

TEST(Parse, ChainedAssignmentEvaluatesAComputedValueOnce) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(int)):\n    i = A[i] = A[0] + 1\n", m);
  ASSERT_EQ(f.body->stmts.size(), 3u);
  auto* temp = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(temp, nullptr);
  auto* tempVar = dyn_cast<VarRef>(temp->targets[0].get());
  ASSERT_NE(tempVar, nullptr);
  EXPECT_NE(dyn_cast<Binary>(temp->value.get()), nullptr);
  auto* toI = dyn_cast<Assign>(stmtAt(f.body.get(), 1));
  auto* toElem = dyn_cast<Assign>(stmtAt(f.body.get(), 2));
  ASSERT_VAR(toI->targets[0].get(), "i");
  ASSERT_VAR(toI->value.get(), tempVar->name);
  EXPECT_NE(dyn_cast<Index>(toElem->targets[0].get()), nullptr);
  ASSERT_VAR(toElem->value.get(), tempVar->name);
}

TEST(Parse, AugmentedAssignmentIsAnAssignOfABinary) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(x: int, A: Array(int, 2), i: int):\n    x += 3\n    A[i, 0] <<= x\n", m);
  ASSERT_EQ(f.body->stmts.size(), 2u);

  auto* a = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(a, nullptr);
  expectLoc(a->loc, 2, 5);
  ASSERT_EQ(a->targets.size(), 1u);
  ASSERT_VAR(a->targets[0].get(), "x");
  ASSERT_KIND(Binary, a->value.get());
  auto* b = dyn_cast<Binary>(a->value.get());
  EXPECT_EQ(b->op, BinaryOp::Add);
  expectLoc(b->loc, 2, 7);  // the operator
  ASSERT_VAR(b->lhs.get(), "x");
  ASSERT_INT(b->rhs.get(), 3);

  auto* e = dyn_cast<Assign>(stmtAt(f.body.get(), 1));
  ASSERT_NE(e, nullptr);
  ASSERT_KIND(Index, e->targets[0].get());
  ASSERT_KIND(Binary, e->value.get());
  auto* shl = dyn_cast<Binary>(e->value.get());
  EXPECT_EQ(shl->op, BinaryOp::Shl);
  ASSERT_KIND(Index, shl->lhs.get());
  auto* idx = dyn_cast<Index>(shl->lhs.get());
  ASSERT_VAR(idx->base.get(), "A");
  ASSERT_EQ(idx->indices.size(), 2u);
  ASSERT_VAR(idx->indices[0].get(), "i");
  ASSERT_INT(idx->indices[1].get(), 0);
  ASSERT_VAR(shl->rhs.get(), "x");
}

TEST(Parse, AugmentedAssignmentEvaluatesAComputedIndexOnce) {
  // A[len(A) - 1] += 1: the index goes into a temporary, evaluated before
  // the right-hand side, and both the load and the store use it.
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(int)):\n    A[len(A) - 1] += 1\n", m);
  ASSERT_EQ(f.body->stmts.size(), 2u);
  auto* temp = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(temp, nullptr);
  auto* tempVar = dyn_cast<VarRef>(temp->targets[0].get());
  ASSERT_NE(tempVar, nullptr);
  auto* update = dyn_cast<Assign>(stmtAt(f.body.get(), 1));
  auto* target = dyn_cast<Index>(update->targets[0].get());
  ASSERT_NE(target, nullptr);
  ASSERT_VAR(target->indices[0].get(), tempVar->name);
  auto* sum = dyn_cast<Binary>(update->value.get());
  ASSERT_NE(sum, nullptr);
  auto* load = dyn_cast<Index>(sum->lhs.get());
  ASSERT_NE(load, nullptr);
  ASSERT_VAR(load->indices[0].get(), tempVar->name);
}

TEST(Parse, AnnotationsDeclareTypes) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction(
      "def f():\n"
      "    x: float32 = 0\n"
      "    y: Array(int32, 3)\n"
      "    z = 0  # type: int32\n"
      "    w = 0\n"
      "    # type: int32\n"
      "    v = 1  # a comment, not a type\n",
      m);
  ASSERT_EQ(f.body->stmts.size(), 5u);
  auto* x = dyn_cast<Assign>(stmtAt(f.body.get(), 0));
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->declared, Type::float32());
  ASSERT_INT(x->value.get(), 0);

  auto* y = dyn_cast<Assign>(stmtAt(f.body.get(), 1));
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->declared, Type::array(ScalarKind::Int32, 3));
  EXPECT_EQ(y->value, nullptr);
  ASSERT_VAR(y->targets[0].get(), "y");

  auto* z = dyn_cast<Assign>(stmtAt(f.body.get(), 2));
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->declared, Type::int32());

  // A type comment on the next line belongs to no statement.
  auto* w = dyn_cast<Assign>(stmtAt(f.body.get(), 3));
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->declared.isUnknown());
  auto* v = dyn_cast<Assign>(stmtAt(f.body.get(), 4));
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->declared.isUnknown());
}

TEST(Parse, UnknownTypeInTypeCommentIsAnError) {
  expectError("def f():\n    z = 0  # type: int128\n", 2, 12, "unknown type 'int128' in type comment");
}

TEST(Parse, UnknownTypeInAnnotationIsAnError) {
  expectError("def f(x: float16):\n    pass\n", 1, 10, "unknown type 'float16'");
}

TEST(Parse, AnnotatedTupleAssignmentIsAnError) {
  expectError("def f():\n    a, b = 1, 2  # type: int32\n", 2, 5, "a tuple assignment cannot be annotated");
}

// ---- expressions ----------------------------------------------------------------------------

TEST(Parse, ChainedComparison) {
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("a < b <= c != 3", m);
  ASSERT_KIND(Compare, e);
  auto* c = dyn_cast<Compare>(e);
  expectLoc(c->loc, 2, 12);
  ASSERT_EQ(c->ops.size(), 3u);
  EXPECT_EQ(c->ops[0], CmpOp::Lt);
  EXPECT_EQ(c->ops[1], CmpOp::Le);
  EXPECT_EQ(c->ops[2], CmpOp::Ne);
  ASSERT_EQ(c->operands.size(), 4u);
  ASSERT_VAR(c->operands[0].get(), "a");
  ASSERT_VAR(c->operands[1].get(), "b");
  ASSERT_VAR(c->operands[2].get(), "c");
  ASSERT_INT(c->operands[3].get(), 3);
  expectLoc(c->operands[2]->loc, 2, 21);
}

TEST(Parse, OperatorPrecedenceShapesTheTree) {
  std::unique_ptr<Module> m;
  // a + b * -c ** 2  ==  a + (b * (-(c ** 2)))
  const Expr* e = returnedExpr("a + b * -c ** 2", m);
  ASSERT_KIND(Binary, e);
  auto* add = dyn_cast<Binary>(e);
  EXPECT_EQ(add->op, BinaryOp::Add);
  ASSERT_KIND(Binary, add->rhs.get());
  auto* mul = dyn_cast<Binary>(add->rhs.get());
  EXPECT_EQ(mul->op, BinaryOp::Mul);
  ASSERT_KIND(Unary, mul->rhs.get());
  auto* neg = dyn_cast<Unary>(mul->rhs.get());
  EXPECT_EQ(neg->op, UnaryOp::Neg);
  ASSERT_KIND(Binary, neg->operand.get());
  EXPECT_EQ(dyn_cast<Binary>(neg->operand.get())->op, BinaryOp::Pow);
}

TEST(Parse, BitwiseAndShiftPrecedence) {
  std::unique_ptr<Module> m;
  // a | b ^ c  ==  a | (b ^ c)
  const Expr* e = returnedExpr("a | b ^ c", m);
  ASSERT_KIND(Binary, e);
  EXPECT_EQ(dyn_cast<Binary>(e)->op, BinaryOp::BitOr);
  ASSERT_KIND(Binary, dyn_cast<Binary>(e)->rhs.get());
  EXPECT_EQ(dyn_cast<Binary>(dyn_cast<Binary>(e)->rhs.get())->op, BinaryOp::BitXor);
  // a & b << c  ==  a & (b << c)
  std::unique_ptr<Module> m2;
  e = returnedExpr("a & b << c", m2);
  ASSERT_KIND(Binary, e);
  EXPECT_EQ(dyn_cast<Binary>(e)->op, BinaryOp::BitAnd);
  ASSERT_KIND(Binary, dyn_cast<Binary>(e)->rhs.get());
  EXPECT_EQ(dyn_cast<Binary>(dyn_cast<Binary>(e)->rhs.get())->op, BinaryOp::Shl);
}

TEST(Parse, BitwiseAndBindsTighterThanXor) {
  // Python's precedence is `|` < `^` < `&`, but tree-sitter-python 0.23
  // ranks `^` (16) above `&` (15); the lowering regroups such chains, so
  // `a ^ b & c` is a ^ (b & c) and `1 ^ 3 & 2` computes 3 as in Python.
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("a ^ b & c", m);
  ASSERT_KIND(Binary, e);
  EXPECT_EQ(dyn_cast<Binary>(e)->op, BinaryOp::BitXor);
  ASSERT_VAR(dyn_cast<Binary>(e)->lhs.get(), "a");
  ASSERT_KIND(Binary, dyn_cast<Binary>(e)->rhs.get());
  EXPECT_EQ(dyn_cast<Binary>(dyn_cast<Binary>(e)->rhs.get())->op, BinaryOp::BitAnd);

  std::unique_ptr<Module> m2;
  e = returnedExpr("a & b ^ c", m2);
  ASSERT_KIND(Binary, e);
  EXPECT_EQ(dyn_cast<Binary>(e)->op, BinaryOp::BitXor);
  ASSERT_KIND(Binary, dyn_cast<Binary>(e)->lhs.get());
  EXPECT_EQ(dyn_cast<Binary>(dyn_cast<Binary>(e)->lhs.get())->op, BinaryOp::BitAnd);
  ASSERT_VAR(dyn_cast<Binary>(e)->rhs.get(), "c");
}

TEST(Parse, LogicalNotAndConditional) {
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("a if not b and c else 0", m);
  ASSERT_KIND(Select, e);
  auto* s = dyn_cast<Select>(e);
  ASSERT_VAR(s->trueValue.get(), "a");
  ASSERT_INT(s->falseValue.get(), 0);
  ASSERT_KIND(Logical, s->cond.get());
  auto* l = dyn_cast<Logical>(s->cond.get());
  EXPECT_TRUE(l->isAnd);
  ASSERT_KIND(Not, l->lhs.get());
  ASSERT_VAR(l->rhs.get(), "c");
}

TEST(Parse, CallsWithKeywordArguments) {
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("g(a, (b, c), n=3)", m);
  ASSERT_KIND(Call, e);
  auto* c = dyn_cast<Call>(e);
  EXPECT_EQ(c->callee, "g");
  EXPECT_EQ(c->target, CallTarget::Unresolved);
  ASSERT_EQ(c->args.size(), 2u);
  ASSERT_VAR(c->args[0].get(), "a");
  ASSERT_KIND(TupleLit, c->args[1].get());
  EXPECT_EQ(dyn_cast<TupleLit>(c->args[1].get())->elems.size(), 2u);
  ASSERT_EQ(c->keywords.size(), 1u);
  EXPECT_EQ(c->keywords[0].name, "n");
  expectLoc(c->keywords[0].loc, 2, 25);
  ASSERT_INT(c->keywords[0].value.get(), 3);
}

TEST(Parse, PositionalAfterKeywordIsAnError) {
  expectError("def f(a: int):\n    g(n=1, a)\n", 2, 12, "positional argument follows keyword argument");
}

TEST(Parse, AttributeAndMultiIndex) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(float64, 2)) -> float64:\n    return A[A.shape[0] - 1, 0]\n", m);
  auto* r = dyn_cast<Return>(stmtAt(f.body.get(), 0));
  ASSERT_NE(r, nullptr);
  ASSERT_KIND(Index, r->value.get());
  auto* idx = dyn_cast<Index>(r->value.get());
  ASSERT_EQ(idx->indices.size(), 2u);
  ASSERT_KIND(Binary, idx->indices[0].get());
  auto* sub = dyn_cast<Binary>(idx->indices[0].get());
  ASSERT_KIND(Index, sub->lhs.get());
  auto* shapeIdx = dyn_cast<Index>(sub->lhs.get());
  ASSERT_KIND(Attribute, shapeIdx->base.get());
  EXPECT_EQ(dyn_cast<Attribute>(shapeIdx->base.get())->name, "shape");
}

TEST(Parse, IntegerLiterals) {
  struct Case {
    const char* text;
    int64_t value;
  } cases[] = {
      {"0", 0},
      {"42", 42},
      {"0xff", 255},
      {"0XFF", 255},
      {"0o17", 15},
      {"0b101", 5},
      {"1_000_000", 1000000},
      {"0x_ff_ff", 65535},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"-1", -1},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::unique_ptr<Module> m;
    const Expr* e = returnedExpr(c.text, m);
    ASSERT_INT(e, c.value);
    expectLoc(e->loc, 2, 12);  // a folded negative starts at its '-'
  }
}

TEST(Parse, IntegerLiteralsOutOfRange) {
  expectError("def f() -> int:\n    return 9223372036854775808\n", 2, 12,
              "integer literal '9223372036854775808' does not fit in int64");
  expectError("def f() -> int:\n    return -9223372036854775809\n", 2, 13,
              "integer literal '9223372036854775809' does not fit in int64");
  expectError("def f() -> int:\n    return 0x1_0000_0000_0000_0000\n", 2, 12,
              "integer literal '0x1_0000_0000_0000_0000' does not fit in int64");
}

TEST(Parse, FloatLiterals) {
  struct Case {
    const char* text;
    double value;
  } cases[] = {{"1.5", 1.5}, {"1e-3", 1e-3}, {"1_000.25", 1000.25}, {".5", 0.5}, {"2.", 2.0}, {"1E10", 1e10}};
  for (auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::unique_ptr<Module> m;
    const Expr* e = returnedExpr(c.text, m);
    ASSERT_KIND(FloatLit, e);
    EXPECT_EQ(dyn_cast<FloatLit>(e)->value, c.value);
  }
}

TEST(Parse, ImaginaryLiterals) {
  struct Case {
    const char* text;
    double value;
  } cases[] = {{"3j", 3.0}, {"2.5j", 2.5}, {"1e3J", 1000.0}, {"0j", 0.0}, {"1_0j", 10.0}};
  for (auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::unique_ptr<Module> m;
    const Expr* e = returnedExpr(c.text, m);
    ASSERT_KIND(FloatLit, e);
    EXPECT_EQ(dyn_cast<FloatLit>(e)->value, c.value);
    EXPECT_TRUE(dyn_cast<FloatLit>(e)->imaginary);
  }
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("-2j", m);
  ASSERT_KIND(Unary, e);
  EXPECT_TRUE(isComplexLiteral(*returnedExpr("3 - 4j", m)));
  EXPECT_FALSE(isComplexLiteral(*returnedExpr("3 - 4", m)));
}

TEST(Parse, BooleanLiterals) {
  std::unique_ptr<Module> m;
  const Expr* e = returnedExpr("True or False", m);
  ASSERT_KIND(Logical, e);
  auto* l = dyn_cast<Logical>(e);
  EXPECT_FALSE(l->isAnd);
  ASSERT_KIND(BoolLit, l->lhs.get());
  EXPECT_TRUE(dyn_cast<BoolLit>(l->lhs.get())->value);
  ASSERT_KIND(BoolLit, l->rhs.get());
  EXPECT_FALSE(dyn_cast<BoolLit>(l->rhs.get())->value);
}

/// The string literal in `print(LITERAL)`.
std::string printedString(const std::string& literal) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f():\n    print(" + literal + ")\n", m);
  if (!f.body || f.body->stmts.empty()) return "<no statement>";
  auto* s = dyn_cast<ExprStmt>(stmtAt(f.body.get(), 0));
  if (!s) return "<not an expression statement>";
  auto* c = dyn_cast<Call>(s->expr.get());
  if (!c || c->args.size() != 1) return "<not a call with one argument>";
  auto* str = dyn_cast<StrLit>(c->args[0].get());
  return str ? str->value : "<not a string>";
}

TEST(Parse, StringEscapes) {
  EXPECT_EQ(printedString(R"("plain")"), "plain");
  EXPECT_EQ(printedString(R"('single')"), "single");
  EXPECT_EQ(printedString(R"("a\tb\nc\rd")"), "a\tb\nc\rd");
  EXPECT_EQ(printedString(R"("q\"q\'q\\q")"), "q\"q'q\\q");
  EXPECT_EQ(printedString(R"('it\'s')"), "it's");
  EXPECT_EQ(printedString(R"("\q")"), "\\q");  // unknown escapes stay, as in Python
  EXPECT_EQ(printedString(R"(r"\n\t")"), "\\n\\t");
  EXPECT_EQ(printedString("\"\"\"two\nlines\"\"\""), "two\nlines");
  EXPECT_EQ(printedString("\"a\\\nb\""), "ab");  // backslash-newline joins lines
  EXPECT_EQ(printedString(R"("\0")"), std::string(1, '\0'));
}

TEST(Parse, NumericStringEscapes) {
  // Python reads "\x41" as "A", "\101" as "A", "\012" as a newline,
  // "\u00e9" as "é" and "\a\b\f\v" as BEL, BS, FF and VT; so must the
  // lowering, or print() output differs from the Python reference run.
  EXPECT_EQ(printedString(R"("\x41")"), "A");
  EXPECT_EQ(printedString(R"("\101")"), "A");
  EXPECT_EQ(printedString(R"("\012")"), "\n");
  EXPECT_EQ(printedString(R"("\u00e9")"), "\xc3\xa9");
  EXPECT_EQ(printedString(R"("\a\b\f\v")"), "\a\b\f\v");
}

// ---- the subset: unsupported constructs are named where they are -------------------------------

TEST(Unsupported, ClassDefinition) {
  expectError("from pydd import *\nclass C:\n    pass\n", 2, 1, "class definitions are not supported in pydd kernels");
}

TEST(Unsupported, Lambda) {
  expectError("def f():\n    g = lambda v: v\n", 2, 9, "lambda expressions are not supported in pydd kernels");
}

TEST(Unsupported, DictComprehension) {
  expectError("def f():\n    y = {v: v for v in range(3)}\n", 2, 9, "dict comprehensions are not supported in pydd kernels");
}

TEST(Unsupported, BareGenerator) {
  expectError("def f():\n    y = (v for v in range(3))\n", 2, 9,
              "generator expressions outside a call are not supported in pydd kernels");
}

TEST(Unsupported, With) {
  expectError("def f():\n    x = 1\n    with open(\"f\") as h:\n        pass\n", 3, 5,
              "'with' statements are not supported in pydd kernels");
}

TEST(Unsupported, Try) {
  expectError("def f():\n    try:\n        pass\n    except Exception:\n        pass\n", 2, 5,
              "'try' statements are not supported in pydd kernels");
}

TEST(Unsupported, Global) {
  expectError("def f():\n    global q\n", 2, 5, "'global' declarations are not supported in pydd kernels");
}

TEST(Unsupported, Decorator) {
  expectError("@jit\ndef f():\n    pass\n", 1, 1, "decorators are not supported in pydd kernels");
}

TEST(Unsupported, StarArgs) {
  expectError("def f(a: int, *args):\n    pass\n", 1, 15, "star-arguments are not supported in pydd kernels");
  expectError("def f(**kw):\n    pass\n", 1, 7, "keyword star-arguments are not supported in pydd kernels");
}

TEST(Unsupported, DefaultValues) {
  expectError("def f(a: int, b: int = n):\n    pass\n", 1, 24,
              "a default parameter value must be a constant (a number, True or False) in pydd kernels");
  expectError("def f(b=3):\n    pass\n", 1, 7, "parameter 'b' needs a type annotation, e.g. 'b: float64'");
  expectError("def f(a: int = 1, b: int):\n    pass\n", 1, 19, "non-default argument follows default argument");
}

TEST(Unsupported, UntypedParameter) {
  expectError("def f(a: int, n):\n    pass\n", 1, 15, "parameter 'n' needs a type annotation, e.g. 'n: float64'");
}

TEST(Unsupported, FString) {
  expectError("def f(x: int):\n    print(f\"{x}\")\n", 2, 11, "f-strings are not supported in pydd kernels");
}

TEST(Subscripts, SlicesKeepTheirParts) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(float64, 2)):\n    B = A[1:3, ::-1]\n    C = A[:, j]\n", m);
  auto& b = static_cast<const Assign&>(*f.body->stmts[0]);
  auto& x = static_cast<const Index&>(*b.value);
  ASSERT_EQ(x.indices.size(), 2u);
  auto* s0 = dyn_cast<Slice>(x.indices[0].get());
  ASSERT_NE(s0, nullptr);
  EXPECT_TRUE(s0->start && s0->stop && !s0->step);
  auto* s1 = dyn_cast<Slice>(x.indices[1].get());
  ASSERT_NE(s1, nullptr);
  EXPECT_TRUE(!s1->start && !s1->stop && s1->step);
  auto& c = static_cast<const Index&>(*static_cast<const Assign&>(*f.body->stmts[1]).value);
  EXPECT_TRUE(isa<Slice>(*c.indices[0]));
  EXPECT_TRUE(isa<VarRef>(*c.indices[1]));
}

TEST(Subscripts, AugmentedSliceAssignmentEvaluatesBoundsOnce) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(float64)):\n    A[g():n] += 1.0\n", m);
  // index_0 = g(); A[index_0:n] = A[index_0:n] + 1.0
  ASSERT_EQ(f.body->stmts.size(), 2u);
  auto& a = static_cast<const Assign&>(*f.body->stmts[1]);
  EXPECT_TRUE(a.augmented);
  auto& target = static_cast<const Index&>(*a.targets[0]);
  auto* sl = dyn_cast<Slice>(target.indices[0].get());
  ASSERT_NE(sl, nullptr);
  EXPECT_TRUE(isa<VarRef>(*sl->start));
}

TEST(Calls, MethodCallsCarryTheirReceiverFirst) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(A: Array(float64)):\n    A.fill(0.0)\n", m);
  auto& c = static_cast<const Call&>(*static_cast<const ExprStmt&>(*f.body->stmts[0]).expr);
  EXPECT_TRUE(c.isMethod);
  EXPECT_EQ(c.callee, "fill");
  ASSERT_EQ(c.args.size(), 2u);
  EXPECT_TRUE(isa<VarRef>(*c.args[0]));
}

TEST(Operators, MembershipAndMatrixProduct) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f(x: int, y: int):\n    a = x in y\n    b = x not in y\n    c = x @ y\n", m);
  auto cmp = [&](size_t i) { return static_cast<const Compare&>(*static_cast<const Assign&>(*f.body->stmts[i]).value).ops[0]; };
  EXPECT_EQ(cmp(0), CmpOp::In);
  EXPECT_EQ(cmp(1), CmpOp::NotIn);
  auto& c = static_cast<const Binary&>(*static_cast<const Assign&>(*f.body->stmts[2]).value);
  EXPECT_EQ(c.op, BinaryOp::MatMul);
}

TEST(Literals, DictLiteral) {
  std::unique_ptr<Module> m;
  const Function& f = parseFunction("def f():\n    d = {1: 2.0, 3: 4.0}\n", m);
  auto* d = dyn_cast<DictLit>(static_cast<const Assign&>(*f.body->stmts[0]).value.get());
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->keys.size(), 2u);
  EXPECT_EQ(d->values.size(), 2u);
}

TEST(Unsupported, IsComparison) {
  expectError("def f(x: int, y: int):\n    if x is y:\n        pass\n", 2, 10,
              "the 'is' operator is not supported in pydd kernels");
}

TEST(Unsupported, NestedFunction) {
  expectError("def f():\n    x = 1\n    def g():\n        pass\n", 3, 5, "nested functions are not supported in pydd kernels");
}

TEST(Unsupported, ImportOtherThanPyddOrNumpy) {
  expectError("import scipy\ndef f():\n    pass\n", 1, 8, "only numpy and pydd can be imported in pydd kernels");
  expectError("import numpy as np, math\n", 1, 21, "only numpy and pydd can be imported in pydd kernels");
  expectError("from scipy import sparse\n", 1, 1,
              "imports other than 'from pydd import ...' and 'from numpy import ...' are not supported");
  expectError("def f():\n    import numpy\n", 2, 5, "imports inside functions are not supported in pydd kernels");
}

TEST(Unsupported, TopLevelStatement) {
  expectError("def f():\n    pass\nx = 1\n", 3, 1,
              "only function definitions and 'from pydd import ...' may appear at the top level of a pydd file");
}

TEST(Unsupported, LoopElse) {
  expectError("def f(n: int):\n    for i in range(n):\n        pass\n    else:\n        pass\n", 4, 5,
              "'else' clauses on loops are not supported in pydd kernels");
}

TEST(Unsupported, CallOfAnExpression) {
  expectError("def f(A: Array(float64)):\n    (A)[0]()\n", 2, 5, "only named functions and methods can be called in pydd kernels");
}

TEST(Unsupported, SeveralErrorsAreAllReported) {
  Parsed p = parse("def f():\n    g = lambda v: v\n    global q\n");
  EXPECT_EQ(p.module, nullptr);
  EXPECT_EQ(p.errors, 2u);
  EXPECT_NE(p.messages.find("test.pydd:2:9: error: lambda"), std::string::npos) << p.messages;
  EXPECT_NE(p.messages.find("test.pydd:3:5: error: 'global'"), std::string::npos) << p.messages;
}

TEST(Unsupported, DiagnosticShowsTheLineAndACaret) {
  Parsed p = parse("def f():\n    y = {v for v in range(3)}\n");
  EXPECT_NE(p.messages.find("\n    y = {v for v in range(3)}\n        ^"), std::string::npos) << p.messages;
}

// ---- syntax errors ------------------------------------------------------------------------------

TEST(SyntaxError, ReportsALocation) {
  Parsed p = parse("def f(n: int):\n    x = (n +\n");
  EXPECT_EQ(p.module, nullptr);
  EXPECT_EQ(p.errors, 1u);
  EXPECT_NE(p.messages.find("test.pydd:2:"), std::string::npos) << p.messages;
  EXPECT_NE(p.messages.find("error: invalid syntax"), std::string::npos) << p.messages;
}

TEST(SyntaxError, MissingColon) {
  Parsed p = parse("def f(n: int):\n    pass\n\ndef g(n: int)\n    return n\n");
  EXPECT_EQ(p.module, nullptr);
  EXPECT_EQ(p.errors, 1u);
  EXPECT_NE(p.messages.find("test.pydd:4:"), std::string::npos) << p.messages;
  EXPECT_NE(p.messages.find("invalid syntax"), std::string::npos) << p.messages;
}

TEST(SyntaxError, AfterAPforTheColumnIsExact) {
  // The keyword rewrite must not shift the columns of later tokens:
  // tree-sitter puts the error on `i $ 2` (columns 13 to 17 of line 3).
  Parsed p = parse("def f(n: int):\n    pfor i in range(n):\n        x = i $ 2\n");
  EXPECT_EQ(p.module, nullptr);
  const std::string prefix = "test.pydd:3:";
  size_t at = p.messages.find(prefix);
  ASSERT_NE(at, std::string::npos) << p.messages;
  int col = std::atoi(p.messages.c_str() + at + prefix.size());
  EXPECT_GE(col, 13) << p.messages;
  EXPECT_LE(col, 17) << p.messages;
  EXPECT_NE(p.messages.find("error: invalid syntax"), std::string::npos) << p.messages;
}

// ---- CPython's lexical rules (Lexer.cpp) ------------------------------------------

LexError lexError(const std::string& src) {
  std::vector<StatementStart> starts;
  LexError e;
  EXPECT_FALSE(lexPython(src, starts, e)) << src;
  return e;
}

TEST(Lexer, StatementStartsAreLogicalLinesAndSemicolons) {
  std::vector<StatementStart> starts;
  LexError e;
  ASSERT_TRUE(lexPython("def f():\n    x = (1,\n  2); y = 3\n    z = '''a\nb'''\n", starts, e)) << e.message;
  ASSERT_EQ(starts.size(), 4u);
  expectLoc(starts[0].loc, 1, 1);
  expectLoc(starts[1].loc, 2, 5);
  expectLoc(starts[2].loc, 3, 7);
  expectLoc(starts[3].loc, 4, 5);
}

TEST(Lexer, IndentationAsCPythonChecksIt) {
  // A tab is 8 columns, and with tabs of width 1 the lines must compare alike.
  EXPECT_EQ(lexError("if x:\n        a\n\tb\n").message, "inconsistent use of tabs and spaces in indentation");
  EXPECT_EQ(lexError("if x:\n    a\n  b\n").message, "unindent does not match any outer indentation level");
  EXPECT_EQ(lexError("a\n  b\n").message, "unexpected indent");
  EXPECT_EQ(lexError("if x:\nb\n").message, "expected an indented block after line 1");
  EXPECT_EQ(lexError("if x:  # c\n\n").message, "expected an indented block after this ':'");
  std::vector<StatementStart> starts;
  LexError e;
  EXPECT_TRUE(lexPython("if x:\n\ta\n\tif y:\n\t\tb\n\n  # c\nc\n", starts, e)) << e.message;
}

TEST(Lexer, LiteralsAndCharacters) {
  EXPECT_EQ(lexError("x = 0777\n").message.substr(0, 12), "leading zero");
  EXPECT_EQ(lexError("x = 1__0\n").message, "invalid decimal literal");
  EXPECT_EQ(lexError("x = 0x\n").message, "invalid hexadecimal literal");
  EXPECT_EQ(lexError("x = 1e\n").message, "invalid decimal literal");
  EXPECT_EQ(lexError("x = ur'a'\n").message, "invalid syntax");
  EXPECT_EQ(lexError("x = 'a\n").message, "unterminated string literal");
  EXPECT_EQ(lexError("x = (1]\n").message, "closing parenthesis ']' does not match opening parenthesis '('");
  EXPECT_EQ(lexError("x = $\n").message, "invalid syntax");
  EXPECT_EQ(lexError(std::string("x = 1\0\n", 7)).message, "source code cannot contain null bytes");
  EXPECT_EQ(lexError("x = '\xff'\n").message, "invalid UTF-8 byte 0xff");
  EXPECT_EQ(lexError("x = " + std::string(201, '(')).message, "too many nested parentheses");
  std::vector<StatementStart> starts;
  LexError e;
  EXPECT_TRUE(lexPython("x = 00 + 0_0 + 09.5 + 1_000j + 0x_f + .5e-3 + 1if y else 2\ns = rb'a' + '\xc3\xa9'\n", starts, e))
      << e.message;
}

TEST(Lexer, CarriageReturnsEndLines) {
  // A comment ended by a lone CR used to swallow the whole file.
  Parsed p = parse("# c\rdef f(n: int) -> int:\r\n    return m\r");
  ASSERT_NE(p.module, nullptr) << p.messages;
  ASSERT_EQ(p.module->functions.size(), 1u);
  ASSERT_EQ(p.module->functions[0]->body->stmts.size(), 1u);
  expectLoc(p.module->functions[0]->body->stmts[0]->loc, 3, 5);
}

// ---- parseTypeText ---------------------------------------------------------------------------

TEST(TypeText, Scalars) {
  EXPECT_EQ(parseTypeText("float64"), Type::float64());
  EXPECT_EQ(parseTypeText("float"), Type::float64());
  EXPECT_EQ(parseTypeText("double"), Type::float64());
  EXPECT_EQ(parseTypeText("float32"), Type::float32());
  EXPECT_EQ(parseTypeText("int"), Type::int64());
  EXPECT_EQ(parseTypeText("int64"), Type::int64());
  EXPECT_EQ(parseTypeText("int32"), Type::int32());
  EXPECT_EQ(parseTypeText("bool"), Type::boolTy());
  EXPECT_EQ(parseTypeText("  int32  "), Type::int32());
}

TEST(TypeText, Arrays) {
  EXPECT_EQ(parseTypeText("Array(int32, 2)"), Type::array(ScalarKind::Int32, 2));
  EXPECT_EQ(parseTypeText("Array(float32)"), Type::array(ScalarKind::Float32, 1));
  EXPECT_EQ(parseTypeText("Array(double,3)"), Type::array(ScalarKind::Float64, 3));
  EXPECT_EQ(parseTypeText("Array( int , 8 )"), Type::array(ScalarKind::Int64, 8));
  EXPECT_EQ(parseTypeText("Array(uint8, 2)"), Type::array(ScalarKind::UInt8, 2));
  EXPECT_EQ(parseTypeText("int8"), Type::scalar(ScalarKind::Int8));
  EXPECT_EQ(parseTypeText("List(uint32)"), Type::list(Type::scalar(ScalarKind::UInt32)));
}

TEST(TypeText, Rejections) {
  EXPECT_TRUE(parseTypeText("Array(foo)").isUnknown());
  EXPECT_TRUE(parseTypeText("Array(int, 9)").isUnknown());
  EXPECT_TRUE(parseTypeText("Array(int, 0)").isUnknown());
  EXPECT_TRUE(parseTypeText("Array(int, 2, 3)").isUnknown());
  EXPECT_TRUE(parseTypeText("Array(int").isUnknown());
  EXPECT_TRUE(parseTypeText("Array").isUnknown());
  EXPECT_TRUE(parseTypeText("int128").isUnknown());
  EXPECT_TRUE(parseTypeText("uint").isUnknown());
  EXPECT_TRUE(parseTypeText("Float64").isUnknown());
  EXPECT_TRUE(parseTypeText("").isUnknown());
  EXPECT_TRUE(parseTypeText("List(int64, int64)").isUnknown());
  EXPECT_TRUE(parseTypeText("Dict(int64)").isUnknown());
  EXPECT_TRUE(parseTypeText("Heap()").isUnknown());
  EXPECT_TRUE(parseTypeText("List(int64) x").isUnknown());
}

TEST(TypeText, Containers) {
  EXPECT_EQ(parseTypeText("List(int64)"), Type::list(Type::int64()));
  EXPECT_EQ(parseTypeText("List(Array(float32, 2))"), Type::list(Type::array(ScalarKind::Float32, 2)));
  EXPECT_EQ(parseTypeText("Dict(int, float)"), Type::dict(Type::int64(), Type::float64()));
  EXPECT_EQ(parseTypeText("Heap(float64)"), Type::heap(Type::float64()));
  EXPECT_EQ(parseTypeText("Heap(float64, int32)"), Type::heap(Type::float64(), Type::int32()));
  EXPECT_EQ(parseTypeText("(int64, float64)"), Type::tuple({Type::int64(), Type::float64()}));
  EXPECT_EQ(parseTypeText("Tuple(int64, Array(bool))"), Type::tuple({Type::int64(), Type::array(ScalarKind::Bool, 1)}));
  EXPECT_EQ(parseTypeText("List(int64)").str(), "List(int64)");
  EXPECT_EQ(parseTypeText("Heap(float64, int32)").str(), "Heap(float64, int32)");
}

}  // namespace
