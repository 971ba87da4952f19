// Unit tests for coldBranchLocals: which locals a rare branch (a fused
// loop's general path, emitted as a cold lambda) may declare itself. The
// branches are marked rare by hand here; in a build the fuse pass marks
// its fallbacks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "codegen/ColdLocals.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/IR.h"
#include "llvm/Support/MemoryBuffer.h"

namespace {

using namespace pydd;

/// The module of `source` (which must be accepted), with the else branch of
/// every top-level `if` of its first function marked rare.
std::unique_ptr<Module> withRareElses(const std::string& source) {
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(source, "test.pydd");
  Diagnostics diag("test.pydd", std::move(buf));
  auto m = parseModule(diag, "test");
  EXPECT_TRUE(m && analyzeModule(*m, diag));
  if (!m) return m;
  for (auto& s : m->functions[0]->body->stmts)
    if (auto* i = dyn_cast<If>(s.get())) i->rareElse = i->elseBody != nullptr;
  return m;
}

/// The names coldBranchLocals gives the else branch of top-level statement k.
std::vector<std::string> movedFrom(const Module& m, size_t k) {
  const Function& f = *m.functions[0];
  auto* i = dyn_cast<If>(f.body->stmts[k].get());
  EXPECT_TRUE(i && i->elseBody);
  auto all = coldBranchLocals(f);
  auto it = all.find(i->elseBody.get());
  return it == all.end() ? std::vector<std::string>{} : it->second;
}

using Names = std::vector<std::string>;

/// A function whose first if has a rare else branch, which the tests write.
const std::string kRareElse =
    "def f(n: int64) -> int64:\n"
    "    t = 0\n"
    "    if n > 0:\n"
    "        t = 1\n"
    "    else:\n";

TEST(ColdLocals, TemporariesAssignedFirstMove) {
  auto m = withRareElses(kRareElse +
      "        a = n + 1\n"
      "        b = a * 2\n"
      "        c = 0\n"
      "        for i in range(n):\n"
      "            c = c + i\n"
      "        t = b + c\n"
      "    return t\n");
  ASSERT_TRUE(m);
  // t is read after the if: it stays the function's.
  EXPECT_EQ(movedFrom(*m, 1), (Names{"a", "b", "c", "i"}));
}

TEST(ColdLocals, ValuesThatFlowBetweenRunsStay) {
  auto m = withRareElses(kRareElse +
      "        for i in range(n):\n"
      "            if i > 1:\n"
      "                w = v\n"
      "                t = w\n"
      "            v = i\n"
      "    return t\n");
  ASSERT_TRUE(m);
  // v is read in one iteration, as the previous one set it: it must keep
  // its value across the loop's iterations, so only w and i move.
  EXPECT_EQ(movedFrom(*m, 1), (Names{"i", "w"}));
}

TEST(ColdLocals, LocalsOfTheHotPathStay) {
  auto m = withRareElses(
      "def f(n: int64) -> int64:\n"
      "    k = 2\n"
      "    if n > 0:\n"
      "        k = n\n"
      "    else:\n"
      "        k = 0\n"
      "        x = 1\n"
      "    if n > 5:\n"
      "        y = 1\n"
      "    else:\n"
      "        y = 2\n"
      "        x = 3\n"
      "    return k\n");
  ASSERT_TRUE(m);
  // k is the hot path's too; x is in two rare branches; y in both branches.
  EXPECT_EQ(movedFrom(*m, 1), Names{});
  EXPECT_EQ(movedFrom(*m, 2), Names{});
}

}  // namespace
