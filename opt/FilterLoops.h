// Filtered loops: a loop over the indices `where(c)` gives becomes a loop
// over every index of `c` that tests the element first.
//
//     neighbours = where(A[i])              for j in range(len(A[i])):
//     ...                           ==>         if A[i][j] != 0:
//     for nb in neighbours:                         nb = j
//         body                                      body
//
// NumPy (and the unoptimized build) allocates `c`, scans it once to count
// and once to store the indices, then loops over them; written as a loop
// that tests each element, nothing is allocated and `c` is read once. An
// element-wise `c` (`where(1 - A[i])`, `where(x > t)`) is computed element
// by element inside the test, so its array is never made either. Users
// write this idiom for neighbour lists and masks (bigCLAM's gradient).
//
// When it is safe: the loop is a serial `for v in t` over `t = where(c)`
// assigned earlier in the same block (or `for v in where(c)` itself); `t`
// is bound there only and read only by the loop, so nothing else sees that
// the index array no longer exists. `c` is 1-D and is an array, or an
// element-wise tree over a single array operand (read at one or more
// leaves), scalars and literals, of a non-complex element type whose
// elements cannot raise (no integer `**`). The elements are read later than
// `where` read them, so the tree's array operand and non-literal scalars
// are evaluated where `t` was assigned, in the same order (so a view's
// IndexError, or a call's effects, happen where they did), into temporaries
// that nothing else assigns; and neither the statements between that point
// and the loop nor the loop itself may write memory of the operand's element
// type (an alias or view of it could change what the test reads). The loop
// variable is assigned only for the indices `where` gives, so after the loop
// it holds what it held before.
//
// The loop it makes is marked For::testsFirst: the test reads only the
// operand, which nothing in the loop writes, so code generation may test a
// chunk of indices before running the bodies of the taken ones.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Rewrites the loops of `f` over `where(c)`. Counts "filter: loops filtered".
void filterWhereLoops(Function& f, PassContext& context);

}  // namespace pydd
