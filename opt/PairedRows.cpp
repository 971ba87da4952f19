#include "opt/PairedRows.h"

#include <map>
#include <set>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "opt/PrivateArrays.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

const VarRef* asVar(const Expr* e) { return e ? dyn_cast<VarRef>(e) : nullptr; }

/// `acc = value` with acc a variable: acc's name, else null.
const std::string* assignedScalar(const Stmt& s) {
  auto* a = dyn_cast<Assign>(&s);
  if (!a || !a->value || a->targets.size() != 1) return nullptr;
  auto* v = asVar(a->targets[0].get());
  return v && !v->type.isReference() ? &v->name : nullptr;
}

/// Whether `e` reads `array` other than as `array[i]`.
bool readsOtherElements(const Expr& e, const std::string& array, const std::string& i) {
  if (auto* x = dyn_cast<Index>(&e); x && x->indices.size() == 1) {
    auto* base = asVar(x->base.get());
    auto* at = asVar(x->indices[0].get());
    if (base && base->name == array && at && at->name == i) return false;
  }
  if (auto* v = dyn_cast<VarRef>(&e); v && v->name == array) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& child) { found = found || readsOtherElements(child, array, i); });
  return found;
}

class PairedRows {
 public:
  PairedRows(Function& f, PassContext& ctx) : F(f), Ctx(ctx), Private(privateArrays(f)) { counts.count(*f.body); }

  void run() {
    visitSequentialLoops(*F.body, [&](StmtPtr& s) {
      auto& loop = cast<For>(*s);
      if (!foldsRows(loop)) return false;
      loop.rowsInPairs = true;
      ++Ctx.stats["pairs: row loops run two rows at a time"];
      return true;
    });
  }

 private:
  Function& F;
  PassContext& Ctx;
  std::map<std::string, PrivateArray> Private;
  VarCounts counts;

  bool foldsRows(const For& f) {
    // for i in range(0, shape(S, 0), 1)
    const VarRef* matrix = rowsLoopMatrix(f);
    if (!matrix || f.parallel || f.body->stmts.size() != 3) return false;
    const std::string& i = f.var;
    const Stmt& init = *f.body->stmts[0];
    auto* rows = dyn_cast<For>(f.body->stmts[1].get());
    auto* store = dyn_cast<Assign>(f.body->stmts[2].get());
    const std::string* acc = assignedScalar(init);
    if (!acc || !rows || !store || !store->value || store->targets.size() != 1) return false;

    // for entry in S.row(i): j, v = entry; acc = STEP
    auto* row = rows->iterable ? dyn_cast<Call>(rows->iterable.get()) : nullptr;
    if (rows->isRange || rows->parallel || !row || !row->library || !row->library->yieldsEntries ||
        row->library->sparseAccess != SparseAccess::Rows || rows->body->stmts.size() != 2)
      return false;
    auto* rowOf = asVar(row->args[0].get());
    auto* rowIndex = asVar(row->args[1].get());
    if (!rowOf || rowOf->name != matrix->name || !rowIndex || rowIndex->name != i) return false;
    auto* unpack = dyn_cast<Assign>(rows->body->stmts[0].get());
    auto* entry = unpack ? asVar(unpack->value.get()) : nullptr;
    if (!entry || entry->name != rows->var || unpack->targets.size() != 2) return false;
    const Type& entryType = entry->type;
    std::set<std::string> bound = {i, rows->var, *acc};
    for (size_t k = 0; k < 2; ++k) {
      auto* t = asVar(unpack->targets[k].get());
      if (!t || !entryType.isTuple() || t->type != entryType.elems()[k] || !bound.insert(t->name).second) return false;
    }
    const std::string* stepped = assignedScalar(*rows->body->stmts[1]);
    if (!stepped || *stepped != *acc) return false;
    const Expr& initValue = *cast<Assign>(init).value;
    const Expr& stepValue = *cast<Assign>(*rows->body->stmts[1]).value;
    const Type& accType = cast<Assign>(init).targets[0]->type;
    if (initValue.type != accType || stepValue.type != accType) return false;

    // out[i] = FINAL, out private and 1-D
    auto* element = dyn_cast<Index>(store->targets[0].get());
    auto* out = element ? asVar(element->base.get()) : nullptr;
    auto* at = element && element->indices.size() == 1 ? asVar(element->indices[0].get()) : nullptr;
    auto priv = out ? Private.find(out->name) : Private.end();
    if (!at || at->name != i || priv == Private.end() || !out->type.isArray() || out->type.rank() != 1 ||
        out->name == matrix->name || bound.count(out->name) || bound.count(matrix->name))
      return false;
    std::set<std::string> outMemory = priv->second.views;
    outMemory.insert(out->name);
    const Expr& finalValue = *store->value;
    for (const Expr* e : {&initValue, &stepValue, &finalValue})
      if (hasSideEffects(*e)) return false;
    std::set<std::string> views = priv->second.views;
    if (mentions(initValue, {*acc}) || mentions(stepValue, outMemory) || mentions(initValue, views) ||
        mentions(finalValue, views) || readsOtherElements(initValue, out->name, i) ||
        readsOtherElements(finalValue, out->name, i))
      return false;
    // The entry and its parts are the row's own only inside the row loop:
    // after it they hold the last row's that had one.
    std::set<std::string> entryVars = {rows->var, cast<VarRef>(*unpack->targets[0]).name,
                                       cast<VarRef>(*unpack->targets[1]).name};
    if (mentions(initValue, entryVars) || mentions(finalValue, entryVars) || mentions(stepValue, {rows->var}))
      return false;

    // A run that raised is run again as written (sp_rows_in_pairs), which
    // must not find the rows' stores: else nothing may raise but a column.
    const bool rerunnable = !mentions(initValue, outMemory) && !mentions(finalValue, outMemory);
    if (!rerunnable)
      for (const Expr* e : {&initValue, &stepValue, &finalValue})
        if (mayRaise(*e, Ctx.options.boundsCheck)) return false;

    // Each bound only here and read only inside the loop: acc by INIT and
    // STEP, the others once.
    VarCounts inside;
    inside.count(f);
    for (const std::string& n : bound)
      if (counts.binds[n] != inside.binds[n] || counts.reads[n] != inside.reads[n]) return false;
    return inside.binds[*acc] == 2 && inside.binds[i] == 1 && inside.binds[rows->var] == 1;
  }
};

}  // namespace

void pairRowFolds(Function& f, PassContext& context) { PairedRows(f, context).run(); }

}  // namespace pydd
