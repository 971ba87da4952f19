// pydd runtime: Python builtins on scalars that the library catalog maps to.
#pragma once

#include <chrono>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "pydd/errors.h"

namespace pydd {

template <typename T>
T abs_value(T x) {
  // fabs clears the sign of -0.0, as Python's abs does.
  if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
  else return x < T(0) ? T(-x) : x;
}

// Python's min/max return the first of equal arguments and propagate a NaN
// only when it comes first; these follow that order of comparisons.
template <typename T>
T min_value(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
T max_value(T a, T b) {
  return b > a ? b : a;
}

/// Intrepydd's time(): the wall clock in seconds (Python's time.time()).
inline double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// NumPy's rule for an axis argument known only at run time. NumPy's
/// AxisError is both an IndexError (what `A.shape[k]` raises) and a
/// ValueError (what reductions are documented to raise).
inline int normalize_axis(int64_t axis, int rank, ErrorKind kind = ErrorKind::IndexError) {
  if (axis < -rank || axis >= rank) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "axis %lld is out of bounds for array of dimension %d",
                  static_cast<long long>(axis), rank);
    throw Error(kind, msg);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

/// A function declared to return a value reached its end (Python would
/// have returned None, which the declared type cannot hold).
[[noreturn]] inline void missing_return(const char* function) {
  char msg[160];
  std::snprintf(msg, sizeof msg, "%s() reached its end without returning a value", function);
  throw Error(ErrorKind::TypeError, msg);
}

/// Python's range() refuses a zero step.
inline void check_range_step(int64_t step) {
  if (step == 0) throw Error(ErrorKind::ValueError, "range() arg 3 must not be zero");
}

/// How many values range(start, stop, step) yields, computed as CPython
/// does: in unsigned arithmetic, so no bound or step overflows (a loop
/// that counted `i += step` past INT64_MAX would wrap and never end).
inline uint64_t range_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0) return start < stop ? (uint64_t(stop) - uint64_t(start) - 1) / uint64_t(step) + 1 : 0;
  return start > stop ? (uint64_t(start) - uint64_t(stop) - 1) / (0 - uint64_t(step)) + 1 : 0;
}

/// Python's << and >> on fixed-width integers: counts past the width give
/// 0 (or -1 for a negative value shifted right), a negative count raises.
template <typename T>
T shift_left(T a, T count) {
  if (count < 0) throw Error(ErrorKind::ValueError, "negative shift count");
  using U = typename std::make_unsigned<T>::type;
  if (count >= T(sizeof(T) * 8)) return T(0);
  return static_cast<T>(static_cast<U>(a) << count);
}
template <typename T>
T shift_right(T a, T count) {
  if (count < 0) throw Error(ErrorKind::ValueError, "negative shift count");
  if (count >= T(sizeof(T) * 8)) return a < 0 ? T(-1) : T(0);
  return static_cast<T>(a >> count);
}

}  // namespace pydd
