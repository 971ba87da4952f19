// pydd runtime: basic slicing (a[1:, 2], a[::-1]) as views sharing the buffer.
#pragma once

#include <cstdint>
#include <type_traits>

#include "pydd/array.h"

namespace pydd {

/// A Python slice; `has_start`/`has_stop` say whether the bound was written.
struct Slice {
  int64_t start, stop, step;
  bool has_start, has_stop;
};

namespace detail {

/// Python's slice.indices(n): clamps the bounds into the axis and returns
/// the number of selected elements; `first` receives the first index.
inline int64_t slice_indices(const Slice& s, int64_t n, int64_t* first) {
  if (s.step == 0) throw Error(ErrorKind::ValueError, "slice step cannot be zero");
  const bool back = s.step < 0;
  const int64_t lower = back ? -1 : 0, upper = back ? n - 1 : n;
  auto clamp = [&](int64_t v) {
    if (v < 0) return v + n < lower ? lower : v + n;
    return v > upper ? upper : v;
  };
  const int64_t start = s.has_start ? clamp(s.start) : (back ? upper : lower);
  const int64_t stop = s.has_stop ? clamp(s.stop) : (back ? lower : upper);
  *first = start;
  if (back) return start > stop ? (start - stop - 1) / -s.step + 1 : 0;
  return stop > start ? (stop - start - 1) / s.step + 1 : 0;
}

/// Applies one index to axis `axis` of the source; appends an output axis
/// for a Slice, none for an integer.
struct SliceBuilder {
  const int64_t* shape;
  const int64_t* strides;
  int64_t offset = 0;
  int out_rank = 0;
  int64_t out_shape[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};

  void apply(int axis, int64_t i) { offset += checked_index(i, shape[axis], axis) * strides[axis]; }
  void apply(int axis, const Slice& s) {
    int64_t first;
    const int64_t len = slice_indices(s, shape[axis], &first);
    // An empty slice keeps the base pointer: `first` may lie outside the axis.
    if (len > 0) offset += first * strides[axis];
    out_shape[out_rank] = len;
    out_strides[out_rank++] = strides[axis] * s.step;
  }
  void whole(int axis) {
    out_shape[out_rank] = shape[axis];
    out_strides[out_rank++] = strides[axis];
  }
};

}  // namespace detail

/// a[ix...]: each ix is an integer (drops its axis; negative wraps; always
/// bounds-checked) or a Slice. Axes after the last ix are taken whole. The
/// result aliases `a`'s buffer, like a NumPy view.
template <int M, typename T, int N, typename... Ix>
Array<T, M> subarray(const Array<T, N>& a, Ix... ix) {
  static_assert(sizeof...(Ix) <= N, "too many indices for array");
  static_assert(M == N - (0 + ... + (std::is_same_v<Ix, Slice> ? 0 : 1)), "result rank mismatch");
  static_assert(((std::is_same_v<Ix, Slice> || std::is_integral_v<Ix>) && ...), "index must be an integer or Slice");
  detail::SliceBuilder b{a.shape(), a.strides()};
  int axis = 0;
  (b.apply(axis++, ix), ...);
  for (; axis < N; ++axis) b.whole(axis);
  return a.template alias<M>(a.data() + b.offset, b.out_shape, b.out_strides);
}

}  // namespace pydd
