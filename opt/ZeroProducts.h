// Products with a zero skip their costly operand: where `m` is zero and `y`
// is provably finite and nonzero, `m * y` is a zero whose sign `m * ±1.0`
// gives, so `y` need not be computed.
//
//     A * log(1 - exp(-S))   ==>   A * (-1.0 if A == 0 and 5.5e-16 <= S <= 36.7
//                                       else log(1 - exp(-S)))
//
// NumPy code multiplies by 0/1 matrices to keep some terms (bigCLAM's
// log-likelihood keeps the edges' terms of a dense matrix): the costly
// function is then computed for every element, and most of its results are
// multiplied by zero. The guard gives the same bits at every element: m is
// ±0 there and y is finite with the sign found, so m * y and m * ±1.0 are
// the same signed zero.
//
// The range of y's one variable operand `v` in which y is finite with a
// sign is found at compile time by interval arithmetic over y's functions
// (the catalog's RealFunction: each is monotone in the operand that varies,
// so y is monotone in v and its values over [L, H] lie between its values
// at L and H), at endpoints found by bisection. A libm function's bounds
// are widened by twice its documented error, so a libm at run time that
// rounds differently from the compiler's (or is not monotone within its
// error) stays inside them; IEEE arithmetic is the same everywhere.
//
// When it is applied: the product is a float64 `mul` (or `*`) of a scalar
// `m` of a real or bool type and a float64 tree `y` of RealFunctions with
// exactly one leaf `v` that is not a literal, and calls a costly one (exp,
// log: tens of cycles, not vectorized). `m` and `v` are evaluated again by
// the test, so each must be a small expression that cannot raise, has no
// effects and calls nothing costly: variables, elements of named arrays at
// indices made of variables and literals (unchecked: not with
// --bounds-check), and comparisons, conversions and cheap element-wise
// functions of them (a mask `where(x > t, 1, 0)` that fusion inlined).
// Nothing observable then happens twice or in another order, and the test
// costs a few instructions.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Guards the products with a costly operand in `f`. Counts "zeromul:
/// products guarded".
void guardZeroProducts(Function& f, PassContext& context);

}  // namespace pydd
