// Value ranges of integer variables, as far as code generation needs them.
#pragma once

#include <set>
#include <string>

#include "ir/IR.h"

namespace pydd {

/// Variables of `f` that are non-negative wherever they are read: every
/// definition is a range loop from a non-negative literal start with a
/// positive literal step, or the row or column part of a tuple that a
/// sparse iteration (`S.row(i)`, `S.nonzeros()`) yields, unpacked
/// (parameters are never in the set). Element indices by them need no
/// negative-index wrap.
std::set<std::string> nonNegativeVars(const Function& f);

}  // namespace pydd
