#include "ir/Visitor.h"

namespace pydd {
namespace {

// One definition of "the children of a node" for the const and the
// rewriting walks: N is Expr or const Expr, Fn receives each child slot.
template <typename N, typename Fn>
void childrenOf(N& e, Fn&& fn) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit:
    case ExprKind::StrLit:
    case ExprKind::Var:
      return;
    case ExprKind::Unary: fn(cast<Unary>(e).operand); return;
    case ExprKind::Binary: {
      auto& b = cast<Binary>(e);
      fn(b.lhs);
      fn(b.rhs);
      return;
    }
    case ExprKind::Compare:
      for (auto& o : cast<Compare>(e).operands) fn(o);
      return;
    case ExprKind::Logical: {
      auto& l = cast<Logical>(e);
      fn(l.lhs);
      fn(l.rhs);
      return;
    }
    case ExprKind::Not: fn(cast<Not>(e).operand); return;
    case ExprKind::Select: {
      auto& s = cast<Select>(e);
      fn(s.cond);
      fn(s.trueValue);
      fn(s.falseValue);
      return;
    }
    case ExprKind::Call: {
      auto& c = cast<Call>(e);
      for (auto& a : c.args) fn(a);
      for (auto& k : c.keywords) fn(k.value);
      return;
    }
    case ExprKind::Index: {
      auto& x = cast<Index>(e);
      fn(x.base);
      for (auto& i : x.indices) fn(i);
      return;
    }
    case ExprKind::Attribute: fn(cast<Attribute>(e).base); return;
    case ExprKind::Cast: fn(cast<Cast>(e).operand); return;
    case ExprKind::TupleLit:
      for (auto& el : cast<TupleLit>(e).elems) fn(el);
      return;
    case ExprKind::Slice: {
      auto& s = cast<Slice>(e);
      if (s.start) fn(s.start);
      if (s.stop) fn(s.stop);
      if (s.step) fn(s.step);
      return;
    }
    case ExprKind::DictLit: {
      // Python evaluates each key before its value.
      auto& d = cast<DictLit>(e);
      for (size_t i = 0; i < d.keys.size(); ++i) {
        fn(d.keys[i]);
        fn(d.values[i]);
      }
      return;
    }
  }
}

template <typename S, typename OnExpr, typename OnBlock>
void partsOf(S& s, OnExpr&& onExpr, OnBlock&& onBlock) {
  switch (s.kind) {
    case StmtKind::Block:
      onBlock(cast<Block>(s));
      return;
    case StmtKind::Assign: {
      auto& a = cast<Assign>(s);
      if (a.value) onExpr(a.value);
      for (auto& t : a.targets) onExpr(t);
      return;
    }
    case StmtKind::ExprStmt: onExpr(cast<ExprStmt>(s).expr); return;
    case StmtKind::If: {
      auto& i = cast<If>(s);
      onExpr(i.cond);
      onBlock(*i.thenBody);
      if (i.elseBody) onBlock(*i.elseBody);
      return;
    }
    case StmtKind::While: {
      auto& w = cast<While>(s);
      onExpr(w.cond);
      onBlock(*w.body);
      return;
    }
    case StmtKind::For: {
      auto& f = cast<For>(s);
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
      if (cast<Return>(s).value) onExpr(cast<Return>(s).value);
      return;
    case StmtKind::Task: onBlock(*cast<Task>(s).body); return;
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Pass:
      return;
  }
}

}  // namespace

void forEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn) { childrenOf(e, fn); }

void forEachChild(const Expr& e, const std::function<void(const Expr&)>& fn) {
  childrenOf(e, [&](const ExprPtr& c) { fn(*c); });
}

void forEachPart(Stmt& s, const std::function<void(ExprPtr&)>& onExpr,
                 const std::function<void(Block&)>& onBlock) {
  partsOf(s, onExpr, onBlock);
}

void forEachPart(const Stmt& s, const std::function<void(const Expr&)>& onExpr,
                 const std::function<void(const Block&)>& onBlock) {
  partsOf(s, [&](const ExprPtr& e) { onExpr(*e); }, onBlock);
}

void Visitor::visitChildren(const Expr& e) {
  forEachChild(e, [&](const Expr& c) { visit(c); });
}

void Visitor::visitChildren(const Stmt& s) {
  if (auto* b = dyn_cast<Block>(&s)) {
    for (auto& c : b->stmts) visit(*c);
    return;
  }
  forEachPart(s, [&](const Expr& e) { visit(e); }, [&](const Block& b) { visit(b); });
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

void StmtMutator::mutateBlock(Block& b) {
  std::vector<StmtPtr> out;
  out.reserve(b.stmts.size());
  for (auto& s : b.stmts)
    for (auto& r : mutateStmt(std::move(s))) out.push_back(std::move(r));
  b.stmts = std::move(out);
}

void StmtMutator::mutate(Stmt& s) {
  if (auto* b = dyn_cast<Block>(&s)) return mutateBlock(*b);
  mutateChildren(s);
}

}  // namespace pydd
