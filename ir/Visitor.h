// Generic traversal of the IR.
//
// A pass overrides only the cases it cares about and calls the
// *Children helper for the rest, in the style of Halide's IRVisitor and
// IRMutator.
#pragma once

#include <functional>

#include "ir/IR.h"

namespace pydd {

/// Calls `fn` on every child expression slot of `e`, in evaluation order.
void forEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn);
/// Calls `onExpr` on every expression slot that belongs to `s` itself and
/// `onBlock` on every block nested directly in `s`, in source order.
void forEachPart(Stmt& s, const std::function<void(ExprPtr&)>& onExpr,
                 const std::function<void(Block&)>& onBlock);

/// Read-only recursive walk.
class Visitor {
 public:
  virtual ~Visitor() = default;
  virtual void visit(const Expr& e) { visitChildren(e); }
  virtual void visit(const Stmt& s) { visitChildren(s); }
  void visitChildren(const Expr& e);
  void visitChildren(const Stmt& s);
};

/// Rewriting walk: `mutate` returns the expression that replaces its
/// argument (the same one by default, with children mutated).
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

}  // namespace pydd
