// Which array and sparse-matrix parameters a function may write through.
//
// The Python bridge accepts a read-only NumPy array only for a parameter
// the kernel never stores into, and copies in a SciPy matrix the kernel
// may write. The analysis is conservative: a parameter counts as written
// unless every use of it is a read (an element load, a library call that
// does not write that argument, iteration, returning it) or a pass to a
// parameter that is itself read-only, found by fixed point over the call
// graph; an alias it does not follow (`B = A`, a view, the parameter put
// in a tuple or a list) counts as a write.
#pragma once

#include <map>
#include <vector>

#include "ir/IR.h"

namespace pydd {

/// For every function f of `m`, written[i] for each parameter of f (false
/// for scalars and containers). One fixed point for the whole module: a
/// caller asks once, not once per function (that was quadratic in the
/// number of functions).
std::map<const Function*, std::vector<bool>> writtenArrayParams(const Module& m);

}  // namespace pydd
