// An array of zeros that a loop then overwrites element by element is
// allocated without the zeros:
//
//     out = zeros(n)                      out = empty(n)
//     for i in range(n):          ==>     for i in range(n):
//         ...                                 ...
//         out[i] = acc                        out[i] = acc
//
// Kernels written as loops (Numba's style) start their results so; the
// zero fill is a pass over the whole array that the loop repeats (about
// 3% of a row-by-row sparse product's time at 10^5 rows of 10 entries).
//
// When it is safe: `a = zeros(E)` allocates a 1-D array (E an integer, not
// a shape tuple, without effects and not mentioning `a`), and a later
// statement of the same block is a serial range loop from 0 to E itself
// (the same expression), step 1, whose loop variable the body never
// assigns. The statements between assign names only, write no memory (a
// list's pop could shorten `len(L)`), assign none of E's variables and do
// not mention `a`, so E has the same value at the loop. A top-level
// statement of the body stores `a[i]` (a plain `=`, at the loop variable),
// nothing in the body ends an iteration early (break, continue, return),
// and the body mentions `a` nowhere else, so no element is read before the
// loop writes it and every element is written once the loop is done. An
// exception raised part way leaves the function, where nothing can see `a`
// any more.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Allocates the arrays of zeros that a loop overwrites whole in `f`
/// with empty(). Counts "overwrite: zero fills removed".
void skipOverwrittenZeroFills(Function& f, PassContext& context);

}  // namespace pydd
