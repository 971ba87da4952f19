// Short dot products of rows become loops: `d = F[j] @ F[i]` on rows of a
// few elements reads the elements where they are instead of making two
// views and calling the library.
//
//     d = A[i] @ B[j]              k__0 = i
//                                  k__1 = j
//                                  n__0 = shape(A, 1)
//                                  if n__0 < blas_dot_inline_limit() and shape(B, 1) == n__0
//                                        and <i, j in range> and unit_stride(A)
//                                        and unit_stride(B):
//                                      d__0 = 0.0
//                                      for c__0 in range(0, n__0, 1):
//                                          d__0 = blas_dot_step(B[k__1, c__0], A[k__0, c__0], d__0)
//                                      d = d__0
//                                  else:
//                                      d = A[k__0] @ B[k__1]
//
// Why: each view is an object with a reference to its array's buffer,
// counted up and down atomically, and the call is out of line; for
// bigCLAM's 4-element rows that costs more than the four products
// (its gradient's `F[nb] @ F[i]` per neighbour: the kernel took 0.88 of
// its time with the loop, bench/ab.py).
//
// The result is NumPy's bit for bit: NumPy's 1-D dot is OpenBLAS's ddot,
// which adds the products of contiguous vectors shorter than its 16-wide
// block in index order, exactly as the loop does; blas_dot_step rounds
// each step as the processor's OpenBLAS kernel does (fused or not, asked
// once at load; runtime/include/pydd/linalg.h, which does the same inline).
// Longer or strided vectors, whose sums OpenBLAS orders otherwise, take the
// library call, and so does every product where the loaded OpenBLAS's
// kernel does not add short vectors in index order (blas_dot_inline_limit()
// is 0 there: its Prescott SSE2 kernel on an unrecognized processor).
//
// What is rewritten: `x = matmult(a, b)` (or innerprod) of two float64
// vectors, each a 1-D array variable or a row `A[i, ...]` of an array
// variable with integer indices, in any statement list. The indices are
// evaluated once, in Python's order, before the test; an index out of
// range (or lengths that differ) takes the library call, which raises
// NumPy's error. A non-negative index (opt/ValueRanges.h) has no lower
// bound test.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Rewrites the short dot products of `f`. Counts "dots: dot products
/// written as loops".
void expandShortDots(Function& f, PassContext& context);

}  // namespace pydd
