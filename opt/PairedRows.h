// Row folds two rows at a time: a loop over a sparse matrix's rows whose
// every row folds its entries into one scalar and stores it in its own
// element runs two rows side by side.
//
//     for i in range(0, shape(S, 0), 1):
//         acc = INIT                      # reads i, not acc
//         for entry in S.row(i):
//             j, v = entry
//             acc = STEP                  # reads acc, j, v
//         out[i] = FINAL                  # reads acc, i
//
// Why: each row's steps are one chain, every step waiting for the last (an
// add's latency). On rows longer than the processor's window (jhu.mtx's 72
// entries) the next row's chain cannot start until this one is nearly
// done: the plain loop took SciPy's S @ x time, which waits the same way.
// Two rows from the two halves of the entries, stepped together, take 0.65
// of it. Each row still folds its entries in order, so the values are the
// same bit for bit. Code generation emits a marked loop as a call to
// pydd::detail::sp_rows_in_pairs, with the loop as written as its fallback
// (rows too short for pairing to pay, or a step that raised: the loop as
// written then raises the error that comes first in row order).
//
// When it is safe: the rows run in a different order, so no row may see
// another's effects, and nothing may see the order.
//   - The loop is a sequential `for` over range(0, shape(S, 0), 1), not
//     inside a pfor or a task, with S a SparseMat variable, and its body is
//     exactly the three statements above.
//   - out is a private 1-D array (opt/PrivateArrays.h), not S: only out[i]
//     reaches the element each row stores, and no other array shares it.
//     INIT and FINAL read out only as out[i] (the row's own element, which
//     no other row writes); STEP does not read out or a view of it.
//   - INIT, STEP and FINAL have no side effects; acc, j and v are scalars
//     of STEP's and the entry's types (no conversion), acc is not read by
//     INIT.
//   - i, entry, j, v and acc are bound only by the loop and read nowhere
//     after it (their last values would be another row's).
// The loop is marked For::rowsInPairs; the IR otherwise stays as written.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Marks `f`'s row-folding loops For::rowsInPairs. Counts "pairs: row loops
/// run two rows at a time".
void pairRowFolds(Function& f, PassContext& context);

}  // namespace pydd
