#include "ir/Builder.h"

namespace pydd {
namespace {

ExprPtr copyOrNull(const ExprPtr& e) { return e ? cloneExpr(*e) : nullptr; }

std::vector<ExprPtr> copyAll(const std::vector<ExprPtr>& v) {
  std::vector<ExprPtr> out;
  for (auto& e : v) out.push_back(cloneExpr(*e));
  return out;
}

}  // namespace

ExprPtr cloneExpr(const Expr& e) {
  ExprPtr out;
  switch (e.kind) {
    case ExprKind::IntLit: out = std::make_unique<IntLit>(e.loc, cast<IntLit>(e).value); break;
    case ExprKind::FloatLit: out = std::make_unique<FloatLit>(e.loc, cast<FloatLit>(e).value, cast<FloatLit>(e).imaginary); break;
    case ExprKind::BoolLit: out = std::make_unique<BoolLit>(e.loc, cast<BoolLit>(e).value); break;
    case ExprKind::StrLit: out = std::make_unique<StrLit>(e.loc, cast<StrLit>(e).value); break;
    case ExprKind::Var: out = std::make_unique<VarRef>(e.loc, cast<VarRef>(e).name); break;
    case ExprKind::Unary: {
      auto& u = cast<Unary>(e);
      out = std::make_unique<Unary>(e.loc, u.op, cloneExpr(*u.operand));
      break;
    }
    case ExprKind::Binary: {
      auto& b = cast<Binary>(e);
      out = std::make_unique<Binary>(e.loc, b.op, cloneExpr(*b.lhs), cloneExpr(*b.rhs));
      break;
    }
    case ExprKind::Compare: {
      auto& c = cast<Compare>(e);
      auto n = std::make_unique<Compare>(e.loc);
      n->ops = c.ops;
      n->linkTypes = c.linkTypes;
      n->operands = copyAll(c.operands);
      out = std::move(n);
      break;
    }
    case ExprKind::Logical: {
      auto& l = cast<Logical>(e);
      out = std::make_unique<Logical>(e.loc, l.isAnd, cloneExpr(*l.lhs), cloneExpr(*l.rhs));
      break;
    }
    case ExprKind::Not: out = std::make_unique<Not>(e.loc, cloneExpr(*cast<Not>(e).operand)); break;
    case ExprKind::Select: {
      auto& s = cast<Select>(e);
      out = std::make_unique<Select>(e.loc, cloneExpr(*s.cond), cloneExpr(*s.trueValue), cloneExpr(*s.falseValue));
      break;
    }
    case ExprKind::Call: {
      auto& c = cast<Call>(e);
      auto n = std::make_unique<Call>(e.loc, c.callee);
      n->args = copyAll(c.args);
      for (auto& k : c.keywords) n->keywords.push_back({k.name, k.loc, cloneExpr(*k.value)});
      n->target = c.target;
      n->library = c.library;
      n->isMethod = c.isMethod;
      out = std::move(n);
      break;
    }
    case ExprKind::Index: {
      auto& x = cast<Index>(e);
      auto n = std::make_unique<Index>(e.loc, cloneExpr(*x.base));
      n->indices = copyAll(x.indices);
      n->besideNewaxis = x.besideNewaxis;
      n->inRange = x.inRange;
      out = std::move(n);
      break;
    }
    case ExprKind::Attribute: {
      auto& a = cast<Attribute>(e);
      out = std::make_unique<Attribute>(e.loc, cloneExpr(*a.base), a.name);
      break;
    }
    case ExprKind::Cast: {
      auto& c = cast<Cast>(e);
      out = std::make_unique<Cast>(e.loc, c.target, cloneExpr(*c.operand));
      break;
    }
    case ExprKind::TupleLit: {
      auto& t = cast<TupleLit>(e);
      auto n = std::make_unique<TupleLit>(e.loc, t.isList);
      n->elems = copyAll(t.elems);
      out = std::move(n);
      break;
    }
    case ExprKind::Slice: {
      auto& s = cast<Slice>(e);
      auto n = std::make_unique<Slice>(e.loc);
      n->start = copyOrNull(s.start);
      n->stop = copyOrNull(s.stop);
      n->step = copyOrNull(s.step);
      out = std::move(n);
      break;
    }
    case ExprKind::DictLit: {
      auto& d = cast<DictLit>(e);
      auto n = std::make_unique<DictLit>(e.loc);
      n->keys = copyAll(d.keys);
      n->values = copyAll(d.values);
      out = std::move(n);
      break;
    }
  }
  out->type = e.type;
  return out;
}

BlockPtr cloneBlock(const Block& b) {
  auto out = std::make_unique<Block>(b.loc);
  for (auto& s : b.stmts) out->stmts.push_back(cloneStmt(*s));
  return out;
}

StmtPtr cloneStmt(const Stmt& s) {
  auto blockOrNull = [](const BlockPtr& b) { return b ? cloneBlock(*b) : nullptr; };
  switch (s.kind) {
    case StmtKind::Block: return cloneBlock(cast<Block>(s));
    case StmtKind::Assign: {
      auto& a = cast<Assign>(s);
      auto n = std::make_unique<Assign>(s.loc);
      n->targets = copyAll(a.targets);
      n->value = copyOrNull(a.value);
      n->declared = a.declared;
      n->augmented = a.augmented;
      return n;
    }
    case StmtKind::ExprStmt: return std::make_unique<ExprStmt>(s.loc, cloneExpr(*cast<ExprStmt>(s).expr));
    case StmtKind::If: {
      auto& i = cast<If>(s);
      auto n = std::make_unique<If>(s.loc);
      n->cond = cloneExpr(*i.cond);
      n->thenBody = blockOrNull(i.thenBody);
      n->elseBody = blockOrNull(i.elseBody);
      n->rareElse = i.rareElse;
      return n;
    }
    case StmtKind::While: {
      auto& w = cast<While>(s);
      auto n = std::make_unique<While>(s.loc);
      n->cond = cloneExpr(*w.cond);
      n->body = blockOrNull(w.body);
      n->scanIndex = w.scanIndex;
      n->scanStep = w.scanStep;
      return n;
    }
    case StmtKind::For: {
      auto& f = cast<For>(s);
      auto n = std::make_unique<For>(s.loc);
      n->var = f.var;
      n->varLoc = f.varLoc;
      n->isRange = f.isRange;
      n->start = copyOrNull(f.start);
      n->stop = copyOrNull(f.stop);
      n->step = copyOrNull(f.step);
      n->iterable = copyOrNull(f.iterable);
      n->parallel = f.parallel;
      n->independent = f.independent;
      n->elementsPerIteration = f.elementsPerIteration;
      n->foldsInto = f.foldsInto;
      n->foldIdentity = f.foldIdentity;
      n->testsFirst = f.testsFirst;
      n->storesFresh = f.storesFresh;
      n->defersDivisionChecks = f.defersDivisionChecks;
      n->rowsInPairs = f.rowsInPairs;
      n->gathersFrom = f.gathersFrom;
      n->body = blockOrNull(f.body);
      return n;
    }
    case StmtKind::Break: return std::make_unique<Break>(s.loc);
    case StmtKind::Continue: return std::make_unique<Continue>(s.loc);
    case StmtKind::Return: return std::make_unique<Return>(s.loc, copyOrNull(cast<Return>(s).value));
    case StmtKind::Pass: return std::make_unique<Pass>(s.loc);
    case StmtKind::Task: {
      auto& t = cast<Task>(s);
      auto n = std::make_unique<Task>(s.loc, t.taskKind);
      n->body = blockOrNull(t.body);
      return n;
    }
  }
  return nullptr;
}

}  // namespace pydd
