// pydd runtime: NumPy's statistics, scans and constructors that are not a
// single ufunc or reduction: var/std (ddof, axis), count_nonzero, trace,
// cumsum/cumprod, diff, linspace, eye, outer, isclose.
//
// Each follows NumPy's own algorithm where the order of float operations
// shows in the result: var is mean, then the squared deviations, then their
// sum (numpy/core/_methods.py _var); linspace scales arange as
// numpy/core/function_base.py does; cumsum/cumprod accumulate in order.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "pydd/array.h"
#include "pydd/elementwise.h"
#include "pydd/reduce.h"
#include "pydd/scalar.h"

namespace pydd {

namespace detail {

/// The view of `m` (the reduction of `axis` of an N-D array with shape
/// `shape`) with that axis put back at length 1: what NumPy's keepdims
/// gives, for broadcasting against the input.
template <class R, int N>
Array<R, N> keep_axis(const Array<R, N - 1>& m, const int64_t* shape, int axis) {
  int64_t s[N], st[N];
  for (int k = 0, j = 0; k < N; ++k) {
    s[k] = k == axis ? 1 : shape[k];
    st[k] = k == axis ? 0 : m.stride(j++);
  }
  return m.template alias<N>(m.data(), s, st);
}

/// The squared deviations from `mu` (broadcast), in R.
template <class R, class T, int N, class M>
Array<R, N> squared_deviations(const Array<T, N>& a, const M& mu) {
  return map_new<R>("var", [](T x, R m) { const R d = convert<R>(x) - m; return d * d; }, a, mu);
}

/// A C-contiguous copy of `a` converted to R (what a scan works in).
template <class R, class T, int N>
Array<R, N> converted(const Array<T, N>& a) {
  return map_new<R>("convert", [](T x) { return convert<R>(x); }, a);
}

/// For a C-contiguous array of `shape`, the element count of one step
/// along `axis` (the product of the later extents).
template <int N>
int64_t inner_extent(const int64_t* shape, int axis) {
  int64_t inner = 1;
  for (int k = axis + 1; k < N; ++k) inner *= shape[k];
  return inner;
}

/// cumsum / cumprod of a C-contiguous array along `axis`, in place.
template <class F, class R, int N>
void scan_in_place(Array<R, N>& c, int axis) {
  const int64_t inner = inner_extent<N>(c.shape(), axis), n = c.shape(axis), size = c.size();
  R* p = c.data();
  for (int64_t j = 0; j < size; ++j)
    if ((j / inner) % n != 0) p[j] = F{}(p[j - inner], p[j]);
}

}  // namespace detail

/// keepdims=True of a reduction along `axis` (normalized): the (M)-D
/// result as an (M+1)-D view with that axis back at length 1.
template <class R, int M>
Array<R, M + 1> keep_axis_dim(const Array<R, M>& m, int64_t axis) {
  int64_t s[M + 1], st[M + 1];
  for (int k = 0, j = 0; k <= M; ++k) {
    s[k] = k == axis ? 1 : m.shape(j);
    st[k] = k == axis ? 0 : m.stride(j++);
  }
  return m.template alias<M + 1>(m.data(), s, st);
}
/// keepdims=True of a reduction over a tuple of fewer than N axes: the
/// (N-K)-D result as an N-D view with those axes back at length 1.
template <int N, class R, int M, class Axes>
Array<R, N> keep_axes_dims(const Array<R, M>& m, const Axes& axes) {
  static_assert(M + static_cast<int>(std::tuple_size_v<Axes>) == N, "the axes and the result's rank agree");
  bool reduced[N] = {};
  for (int k : detail::normalized_axes<N>(axes)) reduced[k] = true;
  int64_t s[N], st[N];
  for (int k = 0, j = 0; k < N; ++k) {
    s[k] = reduced[k] ? 1 : m.shape(j);
    st[k] = reduced[k] ? 0 : m.stride(j++);
  }
  return m.template alias<N>(m.data(), s, st);
}
/// keepdims=True of a reduction to one value: an N-D array of shape (1, ..., 1).
template <int N, class R>
Array<R, N> keep_all_dims(R value) {
  std::array<int64_t, N> ones;
  ones.fill(1);
  return Array<R, N>::filled(ones, value);
}

/// np.var(a, ddof=ddof) in R (float64 for integers, float32 kept).
template <class R, class T, int N>
R var(const Array<T, N>& a, int64_t ddof = 0) {
  const R mu = mean<R>(a);
  const int64_t n = a.size() - ddof;
  return sum<R>(detail::squared_deviations<R>(a, mu)) / static_cast<R>(n > 0 ? n : 0);
}
template <class R, class T, int N>
R stddev(const Array<T, N>& a, int64_t ddof = 0) {
  return std::sqrt(var<R>(a, ddof));
}
/// np.var(a, axis, ddof=ddof).
template <class R, class T, int N>
Array<R, N - 1> var_axis(const Array<T, N>& a, int64_t axis, int64_t ddof = 0) {
  const int k = detail::check_axis(axis, N);
  const Array<R, N - 1> mu = mean_axis<R>(a, k);
  Array<R, N - 1> s = sum_axis<R>(detail::squared_deviations<R>(a, detail::keep_axis<R, N>(mu, a.shape(), k)), k);
  const int64_t n = a.shape(k) - ddof;
  R* p = s.data();
  for (int64_t i = 0, e = s.size(); i < e; ++i) p[i] = p[i] / static_cast<R>(n > 0 ? n : 0);
  return s;
}
template <class R, class T, int N>
Array<R, N - 1> stddev_axis(const Array<T, N>& a, int64_t axis, int64_t ddof = 0) {
  Array<R, N - 1> v = var_axis<R>(a, axis, ddof);
  R* p = v.data();
  for (int64_t i = 0, e = v.size(); i < e; ++i) p[i] = std::sqrt(p[i]);
  return v;
}

/// np.var(a, axis=(i, j, ...), ddof=ddof): the mean over those axes, then
/// the mean of the squared deviations from it (NumPy's two passes).
template <class R, class T, int N, class Axes>
auto var_axes(const Array<T, N>& a, const Axes& axes, int64_t ddof = 0) {
  if constexpr (static_cast<int>(std::tuple_size_v<Axes>) == N) {
    detail::normalized_axes<N>(axes);
    return var<R>(a, ddof);
  } else {
    const auto mu = mean_axes<R>(a, axes);
    auto s = sum_axes<R>(detail::squared_deviations<R>(a, keep_axes_dims<N>(mu, axes)), axes);
    const int64_t n = detail::reduced_count(a, axes) - ddof;
    R* p = s.data();
    for (int64_t i = 0, e = s.size(); i < e; ++i) p[i] = p[i] / static_cast<R>(n > 0 ? n : 0);
    return s;
  }
}
template <class R, class T, int N, class Axes>
auto stddev_axes(const Array<T, N>& a, const Axes& axes, int64_t ddof = 0) {
  auto v = var_axes<R>(a, axes, ddof);
  if constexpr (static_cast<int>(std::tuple_size_v<Axes>) == N) {
    return std::sqrt(v);
  } else {
    R* p = v.data();
    for (int64_t i = 0, e = v.size(); i < e; ++i) p[i] = std::sqrt(p[i]);
    return v;
  }
}

/// np.count_nonzero(a).
template <class T, int N>
int64_t count_nonzero(const Array<T, N>& a) {
  return sum<int64_t>(detail::map_new<bool>("count_nonzero", [](T x) { return x != T(0); }, a));
}

/// np.trace(A): the sum of the main diagonal (a strided view), as sum<R>.
template <class R, class T>
R trace(const Array<T, 2>& a) {
  const int64_t n[1] = {a.shape(0) < a.shape(1) ? a.shape(0) : a.shape(1)};
  const int64_t s[1] = {a.stride(0) + a.stride(1)};
  return sum<R>(a.template alias<1>(a.data(), n, s));
}

/// np.cumsum(a) / np.cumprod(a): of the flattened array (C order), or
/// along `axis` keeping the shape.
namespace detail {
template <class F, class R, class T, int N>
Array<R, 1> scan_flat(const Array<T, N>& a) {
  Array<R, N> c = converted<R>(a);
  const int64_t n[1] = {c.size()}, s[1] = {1};
  Array<R, 1> flat = c.template alias<1>(c.data(), n, s);
  scan_in_place<F>(flat, 0);
  return flat;
}
template <class F, class R, class T, int N>
Array<R, N> scan_axis(const Array<T, N>& a, int64_t axis) {
  const int k = check_axis(axis, N);
  Array<R, N> c = converted<R>(a);
  scan_in_place<F>(c, k);
  return c;
}
}  // namespace detail
template <class R, class T, int N>
Array<R, 1> cumsum(const Array<T, N>& a) { return detail::scan_flat<op::add, R>(a); }
template <class R, class T, int N>
Array<R, 1> cumprod(const Array<T, N>& a) { return detail::scan_flat<op::mul, R>(a); }
template <class R, class T, int N>
Array<R, N> cumsum_axis(const Array<T, N>& a, int64_t axis) { return detail::scan_axis<op::add, R>(a, axis); }
template <class R, class T, int N>
Array<R, N> cumprod_axis(const Array<T, N>& a, int64_t axis) { return detail::scan_axis<op::mul, R>(a, axis); }

/// np.diff(a, n, axis): the n-th forward difference along `axis` (bools:
/// not_equal, as NumPy). The axis shrinks by n (to 0 at the least).
template <class T, int N>
Array<T, N> diff(const Array<T, N>& a, int64_t n = 1, int64_t axis = -1) {
  const int k = detail::check_axis(axis, N);
  if (n < 0) {
    char msg[80];
    std::snprintf(msg, sizeof msg, "order must be non-negative but got %lld", static_cast<long long>(n));
    throw Error(ErrorKind::ValueError, msg);
  }
  Array<T, N> c = detail::converted<T>(a);
  for (int64_t round = 0; round < n && c.shape(k) > 0; ++round) {
    int64_t shape[N];
    for (int j = 0; j < N; ++j) shape[j] = c.shape(j);
    const int64_t len = shape[k];
    shape[k] = len - 1;
    Array<T, N> out = Array<T, N>::empty(shape);
    const int64_t inner = detail::inner_extent<N>(shape, k), block = inner * (len - 1), size = out.size();
    const T* p = c.data();
    T* q = out.data();
    for (int64_t j = 0; j < size; ++j) {
      const int64_t from = (j / block) * inner * len + j % block;
      if constexpr (std::is_same_v<T, bool>) q[j] = p[from + inner] != p[from];
      else q[j] = static_cast<T>(p[from + inner] - p[from]);
    }
    c = out;
  }
  return c;
}

/// np.linspace(start, stop, num, endpoint) in float64, by NumPy's steps:
/// arange(num) * step + start (or / div * delta when the step is 0), the
/// last element set to stop.
inline Array<double, 1> linspace(double start, double stop, int64_t num = 50, bool endpoint = true) {
  if (num < 0) {
    char msg[80];
    std::snprintf(msg, sizeof msg, "Number of samples, %lld, must be non-negative.", static_cast<long long>(num));
    throw Error(ErrorKind::ValueError, msg);
  }
  const int64_t div = endpoint ? num - 1 : num;
  const double delta = stop - start;
  Array<double, 1> y = Array<double, 1>::empty({num});
  double* p = y.data();
  const double step = div > 0 ? delta / static_cast<double>(div) : std::nan("");
  for (int64_t i = 0; i < num; ++i) {
    const double x = static_cast<double>(i);
    if (div > 0) p[i] = (step == 0 ? x / static_cast<double>(div) * delta : x * step) + start;
    else p[i] = x * delta + start;
  }
  if (endpoint && num > 1) p[num - 1] = stop;
  return y;
}

/// np.eye(n, m, k): ones on the k-th diagonal.
template <class T>
Array<T, 2> eye(int64_t n, int64_t m, int64_t k = 0) {
  if (n < 0 || m < 0) throw Error(ErrorKind::ValueError, "negative dimensions are not allowed");
  Array<T, 2> a = Array<T, 2>::zeros({n, m});
  for (int64_t i = 0; i < n; ++i)
    if (i + k >= 0 && i + k < m) a(i, i + k) = T(1);
  return a;
}

/// np.outer(a, b): a.ravel()[:, None] * b.ravel()[None, :] in C.
template <class R, class C, class A, class B, int N, int M>
Array<R, 2> outer(const Array<A, N>& a, const Array<B, M>& b) {
  const Array<A, N> x = detail::converted<A>(a);
  const Array<B, M> y = detail::converted<B>(b);
  const int64_t n = x.size(), m = y.size();
  Array<R, 2> out = Array<R, 2>::empty({n, m});
  R* q = out.data();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      q[i * m + j] = convert<R>(op::mul{}(convert<C>(x.data()[i]), convert<C>(y.data()[j])));
  return out;
}

namespace detail {
/// NumPy's IndexError when a boolean mask's shape is not its array's.
template <class T, int N>
void check_mask_shape(const Array<bool, N>& mask, const Array<T, N>& a) {
  for (int k = 0; k < N; ++k)
    if (mask.shape(k) != a.shape(k)) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "boolean index did not match indexed array along dimension %d; dimension is %lld but "
                    "corresponding boolean dimension is %lld",
                    k, static_cast<long long>(a.shape(k)), static_cast<long long>(mask.shape(k)));
      throw Error(ErrorKind::IndexError, msg);
    }
}
}  // namespace detail

/// a[mask] for a boolean mask of a's shape (np.extract(mask, a)): the
/// selected elements in C order; IndexError when the shapes differ, as
/// NumPy's boolean indexing.
template <class T, int N>
Array<T, 1> extract(const Array<bool, N>& mask, const Array<T, N>& a) {
  detail::check_mask_shape(mask, a);
  const Array<bool, N> m = detail::converted<bool>(mask);
  const Array<T, N> v = detail::converted<T>(a);
  const int64_t size = v.size();
  int64_t count = 0;
  for (int64_t i = 0; i < size; ++i) count += m.data()[i];
  Array<T, 1> out = Array<T, 1>::empty({count});
  for (int64_t i = 0, j = 0; i < size; ++i)
    if (m.data()[i]) out.data()[j++] = v.data()[i];
  return out;
}

/// a[idx] for a 1-D array and an integer index array (np.take(a, idx)):
/// the result has idx's shape; negative indices count from the end.
template <class T, class I, int N>
Array<T, N> take(const Array<T, 1>& a, const Array<I, N>& idx) {
  const Array<I, N> c = detail::converted<I>(idx);
  std::array<int64_t, N> shape;
  for (int k = 0; k < N; ++k) shape[k] = c.shape(k);
  Array<T, N> out = Array<T, N>::empty(shape);
  const int64_t n = a.shape(0), size = c.size();
  for (int64_t i = 0; i < size; ++i)
    out.data()[i] = a.data()[checked_index(static_cast<int64_t>(c.data()[i]), n, 0) * a.stride(0)];
  return out;
}

namespace detail {
/// f(element, k) for the elements of a in C order (k counts from 0).
template <class T, int N, class F>
void for_each_c_order(const Array<T, N>& a, F f) {
  int64_t idx[N] = {};
  T* base = a.data();
  for (int64_t k = 0, total = a.size(); k < total; ++k) {
    int64_t off = 0;
    for (int j = 0; j < N; ++j) off += idx[j] * a.stride(j);
    f(base[off], k);
    for (int j = N - 1; j >= 0; --j) {
      if (++idx[j] < a.shape(j)) break;
      idx[j] = 0;
    }
  }
}
}  // namespace detail

/// a[mask] = values, NumPy's boolean-mask assignment: values is a scalar, or
/// a 1-D array of one value per true element (or of one value for all);
/// converted as setitem converts. IndexError when the shapes differ,
/// ValueError for a wrong number of values.
template <class T, int N, class V>
void mask_assign(const Array<T, N>& a, const Array<bool, N>& mask, const V& values) {
  detail::check_mask_shape(mask, a);
  const Array<bool, N> m = detail::converted<bool>(mask);
  const bool* mp = m.data();
  if constexpr (std::is_arithmetic_v<V>) {
    const T v = convert<T>(values);
    detail::for_each_c_order(a, [&](T& x, int64_t k) {
      if (mp[k]) x = v;
    });
  } else {
    const auto vals = detail::converted<T>(values);  // a copy: values may alias a
    int64_t count = 0;
    for (int64_t i = 0, size = m.size(); i < size; ++i) count += mp[i];
    const int64_t n = vals.shape(0);
    if (n != count && n != 1) {
      char msg[200];
      std::snprintf(msg, sizeof msg,
                    "NumPy boolean array indexing assignment cannot assign %lld input values to the %lld output values "
                    "where the mask is true",
                    static_cast<long long>(n), static_cast<long long>(count));
      throw Error(ErrorKind::ValueError, msg);
    }
    const T* vp = vals.data();
    int64_t j = 0;
    detail::for_each_c_order(a, [&](T& x, int64_t k) {
      if (mp[k]) x = vp[n == 1 ? 0 : j++];
    });
  }
}

/// a[indices] = values for a 1-D a, NumPy's integer-array assignment:
/// values broadcast to the shape of indices, stored in C order (a repeated
/// index keeps the last value); negative indices count from the end,
/// IndexError outside.
template <class T, class I, int N, class V>
void index_assign(const Array<T, 1>& a, const Array<I, N>& indices, const V& values) {
  const Array<I, N> c = detail::converted<I>(indices);
  const int64_t n = a.shape(0), size = c.size(), s = a.stride(0);
  T* out = a.data();
  if constexpr (std::is_arithmetic_v<V>) {
    const T v = convert<T>(values);
    for (int64_t i = 0; i < size; ++i) out[checked_index(static_cast<int64_t>(c.data()[i]), n, 0) * s] = v;
  } else {
    constexpr int M = detail::rank_v<V>;
    static_assert(M <= N, "values of a higher rank than the indices");
    const auto vals = detail::converted<T>(values);  // a copy: values may alias a
    // Right-aligned broadcasting of values to the indices' shape.
    int64_t vstride[N] = {};
    bool ok = true;
    for (int k = 0; k < M; ++k) {
      const int64_t vd = vals.shape(k), id = c.shape(N - M + k);
      ok = ok && (vd == id || vd == 1);
    }
    if (!ok) {
      std::string msg = "shape mismatch: value array of shape (";
      for (int k = 0; k < M; ++k) msg += std::to_string(vals.shape(k)) + (M == 1 || k + 1 < M ? "," : "");
      msg += ") could not be broadcast to indexing result of shape (";
      for (int k = 0; k < N; ++k) msg += std::to_string(c.shape(k)) + (N == 1 || k + 1 < N ? "," : "");
      msg += ")";
      throw Error(ErrorKind::ValueError, msg.c_str());
    }
    int64_t step = 1;
    for (int k = M - 1; k >= 0; --k) {
      vstride[N - M + k] = vals.shape(k) == 1 ? 0 : step;
      step *= vals.shape(k);
    }
    int64_t idx[N] = {};
    const T* vp = vals.data();
    for (int64_t i = 0; i < size; ++i) {
      int64_t off = 0;
      for (int k = 0; k < N; ++k) off += idx[k] * vstride[k];
      out[checked_index(static_cast<int64_t>(c.data()[i]), n, 0) * s] = vp[off];
      for (int k = N - 1; k >= 0; --k) {
        if (++idx[k] < c.shape(k)) break;
        idx[k] = 0;
      }
    }
  }
}

namespace detail {
/// The elements an index array or a boolean mask selects along the axes
/// [axis, axis + K) of an N-D array, as NumPy's indexing with one advanced
/// index among full slices: the gathered shape is a.shape[:axis] + the
/// selection's shape + a.shape[axis + K:]. `sel` holds, for each selected
/// position in C order, its offset in a's memory along those K axes.
template <int R>
struct Gathered {
  int64_t shape[R > 0 ? R : 1];
  int64_t astride[R > 0 ? R : 1];  // a's stride along each gathered axis (0 on the selection's axes)
  int64_t sstride[R > 0 ? R : 1];  // the selection's flat-index step along each axis (0 elsewhere)
  std::vector<int64_t> sel;
};

/// The gathered layout for a selection of shape `selShape` (rank M) that
/// replaces K axes of a from `axis` on.
template <int K, int M, class T, int N>
Gathered<N - K + M> gathered_layout(const Array<T, N>& a, int axis, const int64_t* selShape, std::vector<int64_t> sel) {
  constexpr int R = N - K + M;
  // Callers pass an axis in [0, N - K]; saying so lets g++ bound r below
  // R (its -Warray-bounds otherwise sees the loops run past the arrays).
  if (axis < 0 || axis > N - K) __builtin_unreachable();
  Gathered<R> g;
  int r = 0;
  for (int k = 0; k < axis; ++k, ++r) g.shape[r] = a.shape(k), g.astride[r] = a.stride(k), g.sstride[r] = 0;
  int64_t step = 1;
  for (int k = M - 1; k >= 0; --k) {
    g.shape[r + k] = selShape[k], g.astride[r + k] = 0, g.sstride[r + k] = step;
    step *= selShape[k];
  }
  r += M;
  for (int k = axis + K; k < N; ++k, ++r) g.shape[r] = a.shape(k), g.astride[r] = a.stride(k), g.sstride[r] = 0;
  g.sel = std::move(sel);
  return g;
}

/// f(element of a, gathered multi-index) for the gathered elements in C
/// order.
template <int R, class T, int N, class F>
void for_each_gathered(const Array<T, N>& a, const Gathered<R>& g, F f) {
  int64_t total = 1;
  for (int k = 0; k < R; ++k) total *= g.shape[k];
  if (total == 0) return;
  int64_t idx[R] = {};
  int64_t aoff = 0, soff = 0;
  T* base = a.data();
  const int64_t* sel = g.sel.data();
  for (int64_t i = 0; i < total; ++i) {
    f(base[aoff + sel[soff]], static_cast<const int64_t*>(idx));
    for (int k = R - 1; k >= 0; --k) {
      aoff += g.astride[k], soff += g.sstride[k];
      if (++idx[k] < g.shape[k]) break;
      aoff -= g.astride[k] * g.shape[k], soff -= g.sstride[k] * g.shape[k];
      idx[k] = 0;
    }
  }
}

/// The offsets along `axis` of a that an integer index array selects
/// (negative indices count from the end; IndexError outside, naming the
/// axis as NumPy does), checked before anything is read or written. `shift`:
/// how many axes an integer index removed before `axis` when a is a view
/// (A[i, idx] selects from A[i, :]), so that the error names A's axis.
template <class I, int M, class T, int N>
std::vector<int64_t> index_offsets(const Array<T, N>& a, const Array<I, M>& idx, int axis, int shift) {
  const Array<I, M> c = converted<I>(idx);
  const int64_t n = a.shape(axis), s = a.stride(axis), size = c.size();
  std::vector<int64_t> sel(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) sel[i] = checked_index(static_cast<int64_t>(c.data()[i]), n, axis + shift) * s;
  return sel;
}

/// The offsets along axes [axis, axis + K) of a where a K-D mask is true,
/// in C order; NumPy's IndexError when the mask's shape is not a's there.
template <int K, class T, int N>
std::vector<int64_t> mask_offsets(const Array<T, N>& a, const Array<bool, K>& mask, int axis, int shift) {
  for (int k = 0; k < K; ++k)
    if (mask.shape(k) != a.shape(axis + k)) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "boolean index did not match indexed array along dimension %d; dimension is %lld but "
                    "corresponding boolean dimension is %lld",
                    axis + k + shift, static_cast<long long>(a.shape(axis + k)), static_cast<long long>(mask.shape(k)));
      throw Error(ErrorKind::IndexError, msg);
    }
  const Array<bool, K> m = converted<bool>(mask);
  std::vector<int64_t> sel;
  int64_t idx[K] = {};
  for (int64_t i = 0, size = m.size(); i < size; ++i) {
    if (m.data()[i]) {
      int64_t off = 0;
      for (int k = 0; k < K; ++k) off += idx[k] * a.stride(axis + k);
      sel.push_back(off);
    }
    for (int k = K - 1; k >= 0; --k) {
      if (++idx[k] < m.shape(k)) break;
      idx[k] = 0;
    }
  }
  return sel;
}

template <int R, class T, int N>
Array<T, R> gather_new(const Array<T, N>& a, const Gathered<R>& g) {
  Array<T, R> out = Array<T, R>::empty(g.shape);
  T* q = out.data();
  for_each_gathered(a, g, [&](const T& x, const int64_t*) { *q++ = x; });
  return out;
}

/// Stores values (a scalar, or an array that broadcasts to the gathered
/// shape, NumPy's setitem rule) into the gathered elements of a, in C
/// order: a position selected twice keeps the last value.
template <int R, class T, int N, class V>
void scatter(const Array<T, N>& a, const Gathered<R>& g, const V& values) {
  if constexpr (is_number_v<V>) {
    const T v = convert<T>(values);
    for_each_gathered(a, g, [&](T& x, const int64_t*) { x = v; });
  } else {
    constexpr int M = rank_v<V>;
    static_assert(M <= R, "values of a higher rank than the indexing result");
    const auto vals = converted<T>(values);  // a copy: values may alias a
    bool ok = true;
    for (int k = 0; k < M; ++k) ok = ok && (vals.shape(k) == g.shape[R - M + k] || vals.shape(k) == 1);
    if (!ok) {
      std::string msg = "shape mismatch: value array of shape (";
      for (int k = 0; k < M; ++k) msg += std::to_string(vals.shape(k)) + (M == 1 || k + 1 < M ? "," : "");
      msg += ") could not be broadcast to indexing result of shape (";
      for (int k = 0; k < R; ++k) msg += std::to_string(g.shape[k]) + (R == 1 || k + 1 < R ? "," : "");
      msg += ")";
      throw Error(ErrorKind::ValueError, msg.c_str());
    }
    int64_t vstride[R] = {};
    int64_t step = 1;
    for (int k = M - 1; k >= 0; --k) {
      vstride[R - M + k] = vals.shape(k) == 1 ? 0 : step;
      step *= vals.shape(k);
    }
    const T* vp = vals.data();
    for_each_gathered(a, g, [&](T& x, const int64_t* idx) {
      int64_t off = 0;
      for (int k = 0; k < R; ++k) off += idx[k] * vstride[k];
      x = vp[off];
    });
  }
}
}  // namespace detail

/// a[:, ..., idx] (idx on `axis`, full slices elsewhere), np.take(a, idx,
/// axis): a new array of shape a.shape[:axis] + idx.shape + a.shape[axis+1:].
template <class T, class I, int N, int M>
Array<T, N - 1 + M> take(const Array<T, N>& a, const Array<I, M>& idx, int64_t axis, int shift = 0) {
  const int k = static_cast<int>(axis);
  return detail::gather_new(a, detail::gathered_layout<1, M>(a, k, idx.shape(), detail::index_offsets(a, idx, k, shift)));
}

/// a[:, ..., mask] for a K-D boolean mask on the axes [axis, axis + K): a
/// new array of shape a.shape[:axis] + (count_nonzero(mask),) +
/// a.shape[axis+K:].
template <class T, int N, int K>
Array<T, N - K + 1> mask_take(const Array<T, N>& a, const Array<bool, K>& mask, int64_t axis, int shift = 0) {
  const int k = static_cast<int>(axis);
  std::vector<int64_t> sel = detail::mask_offsets(a, mask, k, shift);
  const int64_t count = static_cast<int64_t>(sel.size());
  return detail::gather_new(a, detail::gathered_layout<K, 1>(a, k, &count, std::move(sel)));
}

/// a[:, ..., idx] = values (idx on `axis`): values broadcast to the
/// indexing result's shape; a repeated index keeps the last value.
template <class T, class I, int N, int M, class V>
void index_assign(const Array<T, N>& a, const Array<I, M>& idx, const V& values, int64_t axis, int shift = 0) {
  const int k = static_cast<int>(axis);
  detail::scatter(a, detail::gathered_layout<1, M>(a, k, idx.shape(), detail::index_offsets(a, idx, k, shift)), values);
}

/// a[:, ..., mask] = values for a K-D boolean mask on [axis, axis + K).
template <class T, int N, int K, class V>
void mask_assign(const Array<T, N>& a, const Array<bool, K>& mask, const V& values, int64_t axis, int shift = 0) {
  const int k = static_cast<int>(axis);
  std::vector<int64_t> sel = detail::mask_offsets(a, mask, k, shift);
  const int64_t count = static_cast<int64_t>(sel.size());
  detail::scatter(a, detail::gathered_layout<K, 1>(a, k, &count, std::move(sel)), values);
}

namespace op {
/// np.isclose's test in the compute type T: |a - b| <= atol + rtol * |b|
/// for finite values, equality for infinities, NaN equal only to NaN
/// with equal_nan.
template <class T>
struct isclose {
  T rtol, atol;
  bool equal_nan;
  bool operator()(T a, T b) const {
    if (std::isfinite(a) && std::isfinite(b)) return std::fabs(a - b) <= atol + rtol * std::fabs(b);
    if (std::isnan(a) || std::isnan(b)) return equal_nan && std::isnan(a) && std::isnan(b);
    return a == b;
  }
};
}  // namespace op

/// numpy.linalg.norm(x): the 2-norm of the flattened x (Frobenius for a
/// matrix), sqrt of the sum of squares, in R (float64, float32 kept).
template <class R, class T, int N>
R norm(const Array<T, N>& a) {
  return std::sqrt(sum<R>(detail::map_new<R>("norm", [](T x) { const R y = convert<R>(x); return y * y; }, a)));
}
/// numpy.linalg.norm(x, axis=k): the 2-norms of the lanes along axis k.
template <class R, class T, int N>
Array<R, N - 1> norm_axis(const Array<T, N>& a, int64_t axis) {
  Array<R, N - 1> s = sum_axis<R>(detail::map_new<R>("norm", [](T x) { const R y = convert<R>(x); return y * y; }, a), axis);
  R* p = s.data();
  for (int64_t i = 0, e = s.size(); i < e; ++i) p[i] = std::sqrt(p[i]);
  return s;
}

}  // namespace pydd
