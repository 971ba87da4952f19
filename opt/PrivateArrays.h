// Local arrays whose memory only their own variable reaches.
//
// An array is private when it is a local bound once, by a catalog call
// that returns a new array (zeros, empty, copy, an element-wise result),
// and its memory never escapes: it is never passed to a kernel function,
// put in a container or a tuple, or given to a call that writes another
// argument. Views of it may be bound to variables (listed, so that a pass
// can follow them), but a view of such a view counts as an escape, and
// so does any use of a view variable other than reading it in place.
//
// What it gives a pass: nothing but the array's own variable and its view
// variables can read or write its elements, so a store through it cannot
// change any other array, and no parameter or other local shares its
// memory (the promote pass keeps such arrays in registers; fusion drops
// its may_share_memory test against other operands).
//
// Computed on the whole function: a pass that rewrites must ask before it
// creates new views of an array.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/IR.h"

namespace pydd {

struct PrivateArray {
  std::set<std::string> views;  // variables bound to views of the array
};

/// The private arrays of `f`, by variable name.
std::map<std::string, PrivateArray> privateArrays(const Function& f);

}  // namespace pydd
