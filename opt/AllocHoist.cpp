#include "opt/AllocHoist.h"

#include <set>
#include <string>

#include "ir/Builder.h"
#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "opt/Loops.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

using NewArray = LibraryFunction::NewArray;

/// The allocation call of `x = zeros(...)`, or null.
const Call* allocationOf(const Stmt& s, std::string& var) {
  auto* a = dyn_cast<Assign>(&s);
  if (!a || a->targets.size() != 1 || !a->value || a->augmented) return nullptr;
  auto* v = dyn_cast<VarRef>(a->targets[0].get());
  auto* c = dyn_cast<Call>(a->value.get());
  if (!v || !c || !c->library || c->library->newArray == NewArray::No || !c->type.isArray()) return nullptr;
  var = v->name;
  return c;
}

/// How many statements in `s` assign the variable `var`.
unsigned assignmentsOf(const Stmt& s, const std::string& var) {
  struct Counter : Visitor {
    using Visitor::visit;
    const std::string& name;
    unsigned count = 0;
    explicit Counter(const std::string& n) : name(n) {}
    void visit(const Stmt& st) override {
      if (auto* f = dyn_cast<For>(&st); f && f->var == name) ++count;
      if (auto* a = dyn_cast<Assign>(&st))
        for (auto& t : a->targets)
          if (auto* v = dyn_cast<VarRef>(t.get()); v && v->name == name) ++count;
      visitChildren(st);
    }
  } counter(var);
  counter.visit(s);
  return counter.count;
}

bool callsKernelFunctions(const Stmt& s) {
  struct Finder : Visitor {
    using Visitor::visit;
    bool found = false;
    void visit(const Expr& e) override {
      if (auto* c = dyn_cast<Call>(&e); c && c->target != CallTarget::Library) found = true;
      visitChildren(e);
    }
  } finder;
  finder.visit(s);
  return finder.found;
}

/// The statement that refills the reused array, or null for empty().
StmtPtr refill(const Call& alloc, const std::string& var, SourceLoc loc) {
  ExprPtr value;
  switch (alloc.library->newArray) {
    case NewArray::Zeros: value = build::intLit(loc, 0); break;
    case NewArray::Ones: value = build::intLit(loc, 1); break;
    case NewArray::FillArgument: value = cloneExpr(*alloc.args[1]); break;
    default: return nullptr;
  }
  std::vector<ExprPtr> args;
  args.push_back(build::var(loc, var, alloc.type));
  args.push_back(std::move(value));
  auto call = build::libraryCall(loc, lookupLibraryFunction("fill"), "fill", std::move(args), Type::voidTy());
  return std::make_unique<ExprStmt>(loc, std::move(call));
}

class AllocHoist : public StmtMutator {
 public:
  explicit AllocHoist(PassContext& ctx) : Ctx(ctx) {}

  std::vector<StmtPtr> mutateStmt(StmtPtr s) override {
    mutateChildren(*s);  // inner loops first
    std::vector<StmtPtr> out;
    // Not out of a pfor or a fused nest that may run on all threads: their
    // iterations run at once, each needs its own array.
    bool parallel = s->kind == StmtKind::For && (cast<For>(*s).parallel || cast<For>(*s).independent);
    if ((s->kind == StmtKind::For || s->kind == StmtKind::While) && !parallel && !mayCopyReferences(*s) &&
        !callsKernelFunctions(*s)) {
      if (ExprPtr guard = loopEntryTest(*s, Ctx.options.boundsCheck)) {
        std::vector<StmtPtr> hoisted = hoistFrom(*s);
        if (!hoisted.empty()) {
          SourceLoc loc = s->loc;
          hoisted.push_back(std::move(s));
          out.push_back(build::ifThen(loc, std::move(guard), std::move(hoisted)));
          return out;
        }
      }
    }
    out.push_back(std::move(s));
    return out;
  }

 private:
  std::vector<StmtPtr> hoistFrom(Stmt& loop) {
    Block& body = *(loop.kind == StmtKind::For ? cast<For>(loop).body : cast<While>(loop).body);
    std::set<std::string> assigned = assignedVars(loop), seen;
    if (auto* f = dyn_cast<For>(&loop)) seen.insert(f->var);
    std::vector<StmtPtr> hoisted;
    for (auto& s : body.stmts) {
      std::string var;
      const Call* alloc = allocationOf(*s, var);
      if (alloc && !seen.count(var) && assignmentsOf(loop, var) == 1 && invariant(*alloc, assigned)) {
        SourceLoc loc = s->loc;
        StmtPtr fill = refill(*alloc, var, loc);
        hoisted.push_back(std::move(s));
        s = fill ? std::move(fill) : std::make_unique<Pass>(loc);
        ++Ctx.stats["alloc: allocations hoisted"];
        continue;
      }
      // Past a statement that may exit, raise, write memory, print or run
      // conditionally, what follows is no longer the top of every iteration.
      bool stop = s->kind == StmtKind::Break || s->kind == StmtKind::Continue || s->kind == StmtKind::Return;
      forEachPart(*s, [&](const Expr& e) {
        stop = stop || hasSideEffects(e) || mayRaise(e, Ctx.options.boundsCheck);
        collectReads(e, seen);
      }, [&](const Block&) { stop = true; });
      if (auto* a = dyn_cast<Assign>(s.get()))
        for (auto& t : a->targets) stop = stop || t->kind == ExprKind::Index;
      for (auto& name : assignedVars(*s)) seen.insert(name);
      if (stop) break;
    }
    return hoisted;
  }

  bool invariant(const Call& alloc, const std::set<std::string>& assigned) {
    if (hasSideEffects(alloc)) return false;
    std::set<std::string> reads;
    collectReads(alloc, reads);
    for (auto& r : reads)
      if (assigned.count(r)) return false;
    return true;
  }

  PassContext& Ctx;
};

}  // namespace

void hoistAllocations(Function& f, PassContext& context) {
  AllocHoist pass(context);
  pass.mutateBlock(*f.body);
}

}  // namespace pydd
