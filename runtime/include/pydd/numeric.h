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
