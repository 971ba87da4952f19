// Reverse-mode differentiation of kernels: `grad(f, argnum)(args)` and
// `value_and_grad(f, argnum)(args)` in pydd source, `pyddc --grad=f:0`.
//
// The derivative of a float-valued kernel f is generated as pydd source,
// parsed and added to the module before sema, so sema, the optimizer and
// the backends treat it like any kernel and `--emit=ir` prints it. The
// generator reads f as sema types it (on a copy of the module), because the
// adjoint of an operation depends on its operands' types and ranks.
//
// The algorithm is Tapenade's store-all reverse mode, with Enzyme's shadow
// memory for in-place updates: the forward sweep runs f's statements and,
// before each assignment that overwrites a value (a variable assigned more
// than once or in a loop, an element or slice of an array), pushes the old
// value on a tape (a List per type); it records each branch taken and each
// loop's trip count. The reverse sweep walks the statements backwards,
// pops each overwritten value back (so every operand has the value it had
// when the statement ran, and arrays the caller passed end as they began)
// and adds the statement's contribution to the adjoint `_b_<name>` of each
// float operand, from the derivative rule of its catalog entry
// (stdlib/Catalog.h DerivativeRule). An element-wise contribution is summed
// back to a broadcast operand's rank. Integers, booleans and comparisons
// carry no derivative. An `if` whose branch returns takes the statements
// after it as its else branch, so early returns differentiate.
//
// Not differentiated (a located error at the construct): break/continue in
// a loop, return inside a loop, element iteration `for x in a`, calls of
// other kernels, container values, I/O, tasks. pfor loops run serially in
// the derivative (the tape orders their iterations).
#pragma once

#include <string>
#include <vector>

#include "frontend/Diagnostics.h"
#include "ir/IR.h"

namespace pydd {

struct GradRequest {
  std::string function;
  std::vector<int> argnums;  // one: the derivative itself; more: a tuple
  bool withValue = false;    // value_and_grad: (value, derivative)
  SourceLoc loc;             // the call, for errors (none from the command line)
};

/// The name of the generated function: f__grad0, f__value_and_grad0_2.
std::string gradientName(const GradRequest& r);

/// What the parser makes of `grad(f, 0)(args)`: a call of this callee,
/// which addGradients renames to gradientName.
std::string gradientMarker(const GradRequest& r);

/// Generates the derivative of every function that `requests` or a
/// gradient call in `m` asks for, appends it to `m` (untyped, before sema)
/// and points the calls at it. Returns false after reporting a located
/// error (a function that is not differentiable, an unknown function).
bool addGradients(Module& m, Diagnostics& diag, std::vector<GradRequest> requests);

/// Parses `f[:n[,m...]]` (pyddc --grad's value); false if malformed.
bool parseGradRequest(const std::string& text, bool withValue, GradRequest& out);

}  // namespace pydd
