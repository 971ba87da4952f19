// Allocation hoisting: an array allocated in every iteration of a loop with
// the same shape is allocated once, before the loop, and refilled in place
// where it was allocated (`x = zeros(n)` in the loop becomes `fill(x, 0)`;
// `x = empty(n)` needs nothing).
//
// When it is safe: the statement `x = zeros(...)` (or ones, full, empty: the
// catalog's newArray) is at the top of the loop body, before anything that
// may end the iteration early, raise, write memory or print; nothing in
// the loop reads or assigns x before it, or assigns x anywhere else; its
// arguments are loop-invariant and without effects; and the loop copies no
// reference into a second name or a container and calls no kernel function
// (so the array of one iteration is referred to by x alone, and reusing its
// memory in the next one is invisible), and is not a pfor (whose iterations
// run at once). The allocation may raise (a negative
// extent) or be costly, so it is done under the loop's entry test.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Hoists per-iteration allocations out of the loops of `f`. Counts
/// "alloc: allocations hoisted".
void hoistAllocations(Function& f, PassContext& context);

}  // namespace pydd
