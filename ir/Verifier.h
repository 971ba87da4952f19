// The IR verifier: checks the invariants every pass may assume and must
// keep. Run after sema and after every pass under `pyddc --verify-each`
// (always on in the test suite), so that a pass that breaks the IR is caught
// at the pass, not as a C++ compiler error later.
#pragma once

#include <string>

#include "ir/IR.h"

namespace pydd {

/// Checks `f` of `m`: every expression is typed (no Unknown type; void only
/// for calls used as statements), every call is resolved to a kernel
/// function of `m` or a catalog entry with its keywords moved into its
/// arguments, no sema-only node is left (attributes), every variable read or
/// assigned is a parameter or a declared local, every block exists.
/// Returns an empty string, or what is wrong and where.
std::string verifyFunction(const Module& m, const Function& f);
/// verifyFunction over every function; the first problem found.
std::string verifyModule(const Module& m);

}  // namespace pydd
