#include "opt/Loops.h"

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "stdlib/Catalog.h"

namespace pydd {

/// Whether the loop may copy a reference into a second name or a container:
/// `b = a` of an array, a view of it, a container literal or write.
bool mayCopyReferences(const Stmt& loop) {
  struct Finder : Visitor {
    using Visitor::visit;
    bool found = false;
    void visit(const Stmt& s) override {
      if (auto* a = dyn_cast<Assign>(&s); a && a->value && holdsReference(a->value->type) &&
                                          a->value->kind != ExprKind::Call)
        found = true;  // a variable, a view, a tuple or a literal holding references
      if (auto* a = dyn_cast<Assign>(&s))
        for (auto& t : a->targets)
          if (auto* x = dyn_cast<Index>(t.get()); x && !x->base->type.isArray()) found = true;
      visitChildren(s);
    }
    void visit(const Expr& e) override {
      if (auto* c = dyn_cast<Call>(&e)) {
        if (c->target != CallTarget::Library || c->library->writesArgs) found = true;  // append, heappush...
        if (c->library && c->library->returnsView) found = true;
      }
      if (e.kind == ExprKind::TupleLit || e.kind == ExprKind::DictLit)
        if (holdsReference(e.type)) found = true;
      visitChildren(e);
    }
  } finder;
  finder.visit(loop);
  return finder.found;
}

ExprPtr shapeQuery(SourceLoc loc, ExprPtr array, int axis) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(array));
  args.push_back(build::intLit(loc, axis));
  return build::libraryCall(loc, lookupLibraryFunction("shape"), "shape", std::move(args), Type::int64());
}

ExprPtr loopEntryTest(const Stmt& loop, bool boundsCheck) {
  auto pure = [&](const Expr& e) { return !hasSideEffects(e) && !mayRaise(e, boundsCheck); };
  if (auto* f = dyn_cast<For>(&loop); f && !f->isRange) {
    // Over an array variable's elements: it runs when the array is not empty.
    auto* v = dyn_cast<VarRef>(f->iterable.get());
    if (!v || !v->type.isArray()) return nullptr;
    return build::compare(f->loc, CmpOp::Gt, shapeQuery(f->loc, cloneExpr(*v), 0), build::intLit(f->loc, 0));
  }
  if (auto* f = dyn_cast<For>(&loop)) {
    auto* step = dyn_cast<IntLit>(f->step.get());
    if (!f->isRange || !step || step->value == 0 || !pure(*f->start) || !pure(*f->stop)) return nullptr;
    return build::compare(f->loc, step->value > 0 ? CmpOp::Lt : CmpOp::Gt, cloneExpr(*f->start),
                          cloneExpr(*f->stop));
  }
  auto& w = cast<While>(loop);
  if (!pure(*w.cond)) return nullptr;
  return cloneExpr(*w.cond);
}

void appendGuardedLoop(std::vector<StmtPtr>& out, ExprPtr entryTest, std::vector<StmtPtr> hoisted, StmtPtr loop) {
  if (!entryTest) {
    for (auto& h : hoisted) out.push_back(std::move(h));
    out.push_back(std::move(loop));
    return;
  }
  SourceLoc loc = loop->loc;
  hoisted.push_back(std::move(loop));
  out.push_back(build::ifThen(loc, std::move(entryTest), std::move(hoisted)));
}

const VarRef* rowsLoopMatrix(const For& loop) {
  int64_t start, step, axis;
  auto* stop = loop.stop ? dyn_cast<Call>(loop.stop.get()) : nullptr;
  if (!loop.isRange || !constantInt(*loop.start, start) || start != 0 || !constantInt(*loop.step, step) || step != 1 ||
      !stop || !stop->library || stop->callee != "shape" || stop->args.size() != 2 ||
      !constantInt(*stop->args[1], axis) || axis != 0)
    return nullptr;
  auto* matrix = dyn_cast<VarRef>(stop->args[0].get());
  return matrix && matrix->type.isSparse() ? matrix : nullptr;
}

namespace {

void visitSequentialLoops(Block& b, bool inParallel, const std::function<bool(StmtPtr&)>& visit) {
  for (auto& s : b.stmts) {
    auto* loop = dyn_cast<For>(s.get());
    if (loop && !loop->parallel && !inParallel && visit(s)) continue;
    const bool parallel = inParallel || s->kind == StmtKind::Task || (loop && loop->parallel);
    if (auto* nested = dyn_cast<Block>(s.get())) {
      visitSequentialLoops(*nested, parallel, visit);
      continue;
    }
    forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { visitSequentialLoops(inner, parallel, visit); });
  }
}

}  // namespace

void visitSequentialLoops(Block& b, const std::function<bool(StmtPtr&)>& visit) {
  visitSequentialLoops(b, false, visit);
}

void markOutermost(Block& b, const std::function<bool(Stmt&)>& mark) {
  for (auto& s : b.stmts) {
    if (mark(*s)) continue;
    if (auto* nested = dyn_cast<Block>(s.get())) {
      markOutermost(*nested, mark);
      continue;
    }
    forEachPart(*s, [](ExprPtr&) {}, [&](Block& inner) { markOutermost(inner, mark); });
  }
}

}  // namespace pydd
