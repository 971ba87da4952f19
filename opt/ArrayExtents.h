// Which arrays surely have equal extents: the analysis behind fusion's
// shape tests.
//
// A fused loop runs when its operands' extents equal the loop's; fusion
// tests that at run time and keeps a general (broadcasting) form for the
// other case. Most such tests compare an array with itself or with arrays
// computed element-wise from it (`p = 2 * t * (n - t)`, then `p - q`), so
// they always hold and the general form is dead code that the C++
// compiler still has to build. This analysis names each extent that is
// fixed for a whole call of the function by the values it comes from, so
// two extents with one name are equal wherever both arrays exist.
//
// An extent's name is an integer that cannot change once set: a literal,
// a variable assigned once outside every loop (named as its value is, so
// `n = shape(a, 0)` is a's extent), or an integer parameter never
// assigned. An array variable has named extents when every value it
// is ever assigned has them, the same ones:
//   - an allocation (`zeros((n, m))`, `full(n, x)`, `arange(n)`, the
//     `_like` forms and copies of such an array);
//   - an element-wise call whose array operands all have the result's rank
//     and the same named extents (no broadcasting can happen);
//   - another such variable; a parameter's initial value, whose extent k
//     is named after the parameter.
// `arange(n)` has max(n, 0) elements and `zeros(n)` raises for n < 0, so
// arrays sharing the name n, whenever both exist, have equal extents.
// Loop variables, tuple unpacking and any other value leave a variable
// unnamed. Assignments that refer to the variable itself
// (`t = maximum(t, 0)`) are resolved optimistically, to the largest
// consistent answer; by induction over the assignments executed, it holds
// at every point of every call.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace pydd {

class ArrayExtents {
 public:
  using Names = std::vector<std::string>;  // one per axis
  explicit ArrayExtents(const Function& f);

  /// The extents of array variable `name`, when named.
  std::optional<Names> ofVar(const std::string& name) const;
  /// The extents of array expression `e` evaluated now, when named.
  std::optional<Names> of(const Expr& e) const;
  /// Records a temporary assigned `value` exactly once (a pass's spill).
  void addTemporary(const std::string& name, const Expr& value);

 private:
  /// What one assignment binds a variable to: `value`, or its element
  /// `element` (`a, b = x, y`; `n, m = shape(X)`). Null: unknown.
  struct Binding {
    const Expr* value = nullptr;
    int element = -1;
  };
  std::optional<std::string> intName(const Expr& e, int depth = 0) const;
  std::optional<std::string> intName(const Binding& b, int depth) const;
  /// Evaluates `e` under the current assumptions; Unknown leaves are
  /// optimistic (they meet anything).
  struct Value {
    enum Kind { Unknown, Named, Unnamed } kind = Unknown;
    Names names;
  };
  Value eval(const Expr& e) const;
  Value eval(const Binding& b) const;
  static Value meet(const Value& a, const Value& b);

  /// Integers that cannot change once set, with their value (null for a
  /// parameter): one is named as its value is, when that has a name.
  std::map<std::string, Binding> FixedInts;
  std::map<std::string, Value> Arrays;
};

}  // namespace pydd
