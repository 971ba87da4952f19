// Row sums into out[r] in registers: a loop over every stored entry, or
// over every row's entries, that adds into out[r] runs row by row, with
// out[r] in a local.
//
//     for r, c, v in S.nonzeros():        if shape(out, 0) >= shape(S, 0):
//         out[r] += E                         for r' in range(0, shape(S, 0), 1):
//                                                 acc = out[r']
//     for r in range(0, shape(S, 0), 1):          for c', v' in S.row(r'):
//         for c, v in S.row(r):                       acc = acc + E'
//             out[r] += E                         out[r'] = acc
//                                         else:
//                                             <the loop as written>
//
// (r', c', v' are fresh variables and E' is E reading them, so that each
// loop's variables are its own.)
//
// Why: each entry's `out[r] = out[r] + E` is a chain through memory, a
// store and a reload per entry (the next entry of the row adds to the same
// element), and the C++ compiler cannot keep out[r] in a register because
// E's reads (x[c]) might alias it. The nonzeros loop as written took 2.2x
// SciPy's S @ x for a spmv so written (10^5 rows of 10 entries); row by
// row, stand-alone, 0.55 of its time. The S.row(r) loop so written (the
// way a Numba user writes out[i] += data[k] * x[indices[k]]) took 1.9x
// and 4.1x SciPy's time (random, jhu.mtx); rewritten, 1.0x and 0.63x (the
// row loop is then one that opt/PairedRows.h runs two rows at a time).
//
// The additions are the same, in the same order, so the results are the
// same bit for bit. An empty row reads out[r] and stores it back: no
// change. The run-time test keeps every r in range of out (else the loop
// runs as written, and raises or not as it would).
//
// When it is safe: the loop is a sequential `for` (not inside a pfor or a
// task) over `S.nonzeros()` of a SparseMat variable S whose body is
// exactly the unpacking `r, c, v = entry` and `out[r] = out[r] + E` (or
// `+=`), or over `range(0, shape(S, 0), 1)` whose body is only a loop over
// `S.row(r)` whose body is exactly `c, v = entry` and that update, where
//   - out is a private 1-D array (opt/PrivateArrays.h) of int32, int64,
//     float32 or float64, so nothing else reaches its memory; E reads
//     neither out nor a view of it, has no side effects, and out[r], E and
//     the sum all have out's element type (no conversion per step);
//   - the entry, r, c and v are bound nowhere else and read nowhere after
//     the loop (their values after it would differ); r is an int64.
// E may raise (an IndexError with --bounds-check): the accumulated row is
// then lost, but out is private, so nothing can see it after the error.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Rewrites `f`'s loops over S.nonzeros() that add into out[r] to run row
/// by row, and its loops over S's rows that add into out[r] in an inner
/// loop over S.row(r) likewise. Counts "nzrows: sums into out[r] run row
/// by row with out[r] in a local".
void sumNonzeroRows(Function& f, PassContext& context);

}  // namespace pydd
