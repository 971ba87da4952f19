// Small constructors for typed IR, for passes that create code: every node
// they return carries its type and a source location (the one of the code
// it was derived from, so diagnostics and dumps stay in the user's terms).
#pragma once

#include <utility>

#include "ir/IR.h"

namespace pydd::build {

inline ExprPtr var(SourceLoc loc, const std::string& name, const Type& type) {
  auto v = std::make_unique<VarRef>(loc, name);
  v->type = type;
  return v;
}
inline ExprPtr intLit(SourceLoc loc, int64_t value) {
  auto i = std::make_unique<IntLit>(loc, value);
  i->type = Type::int64();
  return i;
}
inline ExprPtr floatLit(SourceLoc loc, double value) {
  auto f = std::make_unique<FloatLit>(loc, value);
  f->type = Type::float64();
  return f;
}
inline ExprPtr binary(SourceLoc loc, BinaryOp op, ExprPtr a, ExprPtr b, const Type& type) {
  auto e = std::make_unique<Binary>(loc, op, std::move(a), std::move(b));
  e->type = type;
  return e;
}
inline ExprPtr compare(SourceLoc loc, CmpOp op, ExprPtr a, ExprPtr b) {
  auto c = std::make_unique<Compare>(loc);
  c->linkTypes.push_back(a->type.isFloat() || b->type.isFloat() ? Type::float64() : Type::int64());
  c->ops.push_back(op);
  c->operands.push_back(std::move(a));
  c->operands.push_back(std::move(b));
  c->type = Type::boolTy();
  return c;
}
inline ExprPtr logicalAnd(SourceLoc loc, ExprPtr a, ExprPtr b) {
  if (!a) return b;
  auto l = std::make_unique<Logical>(loc, true, std::move(a), std::move(b));
  l->type = Type::boolTy();
  return l;
}
inline ExprPtr libraryCall(SourceLoc loc, const LibraryFunction* fn, const char* name, std::vector<ExprPtr> args,
                           const Type& type) {
  auto c = std::make_unique<Call>(loc, name);
  c->target = CallTarget::Library;
  c->library = fn;
  c->args = std::move(args);
  c->type = type;
  return c;
}
inline ExprPtr index(SourceLoc loc, ExprPtr base, std::vector<ExprPtr> indices, const Type& type) {
  auto x = std::make_unique<Index>(loc, std::move(base));
  x->indices = std::move(indices);
  x->type = type;
  return x;
}
inline StmtPtr assign(SourceLoc loc, ExprPtr target, ExprPtr value) {
  auto a = std::make_unique<Assign>(loc);
  a->targets.push_back(std::move(target));
  a->value = std::move(value);
  return a;
}
inline BlockPtr block(SourceLoc loc, std::vector<StmtPtr> stmts) {
  auto b = std::make_unique<Block>(loc);
  b->stmts = std::move(stmts);
  return b;
}
inline StmtPtr ifThen(SourceLoc loc, ExprPtr cond, std::vector<StmtPtr> thenStmts,
                      std::vector<StmtPtr> elseStmts = {}) {
  auto i = std::make_unique<If>(loc);
  i->cond = std::move(cond);
  i->thenBody = block(loc, std::move(thenStmts));
  if (!elseStmts.empty()) i->elseBody = block(loc, std::move(elseStmts));
  return i;
}
/// `for name in range(start, stop)` with step 1.
inline std::unique_ptr<For> rangeLoop(SourceLoc loc, const std::string& name, ExprPtr start, ExprPtr stop,
                                      std::vector<StmtPtr> body) {
  auto f = std::make_unique<For>(loc);
  f->var = name;
  f->varLoc = loc;
  f->start = std::move(start);
  f->stop = std::move(stop);
  f->step = intLit(loc, 1);
  f->body = block(loc, std::move(body));
  return f;
}

}  // namespace pydd::build

namespace pydd {

/// A deep copy of an expression, types and locations included.
ExprPtr cloneExpr(const Expr& e);
/// A deep copy of a statement or a block (each instance of a rank-generic
/// function is typed on its own copy of the body).
StmtPtr cloneStmt(const Stmt& s);
BlockPtr cloneBlock(const Block& b);

}  // namespace pydd
