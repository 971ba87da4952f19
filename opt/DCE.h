// Dead code elimination: removes assignments whose value nobody reads.
//
// An assignment `x = v` to a variable is dead when no expression of the
// function reads x (fusion and LICM leave such copies behind, and so do
// users). It is removed only when evaluating v has no side effects and
// cannot raise: deleting a division by zero or a shape mismatch would hide
// the exception the program raises. Removal repeats until nothing changes
// (one removed read can make another assignment dead).
#pragma once

#include "ir/IR.h"
#include "opt/PassManager.h"

namespace pydd {

/// Removes dead assignments from `f`. Counts "dce: assignments removed".
void eliminateDeadCode(Function& f, PassContext& context);

}  // namespace pydd
