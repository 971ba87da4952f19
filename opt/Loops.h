// Questions and helpers about loops that several passes share (LICM,
// allocation hoisting, the passes that mark or rewrite whole loops):
// whether references may escape an iteration, the test that a loop runs at
// least once, and walks over a function's loops.
#pragma once

#include <functional>
#include <vector>

#include "ir/IR.h"

namespace pydd {

/// Whether the loop may copy a reference into a second name or a container
/// (`b = a` of an array, a view, a tuple or container literal holding one, a
/// container store, a library call that writes an argument, a kernel-function
/// call): if not, an array a variable holds in one iteration is referred to
/// by that variable alone.
bool mayCopyReferences(const Stmt& loop);

/// `shape(array, axis)`: the catalog's shape query (never raises for a
/// literal axis in range).
ExprPtr shapeQuery(SourceLoc loc, ExprPtr array, int axis);

/// The test that `loop` (a For or a While) runs at least once, when it can
/// be evaluated again without effect: `start < stop` for a range with a
/// literal step, `shape(a, 0) > 0` over an array variable's elements, the
/// condition of a `while`. Null when there is none.
ExprPtr loopEntryTest(const Stmt& loop, bool boundsCheck);

/// Appends `hoisted` then `loop` to `out`, both under `entryTest` (`if <the
/// loop runs>: <hoisted>; <loop>`) when there is one: what was taken out of
/// a loop that may run zero times runs only when the loop would.
void appendGuardedLoop(std::vector<StmtPtr>& out, ExprPtr entryTest, std::vector<StmtPtr> hoisted, StmtPtr loop);

/// Calls `mark` on the statements of `b` and those nested in them, outer
/// ones first, except the statements inside one for which `mark` returned
/// true: what the passes that mark innermost loops (divcheck, scan) walk.
void markOutermost(Block& b, const std::function<bool(Stmt&)>& mark);

/// The SparseMat variable S when `loop` is `for i in range(0, shape(S, 0),
/// 1)`: its iterations are S's rows, in order. Else null.
const VarRef* rowsLoopMatrix(const For& loop);

/// Calls `visit` on every `for` of `b` and those nested in it that runs
/// sequentially (neither a pfor nor inside one or a task), outer ones
/// first, with its owning pointer, which `visit` may replace; not on the
/// loops inside one for which `visit` returned true: what the passes that
/// rewrite or mark a sequential loop whole walk (nzrows, pairs).
void visitSequentialLoops(Block& b, const std::function<bool(StmtPtr&)>& visit);

}  // namespace pydd
