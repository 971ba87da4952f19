// Generic traversal of the IR.
//
// A pass overrides only the cases it cares about and calls the
// *Children helper for the rest, in the style of Halide's IRVisitor and
// IRMutator. Read-only walks see const nodes; rewriting walks own what
// they replace.
#pragma once

#include <functional>
#include <vector>

#include "ir/IR.h"

namespace pydd {

/// Calls `fn` on every child expression slot of `e`, in evaluation order.
void forEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn);
void forEachChild(const Expr& e, const std::function<void(const Expr&)>& fn);
/// Calls `onExpr` on every expression slot that belongs to `s` itself and
/// `onBlock` on every block nested directly in `s`, in source order (the
/// value of an assignment before its targets, as Python evaluates them).
void forEachPart(Stmt& s, const std::function<void(ExprPtr&)>& onExpr,
                 const std::function<void(Block&)>& onBlock);
void forEachPart(const Stmt& s, const std::function<void(const Expr&)>& onExpr,
                 const std::function<void(const Block&)>& onBlock);

/// Read-only recursive walk.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void visit(const Expr& e) { visitChildren(e); }
  virtual void visit(const Stmt& s) { visitChildren(s); }
  void visitChildren(const Expr& e);
  void visitChildren(const Stmt& s);
};

/// Rewriting walk of expressions: `mutate` returns the expression that
/// replaces its argument (the same one by default, with children mutated).
class Mutator {
 public:
  virtual ~Mutator() = default;
  virtual ExprPtr mutate(ExprPtr e) {
    mutateChildren(*e);
    return e;
  }
  virtual void mutate(Stmt& s) { mutateChildren(s); }
  void mutateChildren(Expr& e);
  void mutateChildren(Stmt& s);
};

/// Rewriting walk of statements: `mutateStmt` returns what replaces a
/// statement of a block — nothing (delete), the statement itself, or several
/// statements (hoist, split, insert) — so a pass can move code. Expressions
/// are still rewritten through Mutator::mutate.
class StmtMutator : public Mutator {
 public:
  using Mutator::mutate;
  /// Default: rewrite the statement's parts and nested blocks, keep it.
  virtual std::vector<StmtPtr> mutateStmt(StmtPtr s) {
    mutateChildren(*s);
    std::vector<StmtPtr> out;
    out.push_back(std::move(s));
    return out;
  }
  /// Replaces each statement of `b` by what mutateStmt returns for it.
  void mutateBlock(Block& b);
  void mutate(Stmt& s) override;
};

}  // namespace pydd
