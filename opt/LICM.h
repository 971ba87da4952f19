// Loop-invariant code motion: computes once, before a loop, what every
// iteration of the loop would compute the same way.
//
// The algorithm (innermost loops first, so that what an inner loop hoists
// can move further out of the outer one): every maximal sub-expression of
// the loop body that is worth hoisting — it contains a call, or its value is
// a whole array (an element-wise operation, a reduction, `@`, a view) — and
// that is invariant is assigned to a fresh temporary before the loop and
// replaced by it. An expression is invariant when
//   - it has no side effects (no kernel-function call, no catalog function
//     that writes an argument or prints),
//   - no variable it reads is assigned in the loop (the loop variable
//     included),
//   - it reads no memory the loop may write: arrays, sparse matrices and
//     containers are keyed by element type (two arrays of different element
//     types never share memory; one of the same type may be an alias or a
//     view), and a kernel-function call may write anything.
// An array-valued (or other reference-valued) result is also shared by every
// iteration after hoisting, so it is hoisted only when the loop writes no
// memory of its type and no copy of a reference escapes (stored in a
// container, assigned from another variable): otherwise iterations that saw
// distinct arrays would see one. A new array that only an element-wise
// operation reads (`arange(n)` in `X[i, :] = arange(n) - i`) is the
// exception: only the temporary refers to it, and the loop only reads it.
// An expression that may raise or allocate is hoisted only from where every
// iteration evaluates it first: a statement at the top of the body, before
// any statement that may exit the iteration or raise or print, outside
// conditional parts (if bodies, `and`/`or` right operands, conditional
// expressions), and not after another part of its statement that may raise.
// The loop may run zero times, so those hoisted expressions are guarded by
// the loop's own entry test (`start < stop` for a range with a literal step,
// the condition of a `while` without effects); loops with no such test
// (element iteration, a computed step) keep them.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Hoists loop-invariant expressions out of every loop of `f`. Counts
/// "licm: expressions hoisted" and "licm: loops guarded".
void loopInvariantCodeMotion(Function& f, PassContext& context);

}  // namespace pydd
