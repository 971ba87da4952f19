// Forward substitution: an array computed into a variable that only the
// next statement reads is computed inside that statement instead.
//
// `diff = X - y` followed by `d = (diff * diff).sum(1)` becomes
// `d = ((X - y) * (X - y)).sum(1)`, which fusion computes in one pass with
// no temporary; `P = X @ Y.T` followed by `R = spm_mul(S, P)` becomes
// `R = spm_mul(S, X @ Y.T)`, which sampled fusion computes only at S's
// entries. Users name their intermediate arrays; NumPy materializes each
// one, and so did pyddc.
//
// When it is safe: `t = E` and the statement S after it are in the same
// block, so S always sees the value just assigned; t is assigned nowhere
// else and read nowhere but in S, so nothing else sees the difference; E has
// no side effects and t has E's type. Each read of t in S is an operand of
// catalog calls without side effects all the way up to S's value (not under
// `and`/`or`, a conditional expression or a subscript, where it might not be
// evaluated or would be written), and nothing S evaluates before it may raise
// or has effects, so E runs, and raises, at the same point among S's effects.
// A value that S reads twice is substituted only when E is an element-wise
// tree over variables, literals and views and both reads are operands of
// element-wise operations: fusion then computes E per element, twice, with
// no array, instead of once into memory; anything else would be computed
// twice.
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Substitutes single-statement array temporaries of `f` into their use.
/// Counts "subst: arrays substituted".
void forwardSubstitute(Function& f, PassContext& context);

}  // namespace pydd
