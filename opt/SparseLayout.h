// Sparse layout: the layout conversions a sparse product makes of its dense
// operands become expressions of their own, so that LICM computes the ones
// of loop-invariant operands once before the loop instead of on every call.
//
// A library product that reads a dense operand's rows (or columns)
// contiguously copies a strided one on every call (the catalog's
// readsContiguous): `sampled_matmul(S, a, b)` reads a's rows and b's
// columns. `spmm_dense(D, S)` (dense @ sparse) transposes D on every call,
// so that each stored entry updates one contiguous row of the transposed
// result; the catalog's transposedForm of it, `spmm_dense_t(Dt, S)`, takes
// D.T instead. Inside a loop, when such an operand is a variable the loop
// does not assign (or a transposed view of one), the pass passes
//   rows:            ascontiguousarray(a)
//   columns:         transpose(ascontiguousarray(transpose(b)))
//   dense @ sparse:  spmm_dense_t(ascontiguousarray(transpose(D)), S)
// and LICM, which runs next, hoists the copy when nothing in the loop writes
// the operand's memory. sinkhorn-wmd's loop transposes K / r and copies the
// strided view K.T once instead of on each of its iterations.
//
// When it is safe: ascontiguousarray is the operand itself when it is
// C-contiguous and a copy otherwise; neither it nor transpose raises or has
// effects, so evaluating them before the product (and, after LICM, before
// the loop) moves no error and changes no value. The products compute the
// same values from the copies in the same order (spmm_dense_t is spmm_dense
// with the transpose made by its caller, and raises spmm_dense's errors
// with D's shape). Operands the loop assigns are left alone: their copy
// would be made on every iteration either way.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Gives the sparse products in `f`'s loops their operands' layouts as
/// expressions. Counts "layout: operands made contiguous" and
/// "layout: dense @ sparse products given the transposed operand".
void exposeSparseLayouts(Function& f, PassContext& context);

}  // namespace pydd
