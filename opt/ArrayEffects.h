// Which array parameters a function may write through.
//
// The Python bridge accepts a read-only NumPy array only for a parameter
// the kernel never stores into. The analysis is conservative: a parameter
// counts as written unless every use of it is a read (an element load,
// shape queries, iteration) or a pass to a parameter that is itself
// read-only, found by fixed point over the call graph.
#pragma once

#include <vector>

#include "ir/IR.h"

namespace pydd {

/// written[i] for each parameter of `f` (false for scalars).
std::vector<bool> writtenArrayParams(const Module& m, const Function& f);

}  // namespace pydd
