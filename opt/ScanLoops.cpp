#include "opt/ScanLoops.h"

#include <functional>
#include <set>
#include <string>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

constexpr int64_t kMostStep = int64_t{1} << 20;

bool isVar(const Expr& e, const std::string& name) {
  auto* v = dyn_cast<VarRef>(&e);
  return v && v->name == name;
}

/// The literal step of `i = i + k`, `i = k + i` or `i = i - k` (an `i += k`
/// after lowering) for an int64 variable i, else 0.
int64_t stepOf(const Stmt& s, std::string& index) {
  auto* a = dyn_cast<Assign>(&s);
  if (!a || a->targets.size() != 1 || !a->value) return 0;
  auto* target = dyn_cast<VarRef>(a->targets[0].get());
  auto* b = dyn_cast<Binary>(a->value.get());
  if (!target || !b || !target->type.isScalar() || target->type.elem() != ScalarKind::Int64) return 0;
  auto literal = [](const Expr& e) -> const IntLit* { return dyn_cast<IntLit>(&e); };
  int64_t k = 0;
  if (b->op == BinaryOp::Add && isVar(*b->lhs, target->name) && literal(*b->rhs)) k = literal(*b->rhs)->value;
  else if (b->op == BinaryOp::Add && isVar(*b->rhs, target->name) && literal(*b->lhs)) k = literal(*b->lhs)->value;
  else if (b->op == BinaryOp::Sub && isVar(*b->lhs, target->name) && literal(*b->rhs)) k = -literal(*b->rhs)->value;
  if (k == 0 || k > kMostStep || k < -kMostStep) return 0;
  index = target->name;
  return k;
}

/// Whether `e` calls only library functions of scalars and queries of a
/// value's header (`len(a)`): no kernel function (which could recurse), no
/// function whose work grows with an array.
bool boundedCalls(const Expr& e) {
  if (auto* c = dyn_cast<Call>(&e)) {
    if (c->target != CallTarget::Library || !c->library) return false;
    if (!c->library->readsHeaderOnly)
      for (auto& a : c->args)
        if (!a->type.isScalar()) return false;
  }
  bool ok = true;
  forEachChild(e, [&](const Expr& c) { ok = ok && boundedCalls(c); });
  return ok;
}

/// Whether the body may be a scan's: no loop, task or `continue`, and only
/// bounded calls.
bool boundedBody(const Block& b) {
  bool ok = true;
  auto onExpr = [&](const Expr& e) { ok = ok && boundedCalls(e); };
  std::function<void(const Stmt&)> onStmt = [&](const Stmt& s) {
    switch (s.kind) {
      case StmtKind::While:
      case StmtKind::For:
      case StmtKind::Task:
      case StmtKind::Continue: ok = false; return;
      default: break;
    }
    forEachPart(s, onExpr, [&](const Block& inner) {
      for (auto& c : inner.stmts) onStmt(*c);
    });
  };
  for (auto& s : b.stmts) onStmt(*s);
  return ok;
}

/// Finds an element read `a[..., index, ...]` of a dense array variable
/// that `rebound` does not hold, among the nodes evaluated whenever `e` is
/// (`always`) or whenever the condition `e` is true (`!always`).
class ScanRead {
 public:
  ScanRead(const std::string& index, const std::set<std::string>& rebound) : IndexName(index), Rebound(rebound) {}

  bool whenTrue(const Expr& e) const {
    if (auto* l = dyn_cast<Logical>(&e)) return l->isAnd ? whenTrue(*l->lhs) || whenTrue(*l->rhs) : always(*l->lhs);
    if (auto* c = dyn_cast<Compare>(&e)) {
      // A chain that holds has evaluated all its operands.
      for (auto& o : c->operands)
        if (always(*o)) return true;
      return false;
    }
    return always(e);
  }

 private:
  bool always(const Expr& e) const {
    if (isScanRead(e)) return true;
    if (auto* l = dyn_cast<Logical>(&e)) return always(*l->lhs);
    if (auto* s = dyn_cast<Select>(&e)) return always(*s->cond);
    if (auto* c = dyn_cast<Compare>(&e)) return always(*c->operands[0]) || always(*c->operands[1]);
    bool found = false;
    forEachChild(e, [&](const Expr& c) { found = found || always(c); });
    return found;
  }

  bool isScanRead(const Expr& e) const {
    auto* x = dyn_cast<Index>(&e);
    auto* base = x ? dyn_cast<VarRef>(x->base.get()) : nullptr;
    if (!base || !base->type.isArray() || !x->type.isScalar() || Rebound.count(base->name)) return false;
    for (auto& i : x->indices)
      if (isVar(*i, IndexName)) return true;
    return false;
  }

  const std::string& IndexName;
  const std::set<std::string>& Rebound;
};

/// The scan index and step of `w`, or a step of 0 when it is no scan: the
/// first variable its body steps (and assigns nowhere else) at which its
/// condition reads.
int64_t scanStep(const While& w, std::string& index) {
  if (!boundedCalls(*w.cond) || !boundedBody(*w.body)) return 0;
  const std::set<std::string> rebound = assignedVars(*w.body);
  VarCounts counts;
  counts.count(*w.body);
  for (auto& s : w.body->stmts) {
    std::string name;
    const int64_t step = stepOf(*s, name);
    if (step && counts.binds[name] == 1 && ScanRead(name, rebound).whenTrue(*w.cond)) {
      index = name;
      return step;
    }
  }
  return 0;
}

}  // namespace

void markScanLoops(Function& f, PassContext& context) {
  markOutermost(*f.body, [&](Stmt& s) {
    auto* w = dyn_cast<While>(&s);
    std::string index;
    const int64_t step = w ? scanStep(*w, index) : 0;
    if (!step) return false;
    w->scanIndex = index;
    w->scanStep = step;
    ++context.stats["scan: while loops that step an index through an array"];
    return true;  // its body runs no loop
  });
}

}  // namespace pydd
