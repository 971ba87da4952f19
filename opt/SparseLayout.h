// Sparse layout: the layout conversions a sparse product makes of its dense
// operands on every call are made once, before the loop, for the operands a
// loop does not change.
//
// A library product that reads a dense operand's rows (or columns)
// contiguously copies a strided one on every call (the catalog's
// readsContiguous): `sampled_matmul(S, a, b)` reads a's rows and b's
// columns. `spmm_dense(D, S)` (dense @ sparse) transposes D on every call,
// so that each stored entry updates one contiguous row of the transposed
// result; the catalog's transposedForm of it, `spmm_dense_t(Dt, S)`, takes
// D.T from its caller. Inside a loop, for such an operand that is
// invariant, the pass assigns before the loop
//   rows:            layout__0 = ascontiguousarray(a)             (a -> layout__0)
//   columns:         layout__0 = ascontiguousarray(transpose(b))  (b -> transpose(layout__0))
//   dense @ sparse:  layout__0 = ascontiguousarray(transpose(D))  (spmm_dense_t(layout__0, S))
// under the loop's entry test when it has one (the loop may run zero
// times). sinkhorn-wmd's loop transposes K / r and copies the strided view
// K.T once instead of on each of its iterations. Loops are handled
// innermost first; an operand invariant in an outer loop too is copied
// before the inner loop, where LICM may move it further.
//
// When it is safe: the operand is a variable the loop does not assign (or a
// transposed view of one) and the loop writes no memory it may refer to:
// memory is keyed by element type as for LICM (opt/Effects.h), except that
// a store into an array the same iteration allocated (`vals = empty(n)`,
// then `vals[k] = ...` before anything else is assigned to vals) writes no
// array that existed before the iteration, so it keeps nothing in place; a
// kernel-function call may write anything. Then every iteration would
// convert the same values. ascontiguousarray (the operand itself when it is
// C-contiguous) and transpose neither raise nor have effects, so making the
// copy early moves no error; the products compute the same values from it
// in the same order (spmm_dense_t adds as spmm_dense does and raises its
// errors with D's shape). LICM does not make these copies: they allocate,
// they may sit in a branch (sampled fusion's), and a loop that writes any
// float64 array keeps every float64 array read in place for it.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Computes the layout conversions of loop-invariant dense operands of the
/// sparse products in `f`'s loops before those loops. Counts
/// "layout: operands made contiguous" and
/// "layout: dense @ sparse products given the transposed operand".
void exposeSparseLayouts(Function& f, PassContext& context);

}  // namespace pydd
