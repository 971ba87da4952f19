// Which locals a rare branch can declare itself.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace pydd {

/// For each outermost rare branch of `f` (an If's elseBody with rareElse:
/// a fused loop's general path, which code generation emits as a cold
/// lambda), the locals to declare inside that branch instead of at the top
/// of the function.
///
/// Why: a local the lambda captures by reference escapes, so g++ keeps it
/// in memory and compiles its construction, destruction and exception
/// cleanup into the enclosing function too; a fused loop's general path
/// brings a dozen such temporaries (broadcast views, shapes, indices). Moved
/// into the lambda, they cost sinkhorn-WMD's -O3 build 0.16 s less.
///
/// Safe when: the local is referenced nowhere else in `f`, and the branch
/// assigns it before any use on every path through the branch (its first
/// reference is a plain assignment, or a loop that sets it, or is inside a
/// loop or if whose every referencing part does so). Then no value flows
/// into the branch, or out of it, or from one run of it to the next, so a
/// fresh variable per run means the same.
std::map<const Block*, std::vector<std::string>> coldBranchLocals(const Function& f);

/// For each outermost rare branch of `f`, every variable the branch refers
/// to: reads, assigns or loops over. Code generation passes those declared
/// outside the branch to it when it emits the branch as a function of its
/// own (see the emitter's outlined cold branches).
std::map<const Block*, std::set<std::string>> coldBranchReferences(const Function& f);

}  // namespace pydd
