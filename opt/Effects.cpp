#include "opt/Effects.h"

#include "ir/Visitor.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

/// Whether `pred` holds for `e` or any expression nested in it.
template <typename Pred>
bool anyNode(const Expr& e, Pred&& pred) {
  if (pred(e)) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || anyNode(c, pred); });
  return found;
}

/// Whether `pred` holds for any expression in `s`, nested blocks included.
template <typename Pred>
bool anyExprIn(const Stmt& s, Pred&& pred) {
  bool found = false;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (auto* b = dyn_cast<Block>(&st)) {
      for (auto& c : b->stmts) walk(*c);
      return;
    }
    forEachPart(st, [&](const Expr& e) { found = found || anyNode(e, pred); },
                [&](const Block& b) { walk(b); });
  };
  walk(s);
  return found;
}

}  // namespace

bool containsBreak(const Block& b) {
  for (auto& s : b.stmts) {
    if (s->kind == StmtKind::Break) return true;
    if (s->kind == StmtKind::For || s->kind == StmtKind::While) continue;  // their breaks are their own
    bool found = false;
    forEachPart(*s, [](const Expr&) {}, [&](const Block& inner) { found = found || containsBreak(inner); });
    if (found) return true;
  }
  return false;
}

bool nodeHasSideEffects(const Expr& n) {
  auto* c = dyn_cast<Call>(&n);
  return c && (c->target != CallTarget::Library || (c->library && c->library->hasSideEffects()));
}

bool nodeMayRaise(const Expr& n, bool boundsCheck) {
  if (auto* b = dyn_cast<Binary>(&n)) {
    switch (b->op) {
      case BinaryOp::Div:
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
      case BinaryOp::Pow:
      case BinaryOp::Shl:
      case BinaryOp::Shr: return true;
      default: return false;
    }
  }
  // A dict subscript raises KeyError, a list one IndexError, and so does
  // building a view with an integer index out of range; an array element
  // is checked only with bounds checks on.
  if (auto* x = dyn_cast<Index>(&n)) return boundsCheck || !x->base->type.isArray() || !x->type.isScalar();
  if (auto* c = dyn_cast<Call>(&n)) {
    if (c->library && c->library->raisesOnlyOnAxis) {
      for (size_t i = 1; i < c->args.size(); ++i) {
        int64_t v;
        if (c->args[i]->type.isInteger() && !constantInt(*c->args[i], v)) return true;
      }
      return false;
    }
    return true;
  }
  return false;
}

bool nodeMayAllocate(const Expr& n) {
  if (n.kind == ExprKind::TupleLit || n.kind == ExprKind::DictLit) return holdsReference(n.type) || n.kind == ExprKind::DictLit;
  auto* c = dyn_cast<Call>(&n);
  if (!c) return false;
  if (c->target != CallTarget::Library) return true;
  return holdsReference(c->type) && !c->library->returnsView;
}

bool hasSideEffects(const Expr& e) { return anyNode(e, nodeHasSideEffects); }

bool readsElements(const Expr& e) {
  return anyNode(e, [](const Expr& n) { return n.kind == ExprKind::Index; });
}

bool mayRaise(const Expr& e, bool boundsCheck) {
  return anyNode(e, [&](const Expr& n) { return nodeMayRaise(n, boundsCheck); });
}

bool mayAllocate(const Expr& e) { return anyNode(e, nodeMayAllocate); }

bool holdsReference(const Type& t) {
  if (t.isTuple()) {
    for (auto& el : t.elems())
      if (holdsReference(el)) return true;
    return false;
  }
  return t.isReference();
}

void collectReads(const Expr& e, std::set<std::string>& names) {
  anyNode(e, [&](const Expr& n) {
    if (auto* v = dyn_cast<VarRef>(&n)) names.insert(v->name);
    return false;
  });
}

std::set<std::string> assignedVars(const Stmt& s) {
  struct Finder : Visitor {
    using Visitor::visit;
    std::set<std::string> names;
    void visit(const Stmt& st) override {
      if (auto* f = dyn_cast<For>(&st)) names.insert(f->var);
      if (auto* a = dyn_cast<Assign>(&st))
        for (auto& t : a->targets)
          if (auto* v = dyn_cast<VarRef>(t.get())) names.insert(v->name);
      visitChildren(st);
    }
  } finder;
  finder.visit(s);
  return finder.names;
}

void VarCounts::count(const Expr& e) {
  if (auto* v = dyn_cast<VarRef>(&e)) ++reads[v->name];
  forEachChild(e, [&](const Expr& c) { count(c); });
}

void VarCounts::count(const Stmt& s) {
  struct Counter : Visitor {
    using Visitor::visit;
    VarCounts& c;
    explicit Counter(VarCounts& counts) : c(counts) {}
    void visit(const Stmt& st) override {
      if (auto* f = dyn_cast<For>(&st)) ++c.binds[f->var];
      if (auto* a = dyn_cast<Assign>(&st)) {
        if (a->value) c.count(*a->value);
        for (auto& t : a->targets) {
          if (auto* v = dyn_cast<VarRef>(t.get())) ++c.binds[v->name];
          else c.count(*t);
        }
        return;
      }
      visitChildren(st);
    }
    void visit(const Expr& e) override { c.count(e); }
  } counter(*this);
  counter.visit(s);
}

std::string memoryKey(const Type& t) {
  // Arrays and sparse matrices share memory only with their own element
  // type; containers are keyed by their full type.
  if (t.isArray() || t.isSparse()) return std::string("elem:") + cxxScalarType(t.elem());
  return t.str();
}

std::set<std::string> writtenElementTypes(const Stmt& s) {
  struct Finder : Visitor {
    using Visitor::visit;
    std::set<std::string> keys;
    void visit(const Stmt& st) override {
      if (auto* a = dyn_cast<Assign>(&st)) {
        for (auto& t : a->targets) {
          if (auto* x = dyn_cast<Index>(t.get())) keys.insert(memoryKey(x->base->type));
          // `A += B` on an array updates A's memory in place.
          if (a->augmented && t->type.isArray()) keys.insert(memoryKey(t->type));
        }
      }
      visitChildren(st);
    }
    void visit(const Expr& e) override {
      if (auto* c = dyn_cast<Call>(&e)) {
        if (c->target != CallTarget::Library) {
          // A kernel function reaches no memory but its arguments' (there
          // are no globals): an array's or a sparse matrix's own, anything
          // from a container or tuple.
          for (auto& a : c->args)
            if (a->type.isArray() || a->type.isSparse()) keys.insert(memoryKey(a->type));
            else if (holdsReference(a->type)) keys.insert("*");
        } else if (c->library)
          for (size_t i = 0; i < c->args.size() && i < 32; ++i)
            if (c->library->writesArgs & (1u << i)) keys.insert(memoryKey(c->args[i]->type));
      }
      visitChildren(e);
    }
  } finder;
  finder.visit(s);
  return finder.keys;
}

bool doesIO(const Stmt& s) {
  return anyExprIn(s, [](const Expr& n) {
    auto* c = dyn_cast<Call>(&n);
    return c && c->library && c->library->io;
  });
}

bool alwaysReturns(const Block& b) {
  for (auto& s : b.stmts) {
    if (s->kind == StmtKind::Return) return true;
    if (auto* i = dyn_cast<If>(s.get()); i && i->elseBody && alwaysReturns(*i->thenBody) && alwaysReturns(*i->elseBody))
      return true;
    if (auto* w = dyn_cast<While>(s.get())) {
      auto* lit = dyn_cast<BoolLit>(w->cond.get());
      if (lit && lit->value && !containsBreak(*w->body)) return true;
    }
    if (auto* t = dyn_cast<Task>(s.get()); t && alwaysReturns(*t->body)) return true;
  }
  return false;
}

bool exitsEarly(const Block& b) {
  for (auto& s : b.stmts) {
    switch (s->kind) {
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Return:
        return true;
      default: break;
    }
    bool found = false;
    forEachPart(*s, [](const Expr&) {}, [&](const Block& inner) {
      // A nested loop's own break and continue stay inside it; a return
      // anywhere leaves the loop.
      if (s->kind == StmtKind::For || s->kind == StmtKind::While) {
        struct Returns : Visitor {
          using Visitor::visit;
          bool found = false;
          void visit(const Stmt& st) override {
            found = found || st.kind == StmtKind::Return;
            visitChildren(st);
          }
        } r;
        r.visit(inner);
        found = found || r.found;
      } else {
        found = found || exitsEarly(inner);
      }
    });
    if (found) return true;
  }
  return false;
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  if (auto* v = dyn_cast<VarRef>(&e); v && names.count(v->name)) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || mentions(c, names); });
  return found;
}

bool mentions(const Stmt& s, const std::set<std::string>& names) {
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& t : b->stmts)
      if (mentions(*t, names)) return true;
    return false;
  }
  bool found = false;
  forEachPart(s, [&](const Expr& e) { found = found || mentions(e, names); },
              [&](const Block& b) { found = found || mentions(b, names); });
  return found;
}

}  // namespace pydd
