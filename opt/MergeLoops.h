// Loop merging: consecutive fused element-wise loops over the same extents
// become one loop, and the temporaries that then live only inside it become
// scalars.
//
// Users name intermediate arrays (`mu = 2 * t * (n - t)`, `p = t / n`,
// `v = p * mu + ...`), and fusion computes each one in a loop of its own:
// each loop passes over memory once, and each array is allocated and
// written only for the next loop to read it back. Merged, they make one
// pass; an array that no other statement reads (`p` above) is a scalar per
// element, and is neither allocated nor stored. This is also how the C++
// compiler gets one loop to optimize instead of several.
//
// When it is safe: both loops are fusion's element-wise nests
// (For::independent, from 0 by 1, no fold or window) and each writes only
// the array allocated right before it, so neither has an effect any other
// code can see, and neither raises (fusion guarantees it, MemoryError
// aside). Their trip counts are equal per axis: the same variable or
// literal, followed through the `n = shape(a, k)` and `a = empty(dims)`
// statements between them. The second loop reads what the first wrote only
// at the element both compute in the same iteration. The statements between
// the loops move above the first, in their order: they have no side effects
// (a scalar that may raise still raises before any later code runs, and the
// first loop's effects are not visible), read no element of an array the
// first loop writes, and assign nothing the first loop reads. A statement
// `a = w` that renames the array w a loop wrote stays where it is; later
// moved statements and loops read w for a (and in the function's own block,
// where no later iteration can read a, it goes when nothing after it reads
// a). Anything else ends the run of loops. An array becomes a scalar when
// the merged loop's body holds every reference to it except its
// allocation.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Merges runs of fused loops in `f`. Counts "merge: loops merged" and
/// "merge: arrays made scalars".
void mergeFusedLoops(Function& f, PassContext& context);

}  // namespace pydd
