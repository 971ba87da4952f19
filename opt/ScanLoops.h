// Scan loops: a while loop that steps an index through an array, reading
// an element at it each time its condition is tested, is bounded by the
// array's extent the way a counted loop is.
//
//     while a[i] < pivot:          # quicksort's partition scan
//         i += 1
//
// Two costs of a general while loop buy nothing in such a loop: the Ctrl-C
// check at every back edge (a load and a branch in a loop of three
// instructions), and, for an index that could be negative, the wrap of
// each element index (Python's a[-1]). quicksort spent 6% of its time on
// the first and 11% on both (bench/README.md).
//
// When it is safe: the loop is marked While::scanIndex (the index) and
// While::scanStep (its step) when
//   - its body steps the int64 variable i by an integer literal k,
//     0 < |k| <= 2^20, in one statement at its top level (`i += k`,
//     `i = i + k`, `i -= k`), assigns i nowhere else and has no
//     `continue`, so every iteration that finishes moves i by k;
//   - its body runs no loop and no task, and it calls only library
//     functions of scalars and queries of a value's header (`len(a)`): a
//     kernel function could recurse, a function of an array could run long;
//   - whenever its condition is true, the condition has read `a[..., i, ...]`
//     for a dense array variable `a` the body does not rebind (the read is
//     in an `and` operand, a comparison's operand, the first operand of an
//     `or`... evaluated whenever the condition holds).
// Then an iteration that starts has read a[..., i, ...] with i in
// [-n, n) for that axis's extent n (a read outside it is an IndexError
// with --bounds-check, undefined without, as everywhere), so at most
// 2n/|k| + 1 iterations run: the loop ends like a counted loop of that
// length, which is not checked either. With k > 0 and i >= 0 at entry, i
// stays in [0, n + k) while the reads are in range: no wrap, no overflow.
//
// Code generation (CppEmitter) drops the scan's Ctrl-C check (the loop
// around it checks before each scan, as it does before an inner range
// loop) and, for k > 0 and an index not known non-negative, runs the loop
// as `if (i >= 0) <copy without wraps of i> else <loop as written>`.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Marks the scan loops of `f`. Counts "scan: while loops that step an
/// index through an array".
void markScanLoops(Function& f, PassContext& context);

}  // namespace pydd
