// Element-wise trees: what the fusion passes share about a tree of
// element-wise catalog calls over arrays and scalars (`sqrt(a * b) + 1.0`).
// A pass decides what each array leaf becomes per element (an indexed read
// of a variable, of a broadcast view, a sampled product...); this file
// rebuilds the tree around those leaves.
#pragma once

#include "ir/IR.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace pydd {

/// A call of a catalog function with a per-element rule whose value is an
/// array (an interior node of an element-wise tree).
bool isElementwiseArrayCall(const Expr& e);

/// A literal, possibly negated or converted. Literals stay in the per-element
/// tree: they cost nothing and keep NumPy's weak-literal promotion.
bool isLiteral(const Expr& e);

/// Whether two index expressions surely have the same value at one point
/// of the program: the same variable or the same literal.
bool sameIndex(const Expr& a, const Expr& b);

/// Whether two array leaves surely read the same array at one point of the
/// program: the same variable, or views of one variable with the same
/// integer indices (sameIndex).
bool sameArrayLeaf(const Expr& a, const Expr& b);

/// Whether every element-wise call of the tree types its scalar form as its
/// array form's element (abs of a bool array stays bool, of a bool scalar it
/// is an int): only such trees can be computed one element at a time.
bool typesPerElement(const Expr& tree);

/// The tree for one element: each element-wise call applied to scalars,
/// each scalar leaf copied, and each array leaf replaced by `arrayLeaf(leaf)`.
ExprPtr instantiateElement(const Expr& tree, llvm::function_ref<ExprPtr(const Expr& leaf)> arrayLeaf);

}  // namespace pydd
