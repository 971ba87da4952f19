// Sampled fusion: a dense expression that a sparse product keeps only at a
// SparseMat's stored positions is computed only there.
//
// `spm_mul(S, E)` (also `S * E`) keeps S's structure: SciPy computes all of
// the dense E and then reads it at S's entries. When E is an element-wise
// tree (operators, math functions, literals and scalars) over 2-D products
// `A @ B`, 2-D arrays of S's shape and 1-D rows, the pass evaluates the
// tree once per stored entry (r, c) instead: a product contributes its
// values at S's entries only (the catalog's `sampled` function of the
// product, `sampled_matmul(S, A, B)`: one dot product per entry, the
// sampled dense-dense product or SDDMM), an array its element. The result
// is S's structure holding the new values (`spm_with_values`), so a
// following spmm_dense, spmv or reduction reads it without a copy.
// sinkhorn-wmd's `spm_mul(c, 1.0 / (K.T @ u))` computes nnz(c) dot products
// instead of the vocabulary x documents product.
//
// When it is safe: the sparse product is the first thing its statement
// evaluates (the value of an assignment, return or expression statement, or
// the first argument of a call there, recursively), so computing its
// operands just before the statement keeps Python's order; every operand
// after the first evaluated one is a variable, a literal or an expression
// that cannot raise and has no effects (a transposed view), so no error
// moves before another. Shapes are tested at run time: the sampled loop
// runs when every product's operands agree and its result, every array and
// every row has S's shape exactly; otherwise the original operations run
// (broadcasting, or raising NumPy's ValueError). A product's dot products
// add in a blocked order, as BLAS does, but not necessarily BLAS's: results
// agree within rounding, as any reassociation does. Element-wise array operations
// never raise, so skipping the positions S does not store hides no error.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Samples the dense operands of structure-keeping sparse products in `f`.
/// Counts "sample: sparse products sampled" and "sample: products sampled"
/// (the 2-D products never materialized).
void sampleSparseProducts(Function& f, PassContext& context);

}  // namespace pydd
