// Gathers prefetched ahead: a loop over a sparse matrix's entries whose
// body reads a vector at each entry's column,
//
//     for j, v in S.row(i):            # or: for r, j, v in S.nonzeros()
//         acc += v * x[j]
//
// waits on those reads when x is larger than the cache: the columns are
// scattered, and no hardware prefetcher follows them. SciPy's S @ x waits
// the same way. The loop is marked with the arrays it reads so, and code
// generation emits it twice: as written, and with a prefetch of each such
// x at the column of the entry kGatherPrefetchDistance further on, run
// when x spans kGatherPrefetchBytes or more (runtime/include/pydd/sparse.h
// has the figures). bench/sparse.py's loop over S.row(i), 10^6 entries:
// 0.91 of its time at 10^5 columns, 0.44 at 10^6.
//
// When it is safe: always. A prefetch is a hint to the processor; it never
// faults and changes no value, so neither an alias nor a bad column index
// can make it wrong. The conditions below only pick the reads worth it:
//   - the loop is `for entry in S.row(i)` or `for entry in S.nonzeros()`
//     whose body starts by unpacking the entry (`j, v = entry`) and binds
//     the column j nowhere else;
//   - x is a 1-D array variable the body does not rebind, read as `x[j]`
//     (anywhere in the body).
// The loop is marked For::gathersFrom (the arrays, in order of first
// read); the IR otherwise stays as written.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Marks the sparse entry loops of `f` that gather from a vector at the
/// entry's column. Counts "prefetch: sparse loops prefetch the vectors they
/// gather from".
void prefetchGathers(Function& f, PassContext& context);

}  // namespace pydd
