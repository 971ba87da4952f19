#include "ir/Visitor.h"

namespace pydd {

void forEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::StrLit:
    case ExprKind::Var:
      return;
    case ExprKind::Unary: fn(static_cast<Unary&>(e).operand); return;
    case ExprKind::Binary: {
      auto& b = static_cast<Binary&>(e);
      fn(b.lhs);
      fn(b.rhs);
      return;
    }
    case ExprKind::Compare:
      for (auto& o : static_cast<Compare&>(e).operands) fn(o);
      return;
    case ExprKind::Logical: {
      auto& l = static_cast<Logical&>(e);
      fn(l.lhs);
      fn(l.rhs);
      return;
    }
    case ExprKind::Not: fn(static_cast<Not&>(e).operand); return;
    case ExprKind::Select: {
      auto& s = static_cast<Select&>(e);
      fn(s.cond);
      fn(s.trueValue);
      fn(s.falseValue);
      return;
    }
    case ExprKind::Call: {
      auto& c = static_cast<Call&>(e);
      for (auto& a : c.args) fn(a);
      for (auto& k : c.keywords) fn(k.value);
      return;
    }
    case ExprKind::Index: {
      auto& x = static_cast<Index&>(e);
      fn(x.base);
      for (auto& i : x.indices) fn(i);
      return;
    }
    case ExprKind::Attribute: fn(static_cast<Attribute&>(e).base); return;
    case ExprKind::Cast: fn(static_cast<Cast&>(e).operand); return;
    case ExprKind::TupleLit:
      for (auto& el : static_cast<TupleLit&>(e).elems) fn(el);
      return;
    case ExprKind::Slice: {
      auto& s = static_cast<Slice&>(e);
      for (ExprPtr* part : {&s.start, &s.stop, &s.step})
        if (*part) fn(*part);
      return;
    }
    case ExprKind::DictLit: {
      // Python evaluates each key before its value.
      auto& d = static_cast<DictLit&>(e);
      for (size_t i = 0; i < d.keys.size(); ++i) {
        fn(d.keys[i]);
        fn(d.values[i]);
      }
      return;
    }
  }
}

void forEachPart(Stmt& s, const std::function<void(ExprPtr&)>& onExpr,
                 const std::function<void(Block&)>& onBlock) {
  switch (s.kind) {
    case StmtKind::Block:
      onBlock(static_cast<Block&>(s));
      return;
    case StmtKind::Assign: {
      auto& a = static_cast<Assign&>(s);
      if (a.value) onExpr(a.value);
      for (auto& t : a.targets) onExpr(t);
      return;
    }
    case StmtKind::ExprStmt: onExpr(static_cast<ExprStmt&>(s).expr); return;
    case StmtKind::If: {
      auto& i = static_cast<If&>(s);
      onExpr(i.cond);
      onBlock(*i.thenBody);
      if (i.elseBody) onBlock(*i.elseBody);
      return;
    }
    case StmtKind::While: {
      auto& w = static_cast<While&>(s);
      onExpr(w.cond);
      onBlock(*w.body);
      return;
    }
    case StmtKind::For: {
      auto& f = static_cast<For&>(s);
      if (f.isRange) {
        onExpr(f.start);
        onExpr(f.stop);
        onExpr(f.step);
      } else {
        onExpr(f.iterable);
      }
      onBlock(*f.body);
      return;
    }
    case StmtKind::Return:
      if (auto& v = static_cast<Return&>(s).value) onExpr(v);
      return;
    case StmtKind::Task: onBlock(*static_cast<Task&>(s).body); return;
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Pass:
      return;
  }
}

void Visitor::visitChildren(const Expr& e) {
  forEachChild(const_cast<Expr&>(e), [&](ExprPtr& c) { visit(*c); });
}

void Visitor::visitChildren(const Stmt& s) {
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& c : b->stmts) visit(*c);
    return;
  }
  forEachPart(
      const_cast<Stmt&>(s), [&](ExprPtr& e) { visit(*e); }, [&](Block& b) { visit(b); });
}

void Mutator::mutateChildren(Expr& e) {
  forEachChild(e, [&](ExprPtr& c) { c = mutate(std::move(c)); });
}

void Mutator::mutateChildren(Stmt& s) {
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& c : b->stmts) mutate(*c);
    return;
  }
  forEachPart(
      s, [&](ExprPtr& e) { e = mutate(std::move(e)); }, [&](Block& b) { mutate(b); });
}

}  // namespace pydd
