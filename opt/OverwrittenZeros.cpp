#include "opt/OverwrittenZeros.h"

#include <set>
#include <string>

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// The call of `a = zeros(n)` (1-D: an integer extent), setting `array`.
Call* zerosOf(Stmt& s, std::string& array) {
  auto* assign = dyn_cast<Assign>(&s);
  if (!assign || assign->targets.size() != 1 || !assign->value) return nullptr;
  auto* target = dyn_cast<VarRef>(assign->targets[0].get());
  auto* call = dyn_cast<Call>(assign->value.get());
  if (!target || !call || call->target != CallTarget::Library || call->library != lookupLibraryFunction("zeros"))
    return nullptr;
  if (!target->type.isArray() || target->type.rank() != 1 || call->args.empty() || !call->args[0]->type.isScalar())
    return nullptr;
  array = target->name;
  return call;
}

bool isIntLiteral(const Expr* e, int64_t value) {
  auto* lit = dyn_cast<IntLit>(e);
  return lit && lit->value == value;
}

/// Whether `s` is `a[var] = value` with `value` not mentioning `a`.
bool storesAtLoopVar(const Stmt& s, const std::string& array, const std::string& var) {
  auto* assign = dyn_cast<Assign>(&s);
  if (!assign || assign->targets.size() != 1 || !assign->value || mentions(*assign->value, {array})) return false;
  auto* store = dyn_cast<Index>(assign->targets[0].get());
  if (!store || store->indices.size() != 1) return false;
  auto* base = dyn_cast<VarRef>(store->base.get());
  auto* index = dyn_cast<VarRef>(store->indices[0].get());
  return base && base->name == array && index && index->name == var && index->type == Type::int64();
}

/// Whether `loop` writes every element of `array` (extent `extent`) before
/// anything reads one; see the header.
bool overwritesWhole(const For& loop, const std::string& array, const std::string& extent) {
  if (!loop.isRange || loop.parallel || !isIntLiteral(loop.start.get(), 0) || !isIntLiteral(loop.step.get(), 1) ||
      !loop.stop || printExpr(*loop.stop) != extent)
    return false;
  if (assignedVars(*loop.body).count(loop.var) || exitsEarly(*loop.body)) return false;
  const Stmt* store = nullptr;
  for (auto& s : loop.body->stmts)
    if (!store && storesAtLoopVar(*s, array, loop.var)) store = s.get();
    else if (mentions(*s, {array})) return false;
  return store != nullptr;
}

/// Whether `s`, between the allocation and the loop, leaves the extent's
/// value and `array` alone: an assignment of names (not of elements) that
/// writes no memory (a list's pop could shorten the extent `len(L)`),
/// assigns none of the extent's variables and does not mention `array`.
bool keepsExtent(const Stmt& s, const std::string& array, const std::set<std::string>& extentVars) {
  auto* assign = dyn_cast<Assign>(&s);
  if (!assign || !assign->value || hasSideEffects(*assign->value) || mentions(s, {array})) return false;
  for (auto& t : assign->targets) {
    auto* v = dyn_cast<VarRef>(t.get());
    if (!v || extentVars.count(v->name)) return false;
  }
  return true;
}

class ZeroFills : public StmtMutator {
 public:
  explicit ZeroFills(PassContext& ctx) : Ctx(ctx) {}

  void mutate(Stmt& s) override {
    StmtMutator::mutate(s);
    if (auto* b = dyn_cast<Block>(&s)) rewrite(*b);
  }

 private:
  void rewrite(Block& b) {
    for (size_t k = 0; k < b.stmts.size(); ++k) {
      std::string array;
      Call* zeros = zerosOf(*b.stmts[k], array);
      if (!zeros) continue;
      const Expr& n = *zeros->args[0];
      std::set<std::string> extentVars;
      collectReads(n, extentVars);
      if (hasSideEffects(n) || extentVars.count(array)) continue;
      const std::string extent = printExpr(n);
      for (size_t j = k + 1; j < b.stmts.size(); ++j) {
        Stmt& s = *b.stmts[j];
        if (auto* loop = dyn_cast<For>(&s); loop && overwritesWhole(*loop, array, extent)) {
          zeros->library = lookupLibraryFunction("empty");
          zeros->callee = "empty";
          ++Ctx.stats["overwrite: zero fills removed"];
          break;
        }
        if (!keepsExtent(s, array, extentVars)) break;
      }
    }
  }

  PassContext& Ctx;
};

}  // namespace

void skipOverwrittenZeroFills(Function& f, PassContext& context) {
  ZeroFills rewriter(context);
  rewriter.mutate(*f.body);
}

}  // namespace pydd
