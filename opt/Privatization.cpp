#include "opt/Privatization.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/Visitor.h"
#include "opt/Effects.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// Calls `fn` on every expression of `s` and of the statements nested in
/// it; `inIsolated` tells whether the expression is inside an isolated
/// block (nested in `s`).
void forEachExpr(const Stmt& s, const std::function<void(const Expr&, bool inIsolated)>& fn, bool inIsolated = false) {
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& st : b->stmts) forEachExpr(*st, fn, inIsolated);
    return;
  }
  bool iso = inIsolated || (isa<Task>(s) && cast<Task>(s).taskKind == TaskKind::Isolated);
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    fn(e, iso);
    forEachChild(e, walk);
  };
  forEachPart(s, walk, [&](const Block& b) { forEachExpr(b, fn, iso); });
}

/// How many times `s` reads the variable `name` (assignment targets that
/// are the variable itself are not reads; an element store reads it).
unsigned readsOf(const Stmt& s, const std::string& name) {
  unsigned n = 0;
  forEachExpr(s, [&](const Expr& e, bool) {
    if (auto* v = dyn_cast<VarRef>(&e); v && v->name == name) ++n;
  });
  // forEachExpr sees a VarRef target as an expression: do not count it.
  std::function<void(const Stmt&)> targets = [&](const Stmt& st) {
    if (auto* a = dyn_cast<Assign>(&st))
      for (auto& t : a->targets)
        if (auto* v = dyn_cast<VarRef>(t.get()); v && v->name == name) --n;
    if (auto* b = dyn_cast<Block>(&st)) {
      for (auto& c : b->stmts) targets(*c);
      return;
    }
    forEachPart(st, [](const Expr&) {}, [&](const Block& b) { targets(b); });
  };
  targets(s);
  return n;
}

bool isVar(const Expr& e, const std::string& name) {
  auto* v = dyn_cast<VarRef>(&e);
  return v && v->name == name;
}

bool mentions(const Expr& e, const std::string& name) {
  std::set<std::string> reads;
  collectReads(e, reads);
  return reads.count(name) > 0;
}

/// The OpenMP reduction operator of `s = s OP e`, or "" when the
/// assignment is not such an update of `var`.
std::string reductionOp(const Assign& a, const std::string& var, bool boundsCheck) {
  if (a.targets.size() != 1 || !isVar(*a.targets[0], var) || !a.value || !a.value->type.isScalar()) return "";
  const Expr* v = a.value.get();
  // `s = int32(s + e)`: the sum computed in a wider type and narrowed back
  // wraps the same way in any order.
  if (auto* c = dyn_cast<Cast>(v); c && c->type == a.targets[0]->type && !c->type.isBool()) v = c->operand.get();
  if (auto* b = dyn_cast<Binary>(v)) {
    auto plain = [&](const Expr& x) { return isVar(x, var) || (isa<Cast>(x) && isVar(*cast<Cast>(x).operand, var)); };
    bool left = plain(*b->lhs) && !mentions(*b->rhs, var);
    bool right = plain(*b->rhs) && !mentions(*b->lhs, var);
    switch (b->op) {
      case BinaryOp::Add: return left || right ? "+" : "";
      case BinaryOp::Sub: return left ? "+" : "";  // each copy subtracts; partial results add
      case BinaryOp::Mul: return left || right ? "*" : "";
      case BinaryOp::BitAnd: return (left || right) && b->type.isInteger() ? "&" : "";
      case BinaryOp::BitOr: return (left || right) && b->type.isInteger() ? "|" : "";
      case BinaryOp::BitXor: return (left || right) && b->type.isInteger() ? "^" : "";
      default: return "";
    }
  }
  if (auto* l = dyn_cast<Logical>(v)) {
    // Each copy starts at the identity, so e runs where the sequential
    // short-circuit would have skipped it: only if that is unobservable.
    if (!isVar(*l->lhs, var) || mentions(*l->rhs, var) || hasSideEffects(*l->rhs) || mayRaise(*l->rhs, boundsCheck)) return "";
    return l->isAnd ? "&&" : "||";
  }
  if (auto* c = dyn_cast<Call>(v); c && c->library && c->library->ompReduction && c->args.size() == 2 &&
                                   c->args[0]->type.isScalar() && c->args[1]->type.isScalar()) {
    bool left = isVar(*c->args[0], var) && !mentions(*c->args[1], var);
    bool right = isVar(*c->args[1], var) && !mentions(*c->args[0], var);
    return left || right ? c->library->ompReduction : "";
  }
  return "";
}

/// Every Assign statement in `s` (nested ones included).
void forEachAssign(const Stmt& s, const std::function<void(const Assign&)>& fn) {
  if (auto* a = dyn_cast<Assign>(&s)) fn(*a);
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& c : b->stmts) forEachAssign(*c, fn);
    return;
  }
  forEachPart(s, [](const Expr&) {}, [&](const Block& b) { forEachAssign(b, fn); });
}

bool containsReturn(const Stmt& s) {
  if (s.kind == StmtKind::Return) return true;
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& c : b->stmts)
      if (containsReturn(*c)) return true;
    return false;
  }
  bool found = false;
  forEachPart(s, [](const Expr&) {}, [&](const Block& b) { found = found || containsReturn(b); });
  return found;
}

/// Definite assignment through one iteration of a loop body: which of the
/// variables in `tracked` may be read before the iteration assigns them.
class FirstReads {
 public:
  FirstReads(const std::set<std::string>& tracked) : Tracked(tracked) {}

  /// The first read of each variable read before assignment, in order.
  std::vector<std::pair<std::string, SourceLoc>> carried;
  /// Variables assigned on every path to the end of the iteration
  /// (including the paths that end at a `continue`).
  std::set<std::string> atEnd;

  void iteration(const Block& body, std::set<std::string> defined) {
    bool sawContinue = false;
    std::set<std::string> atContinue;
    ContinueSets = &atContinue;
    SawContinue = &sawContinue;
    bool falls = block(body, defined);
    if (falls && sawContinue) {
      std::set<std::string> both;
      std::set_intersection(defined.begin(), defined.end(), atContinue.begin(), atContinue.end(),
                            std::inserter(both, both.end()));
      atEnd = both;
    } else {
      atEnd = falls ? defined : atContinue;
    }
  }

 private:
  void read(const Expr& e, const std::set<std::string>& defined) {
    std::function<void(const Expr&)> walk = [&](const Expr& x) {
      if (auto* v = dyn_cast<VarRef>(&x); v && Tracked.count(v->name) && !defined.count(v->name) && !Reported.count(v->name)) {
        Reported.insert(v->name);
        carried.push_back({v->name, v->loc});
      }
      forEachChild(x, walk);
    };
    walk(e);
  }

  /// Returns whether control falls off the end of `b`.
  bool block(const Block& b, std::set<std::string>& defined) {
    for (auto& s : b.stmts)
      if (!stmt(*s, defined)) return false;
    return true;
  }

  bool stmt(const Stmt& s, std::set<std::string>& defined) {
    switch (s.kind) {
      case StmtKind::Block: return block(cast<Block>(s), defined);
      case StmtKind::Assign: {
        auto& a = cast<Assign>(s);
        if (a.value) read(*a.value, defined);
        for (auto& t : a.targets)
          if (!isa<VarRef>(*t)) read(*t, defined);
        for (auto& t : a.targets)
          if (auto* v = dyn_cast<VarRef>(t.get())) defined.insert(v->name);
        return true;
      }
      case StmtKind::ExprStmt: read(*cast<ExprStmt>(s).expr, defined); return true;
      case StmtKind::If: {
        auto& i = cast<If>(s);
        read(*i.cond, defined);
        std::set<std::string> t = defined, e = defined;
        bool ft = block(*i.thenBody, t);
        bool fe = i.elseBody ? block(*i.elseBody, e) : true;
        if (ft && fe) {
          defined.clear();
          std::set_intersection(t.begin(), t.end(), e.begin(), e.end(), std::inserter(defined, defined.end()));
        } else if (ft) {
          defined = t;
        } else if (fe) {
          defined = e;
        }
        return ft || fe;
      }
      case StmtKind::While: {
        auto& w = cast<While>(s);
        read(*w.cond, defined);
        std::set<std::string> inner = defined;
        nestedLoop(*w.body, inner);
        return true;  // it may run zero times: nothing more is defined
      }
      case StmtKind::For: {
        auto& f = cast<For>(s);
        for (auto* e : {f.start.get(), f.stop.get(), f.step.get(), f.iterable.get()})
          if (e) read(*e, defined);
        std::set<std::string> inner = defined;
        inner.insert(f.var);
        nestedLoop(*f.body, inner);
        return true;
      }
      case StmtKind::Return:
        if (auto& v = cast<Return>(s).value) read(*v, defined);
        return false;
      case StmtKind::Continue:
        if (LoopDepth == 0) {
          if (!*SawContinue) *ContinueSets = defined;
          else {
            std::set<std::string> both;
            std::set_intersection(defined.begin(), defined.end(), ContinueSets->begin(), ContinueSets->end(),
                                  std::inserter(both, both.end()));
            *ContinueSets = both;
          }
          *SawContinue = true;
        }
        return false;
      case StmtKind::Break: return false;  // not in a pfor (sema); an inner loop's
      case StmtKind::Pass: return true;
      case StmtKind::Task: return block(*cast<Task>(s).body, defined);
    }
    return true;
  }

  void nestedLoop(const Block& body, std::set<std::string>& defined) {
    ++LoopDepth;
    block(body, defined);
    --LoopDepth;
  }

  const std::set<std::string>& Tracked;
  std::set<std::string> Reported;
  std::set<std::string>* ContinueSets = nullptr;
  bool* SawContinue = nullptr;
  int LoopDepth = 0;
};

/// The container a call modifies, when it modifies a list, dict or heap
/// argument (append, heappush...).
const Expr* modifiedContainer(const Expr& e) {
  auto* c = dyn_cast<Call>(&e);
  if (!c || !c->library || !c->library->writesArgs) return nullptr;
  for (size_t i = 0; i < c->args.size() && i < 32; ++i) {
    const Type& t = c->args[i]->type;
    if ((c->library->writesArgs >> i & 1) && (t.isList() || t.isDict() || t.isHeap())) return c->args[i].get();
  }
  return nullptr;
}

std::string containerWord(const Type& t) { return t.isList() ? "list" : t.isDict() ? "dict" : "heap"; }

class Planner {
 public:
  Planner(const Function& f, ParallelPlan& plan, bool boundsCheck) : F(f), Plan(plan), BoundsCheck(boundsCheck) {}

  void run() {
    walk(*F.body, false);
  }

 private:
  void walk(const Stmt& s, bool insideParallel) {
    if (auto* b = dyn_cast<Block>(&s)) {
      for (auto& c : b->stmts) walk(*c, insideParallel);
      return;
    }
    if (auto* f = dyn_cast<For>(&s); f && f->parallel) {
      ParallelLoopPlan& p = Plan.loops[f];
      if (!p.collapsedIntoParent) planLoop(*f, p, insideParallel);
      walk(*f->body, insideParallel || p.parallel);
      return;
    }
    if (auto* t = dyn_cast<Task>(&s); t && t->taskKind == TaskKind::Async) {
      Plan.spawnsTasks[&F] = true;
      planTask(*t);
    }
    forEachPart(s, [](const Expr&) {}, [&](const Block& b) { walk(b, insideParallel); });
  }

  void warn(SourceLoc loc, const std::string& msg) { Plan.findings.push_back({loc, false, msg}); }
  void error(SourceLoc loc, const std::string& msg) { Plan.findings.push_back({loc, true, msg}); }

  /// Reads of `name` in the function outside `inside`.
  bool readOutside(const Stmt& inside, const std::string& name) {
    return readsOf(*F.body, name) > readsOf(inside, name);
  }

  /// Containers the body modifies that it did not create, outside isolated.
  void checkSharedContainers(const Block& body, const char* construct) {
    std::set<std::string> own = assignedVars(body);
    forEachExpr(body, [&](const Expr& e, bool inIsolated) {
      if (inIsolated) return;
      if (const Expr* c = modifiedContainer(e)) {
        auto* v = dyn_cast<VarRef>(c);
        if (v && own.count(v->name)) return;
        std::string name = v ? "'" + v->name + "'" : "a " + containerWord(c->type);
        error(e.loc, "modifying the shared " + containerWord(c->type) + " " + name + " in " + construct +
                         " races with the other " + (std::string(construct) == "an async block" ? "tasks" : "iterations") +
                         ": put it in an 'isolated:' block");
      }
    });
    // A dict store inserts keys: the same race.
    forEachAssign(body, [&](const Assign& a) {
      for (auto& t : a.targets)
        if (auto* x = dyn_cast<Index>(t.get()); x && x->base->type.isDict()) {
          auto* v = dyn_cast<VarRef>(x->base.get());
          if (v && own.count(v->name)) continue;
          if (insideIsolated(body, a)) continue;
          error(t->loc, "storing into the shared dict " + (v ? "'" + v->name + "'" : std::string("")) + " in " +
                            construct + " races with the others: put it in an 'isolated:' block");
        }
    });
  }

  static bool insideIsolated(const Block& body, const Assign& target) {
    bool found = false;
    std::function<void(const Stmt&, bool)> scan = [&](const Stmt& s, bool iso) {
      if (&s == &target && iso) found = true;
      bool inner = iso || (isa<Task>(s) && cast<Task>(s).taskKind == TaskKind::Isolated);
      if (auto* b = dyn_cast<Block>(&s)) {
        for (auto& c : b->stmts) scan(*c, inner);
        return;
      }
      forEachPart(s, [](const Expr&) {}, [&](const Block& b) { scan(b, inner); });
    };
    scan(body, false);
    return found;
  }

  void planLoop(const For& loop, ParallelLoopPlan& p, bool insideParallel) {
    checkSharedContainers(*loop.body, "a pfor loop");
    if (!loop.isRange) {
      p.reason = "a pfor over elements runs sequentially";
      return;
    }
    if (containsReturn(*loop.body)) {
      warn(loop.loc, "this pfor loop runs sequentially: its body holds a 'return'");
      p.reason = "its body returns";
      return;
    }
    std::set<std::string> assigned = assignedVars(*loop.body);
    assigned.insert(loop.var);

    // Reductions: every statement that mentions the variable updates it with
    // one operator.
    std::set<std::string> reductions;
    for (auto& v : assigned) {
      const Type* t = F.lookup(v);
      if (v == loop.var || !t || !t->isScalar()) continue;
      std::string op;
      unsigned updates = 0;
      bool ok = true;
      forEachAssign(*loop.body, [&](const Assign& a) {
        bool targets = false;
        for (auto& tg : a.targets) targets = targets || isVar(*tg, v);
        if (!targets) return;
        std::string o = reductionOp(a, v, BoundsCheck);
        if (o.empty() || (!op.empty() && o != op)) ok = false;
        op = o;
        ++updates;
      });
      // For loops with v as their variable are assignments too.
      std::function<void(const Stmt&)> loopVars = [&](const Stmt& s) {
        if (auto* f = dyn_cast<For>(&s); f && f->var == v) ok = false;
        if (auto* b = dyn_cast<Block>(&s)) for (auto& c : b->stmts) loopVars(*c);
        else forEachPart(s, [](const Expr&) {}, [&](const Block& b) { loopVars(b); });
      };
      loopVars(*loop.body);
      // Each update reads v once; any other read sees a partial value.
      if (ok && updates > 0 && readsOf(*loop.body, v) == updates) {
        reductions.insert(v);
        p.reductions.push_back({v, op});
      }
    }

    std::set<std::string> tracked;
    for (auto& v : assigned)
      if (!reductions.count(v)) tracked.insert(v);
    FirstReads reads(tracked);
    reads.iteration(*loop.body, {loop.var});
    for (auto& [v, loc] : reads.carried)
      warn(loc, "this pfor loop runs sequentially: '" + v +
                    "' is read before it is assigned in an iteration, so it carries a value from one iteration to "
                    "the next (and is not a reduction)");
    if (!reads.carried.empty()) {
      p.reason = "'" + reads.carried.front().first + "' is carried from one iteration to the next";
      p.reductions.clear();
      return;
    }
    for (auto& v : tracked) {
      if (!readOutside(loop, v)) {
        p.privates.push_back(v);
        continue;
      }
      if (!reads.atEnd.count(v)) {
        warn(loop.loc, "this pfor loop runs sequentially: '" + v +
                           "' is read after the loop but not assigned on every path through an iteration");
        p.reason = "'" + v + "' is not assigned in every iteration";
        p.privates.clear(), p.lastprivates.clear(), p.reductions.clear();
        return;
      }
      p.lastprivates.push_back(v);
    }
    if (insideParallel) {
      // OpenMP would run a nested region on one thread anyway; a plain loop
      // avoids its cost.
      p.reason = "inside a parallel loop";
      p.privates.clear(), p.lastprivates.clear(), p.reductions.clear();
      return;
    }
    p.parallel = true;
    p.coarse = hasCallsOrLoops(*loop.body);
    // Collapse a perfectly nested pfor whose bounds this loop does not change.
    if (loop.body->stmts.size() == 1)
      if (auto* inner = dyn_cast<For>(loop.body->stmts[0].get()); inner && inner->parallel && inner->isRange) {
        bool ok = isa<IntLit>(*inner->step);
        for (auto* e : {inner->start.get(), inner->stop.get()}) {
          std::set<std::string> r;
          collectReads(*e, r);
          for (auto& v : r) ok = ok && !assigned.count(v);
          ok = ok && !hasSideEffects(*e) && !mayRaise(*e, false);
        }
        if (ok && !containsReturn(*inner->body)) {
          p.collapse = 2;
          Plan.loops[inner].collapsedIntoParent = true;
          Plan.loops[inner].reason = "collapsed into the enclosing pfor";
          p.coarse = hasCallsOrLoops(*inner->body);
        }
      }
  }

  static bool hasCallsOrLoops(const Block& b) {
    bool found = false;
    std::function<void(const Stmt&)> scan = [&](const Stmt& s) {
      if (s.kind == StmtKind::For || s.kind == StmtKind::While) found = true;
      if (auto* bl = dyn_cast<Block>(&s)) {
        for (auto& c : bl->stmts) scan(*c);
        return;
      }
      forEachPart(s, [](const Expr&) {}, [&](const Block& inner) { scan(inner); });
    };
    scan(b);
    forEachExpr(b, [&](const Expr& e, bool) {
      if (auto* c = dyn_cast<Call>(&e); c && c->target == CallTarget::User) found = true;
    });
    return found;
  }

  void planTask(const Task& t) {
    checkSharedContainers(*t.body, "an async block");
    std::set<std::string> vars = assignedVars(*t.body);
    forEachExpr(*t.body, [&](const Expr& e, bool) {
      if (auto* v = dyn_cast<VarRef>(&e)) vars.insert(v->name);
    });
    std::vector<std::string>& captured = Plan.captures[&t];
    for (auto& v : vars) {
      if (!F.lookup(v)) continue;
      captured.push_back(v);
    }
    std::set<std::string> assigned = assignedVars(*t.body);
    for (auto& v : assigned) {
      const Type* ty = F.lookup(v);
      // The task's copy is lost: a problem only where the function reads
      // the variable outside its tasks (sibling tasks have their own).
      if (ty && readsOutsideTasks(*F.body, v) > 0)
        warn(t.loc, "'" + v + "' is assigned in this async block, which assigns its own copy (captured variables "
                              "are copied when the task is created): the assignment is not seen after the task");
    }
  }

  /// Reads of `name` outside every async block of the function.
  unsigned readsOutsideTasks(const Stmt& s, const std::string& name) {
    if (auto* t = dyn_cast<Task>(&s); t && t->taskKind == TaskKind::Async) return 0;
    if (auto* b = dyn_cast<Block>(&s)) {
      unsigned n = 0;
      for (auto& c : b->stmts) n += readsOutsideTasks(*c, name);
      return n;
    }
    unsigned n = 0;
    forEachPart(s, [&](const Expr& e) {
      std::function<void(const Expr&)> walk = [&](const Expr& x) {
        if (isVar(x, name)) ++n;
        forEachChild(x, walk);
      };
      walk(e);
    }, [&](const Block& b) { n += readsOutsideTasks(b, name); });
    if (auto* a = dyn_cast<Assign>(&s))
      for (auto& t : a->targets)
        if (isVar(*t, name)) --n;
    return n;
  }

  const Function& F;
  ParallelPlan& Plan;
  bool BoundsCheck;
};

}  // namespace

ParallelPlan planParallelism(const Module& m, bool boundsCheck) {
  ParallelPlan plan;
  for (auto& f : m.functions) Planner(*f, plan, boundsCheck).run();
  std::stable_sort(plan.findings.begin(), plan.findings.end(), [](const ParallelFinding& a, const ParallelFinding& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  // A nested pfor is planned with its own body and as part of the outer
  // one's: the same finding is reported once.
  plan.findings.erase(std::unique(plan.findings.begin(), plan.findings.end(),
                                  [](const ParallelFinding& a, const ParallelFinding& b) {
                                    return a.loc.line == b.loc.line && a.loc.col == b.loc.col && a.message == b.message;
                                  }),
                      plan.findings.end());
  return plan;
}

}  // namespace pydd
