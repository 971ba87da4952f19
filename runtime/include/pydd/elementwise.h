// pydd runtime: element-wise operations with NumPy broadcasting.
//
// The compiler picks every dtype (NEP 50 rules): map1/map2/where receive the
// compute type C, in which the operation runs, and the result type R. The
// operations themselves are the functors in pydd::op, shared with scalar code.
//
// Every element-wise function funnels into map_into(), which walks a loop
// nest over the output and its operands. The nest drops length-1 axes and
// merges axes that every operand steps through uniformly, so contiguous
// operands of equal shape become one flat row, and a scalar operand becomes a
// stride-0 row. Each row runs a plain indexed loop chosen by its strides
// (all unit, one constant, or general) that g++ -O3 vectorizes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <type_traits>
#include <utility>

#include "pydd/array.h"
#include "pydd/scalar.h"

namespace pydd {

// ---------------------------------------------------------------------------
// Operations (NumPy array semantics: no ZeroDivisionError).

namespace op {

namespace detail {
using pydd::detail::is_int_v;
// Signed overflow wraps as NumPy's does, also without -fwrapv.
// At least `unsigned`, so that 8- and 16-bit operands are not promoted to
// (signed) int, where uint16 * uint16 could overflow.
template <class T, class G>
inline T wrapping(T a, T b, G g) {
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
  return static_cast<T>(g(static_cast<U>(a), static_cast<U>(b)));
}
}  // namespace detail

struct add {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (detail::is_int_v<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x + y; });
    else return a + b;
  }
};
struct sub {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a != b;  // NumPy refuses; xor keeps it total
    else if constexpr (detail::is_int_v<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x - y; });
    else return a - b;
  }
};
struct mul {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (detail::is_int_v<T>) return detail::wrapping(a, b, [](auto x, auto y) { return x * y; });
    else if constexpr (is_complex_v<T>) return complex_mul(a, b);
    else return a * b;
  }
};
struct truediv {
  template <class T>
  auto operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a / b;
    else if constexpr (is_complex_v<T>) return complex_div(a, b);  // inf/nan parts for a zero divisor
    else return static_cast<double>(a) / static_cast<double>(b);
  }
};
struct floordiv {
  template <class T>
  T operator()(T a, T b) const {
    return pydd::detail::numpy_floordiv(a, b);
  }
};
struct mod {
  template <class T>
  T operator()(T a, T b) const {
    return pydd::detail::numpy_mod(a, b);
  }
};
struct power {
  template <class T>
  T operator()(T a, T b) const {
    return pydd::power(a, b);  // ints: ValueError for negative exponents, wraps
  }
};
// NaN propagates from either side, as np.maximum / np.minimum.
// NaN from either operand propagates; on a tie (0.0 and -0.0) the second
// operand wins, as in NumPy's loops (np.maximum(0.0, -0.0) is -0.0).
struct maximum {
  template <class T>
  T operator()(T a, T b) const {
    return (a > b || a != a) ? a : b;
  }
};
struct minimum {
  template <class T>
  T operator()(T a, T b) const {
    return (a < b || a != a) ? a : b;
  }
};

#define PYDD_BINARY_PREDICATE(name, expr) \
  struct name {                           \
    template <class T>                    \
    bool operator()(T a, T b) const {     \
      return expr;                        \
    }                                     \
  };
PYDD_BINARY_PREDICATE(eq, a == b)
PYDD_BINARY_PREDICATE(ne, a != b)
PYDD_BINARY_PREDICATE(lt, a < b)
PYDD_BINARY_PREDICATE(le, a <= b)
PYDD_BINARY_PREDICATE(gt, a > b)
PYDD_BINARY_PREDICATE(ge, a >= b)
// Both operands are values already, so the bitwise forms mean the same and
// keep loops branch-free (g++ vectorizes `acc | (x < 0)`, not `acc || ...`).
PYDD_BINARY_PREDICATE(logical_and, (a != 0) & (b != 0))
PYDD_BINARY_PREDICATE(logical_or, (a != 0) | (b != 0))
#undef PYDD_BINARY_PREDICATE

struct negative {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, bool>) return a;  // NumPy refuses -bool; the compiler does too
    else if constexpr (detail::is_int_v<T>) return pydd::detail::wrapping_neg(a);
    else return -a;
  }
};
struct absolute {
  template <class T>
  auto operator()(T a) const {
    if constexpr (is_complex_v<T>) return abs_value(a);  // of the parts' type
    else if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
    else if constexpr (detail::is_int_v<T>) return a < 0 ? pydd::detail::wrapping_neg(a) : a;
    else return a;
  }
};
struct logical_not {
  template <class T>
  bool operator()(T a) const {
    return a == 0;
  }
};
struct isnan {
  template <class T>
  bool operator()(T a) const {
    if constexpr (is_complex_v<T>) return std::isnan(a.real()) || std::isnan(a.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isnan(a);
    else return false;
  }
};
struct isinf {
  template <class T>
  bool operator()(T a) const {
    if constexpr (is_complex_v<T>) return std::isinf(a.real()) || std::isinf(a.imag());
    else if constexpr (std::is_floating_point_v<T>) return std::isinf(a);
    else return false;
  }
};

// Transcendentals run on the compute type (float32 stays float32,
// complex numbers use std::complex's overloads); an integer operand is
// computed in float64 like NumPy's loops for ints.
#define PYDD_FLOAT_UNARY(name, fn)                                                       \
  struct name {                                                                          \
    template <class T>                                                                   \
    auto operator()(T a) const {                                                         \
      if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) return std::fn(a);  \
      else return std::fn(static_cast<double>(a));                                       \
    }                                                                                    \
  };
PYDD_FLOAT_UNARY(sqrt, sqrt)
PYDD_FLOAT_UNARY(exp, exp)
PYDD_FLOAT_UNARY(log, log)
PYDD_FLOAT_UNARY(cos, cos)
PYDD_FLOAT_UNARY(sin, sin)
PYDD_FLOAT_UNARY(tan, tan)
PYDD_FLOAT_UNARY(arccos, acos)
PYDD_FLOAT_UNARY(arcsin, asin)
PYDD_FLOAT_UNARY(arctan, atan)
#undef PYDD_FLOAT_UNARY

// floor/ceil of an integer is the integer itself (NumPy >= 1.2x keeps ints).
struct floor {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::floor(a);
    else return a;
  }
};
struct ceil {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_floating_point_v<T>) return std::ceil(a);
    else return a;
  }
};

}  // namespace op

// ---------------------------------------------------------------------------
// Loop machinery.

namespace detail {

template <class A>
struct operand_traits {
  static_assert(is_number_v<A>, "operand must be an Array or a number");
  using type = A;
  static constexpr int rank = 0;
};
template <class T, int N>
struct operand_traits<Array<T, N>> {
  using type = T;
  static constexpr int rank = N;
};
template <class A>
using elem_t = typename operand_traits<A>::type;
template <class A>
inline constexpr int rank_v = operand_traits<A>::rank;

/// An operand's layout as the loop nest sees it; a scalar has rank 0.
struct Layout {
  int rank;
  const int64_t* shape;
  const int64_t* strides;
};

/// An operand's elements: an Array's buffer, or the address of a scalar.
template <class T>
struct Src {
  const T* data;
  Layout layout;
};
template <class T, int N>
Src<T> src_of(const Array<T, N>& a) {
  return {a.data(), {N, a.shape(), a.strides()}};
}
template <class T>
Src<T> src_of(const T& x) {
  return {&x, {0, nullptr, nullptr}};
}

/// NumPy's "(2,3)" / "(3,)" / "()" spelling of a shape; returns the length.
inline int format_shape(char* out, int cap, const Layout& l) {
  int n = std::snprintf(out, cap, "(");
  for (int k = 0; k < l.rank && n < cap; ++k)
    n += std::snprintf(out + n, cap - n, k + 1 < l.rank ? "%lld," : "%lld", static_cast<long long>(l.shape[k]));
  if (n < cap) n += std::snprintf(out + n, cap - n, l.rank == 1 ? ",)" : ")");
  return n < cap ? n : cap - 1;
}

/// NumPy's broadcasting rule over `count` operands into a rank-`rank` shape.
inline bool broadcast_shape(int rank, int64_t* shape, const Layout* ops, int count) {
  for (int d = 0; d < rank; ++d) shape[d] = 1;
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < ops[k].rank; ++j) {
      const int d = rank - ops[k].rank + j;
      const int64_t n = ops[k].shape[j];
      if (n == 1) continue;
      if (shape[d] != 1 && shape[d] != n) return false;
      shape[d] = n;
    }
  }
  return true;
}

[[noreturn]] inline void throw_broadcast(const char* name, const Layout* ops, int count) {
  char msg[256];
  int n = std::snprintf(msg, sizeof msg, "%s: operands could not be broadcast together with shapes ", name);
  for (int k = 0; k < count && n < int(sizeof msg) - 1; ++k) {
    n += format_shape(msg + n, int(sizeof msg) - n, ops[k]);
    if (n < int(sizeof msg) - 1) msg[n++] = ' ', msg[n] = '\0';
  }
  throw Error(ErrorKind::ValueError, msg);
}

/// A loop nest over K operands (operand 0 is the output) that all span the
/// output's shape: broadcast axes get stride 0, length-1 axes are dropped and
/// axes that every operand traverses as one are merged.
template <int K>
struct Nest {
  int rank = 0;
  int64_t size = 1;
  // Zeroed past `rank` too: g++ 12 otherwise warns that reduce_into may
  // read strides[1][0] uninitialized (it tests rank == 2 first).
  int64_t shape[kMaxRank] = {};
  int64_t strides[K][kMaxRank] = {};

  Nest(const Layout* ops) {
    const Layout& out = ops[0];
    for (int d = 0; d < out.rank; ++d) {
      size *= out.shape[d];
      if (out.shape[d] == 1) continue;
      shape[rank] = out.shape[d];
      bool merges = rank > 0;
      for (int k = 0; k < K; ++k) {
        const int j = d - (out.rank - ops[k].rank);
        strides[k][rank] = (j >= 0 && ops[k].shape[j] != 1) ? ops[k].strides[j] : 0;
        merges = merges && strides[k][rank - 1] == strides[k][rank] * shape[rank];
      }
      if (merges) {
        shape[rank - 1] *= shape[rank];
        for (int k = 0; k < K; ++k) strides[k][rank - 1] = strides[k][rank];
      } else {
        ++rank;
      }
    }
  }
};

/// Calls row(n, offsets, strides) for each innermost row of the nest, with
/// the element offsets of each operand at the row's start.
template <int K, class Row>
void for_rows(const Nest<K>& nest, Row&& row) {
  int64_t off[K] = {};
  int64_t st[K] = {};
  if (nest.size == 0) return;
  if (nest.rank == 0) return row(int64_t{1}, off, st);
  const int last = nest.rank - 1;
  for (int k = 0; k < K; ++k) st[k] = nest.strides[k][last];
  int64_t idx[kMaxRank] = {};
  for (;;) {
    row(nest.shape[last], off, st);
    int d = last - 1;
    for (; d >= 0; --d) {
      for (int k = 0; k < K; ++k) off[k] += nest.strides[k][d];
      if (++idx[d] < nest.shape[d]) break;
      for (int k = 0; k < K; ++k) off[k] -= nest.strides[k][d] * nest.shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Row access with the stride pattern fixed at compile time: 0 = constant
// along the row, 1 = unit stride, 2 = any stride.
template <int Mode>
inline int64_t row_index(int64_t i, int64_t s) {
  if constexpr (Mode == 0) return 0;
  else if constexpr (Mode == 1) return i;
  else return i * s;
}
template <class T, int Mode>
struct RowIn {
  const T* p;
  int64_t s;
  T operator[](int64_t i) const { return p[row_index<Mode>(i, s)]; }
};

template <int OutMode, class O, class G, class... In>
inline void row_loop(O* __restrict out, int64_t so, int64_t n, const G& g, In... in) {
  for (int64_t i = 0; i < n; ++i) out[row_index<OutMode>(i, so)] = g(in[i]...);
}

// Runs the row with operand J constant and the others unit-stride, if its
// strides are exactly that (a scalar or broadcast operand against arrays).
template <size_t J, class O, class G, class... T, size_t... I>
inline bool row_with_constant(std::index_sequence<I...>, O* out, int64_t n, const int64_t* st, const G& g,
                              const T*... p) {
  if (st[J] != 0 || !((I == J || st[I] == 1) && ...)) return false;
  row_loop<1>(out, 1, n, g, RowIn<T, I == J ? 0 : 1>{p, 0}...);
  return true;
}

template <class O, class G, class... T, size_t... I>
inline void run_row(std::index_sequence<I...> seq, O* out, int64_t so, int64_t n, const int64_t* st, const G& g,
                    const T*... p) {
  if (so == 1) {
    if (((st[I] == 1) && ...)) return row_loop<1>(out, 1, n, g, RowIn<T, 1>{p, 1}...);
    if ((row_with_constant<I>(seq, out, n, st, g, p...) || ...)) return;
  }
  row_loop<2>(out, so, n, g, RowIn<T, 2>{p, st[I]}...);
}

/// out[idx] = g(src[idx]...) over out's shape, each source broadcast to it.
/// The sources' shapes must already be known to broadcast.
template <class O, class G, class... T, size_t... I>
void map_into_impl(std::index_sequence<I...> seq, O* out, const Layout& out_layout, const G& g,
                   const Src<T>&... src) {
  constexpr int K = 1 + sizeof...(T);
  const Layout layouts[K] = {out_layout, src.layout...};
  const Nest<K> nest(layouts);
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* st) {
    run_row(seq, out + off[0], st[0], n, st + 1, g, (src.data + off[1 + I])...);
  });
}
template <class O, class G, class... T>
void map_into(O* out, const Layout& out_layout, const G& g, const Src<T>&... src) {
  map_into_impl(std::index_sequence_for<T...>(), out, out_layout, g, src...);
}

template <class... A>
constexpr int max_rank() {
  int n = 0;
  ((n = rank_v<A> > n ? rank_v<A> : n), ...);
  return n;
}

/// Allocates the broadcast result of the operands and fills it with g.
template <class R, class G, class... A>
auto map_new(const char* name, const G& g, const A&... a) {
  constexpr int N = max_rank<A...>();
  const Layout ops[] = {src_of(a).layout...};
  int64_t shape[N];
  if (!broadcast_shape(N, shape, ops, sizeof...(A))) throw_broadcast(name, ops, sizeof...(A));
  Array<R, N> out = Array<R, N>::empty(shape);
  map_into(out.data(), Layout{N, out.shape(), out.strides()}, g, src_of(a)...);
  return out;
}

/// The lowest and one-past-highest byte an array's elements occupy.
template <class T, int N>
void byte_extent(const Array<T, N>& a, const char** lo, const char** hi) {
  const char* base = reinterpret_cast<const char*>(a.data());
  int64_t min = 0, max = 0;
  for (int k = 0; k < N; ++k) {
    const int64_t span = (a.shape(k) - 1) * a.stride(k) * int64_t(sizeof(T));
    (span < 0 ? min : max) += span;
  }
  *lo = base + min;
  *hi = base + max + int64_t(sizeof(T));
}

/// Whether the last axis of `a` is contiguous (a 0-D array counts as one).
template <class T, int N>
bool unit_stride(const Array<T, N>& a) {
  if constexpr (N == 0) return true;
  else return a.stride(N - 1) == 1;
}

template <class T, int N, class U, int M>
bool may_overlap(const Array<T, N>& a, const Array<U, M>& b) {
  if (a.size() == 0 || b.size() == 0) return false;
  const char *alo, *ahi, *blo, *bhi;
  byte_extent(a, &alo, &ahi);
  byte_extent(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Broadcasting as values: what a fused loop uses when its operands' shapes
// are not all equal (size-1 axes, lower ranks).

namespace detail {

template <class S>
constexpr int shape_rank() {
  if constexpr (std::is_arithmetic_v<S>) return 0;
  else return static_cast<int>(std::tuple_size_v<S>);
}

/// The extents of a shape tuple into `out` (a scalar has none).
template <class S>
Layout shape_layout(const S& s, int64_t* out) {
  if constexpr (!std::is_arithmetic_v<S>)
    std::apply([&](auto... d) { int k = 0; ((out[k++] = static_cast<int64_t>(d)), ...); }, s);
  return Layout{shape_rank<S>(), out, nullptr};
}

template <size_t... K>
auto shape_tuple_of(const int64_t* shape, std::index_sequence<K...>) {
  return std::tuple<decltype(K, int64_t{})...>{shape[K]...};
}

}  // namespace detail

/// The shape the element-wise operation `name` gives operands of these
/// shapes (each a shape tuple, or a scalar: shape ()), by NumPy's
/// broadcasting; the operation's ValueError when they do not broadcast.
template <class... S>
auto broadcast_shapes_for(const char* name, const S&... shapes) {
  constexpr int R = std::max({0, detail::shape_rank<S>()...});
  constexpr int K = sizeof...(S);
  int64_t extents[K][kMaxRank];
  detail::Layout ops[K];
  int k = 0;
  ((ops[k] = detail::shape_layout(shapes, extents[k]), ++k), ...);
  int64_t shape[R > 0 ? R : 1];
  if (!detail::broadcast_shape(R, shape, ops, K)) detail::throw_broadcast(name, ops, K);
  return detail::shape_tuple_of(shape, std::make_index_sequence<R>());
}

/// np.broadcast_to(a, shape): a view of `a` with the given shape, reading
/// its length-1 and missing leading axes with stride 0 (no copy).
template <class T, int N, class... I>
Array<T, sizeof...(I)> broadcast_to(const Array<T, N>& a, const std::tuple<I...>& shape) {
  constexpr int M = sizeof...(I);
  static_assert(M >= N, "broadcast_to: the shape has fewer dimensions than the array");
  int64_t sh[M], st[M];
  detail::shape_layout(shape, sh);
  bool ok = true;
  for (int j = 0; j < M; ++j) {
    const int k = j - (M - N);
    ok = ok && sh[j] >= 0;
    if (k < 0) st[j] = 0;
    else if (a.shape(k) == sh[j]) st[j] = a.stride(k);
    else if (a.shape(k) == 1) st[j] = 0;
    else ok = false;
  }
  if (!ok) {
    char msg[256], from[64], to[64];  // what fits an Error's message
    detail::format_shape(from, sizeof from, detail::Layout{N, a.shape(), nullptr});
    detail::format_shape(to, sizeof to, detail::Layout{M, sh, nullptr});
    std::snprintf(msg, sizeof msg,
                  "operands could not be broadcast together with remapped shapes [original->remapped]: %s  and "
                  "requested shape %s", from, to);
    throw Error(ErrorKind::ValueError, msg);
  }
  return a.template alias<M>(a.data(), sh, st);
}
template <class T, int N>
Array<T, 1> broadcast_to(const Array<T, N>& a, int64_t n) {
  return broadcast_to(a, std::tuple<int64_t>{n});
}

namespace detail {
/// A view of one part of a complex array: the same buffer read as T with
/// twice the strides, from the real (0) or imaginary (1) part.
template <class T, int N>
Array<T, N> part_view(const Array<std::complex<T>, N>& z, int part) {
  int64_t shape[N], strides[N];
  for (int k = 0; k < N; ++k) shape[k] = z.shape(k), strides[k] = 2 * z.stride(k);
  if (z.owner()) z.owner()->retain();
  return Array<T, N>::adopt(reinterpret_cast<T*>(z.data()) + part, shape, strides, z.owner());
}
}  // namespace detail

/// z.real: of a complex array, a view of its real parts (stores through it
/// change z, as in NumPy); of a real array, the array itself.
template <class T, int N>
auto real_view(const Array<T, N>& a) {
  if constexpr (is_complex_v<T>) return detail::part_view(a, 0);
  else return a;
}
/// z.imag: a view of the imaginary parts; of a real array, zeros (NumPy
/// gives a read-only array of zeros).
template <class T, int N>
auto imag_view(const Array<T, N>& a) {
  if constexpr (is_complex_v<T>) {
    return detail::part_view(a, 1);
  } else {
    int64_t shape[N];
    for (int k = 0; k < N; ++k) shape[k] = a.shape(k);
    return Array<T, N>::zeros(shape);
  }
}

// ---------------------------------------------------------------------------
// Public element-wise functions.

/// f applied element-wise to a (Array or scalar): elements converted to C,
/// the result converted to R. Returns a new C-contiguous Array, or R for a
/// scalar operand.
template <class R, class C, class F, class A>
auto map1(const char* name, F f, const A& a) {
  auto g = [f](detail::elem_t<A> x) { return convert<R>(f(convert<C>(x))); };
  if constexpr (detail::rank_v<A> == 0) return g(a);
  else return detail::map_new<R>(name, g, a);
}

namespace detail {

/// array ** scalar for the exponents NumPy special-cases (fast_scalar_power
/// in numpy/core/src/multiarray/number.c), decided once per call: for float
/// arrays 2 -> square (x * x), 1 -> positive (a copy), 0 -> ones, -1 ->
/// reciprocal (1 / x), 0.5 -> sqrt; for integers 2 (and the trivial 1, 0).
/// These give NumPy's bits exactly. They are not always pow's: glibc's pow
/// is not correctly rounded (x * x, 1 / x and sqrt are) and differs from
/// them in the last bit for ~0.05% of doubles, returns +nan for a -nan base,
/// and pow(-0.0, 0.5) is +0.0 where sqrt gives -0.0 (NumPy's answer), pow(-inf,
/// 0.5) is inf where sqrt gives nan. Fills `out` and returns true when it
/// applies.
template <class R, class C, class A, class E>
bool power_fast(const char* name, const A& a, E exponent, Array<R, rank_v<A>>* out) {
  using T = elem_t<A>;
  constexpr int N = rank_v<A>;
  if constexpr (std::is_same_v<C, bool> || is_complex_v<C> || is_complex_v<E>) {
    return false;  // complex powers: npy_cpow's own integer cases
  } else {
    // The exponent as given, as NumPy tests it (a float32 array ** 2.0000001
    // computes powf(x, 2.0f) there).
    const double e = static_cast<double>(exponent);
    if (e == 2) {
      *out = map_new<R>(name, [](T x) { const C y = convert<C>(x); return convert<R>(op::mul{}(y, y)); }, a);
    } else if (e == 1) {
      *out = map_new<R>(name, [](T x) { return convert<R>(convert<C>(x)); }, a);
    } else if (e == 0) {
      std::array<int64_t, N> shape;
      for (int k = 0; k < N; ++k) shape[k] = a.shape(k);
      *out = Array<R, N>::filled(shape, convert<R>(C(1)));
    } else if constexpr (std::is_floating_point_v<C>) {
      if (e == -1) *out = map_new<R>(name, [](T x) { return convert<R>(C(1) / convert<C>(x)); }, a);
      else if (e == 0.5) *out = map_new<R>(name, [](T x) { return convert<R>(op::sqrt{}(convert<C>(x))); }, a);
      else return false;
    } else {
      return false;
    }
    return true;
  }
}

}  // namespace detail

namespace detail {
/// What an element-wise operation on operands A, B returns: R for two
/// scalars, else an array of the higher rank. Spelled out (not `auto`) so
/// that pydd/instances.h can declare instances without instantiating them.
template <class R, class A, class B>
using map_result_t =
    std::conditional_t<rank_v<A> == 0 && rank_v<B> == 0, R, Array<R, std::max(rank_v<A>, rank_v<B>)>>;
}  // namespace detail

/// f applied element-wise to a and b broadcast together (each an Array or a
/// scalar), in compute type C, converted to R. Both scalars give R.
template <class R, class C, class F, class A, class B>
auto map2(const char* name, F f, const A& a, const B& b) -> detail::map_result_t<R, A, B> {
  auto g = [f](detail::elem_t<A> x, detail::elem_t<B> y) { return convert<R>(f(convert<C>(x), convert<C>(y))); };
  if constexpr (detail::rank_v<A> == 0 && detail::rank_v<B> == 0) {
    return g(a, b);
  } else {
    if constexpr (std::is_same_v<F, op::power> && detail::rank_v<B> == 0) {
      Array<R, detail::rank_v<A>> out;
      if (detail::power_fast<R, C>(name, a, b, &out)) return out;
    }
    return detail::map_new<R>(name, g, a, b);
  }
}

/// np.where(c, a, b): a where c is true, else b, broadcast together; the
/// chosen value is converted to C and then to R.
template <class R, class C, class Cond, class A, class B>
auto where(const Cond& c, const A& a, const B& b) {
  auto g = [](detail::elem_t<Cond> t, detail::elem_t<A> x, detail::elem_t<B> y) {
    return t != 0 ? convert<R>(convert<C>(x)) : convert<R>(convert<C>(y));
  };
  if constexpr (detail::rank_v<Cond> == 0 && detail::rank_v<A> == 0 && detail::rank_v<B> == 0) return g(c, a, b);
  else return detail::map_new<R>("where", g, c, a, b);
}

template <class T, int N>
Array<T, N> copy(const Array<T, N>& a);

/// dst[...] = src: src (an Array of rank <= N, any dtype, or a scalar) is
/// broadcast to dst's shape and converted. Overlapping memory (a[1:] =
/// a[:-1]) is read from a copy first, as NumPy does.
template <class T, int N, class S>
void assign(const Array<T, N>& dst, const S& src) {
  using U = detail::elem_t<S>;
  static_assert(detail::rank_v<S> <= N, "assign: source has more dimensions than the target");
  const detail::Layout out{N, dst.shape(), dst.strides()};
  auto g = [](U x) { return convert<T>(x); };
  if constexpr (detail::rank_v<S> > 0) {
    constexpr int M = detail::rank_v<S>;
    const detail::Layout in = detail::src_of(src).layout;
    for (int j = 0; j < M; ++j) {
      const int64_t n = src.shape(j);
      if (n != 1 && n != dst.shape(N - M + j)) {
        char msg[256], from[90], to[90];
        detail::format_shape(from, sizeof from, in);
        detail::format_shape(to, sizeof to, out);
        std::snprintf(msg, sizeof msg, "could not broadcast input array from shape %s into shape %s", from, to);
        throw Error(ErrorKind::ValueError, msg);
      }
    }
    if (detail::may_overlap(dst, src)) {
      const Array<U, M> tmp = copy(src);
      detail::map_into(dst.data(), out, g, detail::src_of(tmp));
      return;
    }
  }
  detail::map_into(dst.data(), out, g, detail::src_of(src));
}

/// In-place fill (a[...] = value) with conversion.
template <class T, int N, class V>
void fill(const Array<T, N>& a, V value) {
  static_assert(is_number_v<V>, "fill needs a scalar");
  assign(a, value);
}

/// a.astype(R): a new C-contiguous array of converted elements.
template <class R, class T, int N>
Array<R, N> astype(const Array<T, N>& a) {
  return detail::map_new<R>("astype", [](T x) { return convert<R>(x); }, a);
}

/// a.copy(): a new C-contiguous array with the same elements.
template <class T, int N>
Array<T, N> copy(const Array<T, N>& a) {
  return astype<T>(a);
}

/// np.ascontiguousarray(a): a itself when it is C-contiguous, else a copy.
template <class T, int N>
Array<T, N> ascontiguousarray(const Array<T, N>& a) {
  return a.is_contiguous() ? a : copy(a);
}

/// np.full(shape, value) with value converted to T.
template <class T, int N, class V>
Array<T, N> full(const int64_t (&shape)[N], V value) {
  return Array<T, N>::filled(shape, convert<T>(value));
}
template <class T, int N, class V>
Array<T, N> full(const std::array<int64_t, N>& shape, V value) {
  return Array<T, N>::filled(shape, convert<T>(value));
}

/// np.arange(start, stop, step) as dtype T. NumPy's length rule,
/// ceil((stop - start) / step), and its fill rule for floats: element i is
/// start + i * delta with delta = (start + step) - start.
template <class T, class A, class B, class S>
Array<T, 1> arange(A start, B stop, S step) {
  if (step == 0) throw Error(ErrorKind::ValueError, "arange: step must not be zero");
  int64_t len;
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<S>) {
    const int64_t lo = start, hi = stop, st = step;
    if (st > 0) len = hi > lo ? (hi - lo - 1) / st + 1 : 0;
    else len = lo > hi ? (lo - hi - 1) / -st + 1 : 0;
  } else {
    const double n = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step));
    if (!(n <= 9.2e18)) throw Error(ErrorKind::ValueError, "Maximum allowed size exceeded");
    len = n > 0 ? static_cast<int64_t>(n) : 0;
  }
  Array<T, 1> out = Array<T, 1>::empty({len});
  T* p = out.data();
  if (len == 0) return out;
  const T first = convert<T>(start);
  const T delta = static_cast<T>(convert<T>(start + step) - first);
  for (int64_t i = 0; i < len; ++i) p[i] = static_cast<T>(first + static_cast<T>(i) * delta);
  return out;
}

}  // namespace pydd
