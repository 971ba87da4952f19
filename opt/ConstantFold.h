// Constant folding: evaluates operations on literals at compile time.
#pragma once

#include "ir/IR.h"

namespace pydd {

/// Folds conversions of literals and int64/float64/bool arithmetic,
/// comparisons and logic whose operands are literals, with the runtime's
/// semantics (wrapping int64, Python's floor division and modulo). Division
/// by zero is left for the runtime to raise.
void constantFold(Function& f);

}  // namespace pydd
