// Semantic analysis: names, types and ranks.
//
// Runs in four steps per function:
//  1. resolve: calls are bound to user functions or library entries,
//     keyword arguments to positions; `A.shape[k]`, `int32(x)` and the
//     typed-zero idiom `float64()` become library calls and casts.
//  2. infer: local types by fixed point. Constants seed it, assignment
//     unifies by NumPy's promotion, later information fills placeholders.
//  3. check: every variable has a type, or the error asks for an annotation.
//  4. finalize: every expression is typed and every implicit conversion is
//     an explicit Cast, so later stages never reason about promotion.
#pragma once

#include "frontend/Diagnostics.h"
#include "ir/IR.h"

namespace pydd {

/// Returns false if any error was reported.
bool analyzeModule(Module& m, Diagnostics& diag);

}  // namespace pydd
