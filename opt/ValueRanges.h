// Value ranges of integer variables, as far as code generation needs them.
#pragma once

#include <set>
#include <string>

#include "ir/IR.h"

namespace pydd {

/// Variables of `f` that are non-negative wherever they are read: every
/// definition is a range loop from a non-negative literal start with a
/// positive literal step, the row or column part of a tuple that a
/// sparse iteration (`S.row(i)`, `S.nonzeros()`) yields, unpacked, or an
/// assignment of a non-negative expression (`nb = j`, the copies that
/// filtered loops and fusion make), or the step of an ascending scan
/// (While::scanIndex: `j += 1` keeps j non-negative); parameters are never
/// in the set.
/// Element indices by them need no negative-index wrap, and a fused
/// loop's test that a folded index is in range needs no lower bound.
std::set<std::string> nonNegativeVars(const Function& f);

/// Whether `e` is surely non-negative: a non-negative integer literal, an
/// integer variable of `nonNegativeVars`, a bool cast to a number, or a
/// widening cast of one of these. No arithmetic: with wrapping int64 a sum
/// of non-negative values can be negative.
bool nonNegative(const Expr& e, const std::set<std::string>& nonNegativeVars);

}  // namespace pydd
