// Division checks after the loop: in an innermost range loop whose only
// possible error is a float division by zero, the divisors are tested as
// the loop runs (an OR into a flag, no branch) and the ZeroDivisionError is
// raised after the loop.
//
//     for k in range(1, n + 1):          zero = 0
//         s += 1.0 / (k * k)      ==>    for k in range(1, n + 1):
//                                            zero |= (k * k == 0)
//                                            s += 1.0 / (k * k)    # IEEE: inf
//                                        if zero: raise ZeroDivisionError
//
// Python's `/` raises on a zero divisor where C++ gives an infinity, so each
// division tests its divisor; a test that may throw is a branch out of the
// loop, which keeps g++ from vectorizing it (pisum: 1.5x the hand-written
// loop's time). With the test folded into a flag the loop has no exit and
// g++ vectorizes the divisions (a sum keeps its order: g++ adds the lanes
// in sequence).
//
// When it is safe: nothing the iterations after the first zero divisor do
// can be seen, so raising after the loop is raising at that division.
//   - The loop is a serial range loop (not a pfor, not a loop fusion made
//     to run on threads) whose header divides nothing: a zero divisor in
//     its bounds must raise before the first iteration, and code
//     generation emits the header with the loop's flag in effect.
//   - Its body runs no loop (so no Ctrl-C check runs inside it), returns
//     nothing, and contains only assignments of scalar variables, `if`s,
//     `break`, `continue` and `pass`: no element store, no call with
//     effects, no I/O. A kernel has no `try`, so the scalars' values are lost
//     with the exception; a `break` after the zero divisor only ends the
//     loop early, and the flag still raises.
//   - The only node of the body that may raise is a division of real
//     floats (one error, one message, whichever division it is). `//` and
//     `%` divide by nonzero literals only; a call is an element-wise
//     function of real scalars that cannot raise (integer `**` can).
//   - An array element read's indices read only variables the body does not
//     assign (and the loop variable when the body does not assign it): an
//     index can then not be computed from an infinity that the loop would
//     not have reached, and every element read is one the loop as written
//     could make.
//
// The loop is marked For::defersDivisionChecks; code generation declares
// the flag, emits its float divisions as pydd::truediv_deferred and the
// test after the loop.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Marks the loops of `f` whose division checks can wait for the loop's
/// end. Counts "divcheck: loops that test divisors after the loop".
void deferDivisionChecks(Function& f, PassContext& context);

}  // namespace pydd
