// Which arrays are known to have a unit-stride last axis.
#pragma once

#include <set>
#include <string>

#include "ir/IR.h"

namespace pydd {

/// The local arrays of `f` whose last axis has unit stride wherever they
/// are read: every assignment to them is a new array made by the runtime
/// (an allocation such as `empty`, a copy, `arange`, an element-wise
/// function's result; all of them C-contiguous) or another such local.
/// Parameters are never in the set (a caller may pass any view), nor is
/// a local that a loop, a tuple unpacking or any other expression assigns.
/// Code generation reads them without testing their stride.
std::set<std::string> unitStrideArrays(const Function& f);

}  // namespace pydd
