// pydd runtime: NumPy's sorting, order statistics and array manipulation:
// sort, argsort, median, unique, reshape/ravel/flatten, concatenate, stack,
// vstack, hstack.
//
// Orders are NumPy's: NaN sorts last, after +inf (numpy/_core/npysort's
// "NaN-aware" comparisons); argsort breaks ties by position (NumPy's
// kind='stable'); unique collapses NaNs into one (NumPy >= 1.24's
// equal_nan=True). Each result is a new C-contiguous array, except reshape
// and ravel of a C-contiguous array, which are views of it, as in NumPy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <vector>

#include "pydd/array.h"
#include "pydd/containers.h"
#include "pydd/numeric.h"
#include "pydd/scalar.h"

namespace pydd {

namespace detail {

/// NumPy's sort order: NaN after everything else.
template <class T>
struct sort_less {
  bool operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a < b || (b != b && a == a);
    else return a < b;
  }
};

/// What a lane of T is copied into (std::vector<bool> has no bool elements).
template <class T>
using lane_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

template <class T>
bool is_nan_value(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

/// Calls f(first, n, step) for every lane of the C-contiguous `c` along
/// axis k: the n elements first[0], first[step], ... first[(n-1)*step].
template <class T, int N, class F>
void for_each_lane(const Array<T, N>& c, int k, F f) {
  const int64_t n = c.shape(k), inner = inner_extent<N>(c.shape(), k);
  const int64_t outer = n * inner != 0 ? c.size() / (n * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) f(c.data() + o * n * inner + j, n, inner);
}

template <class T, int N>
std::array<int64_t, N> shape_array(const Array<T, N>& a) {
  std::array<int64_t, N> s;
  for (int j = 0; j < N; ++j) s[static_cast<size_t>(j)] = a.shape(j);
  return s;
}

/// The shape of `a` without axis k.
template <class T, int N>
std::array<int64_t, (N > 1 ? N - 1 : 1)> shape_without(const Array<T, N>& a, int k) {
  std::array<int64_t, (N > 1 ? N - 1 : 1)> s{};
  for (int j = 0, i = 0; j < N; ++j)
    if (j != k) s[static_cast<size_t>(i++)] = a.shape(j);
  return s;
}

/// np.median of n values (copied into `v`): the middle one, or the mean of
/// the middle two as NumPy's mean computes it (their sum, halved); NaN when
/// a value is NaN or there are none.
template <class R, class T>
R median_of(std::vector<T>& v) {  // T: a lane_t
  const size_t n = v.size();
  if (n == 0) return std::numeric_limits<R>::quiet_NaN();
  for (T x : v)
    if (is_nan_value(x)) return std::numeric_limits<R>::quiet_NaN();
  const size_t half = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half), v.end(), sort_less<T>{});
  const R upper = convert<R>(v[half]);
  if (n % 2) return upper;
  const R lower = convert<R>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half), sort_less<T>{}));
  return (lower + upper) / R(2);
}

[[noreturn]] inline void throw_reshape(int64_t size, const int64_t* shape, int m) {
  char msg[200];
  int len = std::snprintf(msg, sizeof msg, "cannot reshape array of size %lld into shape (", static_cast<long long>(size));
  for (int k = 0; k < m && len < 180; ++k)
    len += std::snprintf(msg + len, sizeof msg - static_cast<size_t>(len), k ? ", %lld" : "%lld", static_cast<long long>(shape[k]));
  std::snprintf(msg + len, sizeof msg - static_cast<size_t>(len), m == 1 ? ",)" : ")");
  throw Error(ErrorKind::ValueError, msg);
}

/// The parts of a tuple or a List of arrays, each converted to Array<R, N>.
template <class R, int N, class... A>
std::vector<Array<R, N>> parts_of(const std::tuple<A...>& t) {
  std::vector<Array<R, N>> out;
  std::apply([&](const auto&... p) { (out.push_back(converted<R>(p)), ...); }, t);
  return out;
}
template <class R, int N, class T>
std::vector<Array<R, N>> parts_of(const List<Array<T, N>>& l) {
  std::vector<Array<R, N>> out;
  for (int64_t i = 0; i < l.size(); ++i) out.push_back(converted<R>(l[i]));
  return out;
}

/// The C-contiguous parts joined along axis k, as np.concatenate.
template <class R, int N>
Array<R, N> join(const std::vector<Array<R, N>>& parts, int64_t axis, const char* name) {
  if (parts.empty()) throw Error(ErrorKind::ValueError, "need at least one array to concatenate");
  const int k = check_axis(axis, N);
  int64_t shape[N];
  for (int j = 0; j < N; ++j) shape[j] = parts[0].shape(j);
  shape[k] = 0;
  for (const auto& p : parts) {
    for (int j = 0; j < N; ++j) {
      if (j == k || p.shape(j) == parts[0].shape(j)) continue;
      char msg[200];
      std::snprintf(msg, sizeof msg,
                    "%s: all the input array dimensions except for the concatenation axis must match exactly, but "
                    "along dimension %d, the array at index 0 has size %lld and another array has size %lld",
                    name, j, static_cast<long long>(parts[0].shape(j)), static_cast<long long>(p.shape(j)));
      throw Error(ErrorKind::ValueError, msg);
    }
    shape[k] += p.shape(k);
  }
  Array<R, N> out = Array<R, N>::empty(shape);
  const int64_t inner = inner_extent<N>(shape, k), outer = shape[k] * inner != 0 ? out.size() / (shape[k] * inner) : 0;
  R* q = out.data();
  for (int64_t o = 0; o < outer; ++o)
    for (const auto& p : parts) {
      const int64_t block = p.shape(k) * inner;
      std::copy(p.data() + o * block, p.data() + (o + 1) * block, q);
      q += block;
    }
  return out;
}

}  // namespace detail

/// np.sort(a, axis=-1).
template <class T, int N>
Array<T, N> sort(const Array<T, N>& a, int64_t axis = -1) {
  const int k = detail::check_axis(axis, N);
  Array<T, N> c = detail::converted<T>(a);
  using L = detail::lane_t<T>;
  std::vector<L> lane;
  detail::for_each_lane(c, k, [&](T* p, int64_t n, int64_t step) {
    lane.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) lane[static_cast<size_t>(i)] = p[i * step];
    std::sort(lane.begin(), lane.end(), detail::sort_less<L>{});
    for (int64_t i = 0; i < n; ++i) p[i * step] = static_cast<T>(lane[static_cast<size_t>(i)]);
  });
  return c;
}

/// np.argsort(a, axis=-1, kind='stable'): int64 positions along the axis.
template <class T, int N>
Array<int64_t, N> argsort(const Array<T, N>& a, int64_t axis = -1) {
  const int k = detail::check_axis(axis, N);
  Array<T, N> c = detail::converted<T>(a);
  Array<int64_t, N> out = Array<int64_t, N>::empty(detail::shape_array(c));
  std::vector<int64_t> order;
  detail::for_each_lane(c, k, [&](T* p, int64_t n, int64_t step) {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t i, int64_t j) { return detail::sort_less<T>{}(p[i * step], p[j * step]); });
    int64_t* q = out.data() + (p - c.data());
    for (int64_t i = 0; i < n; ++i) q[i * step] = order[static_cast<size_t>(i)];
  });
  return out;
}

/// np.median(a): float64 (float32 kept).
template <class R, class T, int N>
R median(const Array<T, N>& a) {
  Array<T, N> c = detail::converted<T>(a);
  std::vector<detail::lane_t<T>> v(c.data(), c.data() + c.size());
  return detail::median_of<R>(v);
}
/// np.median(a, axis).
template <class R, class T, int N>
Array<R, N - 1> median_axis(const Array<T, N>& a, int64_t axis) {
  const int k = detail::check_axis(axis, N);
  Array<T, N> c = detail::converted<T>(a);
  Array<R, N - 1> out = Array<R, N - 1>::empty(detail::shape_without(c, k));
  const int64_t inner = detail::inner_extent<N>(c.shape(), k), n = c.shape(k);
  if (n == 0) fill(out, std::numeric_limits<R>::quiet_NaN());  // the median of nothing
  std::vector<detail::lane_t<T>> lane;
  detail::for_each_lane(c, k, [&](T* p, int64_t, int64_t step) {
    lane.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) lane[static_cast<size_t>(i)] = p[i * step];
    const int64_t at = p - c.data();  // o * n * inner + j  ->  o * inner + j
    out.data()[at / (n * inner) * inner + at % inner] = detail::median_of<R>(lane);
  });
  return out;
}

/// np.unique(a): the sorted distinct values of a, flattened (NaNs as one).
template <class T, int N>
Array<T, 1> unique(const Array<T, N>& a) {
  Array<T, N> c = detail::converted<T>(a);
  using L = detail::lane_t<T>;
  std::vector<L> v(c.data(), c.data() + c.size());
  std::sort(v.begin(), v.end(), detail::sort_less<L>{});
  auto same = [](L x, L y) { return x == y || (detail::is_nan_value(x) && detail::is_nan_value(y)); };
  v.erase(std::unique(v.begin(), v.end(), same), v.end());
  Array<T, 1> out = Array<T, 1>::empty(std::array<int64_t, 1>{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) out.data()[i] = static_cast<T>(v[i]);
  return out;
}

/// np.reshape(a, shape) with at most one -1: a view of a C-contiguous a,
/// else a C-order copy.
template <int M, class T, int N>
Array<T, M> reshape(const Array<T, N>& a, const std::array<int64_t, M>& dims) {
  int64_t shape[M];
  int unknown = -1;
  int64_t known = 1;
  for (int k = 0; k < M; ++k) {
    shape[k] = dims[static_cast<size_t>(k)];
    if (shape[k] == -1 && unknown < 0) unknown = k;
    else if (shape[k] < 0) throw Error(ErrorKind::ValueError, shape[k] == -1 ? "can only specify one unknown dimension"
                                                                               : "negative dimensions not allowed");
    else known *= shape[k];
  }
  const int64_t size = a.size();
  if (unknown >= 0) {
    if (known == 0 || size % known) detail::throw_reshape(size, shape, M);
    shape[unknown] = size / known;
  } else if (known != size) {
    detail::throw_reshape(size, shape, M);
  }
  const Array<T, N> c = a.is_contiguous() ? a : detail::converted<T>(a);
  int64_t strides[M];
  for (int k = M - 1, s = 1; k >= 0; --k) strides[k] = s, s *= shape[k];
  return c.template alias<M>(c.data(), shape, strides);
}
template <int M, class T, int N, class... I>
Array<T, M> reshape(const Array<T, N>& a, const std::tuple<I...>& dims) {
  return std::apply([&](auto... d) { return reshape<M>(a, std::array<int64_t, M>{static_cast<int64_t>(d)...}); }, dims);
}
template <int M, class T, int N, class... I>
Array<T, M> reshape(const Array<T, N>& a, I... dims) {
  return reshape<M>(a, std::array<int64_t, M>{static_cast<int64_t>(dims)...});
}

/// np.ravel(a): a 1-D view of a C-contiguous a, else a copy.
template <class T, int N>
Array<T, 1> ravel(const Array<T, N>& a) { return reshape<1>(a, std::array<int64_t, 1>{-1}); }
/// a.flatten(): always a copy.
template <class T, int N>
Array<T, 1> flatten(const Array<T, N>& a) { return reshape<1>(detail::converted<T>(a), std::array<int64_t, 1>{-1}); }

/// np.concatenate(arrays, axis=0) in R (NumPy's result_type of the parts).
template <class R, int N, class Seq>
Array<R, N> concatenate(const Seq& arrays, int64_t axis = 0) {
  return detail::join<R, N>(detail::parts_of<R, N>(arrays), axis, "concatenate");
}

/// np.stack(arrays, axis=0): the parts (of one shape) along a new axis.
template <class R, int N, class Seq>
Array<R, N + 1> stack(const Seq& arrays, int64_t axis = 0) {
  const int k = normalize_axis(axis, N + 1, ErrorKind::ValueError);
  std::vector<Array<R, N + 1>> parts;
  for (auto& p : detail::parts_of<R, N>(arrays)) {
    if (!parts.empty())
      for (int j = 0; j < N; ++j)
        if (p.shape(j) != parts[0].shape(j < k ? j : j + 1))
          throw Error(ErrorKind::ValueError, "all input arrays must have the same shape");
    parts.push_back(keep_axis_dim(p, k));
  }
  if (parts.empty()) throw Error(ErrorKind::ValueError, "need at least one array to stack");
  std::vector<Array<R, N + 1>> contiguous;
  for (auto& p : parts) contiguous.push_back(detail::converted<R>(p));
  return detail::join<R, N + 1>(contiguous, k, "stack");
}

/// np.vstack(arrays): 1-D parts become rows; others join along axis 0.
template <class R, int N, class Seq>
auto vstack(const Seq& arrays) {
  if constexpr (N == 1) return stack<R, 1>(arrays, 0);
  else return detail::join<R, N>(detail::parts_of<R, N>(arrays), 0, "vstack");
}

/// np.hstack(arrays): along axis 1, or axis 0 for 1-D parts.
template <class R, int N, class Seq>
Array<R, N> hstack(const Seq& arrays) {
  return detail::join<R, N>(detail::parts_of<R, N>(arrays), N == 1 ? 0 : 1, "hstack");
}

namespace detail {

template <class T>
struct list_depth : std::integral_constant<int, 0> {};
template <class T>
struct list_depth<List<T>> : std::integral_constant<int, 1 + list_depth<T>::value> {};

/// Records the extents of nested lists (level k at shape[k]); false when a
/// level's lists differ in length (NumPy's inhomogeneous shape).
template <class T>
bool nested_shape(const T& x, int64_t* shape, int k, bool first) {
  if constexpr (list_depth<T>::value == 0) {
    (void)x, (void)shape, (void)k, (void)first;
    return true;
  } else {
    if (first) shape[k] = x.size();
    else if (shape[k] != x.size()) return false;
    for (int64_t i = 0; i < x.size(); ++i)
      if (!nested_shape(x[i], shape, k + 1, first && i == 0)) return false;
    if (x.size() == 0 && first)
      for (int j = k + 1; j < list_depth<T>::value + k; ++j) shape[j] = 0;
    return true;
  }
}

template <class R, class T>
void copy_nested(const T& x, R*& out) {
  if constexpr (list_depth<T>::value == 0) *out++ = convert<R>(x);
  else
    for (int64_t i = 0; i < x.size(); ++i) copy_nested<R>(x[i], out);
}

}  // namespace detail

/// np.array(list): an N-D array from N nested lists of one shape.
template <class R, class T>
Array<R, detail::list_depth<List<T>>::value> array(const List<T>& l) {
  constexpr int N = detail::list_depth<List<T>>::value;
  int64_t shape[N];
  if (!detail::nested_shape(l, shape, 0, true))
    throw Error(ErrorKind::ValueError,
                "setting an array element with a sequence. The requested array has an inhomogeneous shape");
  Array<R, N> out = Array<R, N>::empty(shape);
  R* p = out.data();
  detail::copy_nested<R>(l, p);
  return out;
}
/// np.array(a) of an array: a C-contiguous copy.
template <class R, class T, int N>
Array<R, N> array(const Array<T, N>& a) { return detail::converted<R>(a); }

/// np.nonzero(a): for each axis, the int64 positions of the non-zero elements in C order.
template <class T, int N>
auto nonzero_tuple(const Array<T, N>& a) {
  const Array<T, N> c = detail::converted<T>(a);
  const T* p = c.data();
  const int64_t size = c.size();
  int64_t count = 0;
  for (int64_t i = 0; i < size; ++i) count += p[i] != T(0);
  std::array<Array<int64_t, 1>, N> out;
  for (auto& o : out) o = Array<int64_t, 1>::empty(std::array<int64_t, 1>{count});
  for (int64_t i = 0, at = 0; i < size; ++i) {
    if (p[i] == T(0)) continue;
    for (int64_t k = N - 1, rest = i; k >= 0; --k) {
      out[static_cast<size_t>(k)].data()[at] = rest % c.shape(static_cast<int>(k));
      rest /= c.shape(static_cast<int>(k));
    }
    ++at;
  }
  return std::apply([](auto&... o) { return std::make_tuple(o...); }, out);
}

/// np.unravel_index(index, shape): the C-order coordinates of a flat index.
template <class... D>
auto unravel_index(int64_t index, const std::tuple<D...>& shape) {
  constexpr size_t N = sizeof...(D);
  std::array<int64_t, N> dims = std::apply([](auto... d) { return std::array<int64_t, N>{static_cast<int64_t>(d)...}; }, shape);
  int64_t size = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(ErrorKind::ValueError, "dimensions must be non-negative");
    size *= d;
  }
  if (index < 0 || index >= size) {
    char msg[120];
    std::snprintf(msg, sizeof msg, "index %lld is out of bounds for array with size %lld", static_cast<long long>(index),
                  static_cast<long long>(size));
    throw Error(ErrorKind::ValueError, msg);
  }
  std::array<int64_t, N> at{};
  for (size_t k = N; k-- > 0;) at[k] = index % dims[k], index /= dims[k];
  return std::apply([](auto... v) { return std::make_tuple(v...); }, at);
}

namespace detail {

/// C-order coordinates of flat position i in `shape`.
template <int N>
void coordinates(int64_t i, const int64_t* shape, int64_t* at) {
  for (int k = N - 1; k >= 0; --k) {
    at[k] = shape[k] ? i % shape[k] : 0;
    i = shape[k] ? i / shape[k] : 0;
  }
}

/// The element of the C-contiguous `c` at coordinates `at`.
template <class T, int N>
T element_at(const Array<T, N>& c, const int64_t* at) {
  int64_t flat = 0;
  for (int k = 0; k < N; ++k) flat = flat * c.shape(k) + at[k];
  return c.data()[flat];
}

}  // namespace detail

/// np.searchsorted(a, v, side): where v would go in the sorted 1-D a (NaN
/// last), the first such place (left) or the last (right).
template <bool Right, class C, class T, class V>
int64_t searchsorted_one(const T* p, int64_t n, V v) {
  const C x = convert<C>(v);
  const T* end = p + n;
  auto less = detail::sort_less<C>{};
  const T* at = Right ? std::upper_bound(p, end, x, [&](C a, T b) { return less(a, convert<C>(b)); })
                      : std::lower_bound(p, end, x, [&](T a, C b) { return less(convert<C>(a), b); });
  return at - p;
}
template <bool Right, class C, class T, class V>
auto searchsorted(const Array<T, 1>& a, const V& v) {
  const Array<T, 1> c = detail::converted<T>(a);
  if constexpr (std::is_arithmetic_v<V>) {
    return searchsorted_one<Right, C>(c.data(), c.size(), v);
  } else {
    return detail::map_new<int64_t>("searchsorted", [&](detail::elem_t<V> x) { return searchsorted_one<Right, C>(c.data(), c.size(), x); }, v);
  }
}

/// np.tile(a, reps): reps padded with leading 1s to the result's rank M
/// (at least a's), a's shape padded likewise.
template <int M, class T, int N, class... R>
Array<T, M> tile(const Array<T, N>& a, const std::tuple<R...>& reps) {
  constexpr int K = sizeof...(R);
  std::array<int64_t, K> r = std::apply([](auto... x) { return std::array<int64_t, K>{static_cast<int64_t>(x)...}; }, reps);
  const Array<T, N> c = detail::converted<T>(a);
  int64_t base[M], shape[M];
  for (int k = 0; k < M; ++k) {
    const int ka = k - (M - N), kr = k - (M - K);
    base[k] = ka >= 0 ? c.shape(ka) : 1;
    const int64_t times = kr >= 0 ? r[static_cast<size_t>(kr)] : 1;
    if (times < 0) throw Error(ErrorKind::ValueError, "negative dimensions are not allowed");
    shape[k] = base[k] * times;
  }
  Array<T, M> out = Array<T, M>::empty(shape);
  int64_t at[M];
  for (int64_t i = 0, e = out.size(); i < e; ++i) {
    detail::coordinates<M>(i, shape, at);
    int64_t flat = 0;
    for (int k = 0; k < M; ++k) flat = flat * base[k] + at[k] % base[k];
    out.data()[i] = c.data()[flat];
  }
  return out;
}
template <int M, class T, int N>
Array<T, M> tile(const Array<T, N>& a, int64_t reps) { return tile<M>(a, std::make_tuple(reps)); }

[[noreturn]] inline void throw_negative(const char* what) {
  char msg[80];
  std::snprintf(msg, sizeof msg, "negative dimensions are not allowed (%s)", what);
  throw Error(ErrorKind::ValueError, msg);
}

/// np.repeat(a, repeats): each element of the flattened a `repeats` times.
template <class T, int N>
Array<T, 1> repeat(const Array<T, N>& a, int64_t repeats) {
  if (repeats < 0) throw_negative("repeat");
  const Array<T, N> c = detail::converted<T>(a);
  Array<T, 1> out = Array<T, 1>::empty(std::array<int64_t, 1>{c.size() * repeats});
  T* q = out.data();
  for (int64_t i = 0, n = c.size(); i < n; ++i)
    for (int64_t j = 0; j < repeats; ++j) *q++ = c.data()[i];
  return out;
}
/// np.repeat(a, repeats, axis).
template <class T, int N>
Array<T, N> repeat_axis(const Array<T, N>& a, int64_t repeats, int64_t axis) {
  if (repeats < 0) throw_negative("repeat");
  const int k = detail::check_axis(axis, N);
  const Array<T, N> c = detail::converted<T>(a);
  std::array<int64_t, N> shape = detail::shape_array(c);
  shape[static_cast<size_t>(k)] *= repeats;
  Array<T, N> out = Array<T, N>::empty(shape);
  int64_t at[N];
  for (int64_t i = 0, e = out.size(); i < e; ++i) {
    detail::coordinates<N>(i, shape.data(), at);
    at[k] /= repeats;
    out.data()[i] = detail::element_at(c, at);
  }
  return out;
}

/// np.roll(a, shift): the flattened a rotated by `shift`, in a's shape.
template <class T, int N>
Array<T, N> roll(const Array<T, N>& a, int64_t shift) {
  Array<T, N> c = detail::converted<T>(a);
  Array<T, N> out = Array<T, N>::empty(detail::shape_array(c));
  const int64_t n = c.size();
  if (n == 0) return out;
  const int64_t s = ((shift % n) + n) % n;
  for (int64_t i = 0; i < n; ++i) out.data()[(i + s) % n] = c.data()[i];
  return out;
}
/// np.roll(a, shift, axis).
template <class T, int N>
Array<T, N> roll_axis(const Array<T, N>& a, int64_t shift, int64_t axis) {
  const int k = detail::check_axis(axis, N);
  const Array<T, N> c = detail::converted<T>(a);
  Array<T, N> out = Array<T, N>::empty(detail::shape_array(c));
  const int64_t n = c.shape(k);
  if (out.size() == 0) return out;
  const int64_t s = ((shift % n) + n) % n;
  int64_t at[N];
  for (int64_t i = 0, e = out.size(); i < e; ++i) {
    detail::coordinates<N>(i, c.shape(), at);
    at[k] = (at[k] - s + n) % n;
    out.data()[i] = detail::element_at(c, at);
  }
  return out;
}

/// np.round(x, decimals) of one value, as NumPy: rint(x * 10**d) / 10**d
/// (d < 0: rint(x / 10**-d) * 10**-d); integers with d >= 0 unchanged.
template <class T>
T round_value(T x, int64_t decimals) {
  if constexpr (std::is_floating_point_v<T>) {
    if (decimals == 0) return std::nearbyint(x);
    if (decimals > 0) {
      const T f = static_cast<T>(std::pow(10.0, static_cast<double>(decimals)));
      return std::nearbyint(x * f) / f;
    }
    const T f = static_cast<T>(std::pow(10.0, static_cast<double>(-decimals)));
    return std::nearbyint(x / f) * f;
  } else {
    if (decimals >= 0) return x;
    int64_t f = 1;
    for (int64_t d = 0; d < -decimals && f < (int64_t(1) << 62) / 10; ++d) f *= 10;
    // NumPy: round half to even of x / f, in the integer type.
    const int64_t v = static_cast<int64_t>(x), q = v / f - (v % f < 0), r = v - q * f;
    const int64_t up = 2 * r > f || (2 * r == f && (q & 1));
    return static_cast<T>((q + up) * f);
  }
}
/// Python's round(x) of a scalar: the nearest integer, ties to even.
template <class T>
int64_t round_to_int(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) throw Error(ErrorKind::ValueError, "cannot convert float NaN to integer");
    const double r = std::nearbyint(static_cast<double>(x));
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
      throw Error(ErrorKind::OverflowError, std::isinf(x) ? "cannot convert float infinity to integer"
                                                          : "rounded value does not fit in int64");
    return static_cast<int64_t>(r);
  } else {
    return static_cast<int64_t>(x);
  }
}

template <class T>
auto around(const T& a, int64_t decimals = 0) {
  if constexpr (std::is_arithmetic_v<T>) return round_value(a, decimals);
  else return detail::map_new<detail::elem_t<T>>("round", [decimals](detail::elem_t<T> x) { return round_value(x, decimals); }, a);
}

}  // namespace pydd
