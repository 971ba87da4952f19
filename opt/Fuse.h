// Dense fusion: an element-wise operator tree over arrays becomes one loop
// nest that computes each element of the result from the operands' elements,
// with no temporary arrays (NumPy makes one pass over memory and one
// temporary per operator; the fused loop makes one pass in all).
//
// What is fused: an assignment `y = E` or an in-place update `x op= E` whose
// value is a tree of catalog functions with a per-element rule (operators,
// comparisons, math functions, maximum/minimum...) over arrays and scalars.
// The operands that are not element-wise — array variables, views,
// other calls, scalar expressions — are evaluated once, before the loop and
// in Python's order, into temporaries (literals stay in place so that NumPy's
// weak-literal promotion is unchanged). A view `A[i]` of a variable is read
// as `A[i, j]` instead of being built.
//
// When it is safe: the loop computes what broadcasting computes only when
// every operand's dimensions equal the result's (aligned at the right, as
// broadcasting aligns them); an update in place is also right only when no
// operand other than the destination itself shares memory with it (NumPy
// reads all of `a[:-1]` before writing `a[1:]`). Both are tested at run
// time: the fused loop runs when they hold, the original operations
// otherwise (which broadcast size-1 dimensions, copy overlapping operands,
// or raise the same ValueError). A view's index is checked against its
// extent in the same test, so an out-of-range index still raises IndexError.
// Trees whose per-element typing differs from the array typing (the
// catalog's result-type rule says so) are not fused.
//
// A reduction of a tree folds into the loop: any, all and integer sums in
// any order; a float sum in NumPy's order (the elements in C order through
// 8192-element buffers, each summed pairwise, FoldRule::window), so the
// result is the same bit for bit; a float sum along the last axis of a 2-D
// tree one row at a time.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Fuses the element-wise assignments of `f`. Counts "fuse: operations
/// fused" and "fuse: loops created".
void fuseElementwise(Function& f, PassContext& context);

}  // namespace pydd
