// Privatization and reductions for `pfor`, captures for `async`: what the
// OpenMP code of a module's parallel constructs may share and what each
// thread or task must own. Code generation prints the clauses this plan
// gives; it decides nothing itself.
//
// A `pfor` over a range runs as an OpenMP parallel loop when every variable
// its body assigns falls in one of these classes (the paper's section 5.4,
// plus reductions):
//   - private: on every path through one iteration, the variable is
//     assigned before it is read (the loop variable, temporaries, arrays
//     allocated per iteration, inner loops' variables). A private variable
//     that is read anywhere in the function outside the loop is
//     lastprivate, and must then be assigned on every path to the end of
//     the iteration: it leaves the loop with the last iteration's value, as
//     the sequential loop leaves it.
//   - reduction: every statement of the body that mentions the variable is
//     one update `s = s OP e` (also written `s OP= e`) with one operator,
//     e not reading s: +, -, *, &, |, ^, `max(s, e)`, `min(s, e)` (a
//     catalog function with an OpenMP combiner), `s or e`, `s and e` (e
//     then has no effect and cannot raise, since each thread's copy starts
//     from the operator's identity and e is evaluated more often than the
//     short-circuit would). Float sums and products are then added in
//     another order than the sequential loop's: the result may differ in
//     the last bits.
// Arrays, sparse matrices and containers that the body does not rebind are
// shared: the programmer's pfor states that iterations write disjoint
// elements. A variable read before it is assigned in an iteration, which is
// not a reduction, carries a value from one iteration to the next: the loop
// then runs sequentially, with a warning at the read naming the variable.
// So does a loop whose body holds a `return`.
//
// Errors (the program is wrong whatever the schedule): a call that modifies
// a list, dict or heap the body did not create (append, heappush, a dict
// store...) in a pfor or async body outside `isolated`.
//
// A pfor whose body is exactly one pfor over a range whose bounds the outer
// body does not assign, without effects and that cannot raise, is
// collapsed with it (one iteration space); any other pfor inside a
// parallel loop runs sequentially in its iteration.
//
// An `async` block copies every variable it mentions when the task is
// created (OpenMP firstprivate, X10's capture): arrays keep sharing their
// elements, but an assignment to a captured scalar in the task is not seen
// after it (a warning when the variable is read outside the task).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace pydd {

struct ReductionClause {
  std::string var;
  std::string op;  // OpenMP's reduction identifier: + * & | ^ max min && ||
};

struct ParallelLoopPlan {
  bool parallel = false;
  /// 2 when the body's only statement, a pfor, is merged into this loop.
  unsigned collapse = 1;
  /// The pfor is merged into the loop that encloses it (collapse 2 there).
  bool collapsedIntoParent = false;
  /// Iterations hold loops or kernel-function calls: their costs vary, so
  /// threads take iterations as they finish (dynamic schedule).
  bool coarse = false;
  std::vector<std::string> privates, lastprivates;
  std::vector<ReductionClause> reductions;
  /// Why the loop runs sequentially (a comment in the C++).
  std::string reason;
};

struct ParallelFinding {
  SourceLoc loc;
  bool error = false;
  std::string message;
};

struct ParallelPlan {
  std::map<const For*, ParallelLoopPlan> loops;
  /// Every async block: the variables its task copies at creation.
  std::map<const Task*, std::vector<std::string>> captures;
  /// Functions whose bodies create tasks (they run as an implicit finish).
  std::map<const Function*, bool> spawnsTasks;
  /// Warnings and errors, in source order.
  std::vector<ParallelFinding> findings;
};

/// Plans every pfor and async of `m` (typed IR, after the optimizer: the
/// plan describes the code that is emitted). `boundsCheck`: element indices
/// may raise (so an `or`/`and` operand that indexes is not evaluated more
/// often than the sequential short-circuit would).
ParallelPlan planParallelism(const Module& m, bool boundsCheck);

}  // namespace pydd
