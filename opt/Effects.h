// What evaluating an expression or running a statement may do: the
// questions every transform asks before it moves, merges or deletes code,
// and that code generation asks to order operands. Answers come from the
// IR and the catalog's summaries (writesArgs, io, returnsView), never from
// function names. All are conservative: "may" means "cannot rule out".
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/IR.h"

namespace pydd {

/// Writes memory, prints, or calls a kernel function (whose effects are not
/// summarized).
bool hasSideEffects(const Expr& e);
/// Reads array, list or dict elements (which a write elsewhere could change).
bool readsElements(const Expr& e);
/// May raise: a division, a power or a shift (by zero, to a negative
/// exponent or count), a container subscript, a view, a checked element
/// index, any call (shapes that do not broadcast, an empty reduction, a
/// missing key...).
bool mayRaise(const Expr& e, bool boundsCheck);
/// May allocate memory: any call whose result is an array, a list, a dict, a
/// tuple holding them, or a sparse matrix, and every container literal.
bool mayAllocate(const Expr& e);
/// The three questions above for the node `n` alone, not its operands: for
/// an analysis that summarizes every subtree bottom-up in one walk.
bool nodeHasSideEffects(const Expr& n);
bool nodeMayRaise(const Expr& n, bool boundsCheck);
bool nodeMayAllocate(const Expr& n);

/// Whether a value of type `t` holds arrays, sparse matrices or containers.
bool holdsReference(const Type& t);

/// Variables `e` reads.
void collectReads(const Expr& e, std::set<std::string>& names);
/// Variables a statement (and everything nested in it) may assign: plain
/// assignment targets and loop variables. Element stores are not variable
/// assignments (see writtenElementTypes).
std::set<std::string> assignedVars(const Stmt& s);
/// How often each variable is read and bound (assigned, or a loop's
/// variable) in the statements counted: the def/use question of passes that
/// move a single-use value to its use.
struct VarCounts {
  std::map<std::string, int> reads, binds;
  void count(const Expr& e);
  void count(const Stmt& s);
};
/// Element types of the arrays, sparse matrices and containers whose memory
/// a statement may write (element and slice stores, in-place `op=`, library
/// calls that write an argument, the arrays passed to a kernel function),
/// with "*" when it passes a kernel function a container or a tuple holding
/// references (anything may be written). Two arrays of different element types never
/// share memory, which is what makes this a usable alias summary.
std::set<std::string> writtenElementTypes(const Stmt& s);
/// The key writtenElementTypes uses for the memory `t` refers to.
std::string memoryKey(const Type& t);
/// Whether `s` contains a print or other I/O.
bool doesIO(const Stmt& s);
/// Whether a variable of `names` appears in `e` (or in an expression of `s`).
bool mentions(const Expr& e, const std::set<std::string>& names);
bool mentions(const Stmt& s, const std::set<std::string>& names);

/// Whether control cannot fall off the end of `b` (a conservative answer).
bool alwaysReturns(const Block& b);
/// Whether `b` contains a break, continue or return that ends the current
/// iteration of `b`'s enclosing loop early (nested loops' own break and
/// continue do not).
bool exitsEarly(const Block& b);
/// Whether `b` contains a break of its enclosing loop (nested loops' own
/// breaks do not count).
bool containsBreak(const Block& b);

}  // namespace pydd
