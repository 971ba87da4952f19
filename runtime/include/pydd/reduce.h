// pydd runtime: reductions (sum, prod, mean, min, max, argmin, argmax, any,
// all, allclose, `in`, nonzero), over the whole array or along one axis.
//
// Float results follow NumPy's order of operations so that they agree to
// the last bit in the common cases: NumPy walks a reduction in memory order
// (axes sorted by stride, reduced axes with negative strides flipped); a row
// along which the result stays fixed is summed pairwise (its pairwise_sum),
// and otherwise rows are accumulated element-wise, one after another.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include "pydd/builtins.h"
#include "pydd/elementwise.h"

namespace pydd {

namespace detail {

/// NumPy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src): blocks of
/// up to 128 elements summed with 8 accumulators, halves summed recursively.
/// NumPy's complex pairwise_sum: the same over the 2n parts, so blocks of
/// up to 64 numbers summed with 4 complex accumulators, and halves of a
/// multiple of 4 numbers.
template <class R, int Mode, class T>
R complex_pairwise_sum(const T* a, int64_t n, int64_t s) {
  auto at = [a, s](int64_t i) { return convert<R>(a[row_index<Mode>(i, s)]); };
  if (n < 4) {
    R res = 0;
    for (int64_t i = 0; i < n; ++i) res += at(i);
    return res;
  }
  if (n <= 64) {
    R r[4] = {at(0), at(1), at(2), at(3)};
    int64_t i = 4;
    for (; i < n - n % 4; i += 4)
      for (int j = 0; j < 4; ++j) r[j] += at(i + j);
    R res = (r[0] + r[1]) + (r[2] + r[3]);
    for (; i < n; ++i) res += at(i);
    return res;
  }
  const int64_t n2 = (n - n % 8) / 2;
  return complex_pairwise_sum<R, Mode>(a, n2, s) + complex_pairwise_sum<R, Mode>(a + row_index<Mode>(n2, s), n - n2, s);
}

/// pairwise_sum's block, 8 <= n <= 128 real values: eight partial sums.
/// Separate so that a caller summing many short runs can inline it (the
/// recursive pairwise_sum is not inlined).
template <class R, int Mode, class T>
inline R pairwise_block(const T* a, int64_t n, int64_t s) {
  auto at = [a, s](int64_t i) { return convert<R>(a[row_index<Mode>(i, s)]); };
  R r[8];
  for (int j = 0; j < 8; ++j) r[j] = at(j);
  int64_t i = 8;
  for (; i < n - n % 8; i += 8)
    for (int j = 0; j < 8; ++j) r[j] += at(i + j);
  R res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += at(i);
  return res;
}

template <class R, int Mode, class T>
R pairwise_sum(const T* a, int64_t n, int64_t s) {
  if constexpr (is_complex_v<R>) return complex_pairwise_sum<R, Mode>(a, n, s);
  if (n < 8) {
    R res = 0;
    for (int64_t i = 0; i < n; ++i) res += convert<R>(a[row_index<Mode>(i, s)]);
    return res;
  }
  if (n <= 128) return pairwise_block<R, Mode>(a, n, s);
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum<R, Mode>(a, n2, s) + pairwise_sum<R, Mode>(a + row_index<Mode>(n2, s), n - n2, s);
}

/// NumPy's iterator buffer size: float reductions are summed pairwise in
/// windows of this many elements (sum's FoldRule::window in
/// stdlib/Reductions.cpp, which fusion reproduces).
inline constexpr int64_t kReduceBuffer = 8192;

// Large reductions run on all threads (pydd/parallel.h) in ways that give
// the sequential loop's result to the last bit: each thread folds its own
// part and the parts are combined in order where the order matters (float
// sums), or the operation is exact in any order (integer sums, min, max),
// or each thread owns its own output elements (sums along a leading axis).

/// Whether a reduction over n elements is worth splitting among threads.
inline bool parallel_reduction(int64_t n) {
  return n >= static_cast<int64_t>(kParallelElements) && get_num_threads() > 1 && !omp_in_parallel();
}

/// f(part, lo, hi) for `parts` contiguous parts of [0, n), on all threads.
template <class F>
void for_parts(int64_t n, int64_t parts, const F& f) {
  const int64_t chunk = (n + parts - 1) / parts;
  parallel_range(0, parts, [&](int64_t a, int64_t b) {
    for (int64_t w = a; w < b; ++w) f(w, w * chunk < n ? w * chunk : n, (w + 1) * chunk < n ? (w + 1) * chunk : n);
  });
}

// Accumulators: row() folds a whole row into one result, step() folds one
// element into a result that varies along the row.
template <class R>
struct SumAcc {
  template <int Mode, class T>
  void row(R& o, const T* p, int64_t n, int64_t s) const {
    if constexpr (!std::is_floating_point_v<R> && !is_complex_v<R>) {
      auto part = [&](int64_t lo, int64_t hi) {
        R acc = 0;
        for (int64_t i = lo; i < hi; ++i) acc = op::add{}(acc, convert<R>(p[row_index<Mode>(i, s)]));
        return acc;
      };
      if (Mode == 1 && parallel_reduction(n)) {  // wrapping sums are exact in any order
        const int64_t parts = get_num_threads();
        std::vector<R> sums(parts);
        for_parts(n, parts, [&](int64_t w, int64_t lo, int64_t hi) { sums[w] = part(lo, hi); });
        for (R x : sums) o = op::add{}(o, x);
      } else {
        o = op::add{}(o, part(0, n));
      }
    } else {
      // NumPy's reduction loop sees at most one 8192-element buffer at a time
      // and adds each buffer's pairwise sum to the total in turn: the buffers
      // may be summed on all threads, then added in order.
      auto window = [&](int64_t w) {
        const int64_t i = w * kReduceBuffer;
        return pairwise_sum<R, Mode>(p + row_index<Mode>(i, s), n - i < kReduceBuffer ? n - i : kReduceBuffer, s);
      };
      const int64_t windows = (n + kReduceBuffer - 1) / kReduceBuffer;
      if (Mode == 1 && parallel_reduction(n)) {
        std::vector<R> sums(windows);
        parallel_range(0, windows, [&](int64_t a, int64_t b) {
          for (int64_t w = a; w < b; ++w) sums[w] = window(w);
        });
        for (R x : sums) o += x;
      } else {
        for (int64_t w = 0; w < windows; ++w) o += window(w);
      }
    }
  }
  template <class T>
  void step(R& o, T x) const {
    o = op::add{}(o, convert<R>(x));
  }
};

/// prod, min and max: the same binary operation along rows and across them.
template <class R, class F>
struct FoldAcc {
  template <int Mode, class T>
  void row(R& o, const T* p, int64_t n, int64_t s) const {
    R acc = o;
    for (int64_t i = 0; i < n; ++i) acc = F{}(acc, convert<R>(p[row_index<Mode>(i, s)]));
    o = acc;
  }
  template <class T>
  void step(R& o, T x) const {
    o = F{}(o, convert<R>(x));
  }
};

/// Permutes axes into memory order as NumPy's iterator does (decreasing
/// |stride| of the input, stable) and walks reduced axes (out length 1)
/// with negative strides forwards. Returns the adjusted input pointer.
template <int N, class T>
const T* memory_order(const T* in, const int64_t* shape, const int64_t* strides, const int64_t* out_shape,
                      const int64_t* out_strides, int64_t* sh, int64_t* st, int64_t* osh, int64_t* ost) {
  auto mag = [](int64_t v) { return v < 0 ? -v : v; };
  int perm[N];
  for (int k = 0; k < N; ++k) {
    int j = k;
    for (; j > 0 && mag(strides[perm[j - 1]]) < mag(strides[k]); --j) perm[j] = perm[j - 1];
    perm[j] = k;
  }
  for (int k = 0; k < N; ++k) {
    const int a = perm[k];
    sh[k] = shape[a], st[k] = strides[a], osh[k] = out_shape[a], ost[k] = out_strides[a];
    if (st[k] < 0 && osh[k] == 1 && sh[k] > 0) {
      in += (sh[k] - 1) * st[k];
      st[k] = -st[k];
    }
  }
  return in;
}

struct Greater {
  template <class T>
  bool operator()(T x, T best) const {
    return x > best;
  }
};
struct Less {
  template <class T>
  bool operator()(T x, T best) const {
    return x < best;
  }
};

/// The element types that get the explicit vector loops below (GCC vector
/// extensions: g++ does not vectorize a NaN-aware select loop by itself).
template <class T>
inline constexpr bool kVectorLanes = std::is_same_v<T, double> || std::is_same_v<T, float> ||
                                     std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>;

/// The extreme (by Better) of n >= 1 contiguous elements, noting any NaN.
/// Four 64-byte accumulators select x where Better(x, lane) (one max/min
/// instruction each: a NaN never wins, so it is noted in a separate mask).
template <class Better, class T>
T block_extreme(const T* p, int64_t n, bool* nan) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kMax = std::is_same_v<Better, Greater>;
  T m = p[0];
  int64_t i = 0;
  if constexpr (kVectorLanes<T>) {
    typedef T V __attribute__((vector_size(64)));
    constexpr int L = 64 / sizeof(T);
    if (n >= 4 * L) {
      // (No helper functions: passing these vectors by value has an ABI
      // that depends on -march, and g++ warns about it.)
      V m0, m1, m2, m3, x0, x1, x2, x3;
      std::memcpy(&m0, p, sizeof m0), std::memcpy(&m1, p + L, sizeof m1);
      std::memcpy(&m2, p + 2 * L, sizeof m2), std::memcpy(&m3, p + 3 * L, sizeof m3);
      auto bad = (m0 != m0) | (m1 != m1) | (m2 != m2) | (m3 != m3);
      for (i = 4 * L; i + 4 * L <= n; i += 4 * L) {
        std::memcpy(&x0, p + i, sizeof x0), std::memcpy(&x1, p + i + L, sizeof x1);
        std::memcpy(&x2, p + i + 2 * L, sizeof x2), std::memcpy(&x3, p + i + 3 * L, sizeof x3);
        m0 = (kMax ? x0 > m0 : x0 < m0) ? x0 : m0;
        m1 = (kMax ? x1 > m1 : x1 < m1) ? x1 : m1;
        m2 = (kMax ? x2 > m2 : x2 < m2) ? x2 : m2;
        m3 = (kMax ? x3 > m3 : x3 < m3) ? x3 : m3;
        if constexpr (kFloat) bad |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
      }
      m0 = (kMax ? m1 > m0 : m1 < m0) ? m1 : m0;
      m2 = (kMax ? m3 > m2 : m3 < m2) ? m3 : m2;
      m0 = (kMax ? m2 > m0 : m2 < m0) ? m2 : m0;
      m = m0[0];
      for (int j = 0; j < L; ++j) {
        m = Better{}(m0[j], m) ? m0[j] : m;
        *nan = *nan || bad[j] != 0;
      }
    }
  }
  for (; i < n; ++i) {
    m = Better{}(p[i], m) ? p[i] : m;
    if constexpr (kFloat) *nan = *nan || p[i] != p[i];
  }
  return m;
}

/// min and max: contiguous rows through block_extreme.
template <class T, class Better, class F>
struct ExtremeAcc {
  template <int Mode>
  void row(T& o, const T* p, int64_t n, int64_t s) const {
    if constexpr (Mode == 1) {
      bool nan = false;
      T m;
      if (parallel_reduction(n)) {  // min and max are exact in any order
        const int64_t parts = get_num_threads();
        std::unique_ptr<T[]> best(new T[parts]);  // (not vector<T>: T may be bool)
        std::unique_ptr<bool[]> bad(new bool[parts]);
        for_parts(n, parts, [&](int64_t w, int64_t lo, int64_t hi) {
          bool b = false;
          best[w] = block_extreme<Better>(p + lo, hi - lo, &b);
          bad[w] = b;
        });
        m = best[0];
        for (int64_t w = 0; w < parts; ++w) {
          m = Better{}(best[w], m) ? best[w] : m;
          nan = nan || bad[w];
        }
      } else {
        m = block_extreme<Better>(p, n, &nan);
      }
      o = nan ? std::numeric_limits<T>::quiet_NaN() : F{}(o, m);
    } else {
      FoldAcc<T, F>{}.template row<Mode>(o, p, n, s);
    }
  }
  void step(T& o, T x) const { o = F{}(o, x); }
};

/// The shortest contiguous output row that reduce_into folds input rows
/// into eight at a time, or splits among threads: threads that each own a
/// part of shorter rows (a few hundred bytes of every input row) ran
/// 1.25-1.95x slower than one thread (X.sum(0) of 100000 x 100 to 20000 x
/// 500 float64 on two cores).
inline constexpr int64_t kBlockedColumns = 400;

/// Folds `in` into `out` with acc. out's layout has in's rank with length 1
/// on the reduced axes; out must already hold the starting values.
template <class Acc, class R, class T, int N>
void reduce_into(const Acc& acc, R* out, const int64_t* out_shape, const int64_t* out_strides, const T* in,
                 const int64_t* shape, const int64_t* strides) {
  int64_t sh[N], st[N], osh[N], ost[N];
  in = memory_order<N>(in, shape, strides, out_shape, out_strides, sh, st, osh, ost);
  const Layout layouts[2] = {{N, sh, st}, {N, osh, ost}};
  const Nest<2> nest(layouts);
  const int last = nest.rank - 1;
  if (nest.rank == 2 && nest.strides[1][0] == 0 && nest.strides[0][1] == 1 && nest.strides[1][1] == 1 &&
      nest.shape[1] >= kBlockedColumns) {
    // Every input row folded into one contiguous output row (X.sum(0)).
    // Eight input rows per pass over the output row: each element still
    // sees its inputs in order, o = (((o + x0) + x1) + ...), as NumPy
    // adds them, but the output row is loaded and stored once per eight
    // rows instead of once per row: X.sum(0) of 10000 x 1000 float64 in
    // 0.58 of NumPy's time instead of 1.03 (two threads). Narrower rows
    // take the row-at-a-time loop below: blocked, 250 columns ran up to
    // twice as slow.
    constexpr int kRows = 8;
    const int64_t rows = nest.shape[0], cols = nest.shape[1], rs = nest.strides[0][0];
    auto part = [&](int64_t lo, int64_t hi) {
      int64_t r = 0;
      for (; r + kRows <= rows; r += kRows) {
        const T* p = in + r * rs;
        for (int64_t i = lo; i < hi; ++i) {
          R o = out[i];
          for (int b = 0; b < kRows; ++b) acc.step(o, p[b * rs + i]);
          out[i] = o;
        }
      }
      for (; r < rows; ++r)
        for (int64_t i = lo; i < hi; ++i) acc.step(out[i], in[r * rs + i]);
    };
    // Each thread owns a part of the output row (the order per element
    // stays sequential).
    if (parallel_reduction(nest.size)) parallel_range(0, cols, part);
    else part(0, cols);
    return;
  }
  if (nest.rank == 2 && nest.strides[0][1] == 1 && nest.strides[1][1] == 0 && nest.shape[0] >= 8 &&
      parallel_reduction(nest.size)) {
    // One output element per contiguous input row (X.sum(1)): the rows on
    // all threads, each reduced as alone (NumPy's pairwise sum per row).
    // Fewer, longer rows take the path below, which splits each row.
    const int64_t n = nest.shape[1], rs = nest.strides[0][0], os = nest.strides[1][0];
    parallel_range(0, nest.shape[0], [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) acc.template row<1>(out[r * os], in + r * rs, n, 1);
    });
    return;
  }
  if (nest.rank >= 2 && nest.strides[0][last] == 1 && nest.strides[1][last] == 1 &&
      nest.shape[last] >= kBlockedColumns && parallel_reduction(nest.size)) {
    // Rows accumulated into contiguous output rows (X.sum(0)): each thread
    // owns a part of every output row and folds every input row into it, so
    // each output element sees its inputs in the sequential order.
    parallel_range(0, nest.shape[last], [&](int64_t lo, int64_t hi) {
      for_rows(nest, [&](int64_t, const int64_t* off, const int64_t*) {
        const T* p = in + off[0];
        R* o = out + off[1];
        for (int64_t i = lo; i < hi; ++i) acc.step(o[i], p[i]);
      });
    });
    return;
  }
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* s) {
    const T* p = in + off[0];
    R* o = out + off[1];
    if (s[1] == 0) {
      if (s[0] == 1) acc.template row<1>(*o, p, n, 1);
      else acc.template row<2>(*o, p, n, s[0]);
    } else if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) acc.step(o[i], p[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc.step(o[i * s[1]], p[i * s[0]]);
    }
  });
}

/// Reduction of every element into one value, starting from `init`.
template <class Acc, class R, class T, int N>
R reduce_all(const Acc& acc, R init, const Array<T, N>& a) {
  int64_t ones[N], zeros[N];
  for (int k = 0; k < N; ++k) ones[k] = 1, zeros[k] = 0;
  reduce_into<Acc, R, T, N>(acc, &init, ones, zeros, a.data(), a.shape(), a.strides());
  return init;
}

/// A float sum over all elements as NumPy computes it: the elements in
/// memory order, converted to R, pass through 8192-element buffers, and each
/// buffer's pairwise sum is added to the total.
template <class R, class T, int N>
R float_sum(const Array<T, N>& a) {
  int64_t ones[N], zeros[N], sh[N], st[N], osh[N], ost[N];
  for (int k = 0; k < N; ++k) ones[k] = 1, zeros[k] = 0;
  const T* in = memory_order<N>(a.data(), a.shape(), a.strides(), ones, zeros, sh, st, osh, ost);
  const Layout layout[1] = {{N, sh, st}};
  const Nest<1> nest(layout);
  R total = 0;
  if (nest.rank <= 1 && std::is_same_v<R, T>) {  // one row: the buffers are slices of it
    SumAcc<R> acc;
    const int64_t n = nest.rank == 0 ? nest.size : nest.shape[0], s = nest.rank == 0 ? 1 : nest.strides[0][0];
    if (n == 0) return total;
    if (s == 1) acc.template row<1>(total, in, n, 1);
    else acc.template row<2>(total, in, n, s);
    return total;
  }
  R buf[kReduceBuffer];
  int64_t fill = 0;
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* s) {
    const T* p = in + off[0];
    for (int64_t i = 0; i < n;) {
      const int64_t take = n - i < kReduceBuffer - fill ? n - i : kReduceBuffer - fill;
      for (int64_t j = 0; j < take; ++j) buf[fill + j] = convert<R>(p[(i + j) * s[0]]);
      fill += take, i += take;
      if (fill == kReduceBuffer) total += pairwise_sum<R, 1>(buf, fill, 1), fill = 0;
    }
  });
  return fill ? total + pairwise_sum<R, 1>(buf, fill, 1) : total;
}

/// A reduction's axis: NumPy raises AxisError, a ValueError.
inline int check_axis(int64_t axis, int rank) { return normalize_axis(axis, rank, ErrorKind::ValueError); }

/// The result of reducing `axis` of `a` (already normalized), with the
/// layout reduce_into expects for it.
template <class R, int N>
struct AxisResult {
  Array<R, N - 1> out;
  int64_t shape[N], strides[N];

  AxisResult(const int64_t* in_shape, int axis) {
    int64_t oshape[N - 1];
    for (int k = 0, j = 0; k < N; ++k)
      if (k != axis) oshape[j++] = in_shape[k];
    out = Array<R, N - 1>::empty(oshape);
    for (int k = 0, j = 0; k < N; ++k) {
      shape[k] = k == axis ? 1 : in_shape[k];
      strides[k] = k == axis ? 0 : out.stride(j++);
    }
  }
};

template <class R, class Acc, class T, int N>
Array<R, N - 1> reduce_axis(const Acc& acc, R init, const Array<T, N>& a, int64_t axis) {
  static_assert(N >= 2, "axis reductions need a rank >= 2 array (use the full reduction)");
  AxisResult<R, N> r(a.shape(), check_axis(axis, N));
  fill(r.out, init);
  reduce_into<Acc, R, T, N>(acc, r.out.data(), r.shape, r.strides, a.data(), a.shape(), a.strides());
  return r.out;
}

[[noreturn]] inline void throw_no_identity(const char* op) {
  char msg[96];
  std::snprintf(msg, sizeof msg, "zero-size array to reduction operation %s which has no identity", op);
  throw Error(ErrorKind::ValueError, msg);
}

/// min/max along an axis: NumPy starts from the first slice (no identity).
template <class F, class Better, class T, int N>
Array<T, N - 1> extreme_axis(const char* op, const Array<T, N>& a, int64_t axis) {
  static_assert(N >= 2, "axis reductions need a rank >= 2 array (use the full reduction)");
  const int ax = check_axis(axis, N);
  if (a.shape(ax) == 0) throw_no_identity(op);  // even when the result is empty, as NumPy
  AxisResult<T, N> r(a.shape(), ax);
  if (r.out.size() == 0) return r.out;
  // Seed with the first slice; folding it in again is harmless (idempotent).
  int64_t sshape[N - 1], sstrides[N - 1];
  for (int k = 0, j = 0; k < N; ++k)
    if (k != ax) sshape[j] = a.shape(k), sstrides[j++] = a.stride(k);
  assign(r.out, Array<T, N - 1>::borrow(a.data(), sshape, sstrides));
  using Acc = ExtremeAcc<T, Better, F>;
  reduce_into<Acc, T, T, N>(Acc{}, r.out.data(), r.shape, r.strides, a.data(), a.shape(),
                                      a.strides());
  return r.out;
}

/// First position (by Better) in n >= 1 contiguous elements, or of the
/// first NaN. Four independent accumulators of 8 lanes keep their own best
/// value and index (vector selects; a NaN never wins, it is noted in a mask
/// and searched for afterwards); ties between lanes go to the smaller index.
template <class Better, class T>
int64_t row_arg_extreme(const T* p, int64_t n) {
  int64_t at = 0, i = 0;
  bool nan = false;
  if constexpr (kVectorLanes<T>) {
    constexpr bool kMax = std::is_same_v<Better, Greater>;
    constexpr int L = 8, U = 4;
    typedef T V __attribute__((vector_size(L * sizeof(T))));
    typedef int64_t IV __attribute__((vector_size(L * sizeof(int64_t))));
    if (n >= 2 * U * L) {
      V val[U];
      IV pos[U], idx[U];
      for (int u = 0; u < U; ++u) {
        std::memcpy(&val[u], p + u * L, sizeof val[u]);
        for (int j = 0; j < L; ++j) idx[u][j] = u * L + j;
        pos[u] = idx[u];
      }
      auto bad = val[0] != val[0];
      for (int u = 1; u < U; ++u) bad |= val[u] != val[u];
      for (i = U * L; i + U * L <= n; i += U * L) {
        for (int u = 0; u < U; ++u) {
          V x;
          std::memcpy(&x, p + i + u * L, sizeof x);
          idx[u] += U * L;
          const auto c = kMax ? x > val[u] : x < val[u];
          val[u] = c ? x : val[u];
          pos[u] = __builtin_convertvector(c, IV) ? idx[u] : pos[u];
          if constexpr (std::is_floating_point_v<T>) bad |= x != x;
        }
      }
      for (int j = 0; j < L; ++j) nan = nan || bad[j] != 0;
      for (int u = 0; u < U; ++u)
        for (int j = 0; j < L; ++j)
          if (Better{}(val[u][j], p[at]) || (val[u][j] == p[at] && pos[u][j] < at)) at = pos[u][j];
    }
  }
  if (!nan)
    for (; i < n; ++i) {
      if (p[i] != p[i]) return i;
      if (Better{}(p[i], p[at])) at = i;
    }
  if (nan || p[at] != p[at])
    for (i = 0; i < n; ++i)
      if (p[i] != p[i]) return i;
  return at;
}

/// row_arg_extreme on all threads: each finds the first extreme (or NaN)
/// of its part, and the parts are compared in order, the earlier one
/// winning ties, so the result is the sequential scan's.
template <class Better, class T>
int64_t parallel_arg_extreme(const T* p, int64_t n) {
  const int64_t parts = get_num_threads();
  std::unique_ptr<int64_t[]> at(new int64_t[parts]);
  for_parts(n, parts, [&](int64_t w, int64_t lo, int64_t hi) {
    at[w] = lo < hi ? lo + row_arg_extreme<Better>(p + lo, hi - lo) : -1;
  });
  int64_t best = at[0];
  for (int64_t w = 1; w < parts && p[best] == p[best]; ++w)
    if (at[w] >= 0 && (p[at[w]] != p[at[w]] || Better{}(p[at[w]], p[best]))) best = at[w];
  return best;
}

/// Scans in C order for the flat index of the first extreme (Better says
/// whether x beats the best so far); a NaN wins at once.
template <class Better, class T, int N>
int64_t arg_extreme(const char* name, const Array<T, N>& a) {
  if (a.size() == 0) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "attempt to get %s of an empty sequence", name);
    throw Error(ErrorKind::ValueError, msg);
  }
  const Layout layout[1] = {{N, a.shape(), a.strides()}};
  const Nest<1> nest(layout);  // C order: drops and merges axes, never reorders
  T best = a.data()[0];
  int64_t best_at = 0, seen = 0;
  bool stop = best != best;
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* st) {
    const T* p = a.data() + off[0];
    const int64_t s = st[0];
    if (!stop && s == 1) {
      const int64_t i = parallel_reduction(n) ? parallel_arg_extreme<Better>(p, n) : row_arg_extreme<Better>(p, n);
      if (p[i] != p[i] || Better{}(p[i], best)) best = p[i], best_at = seen + i, stop = p[i] != p[i];
    } else {
      for (int64_t i = 0; i < n && !stop; ++i) {
        const T x = p[i * s];
        if (x != x || Better{}(x, best)) best = x, best_at = seen + i, stop = x != x;
      }
    }
    seen += n;
  });
  return best_at;
}

/// True when pred holds for some element; stops at the first block that has one.
template <class T, int N, class Pred>
bool any_of(const Array<T, N>& a, Pred pred) {
  const Layout layout[1] = {{N, a.shape(), a.strides()}};
  const Nest<1> nest(layout);
  bool found = false;
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* st) {
    const T* p = a.data() + off[0];
    const int64_t s = st[0];
    for (int64_t b = 0; b < n && !found; b += 1024) {
      const int64_t e = n - b < 1024 ? n : b + 1024;
      bool f = false;
      if (s == 1) {
        for (int64_t i = b; i < e; ++i) f |= pred(p[i]);
      } else {
        for (int64_t i = b; i < e; ++i) f |= pred(p[i * s]);
      }
      found = f;
    }
  });
  return found;
}

/// any (All false) or all (All true) of a bool array, reading the bytes as
/// unsigned char in blocks of 1024: OR'd for any, min'd for all (a byte is
/// true when nonzero, so this holds for any nonzero byte NumPy may hold).
template <bool All, int N>
bool bool_scan(const Array<bool, N>& a) {
  const Layout layout[1] = {{N, a.shape(), a.strides()}};
  const Nest<1> nest(layout);
  bool decided = false;  // a true byte seen (any), a false one (all)
  for_rows(nest, [&](int64_t n, const int64_t* off, const int64_t* st) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(a.data() + off[0]);
    const int64_t s = st[0];
    for (int64_t b = 0; b < n && !decided; b += 1024) {
      const int64_t e = n - b < 1024 ? n : b + 1024;
      unsigned char acc = All ? 0xff : 0;
      if (s == 1) {
        if constexpr (All)
          for (int64_t i = b; i < e; ++i) acc = p[i] < acc ? p[i] : acc;
        else
          for (int64_t i = b; i < e; ++i) acc |= p[i];
      } else {
        if constexpr (All)
          for (int64_t i = b; i < e; ++i) acc = p[i * s] < acc ? p[i * s] : acc;
        else
          for (int64_t i = b; i < e; ++i) acc |= p[i * s];
      }
      decided = All ? acc == 0 : acc != 0;
    }
  });
  return All ? !decided : decided;
}

}  // namespace detail

/// a.sum() as R (int64 for bool/int32/int64; float types kept).
template <class R, class T, int N>
R sum(const Array<T, N>& a) {
  if constexpr (std::is_floating_point_v<R> || is_complex_v<R>) return detail::float_sum<R>(a);
  else return detail::reduce_all(detail::SumAcc<R>{}, R(0), a);
}
/// a.prod() as R.
template <class R, class T, int N>
R prod(const Array<T, N>& a) {
  return detail::reduce_all(detail::FoldAcc<R, op::mul>{}, R(1), a);
}
/// a.mean() in R (float64 for integers; float32 stays float32). nan if empty.
template <class R, class T, int N>
R mean(const Array<T, N>& a) {
  return op::truediv{}(sum<R>(a), static_cast<R>(a.size()));  // NumPy's complex division too
}
/// a.min(); NaN propagates; ValueError for an empty array.
template <class T, int N>
T min(const Array<T, N>& a) {
  if (a.size() == 0) detail::throw_no_identity("minimum");
  return detail::reduce_all(detail::ExtremeAcc<T, detail::Less, op::minimum>{}, a.data()[0], a);
}
/// a.max(); NaN propagates; ValueError for an empty array.
template <class T, int N>
T max(const Array<T, N>& a) {
  if (a.size() == 0) detail::throw_no_identity("maximum");
  return detail::reduce_all(detail::ExtremeAcc<T, detail::Greater, op::maximum>{}, a.data()[0], a);
}
/// a.argmin(): flat C-order index of the first minimum (or first NaN).
template <class T, int N>
int64_t argmin(const Array<T, N>& a) {
  return detail::arg_extreme<detail::Less>("argmin", a);
}
/// a.argmax(): flat C-order index of the first maximum (or first NaN).
template <class T, int N>
int64_t argmax(const Array<T, N>& a) {
  return detail::arg_extreme<detail::Greater>("argmax", a);
}
/// a.any() / a.all().
template <class T, int N>
bool any(const Array<T, N>& a) {
  if constexpr (std::is_same_v<T, bool>) return detail::bool_scan<false>(a);
  else return detail::any_of(a, [](T x) { return x != 0; });
}
template <class T, int N>
bool all(const Array<T, N>& a) {
  if constexpr (std::is_same_v<T, bool>) return detail::bool_scan<true>(a);
  else return !detail::any_of(a, [](T x) { return x == 0; });
}
/// `x in a`, i.e. (a == x).any(), compared in the common type.
template <class T, int N, class X>
bool contains(const Array<T, N>& a, X x) {
  using C = std::common_type_t<T, X>;
  const C y = static_cast<C>(x);
  return detail::any_of(a, [y](T v) { return static_cast<C>(v) == y; });
}

/// np.allclose(a, b, rtol, atol): |a - b| <= atol + rtol * |b| element-wise
/// (broadcast), in float64; infinities must match exactly, NaN never does.
template <class A, class B>
bool allclose(const A& a, const B& b, double rtol = 1e-5, double atol = 1e-8) {
  auto close = [rtol, atol](detail::elem_t<A> x, detail::elem_t<B> y) {
    const double u = static_cast<double>(x), v = static_cast<double>(y);
    if (std::isfinite(u) && std::isfinite(v)) return std::fabs(u - v) <= atol + rtol * std::fabs(v);
    return u == v;
  };
  if constexpr (detail::rank_v<A> == 0 && detail::rank_v<B> == 0) return close(a, b);
  else return all(detail::map_new<bool>("allclose", close, a, b));
}

/// Indices of the true (nonzero) elements of a 1-D array (np.nonzero(a)[0]).
template <class T>
Array<int64_t, 1> nonzero(const Array<T, 1>& a) {
  const T* p = a.data();
  const int64_t n = a.shape(0), s = a.stride(0);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += p[i * s] != 0;
  Array<int64_t, 1> out = Array<int64_t, 1>::empty({count});
  int64_t* q = out.data();
  for (int64_t i = 0, j = 0; i < n; ++i)
    if (p[i * s] != 0) q[j++] = i;
  return out;
}

/// Reductions along one axis (negative counts from the end): Array<R, N-1>.
template <class R, class T, int N>
Array<R, N - 1> sum_axis(const Array<T, N>& a, int64_t axis) {
  return detail::reduce_axis(detail::SumAcc<R>{}, R(0), a, axis);
}
template <class R, class T, int N>
Array<R, N - 1> prod_axis(const Array<T, N>& a, int64_t axis) {
  return detail::reduce_axis(detail::FoldAcc<R, op::mul>{}, R(1), a, axis);
}
template <class R, class T, int N>
Array<R, N - 1> mean_axis(const Array<T, N>& a, int64_t axis) {
  Array<R, N - 1> s = sum_axis<R>(a, axis);
  const R n = static_cast<R>(a.shape(detail::check_axis(axis, N)));
  R* p = s.data();
  for (int64_t i = 0, e = s.size(); i < e; ++i) p[i] = op::truediv{}(p[i], n);
  return s;
}
template <class T, int N>
Array<T, N - 1> min_axis(const Array<T, N>& a, int64_t axis) {
  return detail::extreme_axis<op::minimum, detail::Less>("minimum", a, axis);
}
template <class T, int N>
Array<T, N - 1> max_axis(const Array<T, N>& a, int64_t axis) {
  return detail::extreme_axis<op::maximum, detail::Greater>("maximum", a, axis);
}

namespace detail {
/// argmin/argmax along an axis: for each position of the other axes, the
/// index along `axis` of the first extreme (or of the first NaN), as NumPy.
template <class Better, class T, int N>
Array<int64_t, N - 1> arg_extreme_axis(const char* name, const Array<T, N>& a, int64_t axis) {
  static_assert(N >= 2, "axis reductions need a rank >= 2 array (use the full reduction)");
  const int ax = check_axis(axis, N);
  const int64_t n = a.shape(ax), s = a.stride(ax);
  if (n == 0) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "attempt to get %s of an empty sequence", name);
    throw Error(ErrorKind::ValueError, msg);
  }
  int64_t oshape[N - 1], ostrides[N - 1], idx[N - 1] = {};
  for (int k = 0, j = 0; k < N; ++k)
    if (k != ax) oshape[j] = a.shape(k), ostrides[j++] = a.stride(k);
  Array<int64_t, N - 1> out = Array<int64_t, N - 1>::empty(oshape);
  int64_t* o = out.data();
  for (int64_t k = 0, total = out.size(); k < total; ++k) {
    int64_t off = 0;
    for (int j = 0; j < N - 1; ++j) off += idx[j] * ostrides[j];
    const T* p = a.data() + off;
    int64_t at = 0;
    if (s == 1) {
      at = row_arg_extreme<Better>(p, n);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const T x = p[i * s];
        if (x != x) {
          at = i;
          break;
        }
        if (Better{}(x, p[at * s])) at = i;
      }
    }
    o[k] = at;
    for (int j = N - 2; j >= 0; --j) {  // next position in C order
      if (++idx[j] < oshape[j]) break;
      idx[j] = 0;
    }
  }
  return out;
}
}  // namespace detail

/// argmin(a, axis) / argmax(a, axis): int64 indices along the axis.
template <class T, int N>
Array<int64_t, N - 1> argmin_axis(const Array<T, N>& a, int64_t axis) {
  return detail::arg_extreme_axis<detail::Less>("argmin", a, axis);
}
template <class T, int N>
Array<int64_t, N - 1> argmax_axis(const Array<T, N>& a, int64_t axis) {
  return detail::arg_extreme_axis<detail::Greater>("argmax", a, axis);
}

// ---- Reductions over a tuple of axes (NumPy's axis=(i, j, ...)) ----------------------------

namespace detail {

/// NumPy's normalize_axis_tuple: each axis of `axes` (a std::tuple of
/// integers) checked against `rank` and made non-negative, a repeated one a
/// ValueError; returned in decreasing order, so that reducing them one at a
/// time from the first leaves the later ones' positions unchanged.
template <int N, class Axes>
auto normalized_axes(const Axes& axes) {
  constexpr int K = static_cast<int>(std::tuple_size_v<Axes>);
  static_assert(K >= 1 && K <= N, "a tuple of axes names each axis of the array at most once");
  std::array<int, K> out = std::apply(
      [](auto... a) { return std::array<int, K>{check_axis(static_cast<int64_t>(a), N)...}; }, axes);
  std::sort(out.begin(), out.end(), [](int x, int y) { return x > y; });
  for (int i = 1; i < K; ++i)
    if (out[i] == out[i - 1]) throw Error(ErrorKind::ValueError, "duplicate value in 'axis'");
  return out;
}

/// `along` (a reduction of one axis, rank M to M - 1) applied for axes[I],
/// axes[I + 1], ... in turn. Fewer axes than the rank: every step starts
/// from an array of rank 2 or more.
template <int I, class Along, class T, int M, size_t K>
auto reduce_each_axis(const Array<T, M>& a, const std::array<int, K>& axes, const Along& along) {
  auto reduced = along(a, axes[I]);
  if constexpr (I + 1 == static_cast<int>(K)) return reduced;
  else return reduce_each_axis<I + 1>(reduced, axes, along);
}

/// The reduction of `a` over the tuple `axes`: `all` when the tuple names
/// every axis (a scalar, as NumPy gives), else `along` one axis at a time.
template <class Along, class All, class T, int N, class Axes>
auto reduce_axes(const Array<T, N>& a, const Axes& axes, const Along& along, const All& all) {
  const auto normalized = normalized_axes<N>(axes);
  if constexpr (static_cast<int>(std::tuple_size_v<Axes>) == N) return all(a);
  else return reduce_each_axis<0>(a, normalized, along);
}

/// The number of elements each result of reducing `axes` combines.
template <int N, class T, class Axes>
int64_t reduced_count(const Array<T, N>& a, const Axes& axes) {
  int64_t n = 1;
  for (int k : normalized_axes<N>(axes)) n *= a.shape(k);
  return n;
}

}  // namespace detail

/// sum/prod/mean/min/max over a tuple of axes: Array<R, N - K>, or R when
/// the K axes are all of them.
template <class R, class T, int N, class Axes>
auto sum_axes(const Array<T, N>& a, const Axes& axes) {
  return detail::reduce_axes(
      a, axes, [](const auto& x, int k) { return sum_axis<R>(x, k); }, [](const auto& x) { return sum<R>(x); });
}
template <class R, class T, int N, class Axes>
auto prod_axes(const Array<T, N>& a, const Axes& axes) {
  return detail::reduce_axes(
      a, axes, [](const auto& x, int k) { return prod_axis<R>(x, k); }, [](const auto& x) { return prod<R>(x); });
}
template <class R, class T, int N, class Axes>
auto mean_axes(const Array<T, N>& a, const Axes& axes) {
  if constexpr (static_cast<int>(std::tuple_size_v<Axes>) == N) {
    detail::normalized_axes<N>(axes);
    return mean<R>(a);
  } else {
    // NumPy's mean: the sum in R, then one division by the count.
    auto s = sum_axes<R>(a, axes);
    const R n = static_cast<R>(detail::reduced_count(a, axes));
    R* p = s.data();
    for (int64_t i = 0, e = s.size(); i < e; ++i) p[i] = op::truediv{}(p[i], n);
    return s;
  }
}
template <class T, int N, class Axes>
auto min_axes(const Array<T, N>& a, const Axes& axes) {
  return detail::reduce_axes(
      a, axes, [](const auto& x, int k) { return min_axis(x, k); }, [](const auto& x) { return min(x); });
}
template <class T, int N, class Axes>
auto max_axes(const Array<T, N>& a, const Axes& axes) {
  return detail::reduce_axes(
      a, axes, [](const auto& x, int k) { return max_axis(x, k); }, [](const auto& x) { return max(x); });
}

}  // namespace pydd
