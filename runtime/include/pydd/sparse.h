// pydd runtime: sparse matrices (CSR) and the sparse library.
//
// SparseMat<T> is a CSR matrix with int64 row pointers and column indices,
// or int32 ones while its structure is arrays a caller handed in as int32
// (SciPy's default): those are read in place, never copied to int64 unless
// something needs int64 arrays (a mutation, indptr()/indices()). The
// library's loops take either width (with_csr). Copies share storage (reference semantics, like Array): the state lives in
// one reference-counted SparseStore, so spm_set_item on a copy is seen by
// every handle. indptr()/indices()/data() are Arrays on the store's buffers
// (exactly nrows+1 / nnz / nnz elements long) that the Python bridge can hand
// to scipy without copying.
//
// Rows may hold unsorted (and even duplicate) column indices when the user
// supplied them; every operation accepts that. Row order in results
// follows SciPy: transpose sorts; spmm lists each row's columns as first
// seen (csr_matmat); spm_add / spm_mul of two matrices merge sorted rows
// (sorted out) and keep first-seen order otherwise; spm_mul / spm_scale
// with a dense or scalar operand keep S's structure.
//
// Explicit zeros follow SciPy 1.10: sparse (+|*) sparse and spmm drop the
// entries whose result is exactly zero (so inf * 0 = nan survives outside
// the intersection, as in scipy); sparse * dense / scalar keep every entry of S.
//
// Result dtypes: the compiler passes NumPy's result type as the template
// argument R (`spmv<double>(S, x)`); without it, R defaults to the operands'
// std::common_type (sums: int64/uint64 for integers, T for floats).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "pydd/array.h"
#include "pydd/builtins.h"
#include "pydd/elementwise.h"
#include "pydd/errors.h"
#include "pydd/reduce.h"

namespace pydd {

template <class T>
class SparseMat;

namespace detail {

template <class T>
Array<T, 1> sp_vec(int64_t n) {
  return Array<T, 1>::empty(std::array<int64_t, 1>{n});
}
/// The first n elements of a (contiguous) array, sharing its buffer.
template <class T>
Array<T, 1> sp_prefix(const Array<T, 1>& a, int64_t n) {
  const int64_t shape[1] = {n}, strides[1] = {1};
  return a.template alias<1>(a.data(), shape, strides);
}
/// A contiguous int64/T copy of any 1-D array (or the array itself when it
/// already is one).
template <class D, class S>
Array<D, 1> sp_contiguous(const Array<S, 1>& a) {
  if constexpr (std::is_same_v<D, S>) {
    if (a.stride(0) == 1 || a.shape(0) <= 1) return a;
  }
  const int64_t n = a.shape(0), s = a.stride(0);
  Array<D, 1> out = sp_vec<D>(n);
  const S* p = a.data();
  D* o = out.data();
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<D>(p[i * s]);
  return out;
}

template <class R, class A, class B>
using sp_result_t = std::conditional_t<std::is_void_v<R>, std::common_type_t<A, B>, R>;
template <class T>
using sp_sum_default_t =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, uint64_t, int64_t>>;
template <class R, class T>
using sp_sum_t = std::conditional_t<std::is_void_v<R>, sp_sum_default_t<T>, R>;

template <class R>
inline R sp_add(R a, R b) {
  return op::add{}(a, b);
}
template <class R>
inline R sp_mul(R a, R b) {
  return op::mul{}(a, b);
}

inline int sp_shape_text(char* buf, size_t n, const int64_t* shape, int rank) {
  if (rank == 1) return std::snprintf(buf, n, "(%lld,)", static_cast<long long>(shape[0]));
  return std::snprintf(buf, n, "(%lld, %lld)", static_cast<long long>(shape[0]), static_cast<long long>(shape[1]));
}
/// "<op>: <what> <shape a> and <shape b>" as a ValueError.
[[noreturn]] inline void sp_shape_error(const char* op, const char* what, const int64_t* a, int ra, const int64_t* b,
                                        int rb) {
  char sa[64], sb[64], msg[224];
  sp_shape_text(sa, sizeof sa, a, ra);
  sp_shape_text(sb, sizeof sb, b, rb);
  std::snprintf(msg, sizeof msg, "%s: %s %s and %s", op, what, sa, sb);
  throw Error(ErrorKind::ValueError, msg);
}
[[noreturn]] inline void sp_value_error(const char* msg) { throw Error(ErrorKind::ValueError, msg); }
[[noreturn]] inline void sp_column_error(int64_t ncols) {
  char msg[96];
  std::snprintf(msg, sizeof msg, "column index values must be < %lld", static_cast<long long>(ncols));
  sp_value_error(msg);
}

/// Raw CSR arrays of one index width, read once per operation.
template <class T, class I>
struct Csr {
  using index_type = I;
  int64_t m, n, nnz;
  const I* p;
  const I* c;
  const T* v;
};

/// SciPy's ValueError for column index j of a matrix of n columns.
[[noreturn]] __attribute__((noinline, cold)) inline void sp_column_out_of_range(int64_t j, int64_t n) {
  if (j < 0) sp_value_error("column index values must be >= 0");
  sp_column_error(n);
}

/// Column index j of a matrix of n columns, as a loop the compiler emits
/// reads it: range-checked (SciPy's ValueError) as it is read. That costs
/// less than a separate pass over the indices before the loop, even one
/// run of rows at a time while their indices are in L1: on a matrix larger
/// than the cache, such a pass stalls on the indices' first read, which
/// the loop's own reads overlap with its other loads (1.33x and 1.5x
/// slower than this check on bench/sparse.py's row loop, 10^6 entries).
/// The error path is out of line, so the loop keeps one compare and branch.
template <class I>
inline int64_t sp_column(I j, int64_t n) {
  const int64_t column = j;
  if (__builtin_expect(static_cast<uint64_t>(column) >= static_cast<uint64_t>(n), 0)) sp_column_out_of_range(column, n);
  return column;
}

/// Gathers ahead: a loop over a matrix's entries that reads x[j] at each
/// entry's column j waits on those reads when x is larger than the cache,
/// since the columns are scattered and no hardware prefetcher follows them.
/// Prefetching x at the column of the entry kGatherPrefetchDistance ahead
/// starts that read while the entries between run (bench/sparse.py's row
/// loop, 10^6 entries in rows of 10, one process: 0.91 of the loop's time
/// without it at 10^5 columns, 0.44 at 10^6, in the median of 600 calls).
/// A prefetch is only a hint: it never faults and changes no value, so any
/// address will do, even one a bad column index makes. It costs its loads,
/// which lose where x stays in cache: 1.13x the time at 10^4 columns and
/// 1.07x at 16384 (128 KiB), a gain from 24000 (192 KiB); x gets them from
/// kGatherPrefetchBytes (half a core's 512 KiB L2 on the machine measured).
inline constexpr int64_t kGatherPrefetchDistance = 64;
inline constexpr int64_t kGatherPrefetchBytes = int64_t(256) << 10;

/// Whether gathers from `size` elements of T, `stride` elements apart, span
/// enough memory to prefetch them.
template <class T>
inline bool gathers_miss_cache(int64_t size, int64_t stride) {
  const int64_t step = stride < 0 ? -stride : stride;
  return size * (step == 0 ? 1 : step) * int64_t(sizeof(T)) >= kGatherPrefetchBytes;
}
template <class T>
inline bool gathers_miss_cache(const View<T, 1>& x) {
  return gathers_miss_cache<T>(x.shape[0], x.strides[0]);
}

/// Prefetches x at the column of entry `at` of `cols` (its last entry past
/// nnz, the array's end; nnz >= 1). The address is formed as an integer: the
/// column is not checked, so it may lie outside x.
template <class T, class I>
inline void prefetch_gather(const T* x, int64_t stride, const I* cols, int64_t at, int64_t nnz) {
  const int64_t k = at < nnz ? at : nnz - 1;
  const uintptr_t address = reinterpret_cast<uintptr_t>(x) + uintptr_t(int64_t(cols[k]) * stride * int64_t(sizeof(T)));
  __builtin_prefetch(reinterpret_cast<const void*>(address));
}
template <class T, class I>
inline void prefetch_gather(const View<T, 1>& x, const I* cols, int64_t at, int64_t nnz) {
  prefetch_gather(x.data, x.strides[0], cols, at, nnz);
}

/// A loop over rows [from, to) of a matrix that folds each row's entries
/// into one value, given as three functions with no effects but finish's
/// store:
///
///     for r in [from, to): acc = start(r); for (c, v) in row r: acc = step(r, acc, c, v); finish(r, acc)
///
/// run two rows at a time, one from each half of the entries: a row's
/// steps are one chain (each waits for the last), and on rows longer than
/// the processor's window the next row's chain cannot start early; two
/// chains side by side halve the wait (0.65 of SciPy's S @ x on jhu.mtx,
/// 72 entries a row). Each row still folds its entries in order, so the
/// values are the same bit for bit; only the rows' order changes, which
/// the compiler allows only when the rows are independent (opt/PairedRows.h).
///
/// Returns false when pairing does not pay (before any call). When a step
/// raised, the error must be the one that comes first in row order (a
/// column of row 7 before one of row 50,000):
///   - `rerun`: returns false, finish having stored some rows; the caller
///     runs the loop as written, which stores every row again and raises.
///     For a loop whose start and finish do not read what finish stores.
///   - else only a column index can have raised (the compiler checked that
///     the functions cannot raise): the first bad one in order raises.
/// KeyboardInterrupt propagates.
///
/// Pairing pays when the chains are what the loop waits for: rows of
/// kPairedRowsMinLength entries or more on average, and at most
/// kPairedRowsMostColumns columns, so that a vector the steps gather from
/// stays in cache. Stand-alone, 10^6 entries, pairs over the plain loop:
/// 5000 columns 0.79-0.87 (rows of 16-64, all equal) and 0.84-0.96
/// (Poisson 24-64), but 1.04-1.18 on Poisson rows of 8-16, where each row's
/// end mispredicts and pairs end twice as many runs; 10^5 columns
/// 0.98-1.03 (equal) and 1.00-1.14 (Poisson), waiting on the gathers.
inline constexpr int64_t kPairedRowsMinLength = 24;
inline constexpr int64_t kPairedRowsMostColumns = 16384;

template <class Acc, class T, class I, class Start, class Step, class Finish>
inline bool sp_rows_in_pairs(const Csr<T, I>& s, int64_t from, int64_t to, bool rerun, Start start, Step step, Finish finish) {
  const I* p = s.p;
  if (to - from < 2 || s.n > kPairedRowsMostColumns ||
      int64_t(p[to]) - int64_t(p[from]) < kPairedRowsMinLength * (to - from))
    return false;
  try {
    // The second stream starts at the row holding the middle entry.
    const I middle = I(p[from] + (p[to] - p[from]) / 2);
    const int64_t split = std::clamp<int64_t>(std::upper_bound(p + from, p + to + 1, middle) - p - 1, from + 1, to - 1);
    const I* col = s.c;
    const T* val = s.v;
    int64_t ra = from, rb = split;
    int64_t ka = p[ra], ea = p[ra + 1], kb = p[rb], eb = p[rb + 1];
    Acc a = start(ra), b = start(rb);
    int64_t budget = kInterruptLongLoop;  // Ctrl-C is checked when it runs out (see kInterruptRowWork)
    // Stores row r and moves its stream to the next row of [r, stop):
    // false when there is none.
    auto next_row = [&](int64_t& r, int64_t& end, Acc& acc, int64_t stop) {
      finish(r, acc);
      if (++r == stop) return false;
      acc = start(r);
      end = p[r + 1];
      budget -= kInterruptRowWork;
      return true;
    };
    for (;;) {
      // Both rows' next entries, up to the end of the shorter one.
      const int64_t n = std::min({ea - ka, eb - kb, std::max<int64_t>(budget / 2, 1)});
      for (int64_t k = 0; k < n; ++k) {
        a = step(ra, a, sp_column(col[ka + k], s.n), val[ka + k]);
        b = step(rb, b, sp_column(col[kb + k], s.n), val[kb + k]);
      }
      ka += n;
      kb += n;
      budget -= 2 * n;
      if (ka == ea && !next_row(ra, ea, a, split)) break;
      if (kb == eb && !next_row(rb, eb, b, to)) break;
      if (budget <= 0) {
        budget = kInterruptLongLoop;
        check_interrupt();
      }
    }
    // One stream ended; the other finishes its row, then its rows one by one.
    auto rest = [&](int64_t r, int64_t k, int64_t end, Acc acc, int64_t stop) {
      for (; r < stop; ++r) {
        for (; k < end; ++k) acc = step(r, acc, sp_column(col[k], s.n), val[k]);
        finish(r, acc);
        if (r + 1 < stop) {
          check_interrupt();
          acc = start(r + 1);
          k = p[r + 1];
          end = p[r + 2];
        }
      }
    };
    if (ra < split) rest(ra, ka, ea, a, split);
    if (rb < to) rest(rb, kb, eb, b, to);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::KeyboardInterrupt) throw;
    if (rerun) return false;
    for (int64_t k = p[from]; k < p[to]; ++k) sp_column(s.c[k], s.n);
    throw;
  }
  return true;
}

/// The shared state of a SparseMat.
///
/// set_unsafe appends in row-major order without touching the row pointers
/// of the rows after the one it appends to: indptr[k] for k > open_row is
/// "pending" and stands for nnz. materialize() writes them out and refreshes
/// the nnz-long views before anybody reads the arrays.
template <class T>
struct SparseStore {
  std::atomic<int64_t> refs{1};
  int64_t nrows = 0, ncols = 0, nnz = 0;
  int64_t open_row = -1;  // indptr[k], k > open_row, is pending (= nnz)
  bool dirty = false;
  Array<int64_t, 1> indptr;   // nrows + 1
  Array<int64_t, 1> col_buf;  // capacity >= nnz, contiguous
  Array<T, 1> val_buf;
  Array<int64_t, 1> indices;  // the first nnz of col_buf
  Array<T, 1> data;
  // A borrowed int32 structure (narrow): indptr32 and indices32 stand for
  // indptr and indices, which stay empty until widen().
  bool narrow = false;
  Array<int32_t, 1> indptr32;
  Array<int32_t, 1> indices32;
  // Column indices of a borrowed structure are range-checked lazily: by the
  // first operation that needs them (spmv checks inline, row sums never).
  bool columns_checked = true;

  int64_t capacity() const { return col_buf.shape(0); }
  int64_t row_begin(int64_t r) const { return r <= open_row ? indptr.data()[r] : nnz; }
  int64_t row_end(int64_t r) const { return r + 1 <= open_row ? indptr.data()[r + 1] : nnz; }

  /// int64 copies of a narrow structure (for mutation and the int64 accessors).
  void widen() {
    if (!narrow) return;
    indptr = sp_contiguous<int64_t>(indptr32);
    col_buf = indices = sp_contiguous<int64_t>(indices32);
    indptr32 = Array<int32_t, 1>();
    indices32 = Array<int32_t, 1>();
    narrow = false;
  }
  /// scipy's check_format on the column indices -> ValueError.
  void check_columns() {
    if (columns_checked) return;
    int64_t lo = 0, hi = -1;
    auto scan = [&](const auto* c) {  // branch-free: it vectorizes
      for (int64_t k = 0; k < nnz; ++k) {
        const int64_t j = c[k];
        lo = j < lo ? j : lo;
        hi = j > hi ? j : hi;
      }
    };
    if (narrow) scan(indices32.data());
    else scan(col_buf.data());
    if (lo < 0) sp_value_error("column index values must be >= 0");
    if (hi >= ncols) sp_column_error(ncols);
    columns_checked = true;
  }

  void materialize() {
    if (!dirty) return;
    int64_t* p = indptr.data();
    for (int64_t k = open_row + 1; k <= nrows; ++k) p[k] = nnz;
    open_row = nrows - 1;
    indices = sp_prefix(col_buf, nnz);
    data = sp_prefix(val_buf, nnz);
    dirty = false;
  }
  void reserve(int64_t want) {
    if (want <= capacity()) return;
    int64_t cap = capacity() * 2;
    if (cap < want) cap = want;
    if (cap < 16) cap = 16;
    Array<int64_t, 1> c = sp_vec<int64_t>(cap);
    Array<T, 1> v = sp_vec<T>(cap);
    if (nnz) {
      std::memcpy(c.data(), col_buf.data(), sizeof(int64_t) * nnz);
      std::memcpy(static_cast<void*>(v.data()), val_buf.data(), sizeof(T) * nnz);
    }
    col_buf = c;
    val_buf = v;
    dirty = true;
  }
};

template <class T>
SparseMat<T> sp_make(int64_t nrows, int64_t ncols, Array<int64_t, 1> indptr, Array<int64_t, 1> cols,
                     Array<T, 1> vals, int64_t nnz);

/// Frees a store whose last reference is gone. Not inline: the common
/// element types are compiled once into the runtime library
/// (pydd/instances.h), because seven array releases inlined into every
/// SparseMat destructor cost g++ about 3 KB of code to optimize in each
/// function that holds a matrix.
template <class T>
void destroy_store(SparseStore<T>* s) {
  delete s;
}

}  // namespace detail

template <class T>
class SparseMat {
 public:
  using value_type = T;

  /// A 0 x 0 matrix.
  SparseMat() : SparseMat(0, 0) {}
  SparseMat(const SparseMat& o) : s_(o.s_) { s_->refs.fetch_add(1, std::memory_order_relaxed); }
  SparseMat(SparseMat&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  SparseMat& operator=(SparseMat o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~SparseMat() {
    if (s_ && s_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) detail::destroy_store(s_);
  }

  /// An all-zero nrows x ncols matrix (empty_spm).
  SparseMat(int64_t nrows, int64_t ncols) : s_(new detail::SparseStore<T>) {
    if (nrows < 0 || ncols < 0) {
      delete s_;
      s_ = nullptr;
      detail::sp_value_error("empty_spm: negative dimensions are not allowed");
    }
    s_->nrows = nrows, s_->ncols = ncols;
    s_->indptr = Array<int64_t, 1>::zeros(std::array<int64_t, 1>{nrows + 1});
    s_->col_buf = s_->indices = detail::sp_vec<int64_t>(0);
    s_->val_buf = s_->data = detail::sp_vec<T>(0);
    s_->open_row = nrows - 1;
  }

  /// Adopts CSR arrays (no copy when they are contiguous) after checking
  /// them as scipy's check_format(full_check=True) does -> ValueError; the
  /// column indices are checked when first needed (see SparseStore). int32
  /// arrays (I) are kept as they are: a narrow matrix. indices/data may be
  /// longer than indptr[-1]; the rest is ignored.
  template <class I>
  static SparseMat from_csr(int64_t nrows, int64_t ncols, Array<I, 1> indptr, Array<I, 1> indices, Array<T, 1> data) {
    static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>, "CSR indices are int32 or int64");
    if (nrows < 0 || ncols < 0) detail::sp_value_error("negative dimensions are not allowed");
    char msg[160];
    if (indptr.shape(0) != nrows + 1) {
      std::snprintf(msg, sizeof msg, "index pointer size (%lld) should be (%lld)",
                    static_cast<long long>(indptr.shape(0)), static_cast<long long>(nrows + 1));
      detail::sp_value_error(msg);
    }
    if (indices.shape(0) != data.shape(0)) detail::sp_value_error("indices and data should have the same size");
    indptr = detail::sp_contiguous<I>(indptr);
    indices = detail::sp_contiguous<I>(indices);
    data = detail::sp_contiguous<T>(data);
    const I* p = indptr.data();
    if (p[0] != 0) detail::sp_value_error("index pointer should start with 0");
    const int64_t nnz = p[nrows];
    if (nnz > indices.shape(0))
      detail::sp_value_error("Last value of index pointer should be less than the size of index and data arrays");
    // Every call from Python checks this, so it must vectorize: with a bool
    // accumulator g++ 12 does not, and the check cost about 25 us per call
    // on 10^5 rows (3% of an spmv); an accumulator of the index type does.
    const I* next = p + 1;
    I decreasing = 0;
    for (int64_t r = 0; r < nrows; ++r) decreasing |= static_cast<I>(next[r] < p[r]);
    if (decreasing) detail::sp_value_error("index pointer values must form a non-decreasing sequence");
    // The capacity is exactly nnz: an insertion reallocates instead of
    // writing into the caller's arrays past nnz.
    if constexpr (std::is_same_v<I, int64_t>) {
      SparseMat m = detail::sp_make<T>(nrows, ncols, indptr, detail::sp_prefix(indices, nnz),
                                       detail::sp_prefix(data, nnz), nnz);
      m.s_->columns_checked = false;
      return m;
    } else {
      SparseMat m{NoInit{}};
      detail::SparseStore<T>& s = *m.s_;
      s.nrows = nrows, s.ncols = ncols, s.nnz = nnz, s.open_row = nrows - 1;
      s.narrow = true, s.columns_checked = false;
      s.indptr32 = indptr;
      s.indices32 = detail::sp_prefix(indices, nnz);
      s.val_buf = s.data = detail::sp_prefix(data, nnz);
      s.indptr = detail::sp_vec<int64_t>(0);
      s.col_buf = s.indices = detail::sp_vec<int64_t>(0);
      return m;
    }
  }

  int64_t rows() const { return s_->nrows; }
  int64_t cols() const { return s_->ncols; }
  /// S.shape[k]; k may be negative; IndexError outside [-2, 2).
  int64_t shape(int64_t k) const {
    if (k < -2 || k >= 2) throw Error(ErrorKind::IndexError, "tuple index out of range");
    return (k < 0 ? k + 2 : k) == 0 ? s_->nrows : s_->ncols;
  }
  int64_t nnz() const { return s_->nnz; }
  /// The int64 row pointers and (checked) column indices; a narrow matrix
  /// is widened first.
  const Array<int64_t, 1>& indptr() const {
    s_->widen();
    s_->materialize();
    return s_->indptr;
  }
  const Array<int64_t, 1>& indices() const {
    s_->widen();
    s_->materialize();
    s_->check_columns();
    return s_->indices;
  }
  const Array<T, 1>& data() const {
    s_->materialize();
    return s_->data;
  }

  /// Whether the structure is the caller's int32 arrays (see csr()).
  bool narrow() const { return s_->narrow; }
  /// The raw arrays for the library's loops: I = int32_t only while
  /// narrow(); int64_t widens a narrow matrix. Column indices are checked
  /// unless the caller checks them itself (spmv) or never reads them.
  template <class I>
  detail::Csr<T, I> csr(bool check_columns = true) const {
    if constexpr (std::is_same_v<I, int64_t>) {
      s_->widen();
      s_->materialize();
    }
    if (check_columns) s_->check_columns();
    const detail::SparseStore<T>& s = *s_;
    if constexpr (std::is_same_v<I, int32_t>) return {s.nrows, s.ncols, s.nnz, s.indptr32.data(), s.indices32.data(), s.data.data()};
    else return {s.nrows, s.ncols, s.nnz, s.indptr.data(), s.indices.data(), s.data.data()};
  }
  bool columns_checked() const { return s_->columns_checked; }
  void check_columns() const { s_->check_columns(); }
  void set_columns_checked() const { s_->columns_checked = true; }

  /// S[r, c]: the sum of the stored entries at (r, c) (0 if none); negative
  /// indices wrap; IndexError out of range.
  T get(int64_t r, int64_t c) const {
    r = check_row(r), c = check_col(c);
    auto find = [&](const auto* ci, int64_t b, int64_t e) {
      const T* v = s_->val_buf.data();
      T sum = T(0);
      bool found = false;
      for (int64_t k = b; k < e; ++k)
        if (ci[k] == c) sum = found ? detail::sp_add<T>(sum, v[k]) : v[k], found = true;
      return sum;
    };
    if (s_->narrow) {
      const int32_t* p = s_->indptr32.data();
      return find(s_->indices32.data(), p[r], p[r + 1]);
    }
    return find(s_->col_buf.data(), s_->row_begin(r), s_->row_end(r));
  }

  /// spm_set_item: overwrites the entry at (r, c), or inserts it (even a
  /// zero, as scipy does) before the first larger column of the row, which
  /// keeps sorted rows sorted. Duplicates of (r, c) are merged into one.
  void set(T v, int64_t r, int64_t c) {
    r = check_row(r), c = check_col(c);
    detail::SparseStore<T>& s = *s_;
    s.widen();
    s.materialize();
    int64_t* ptr = s.indptr.data();
    const int64_t b = ptr[r], e = ptr[r + 1];
    int64_t* ci = s.col_buf.data();
    int64_t found = -1, pos = e, dups = 0;
    for (int64_t k = b; k < e; ++k) {
      if (ci[k] == c) {
        if (found < 0) found = k;
        else ++dups;
      } else if (ci[k] > c && pos == e && found < 0) {
        pos = k;
      }
    }
    if (found >= 0) {
      s.val_buf.data()[found] = v;
      if (dups) erase_duplicates(r, c, found);
      return;
    }
    s.reserve(s.nnz + 1);
    ci = s.col_buf.data();
    T* vb = s.val_buf.data();
    std::memmove(ci + pos + 1, ci + pos, sizeof(int64_t) * (s.nnz - pos));
    std::memmove(static_cast<void*>(vb + pos + 1), vb + pos, sizeof(T) * (s.nnz - pos));
    ci[pos] = c, vb[pos] = v;
    for (int64_t k = r + 1; k <= s.nrows; ++k) ++ptr[k];
    ++s.nnz;
    s.dirty = true;
    s.materialize();
  }

  /// spm_set_item_unsafe: appends (r, c) = v at the end of row r. The caller
  /// promises row-major order (no entries in later rows, columns increasing
  /// or at least not yet present); when later rows are not empty it falls
  /// back to set(), so a broken promise never corrupts the matrix.
  void set_unsafe(T v, int64_t r, int64_t c) {
    r = check_row(r), c = check_col(c);
    detail::SparseStore<T>& s = *s_;
    s.widen();
    if (r < s.open_row && s.indptr.data()[r + 1] != s.nnz) return set(v, r, c);
    if (r > s.open_row) {
      int64_t* p = s.indptr.data();
      for (int64_t k = s.open_row + 1; k <= r; ++k) p[k] = s.nnz;
    }
    s.open_row = r;
    if (s.nnz == s.capacity()) s.reserve(s.nnz + 1);
    s.col_buf.data()[s.nnz] = c;
    s.val_buf.data()[s.nnz] = v;
    ++s.nnz;
    s.dirty = true;
  }

  /// A matrix with this one's shape and structure (row pointers and column
  /// indices, in this order) holding `values`, one per stored entry. A
  /// borrowed int32 structure is shared (it is never written: a mutation
  /// widens it to a copy first); an int64 one is copied.
  template <class U>
  SparseMat<U> with_values(Array<U, 1> values) const {
    s_->materialize();
    const detail::SparseStore<T>& s = *s_;
    if (values.shape(0) != s.nnz) detail::sp_value_error("spm_with_values: one value per stored entry is needed");
    SparseMat<U> m{typename SparseMat<U>::NoInit{}};
    detail::SparseStore<U>& d = *m.s_;
    d.nrows = s.nrows, d.ncols = s.ncols, d.nnz = s.nnz, d.open_row = s.nrows - 1;
    d.columns_checked = s.columns_checked;
    if (s.narrow) {
      d.narrow = true;
      d.indptr32 = s.indptr32;
      d.indices32 = s.indices32;
      d.indptr = detail::sp_vec<int64_t>(0);
      d.col_buf = d.indices = detail::sp_vec<int64_t>(0);
    } else {
      d.indptr = detail::sp_vec<int64_t>(s.nrows + 1);
      std::memcpy(d.indptr.data(), s.indptr.data(), sizeof(int64_t) * (s.nrows + 1));
      d.col_buf = d.indices = detail::sp_vec<int64_t>(s.nnz);
      if (s.nnz) std::memcpy(d.col_buf.data(), s.indices.data(), sizeof(int64_t) * s.nnz);
    }
    d.val_buf = d.data = detail::sp_contiguous<U>(values);
    return m;
  }

 private:
  template <class>
  friend class SparseMat;
  template <class U>
  friend SparseMat<U> detail::sp_make(int64_t, int64_t, Array<int64_t, 1>, Array<int64_t, 1>, Array<U, 1>, int64_t);
  struct NoInit {};
  explicit SparseMat(NoInit) : s_(new detail::SparseStore<T>) {}

  int64_t check_row(int64_t r) const {
    const int64_t j = r < 0 ? r + s_->nrows : r;
    if (j < 0 || j >= s_->nrows) index_error("row", r);
    return j;
  }
  int64_t check_col(int64_t c) const {
    const int64_t j = c < 0 ? c + s_->ncols : c;
    if (j < 0 || j >= s_->ncols) index_error("column", c);
    return j;
  }
  [[noreturn]] static void index_error(const char* what, int64_t i) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "%s index (%lld) out of range", what, static_cast<long long>(i));
    throw Error(ErrorKind::IndexError, msg);
  }
  /// Removes the entries of row r at column c other than `keep`.
  void erase_duplicates(int64_t r, int64_t c, int64_t keep) {
    detail::SparseStore<T>& s = *s_;
    int64_t* ptr = s.indptr.data();
    int64_t* ci = s.col_buf.data();
    T* v = s.val_buf.data();
    int64_t w = ptr[r];
    for (int64_t k = ptr[r]; k < ptr[r + 1]; ++k)
      if (ci[k] != c || k == keep) ci[w] = ci[k], v[w] = v[k], ++w;
    const int64_t removed = ptr[r + 1] - w;
    std::memmove(ci + w, ci + ptr[r + 1], sizeof(int64_t) * (s.nnz - ptr[r + 1]));
    std::memmove(static_cast<void*>(v + w), v + ptr[r + 1], sizeof(T) * (s.nnz - ptr[r + 1]));
    for (int64_t k = r + 1; k <= s.nrows; ++k) ptr[k] -= removed;
    s.nnz -= removed;
    s.dirty = true;
    s.materialize();
  }

  detail::SparseStore<T>* s_;
};

namespace detail {

/// A matrix from arrays built here (no checks): cols/vals hold >= nnz.
template <class T>
SparseMat<T> sp_make(int64_t nrows, int64_t ncols, Array<int64_t, 1> indptr, Array<int64_t, 1> cols,
                     Array<T, 1> vals, int64_t nnz) {
  SparseMat<T> m{typename SparseMat<T>::NoInit{}};
  SparseStore<T>& s = *m.s_;
  s.nrows = nrows, s.ncols = ncols, s.nnz = nnz, s.open_row = nrows - 1;
  s.indptr = std::move(indptr);
  s.col_buf = std::move(cols);
  s.val_buf = std::move(vals);
  s.indices = sp_prefix(s.col_buf, nnz);
  s.data = sp_prefix(s.val_buf, nnz);
  return m;
}

/// f(csr) with the matrix's raw arrays at their width (two instantiations).
template <class T, class F>
decltype(auto) with_csr(const SparseMat<T>& S, F&& f, bool check_columns = true) {
  if (S.narrow()) return f(S.template csr<int32_t>(check_columns));
  return f(S.template csr<int64_t>(check_columns));
}
/// f(a, b) for two matrices: int32 when both are narrow, else int64 (a
/// narrow one is widened), so that binary operations instantiate twice.
template <class T, class U, class F>
decltype(auto) with_csr2(const SparseMat<T>& A, const SparseMat<U>& B, F&& f) {
  if (A.narrow() && B.narrow()) return f(A.template csr<int32_t>(), B.template csr<int32_t>());
  return f(A.template csr<int64_t>(), B.template csr<int64_t>());
}

/// Growable output columns/values for results whose nnz is not known ahead.
template <class R>
struct SpOut {
  Array<int64_t, 1> cols;
  Array<R, 1> vals;
  int64_t* c = nullptr;
  R* v = nullptr;
  int64_t cap = 0, nnz = 0;
  explicit SpOut(int64_t initial) { grow(initial < 16 ? 16 : initial); }
  void grow(int64_t want) {
    int64_t ncap = cap * 2 > want ? cap * 2 : want;
    Array<int64_t, 1> nc = sp_vec<int64_t>(ncap);
    Array<R, 1> nv = sp_vec<R>(ncap);
    if (nnz) {
      std::memcpy(nc.data(), c, sizeof(int64_t) * nnz);
      std::memcpy(static_cast<void*>(nv.data()), v, sizeof(R) * nnz);
    }
    cols = nc, vals = nv, c = nc.data(), v = nv.data(), cap = ncap;
  }
  void ensure(int64_t extra) {
    if (nnz + extra > cap) grow(nnz + extra);
  }
};

/// sp_binop's loop over the rows of two CSR structures of the same width.
template <class R, bool Mul, class CA, class CB>
SparseMat<R> sp_binop_rows(const CA& a, const CB& b) {
  const int64_t m = a.m, n = a.n;
  constexpr bool kOneSided = !Mul || std::is_floating_point_v<R>;
  auto op = [](R x, R y) { return Mul ? sp_mul<R>(x, y) : sp_add<R>(x, y); };
  Array<int64_t, 1> indptr = sp_vec<int64_t>(m + 1);
  int64_t* ip = indptr.data();
  int64_t bound = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t la = a.p[i + 1] - a.p[i], lb = b.p[i + 1] - b.p[i];
    bound += kOneSided ? la + lb : (la < lb ? la : lb);
  }
  Array<int64_t, 1> cols = sp_vec<int64_t>(bound);
  Array<R, 1> vals = sp_vec<R>(bound);
  int64_t* oc = cols.data();
  R* ov = vals.data();
  int64_t nnz = 0;
  // Dense accumulators for rows with unsorted or duplicate columns.
  std::unique_ptr<R[]> acc_a, acc_b;
  std::unique_ptr<int64_t[]> mark_a, mark_b, list;
  ip[0] = 0;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t ka0 = a.p[i], ea = a.p[i + 1], kb0 = b.p[i], eb = b.p[i + 1];
    // Merge, checking as it goes that both rows are sorted (no separate
    // scan of them); a row found out of order is redone below.
    auto merge = [&]() {
      int64_t ka = ka0, kb = kb0, pa = -1, pb = -1;
      while (ka < ea && kb < eb) {
        const int64_t ca = a.c[ka], cb = b.c[kb];
        R r;
        int64_t col;
        if (ca == cb) {
          if (ca <= pa || cb <= pb) return false;
          pa = ca, pb = cb;
          r = op(static_cast<R>(a.v[ka++]), static_cast<R>(b.v[kb++])), col = ca;
        } else if (ca < cb) {
          if (ca <= pa) return false;
          pa = ca;
          if (!kOneSided) { ++ka; continue; }
          r = op(static_cast<R>(a.v[ka++]), R(0)), col = ca;
        } else {
          if (cb <= pb) return false;
          pb = cb;
          if (!kOneSided) { ++kb; continue; }
          r = op(R(0), static_cast<R>(b.v[kb++])), col = cb;
        }
        if (r != R(0)) oc[nnz] = col, ov[nnz++] = r;
      }
      for (; ka < ea; ++ka) {
        const int64_t ca = a.c[ka];
        if (ca <= pa) return false;
        pa = ca;
        if constexpr (kOneSided) {
          const R r = op(static_cast<R>(a.v[ka]), R(0));
          if (r != R(0)) oc[nnz] = ca, ov[nnz++] = r;
        }
      }
      for (; kb < eb; ++kb) {
        const int64_t cb = b.c[kb];
        if (cb <= pb) return false;
        pb = cb;
        if constexpr (kOneSided) {
          const R r = op(R(0), static_cast<R>(b.v[kb]));
          if (r != R(0)) oc[nnz] = cb, ov[nnz++] = r;
        }
      }
      return true;
    };
    const int64_t row_start = nnz;
    if (!merge()) {
      nnz = row_start;
      if (!acc_a) {
        acc_a.reset(new R[n]()), acc_b.reset(new R[n]());
        mark_a.reset(new int64_t[n]), mark_b.reset(new int64_t[n]), list.reset(new int64_t[2 * n + 1]);
        std::fill(mark_a.get(), mark_a.get() + n, int64_t(-1));
        std::fill(mark_b.get(), mark_b.get() + n, int64_t(-1));
      }
      int64_t len = 0;
      for (int64_t k = ka0; k < ea; ++k) {
        const int64_t j = a.c[k];
        if (mark_a[j] != i) {
          if (mark_b[j] != i) list[len++] = j;
          mark_a[j] = i, acc_a[j] = static_cast<R>(a.v[k]);
        } else {
          acc_a[j] = sp_add<R>(acc_a[j], static_cast<R>(a.v[k]));
        }
      }
      for (int64_t k = kb0; k < eb; ++k) {
        const int64_t j = b.c[k];
        if (mark_b[j] != i) {
          if (mark_a[j] != i) list[len++] = j;
          mark_b[j] = i, acc_b[j] = static_cast<R>(b.v[k]);
        } else {
          acc_b[j] = sp_add<R>(acc_b[j], static_cast<R>(b.v[k]));
        }
      }
      for (int64_t t = 0; t < len; ++t) {
        const int64_t j = list[t];
        const bool in_a = mark_a[j] == i, in_b = mark_b[j] == i;
        if (!kOneSided && !(in_a && in_b)) continue;
        const R r = op(in_a ? acc_a[j] : R(0), in_b ? acc_b[j] : R(0));
        if (r != R(0)) oc[nnz] = j, ov[nnz++] = r;
      }
    }
    ip[i + 1] = nnz;
  }
  return sp_make<R>(m, n, indptr, cols, vals, nnz);
}

/// Sparse (op) sparse, same shape, as scipy's csr_binop_csr: the union of
/// the structures, op(a, 0) / op(0, b) where one side is absent, entries
/// equal to zero dropped. Rows with sorted columns on both sides are merged
/// (sorted out); others go through dense accumulators and come out in
/// first-seen order, unsorted, as scipy's general path. Mul skips one-sided
/// entries when op(x, 0) is always 0 (integers).
template <class R, bool Mul, class T, class U>
SparseMat<R> sp_binop(const char* name, const SparseMat<T>& A, const SparseMat<U>& B) {
  if (A.rows() != B.rows() || A.cols() != B.cols()) {
    const int64_t sa[2] = {A.rows(), A.cols()}, sb[2] = {B.rows(), B.cols()};
    sp_shape_error(name, "inconsistent shapes", sa, 2, sb, 2);
  }
  return with_csr2(A, B, [&](const auto& a, const auto& b) { return sp_binop_rows<R, Mul>(a, b); });
}

/// Dense 2-D view of an Array<U, 1 or 2> as numpy.atleast_2d sees it.
template <class U, int N>
View<U, 2> sp_as_2d(const Array<U, N>& d, int64_t* shape) {
  static_assert(N == 1 || N == 2, "a dense operand of spm_mul is 1-D or 2-D");
  View<U, 2> v;
  v.data = d.data();
  if constexpr (N == 1) {
    v.shape[0] = 1, v.shape[1] = d.shape(0), v.strides[0] = 0, v.strides[1] = d.stride(0);
  } else {
    v.shape[0] = d.shape(0), v.shape[1] = d.shape(1), v.strides[0] = d.stride(0), v.strides[1] = d.stride(1);
  }
  shape[0] = v.shape[0], shape[1] = v.shape[1];
  return v;
}

}  // namespace detail

// ---- construction and conversion ------------------------------------------------

/// empty_spm(nrows, ncols): an all-zero matrix.
template <class T>
SparseMat<T> empty_spm(int64_t nrows, int64_t ncols) {
  return SparseMat<T>(nrows, ncols);
}

/// csr_to_spm(values, columns, indexes, ncols) as
/// csr_matrix((values, columns, indexes), shape=(len(indexes) - 1, ncols)).
/// Contiguous int64 arrays, or int32 ones, are adopted without copying;
/// others are copied to int64.
template <class T, class I, class J>
SparseMat<T> csr_to_spm(const Array<T, 1>& values, const Array<I, 1>& columns, const Array<J, 1>& indexes,
                        int64_t ncols) {
  static_assert(std::is_integral_v<I> && std::is_integral_v<J>, "csr_to_spm: integer index arrays");
  if (indexes.shape(0) < 1) detail::sp_value_error("csr_to_spm: indexes must hold at least one row pointer");
  // int32 structures stay int32 (narrow), as SciPy keeps them.
  using Index = std::conditional_t<std::is_same_v<I, int32_t> && std::is_same_v<J, int32_t>, int32_t, int64_t>;
  SparseMat<T> S = SparseMat<T>::from_csr(indexes.shape(0) - 1, ncols, detail::sp_contiguous<Index>(indexes),
                                          detail::sp_contiguous<Index>(columns), values);
  S.check_columns();  // a bad index is reported here, where the kernel built the matrix
  return S;
}

/// spm_to_csr(S, values, columns, indexes): writes S's CSR arrays into the
/// first nnz / nnz / nrows+1 elements of the caller's arrays. ValueError
/// naming the array when one is too small, or when an index does not fit
/// the index dtype; nothing is written then.
template <class T, class V, class I, class J>
void spm_to_csr(const SparseMat<T>& S, const Array<V, 1>& values, const Array<I, 1>& columns,
                const Array<J, 1>& indexes) {
  const int64_t nnz = S.nnz(), m = S.rows();
  char msg[200];
  auto too_small = [&](const char* name, int64_t have, int64_t need, const char* what) {
    std::snprintf(msg, sizeof msg, "spm_to_csr: %s has %lld elements, the matrix needs %lld (%s)", name,
                  static_cast<long long>(have), static_cast<long long>(need), what);
    detail::sp_value_error(msg);
  };
  if (values.shape(0) < nnz) too_small("values", values.shape(0), nnz, "nnz");
  if (columns.shape(0) < nnz) too_small("columns", columns.shape(0), nnz, "nnz");
  if (indexes.shape(0) < m + 1) too_small("indexes", indexes.shape(0), m + 1, "rows + 1");
  auto fits = [](int64_t x, auto tag) {
    using X = decltype(tag);
    return x >= 0 && static_cast<uint64_t>(x) <= static_cast<uint64_t>(std::numeric_limits<X>::max());
  };
  if (!fits(S.cols() > 0 ? S.cols() - 1 : 0, I{})) {
    std::snprintf(msg, sizeof msg, "spm_to_csr: column indices up to %lld do not fit the dtype of columns",
                  static_cast<long long>(S.cols() - 1));
    detail::sp_value_error(msg);
  }
  if (!fits(nnz, J{})) {
    std::snprintf(msg, sizeof msg, "spm_to_csr: row pointers up to %lld do not fit the dtype of indexes",
                  static_cast<long long>(nnz));
    detail::sp_value_error(msg);
  }
  return detail::with_csr(S, [&](const auto& a) {
    V* vo = values.data();
    I* co = columns.data();
    J* po = indexes.data();
    const int64_t sv = values.stride(0), sc = columns.stride(0), sp = indexes.stride(0);
    for (int64_t k = 0; k < nnz; ++k) vo[k * sv] = static_cast<V>(a.v[k]), co[k * sc] = static_cast<I>(a.c[k]);
    for (int64_t i = 0; i <= m; ++i) po[i * sp] = static_cast<J>(a.p[i]);
  });
}

/// nnz(S)
template <class T>
int64_t nnz(const SparseMat<T>& S) {
  return S.nnz();
}

/// spm_with_values(S, values): S's structure with new values (see
/// SparseMat::with_values); what sampled fusion builds its result with.
template <class T, class U>
SparseMat<U> spm_with_values(const SparseMat<T>& S, const Array<U, 1>& values) {
  return S.template with_values<U>(values);
}

namespace detail {
/// S with every row's columns strictly increasing (duplicates summed, rows
/// sorted), as SciPy's sum_duplicates leaves a matrix; S itself when it is
/// so already, which is one pass over the column indices.
template <class T>
SparseMat<T> sp_canonical(const SparseMat<T>& S) {
  return with_csr(S, [&](const auto& a) {
    bool canonical = true;
    for (int64_t i = 0; i < a.m && canonical; ++i)
      for (int64_t k = a.p[i] + 1; k < a.p[i + 1]; ++k)
        if (a.c[k] <= a.c[k - 1]) {
          canonical = false;
          break;
        }
    if (canonical) return S;
    Array<int64_t, 1> indptr = sp_vec<int64_t>(a.m + 1);
    Array<int64_t, 1> cols = sp_vec<int64_t>(a.nnz);
    Array<T, 1> vals = sp_vec<T>(a.nnz);
    int64_t *p = indptr.data(), *c = cols.data(), nnz = 0;
    T* v = vals.data();
    std::vector<std::pair<int64_t, T>> row;
    p[0] = 0;
    for (int64_t i = 0; i < a.m; ++i) {
      row.clear();
      for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k) row.emplace_back(int64_t(a.c[k]), a.v[k]);
      // Stable: duplicates are summed in their stored order.
      std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (size_t k = 0; k < row.size(); ++k) {
        if (k && row[k].first == row[k - 1].first) {
          v[nnz - 1] = sp_add<T>(v[nnz - 1], row[k].second);
        } else {
          c[nnz] = row[k].first, v[nnz] = row[k].second;
          ++nnz;
        }
      }
      p[i + 1] = nnz;
    }
    return sp_make<T>(a.m, a.n, indptr, cols, vals, nnz);
  });
}
}  // namespace detail

/// spm_map<R, C>(S, f): f (a functor with f(0) == 0, computing in C)
/// applied to every stored value, keeping S's structure and its stored
/// zeros: what f(S) is for sqrt, abs, negation... (SciPy's S.sqrt(), abs(S),
/// -S). Duplicate entries are summed first, as SciPy does: f of a sum is not
/// the sum of f.
template <class R, class C, class T, class F>
SparseMat<R> spm_map(const SparseMat<T>& S, F f) {
  const SparseMat<T> M = detail::sp_canonical(S);
  return detail::with_csr(M, [&](const auto& a) {
    Array<R, 1> vals = detail::sp_vec<R>(a.nnz);
    R* o = vals.data();
    for (int64_t k = 0; k < a.nnz; ++k) o[k] = static_cast<R>(f(static_cast<C>(a.v[k])));
    return M.template with_values<R>(vals);
  });
}

/// toarray(S): the dense matrix (duplicates summed), SciPy's S.toarray().
template <class T>
Array<T, 2> spm_toarray(const SparseMat<T>& S) {
  const int64_t m = S.rows(), n = S.cols();
  Array<T, 2> out = Array<T, 2>::zeros(std::array<int64_t, 2>{m, n});
  T* o = out.data();
  detail::with_csr(S, [&](const auto& a) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k) o[i * n + a.c[k]] = detail::sp_add<T>(o[i * n + a.c[k]], a.v[k]);
  });
  return out;
}

/// spm_add(S, x) / spm_add(x, S) with a scalar x: the dense S.toarray() + x
/// (NumPy's `toarray(S) + x`; SciPy refuses a nonzero scalar).
template <class R = void, class T, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
Array<detail::sp_result_t<R, T, U>, 2> spm_add(const SparseMat<T>& S, U x) {
  using Out = detail::sp_result_t<R, T, U>;
  const Array<T, 2> dense = spm_toarray(S);
  Array<Out, 2> out = Array<Out, 2>::empty(std::array<int64_t, 2>{S.rows(), S.cols()});
  const T* d = dense.data();
  Out* o = out.data();
  const Out y = static_cast<Out>(x);
  for (int64_t k = 0, n = dense.size(); k < n; ++k) o[k] = detail::sp_add<Out>(static_cast<Out>(d[k]), y);
  return out;
}
template <class R = void, class U, class T, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
Array<detail::sp_result_t<R, T, U>, 2> spm_add(U x, const SparseMat<T>& S) {
  return spm_add<R>(S, x);
}

namespace detail {
/// x . y over k elements with eight partial sums (they vectorize; the
/// order of additions is a blocked one, as BLAS uses).
template <class U>
U sp_dot(const U* x, const U* y, int64_t k) {
  constexpr int L = 8;
  U acc[L] = {};
  int64_t q = 0;
  for (; q + L <= k; q += L)
    for (int l = 0; l < L; ++l) acc[l] += x[q + l] * y[q + l];
  U s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; q < k; ++q) s += x[q] * y[q];
  return s;
}
/// The rows of a 2-D array as contiguous rows (the array itself when they
/// are): `transposed` gives the rows of its transpose.
template <class U>
Array<U, 2> sp_rows(const Array<U, 2>& a, bool transposed, const U** base, int64_t* stride) {
  const int64_t rows = a.shape(transposed ? 1 : 0), len = a.shape(transposed ? 0 : 1);
  const int64_t s_row = a.stride(transposed ? 1 : 0), s_elem = a.stride(transposed ? 0 : 1);
  if (s_elem == 1 || len <= 1) {
    *base = a.data(), *stride = s_row;
    return Array<U, 2>();
  }
  Array<U, 2> c = Array<U, 2>::empty(std::array<int64_t, 2>{rows, len});
  U* o = c.data();
  const U* p = a.data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < len; ++q) o[r * len + q] = p[r * s_row + q * s_elem];
  *base = o, *stride = len;
  return c;
}
}  // namespace detail

/// sampled_matmul(S, a, b): the entries of a @ b at S's stored positions,
/// one per entry in S's order (a sampled dense-dense product, SDDMM): what
/// sampled fusion (opt/SampledFusion.h) computes instead of all of a @ b.
/// a is (rows of S, k), b is (k, columns of S); each entry is one dot
/// product of a row of a and a column of b, read contiguously (copied
/// first when they are strided).
template <class T, class U>
Array<U, 1> sampled_matmul(const SparseMat<T>& S, const Array<U, 2>& a, const Array<U, 2>& b) {
  const int64_t k = a.shape(1);
  if (b.shape(0) != k) detail::sp_shape_error("sampled_matmul", "mismatched product operands", a.shape(), 2, b.shape(), 2);
  if (a.shape(0) != S.rows() || b.shape(1) != S.cols()) {
    const int64_t ss[2] = {S.rows(), S.cols()}, ps[2] = {a.shape(0), b.shape(1)};
    detail::sp_shape_error("sampled_matmul", "inconsistent shapes", ss, 2, ps, 2);
  }
  Array<U, 1> out = detail::sp_vec<U>(S.nnz());
  const U *xa, *xb;
  int64_t sa, sb;
  const Array<U, 2> ka = detail::sp_rows(a, false, &xa, &sa), kb = detail::sp_rows(b, true, &xb, &sb);
  U* o = out.data();
  detail::with_csr(S, [&](const auto& s) {
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t e = s.p[r]; e < s.p[r + 1]; ++e) o[e] = detail::sp_dot(xa + r * sa, xb + s.c[e] * sb, k);
  });
  return out;
}

/// S.T as a new CSR matrix (rows sorted; duplicates and explicit zeros kept).
template <class T>
SparseMat<T> transpose(const SparseMat<T>& S) {
  return detail::with_csr(S, [&](const auto& a) {
    const int64_t m = a.m, n = a.n, nnz = a.nnz;
    Array<int64_t, 1> indptr = Array<int64_t, 1>::zeros(std::array<int64_t, 1>{n + 1});
    Array<int64_t, 1> cols = detail::sp_vec<int64_t>(nnz);
    Array<T, 1> vals = detail::sp_vec<T>(nnz);
    int64_t* p = indptr.data();
    for (int64_t k = 0; k < nnz; ++k) ++p[a.c[k] + 1];
    for (int64_t j = 0; j < n; ++j) p[j + 1] += p[j];
    int64_t* oc = cols.data();
    T* ov = vals.data();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k) {
        const int64_t d = p[a.c[k]]++;
        oc[d] = i, ov[d] = a.v[k];
      }
    for (int64_t j = n; j > 0; --j) p[j] = p[j - 1];
    p[0] = 0;
    return detail::sp_make<T>(n, m, indptr, cols, vals, nnz);
  });
}

// ---- element-wise --------------------------------------------------------------------

/// spm_add(A, B): sparse + sparse (union; zero sums dropped, as scipy).
template <class R = void, class T, class U>
SparseMat<detail::sp_result_t<R, T, U>> spm_add(const SparseMat<T>& A, const SparseMat<U>& B) {
  return detail::sp_binop<detail::sp_result_t<R, T, U>, false>("spm_add", A, B);
}

/// spm_add(S, D) / spm_add(D, S): sparse + dense -> dense. D broadcasts to
/// S's shape (a row, a column, a scalar-like 1x1), as SciPy's `S + D` does;
/// duplicates accumulate.
template <class R = void, class T, class U, int N>
Array<detail::sp_result_t<R, T, U>, 2> spm_add(const SparseMat<T>& S, const Array<U, N>& D) {
  using Out = detail::sp_result_t<R, T, U>;
  const int64_t m = S.rows(), n = S.cols();
  const int64_t want[2] = {m, n};
  bool fits = N <= 2;
  for (int k = 0; fits && k < N; ++k) {
    const int64_t d = D.shape(k), w = want[2 - N + k];
    fits = d == w || d == 1;
  }
  if (!fits) detail::sp_shape_error("spm_add", "inconsistent shapes", want, 2, D.shape(), N);
  Array<Out, 2> out = Array<Out, 2>::empty(std::array<int64_t, 2>{m, n});
  assign(out, D);
  Out* o = out.data();
  return detail::with_csr(S, [&](const auto& a) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k)
        o[i * n + a.c[k]] = detail::sp_add<Out>(o[i * n + a.c[k]], static_cast<Out>(a.v[k]));
    return out;
  });
}
template <class R = void, class U, int N, class T>
Array<detail::sp_result_t<R, T, U>, 2> spm_add(const Array<U, N>& D, const SparseMat<T>& S) {
  return spm_add<detail::sp_result_t<R, T, U>>(S, D);
}

/// spm_mul(A, B): sparse * sparse (scipy's multiply: the intersection, plus
/// inf/nan * absent = nan; zero products dropped).
template <class R = void, class T, class U>
SparseMat<detail::sp_result_t<R, T, U>> spm_mul(const SparseMat<T>& A, const SparseMat<U>& B) {
  return detail::sp_binop<detail::sp_result_t<R, T, U>, true>("spm_mul", A, B);
}

/// spm_scale(S, x): S * scalar, S's structure (explicit zeros kept).
template <class R = void, class T, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
SparseMat<detail::sp_result_t<R, T, U>> spm_scale(const SparseMat<T>& S, U x) {
  using Out = detail::sp_result_t<R, T, U>;
  return detail::with_csr(S, [&](const auto& a) {
    Array<int64_t, 1> indptr = detail::sp_vec<int64_t>(a.m + 1);
    Array<int64_t, 1> cols = detail::sp_vec<int64_t>(a.nnz);
    std::copy(a.p, a.p + a.m + 1, indptr.data());
    std::copy(a.c, a.c + a.nnz, cols.data());
    Array<Out, 1> vals = detail::sp_vec<Out>(a.nnz);
    Out* o = vals.data();
    const Out y = static_cast<Out>(x);
    for (int64_t k = 0; k < a.nnz; ++k) o[k] = detail::sp_mul<Out>(static_cast<Out>(a.v[k]), y);
    return detail::sp_make<Out>(a.m, a.n, indptr, cols, vals, a.nnz);
  });
}

/// spm_mul(S, scalar) = spm_scale.
template <class R = void, class T, class U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
SparseMat<detail::sp_result_t<R, T, U>> spm_mul(const SparseMat<T>& S, U x) {
  return spm_scale<R>(S, x);
}
template <class R = void, class U, class T, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
SparseMat<detail::sp_result_t<R, T, U>> spm_mul(U x, const SparseMat<T>& S) {
  return spm_scale<R>(S, x);
}

/// spm_mul(S, D): sparse * dense as scipy's multiply (D as numpy.atleast_2d
/// sees it: 1-D is a row). Same shape, a (1, n) row, an (m, 1) column, a
/// single element (scalar); a sparse row (1, n) or column (m, 1) broadcasts
/// against D, replicating its entries. The result has S's structure (in S's
/// order; explicit zeros kept), replicated where S broadcasts.
template <class R = void, class T, class U, int N>
SparseMat<detail::sp_result_t<R, T, U>> spm_mul(const SparseMat<T>& S, const Array<U, N>& D) {
  using Out = detail::sp_result_t<R, T, U>;
  int64_t ds[2];
  const View<U, 2> d = detail::sp_as_2d(D, ds);
  if (ds[0] * ds[1] == 1) return spm_scale<Out>(S, d(0, 0));
  const int64_t sm = S.rows(), sn = S.cols();
  auto dim = [&](int64_t s, int64_t t, int64_t* out) {
    if (s == t || t == 1) return *out = s, true;
    if (s == 1) return *out = t, true;
    return false;
  };
  int64_t m, n;
  if (!dim(sm, ds[0], &m) || !dim(sn, ds[1], &n)) {
    const int64_t ss[2] = {sm, sn};
    detail::sp_shape_error("spm_mul", "inconsistent shapes", ss, 2, ds, 2);
  }
  return detail::with_csr(S, [&](const auto& a) {
    const bool expand_cols = sn == 1 && n > 1;
    const int64_t per_col = expand_cols ? n : 1;
    const int64_t nnz = (sm == m ? a.nnz : a.nnz * m) * per_col;
    Array<int64_t, 1> indptr = detail::sp_vec<int64_t>(m + 1);
    Array<int64_t, 1> cols = detail::sp_vec<int64_t>(nnz);
    Array<Out, 1> vals = detail::sp_vec<Out>(nnz);
    int64_t* ip = indptr.data();
    int64_t* oc = cols.data();
    Out* ov = vals.data();
    const int64_t dcs = ds[1] == 1 ? 0 : d.strides[1];
    int64_t w = 0;
    ip[0] = 0;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t si = sm == 1 ? 0 : i;
      const U* drow = d.data + (ds[0] == 1 ? 0 : i * d.strides[0]);
      for (int64_t k = a.p[si]; k < a.p[si + 1]; ++k) {
        const Out x = static_cast<Out>(a.v[k]);
        if (expand_cols) {
          for (int64_t j = 0; j < n; ++j) oc[w] = j, ov[w++] = detail::sp_mul<Out>(x, static_cast<Out>(drow[j * dcs]));
        } else {
          oc[w] = a.c[k], ov[w++] = detail::sp_mul<Out>(x, static_cast<Out>(drow[a.c[k] * dcs]));
        }
      }
      ip[i + 1] = w;
    }
    return detail::sp_make<Out>(m, n, indptr, cols, vals, nnz);
  });
}
template <class R = void, class U, int N, class T>
SparseMat<detail::sp_result_t<R, T, U>> spm_mul(const Array<U, N>& D, const SparseMat<T>& S) {
  return spm_mul<detail::sp_result_t<R, T, U>>(S, D);
}

// ---- products ---------------------------------------------------------------------------

namespace detail {
/// One term of a row of S @ x added to its sum: the row loop below and the
/// paired rows (spmv) both add it, so their sums are the same bit for bit.
template <class Out, class T, class U>
inline Out sp_matvec_term(Out acc, T value, U x) {
  return sp_add<Out>(acc, sp_mul<Out>(static_cast<Out>(value), static_cast<Out>(x)));
}

/// Rows [i0, i1) of o = S @ x, one by one, each row's products summed in
/// order (csr_matvec's order). False at a column index out of range, the
/// rest not computed (checked only when Check; S @ x then raises). The
/// check is one compare and a branch that never goes the other way: it
/// cost nothing measurable, where a separate vectorized pass over each
/// block's indices cost a fifth of the time on rows of 10. A function of
/// its own, not a lambda: through a closure, g++ reloaded the bases and
/// spilled at every row (1.1x the time of the same loop emitted inline).
/// With Prefetch, x is prefetched ahead of the gathers (prefetch_gather).
template <bool Check, bool Prefetch, class Out, class T, class I, class U, class Stride>
bool sp_matvec_rows(const Csr<T, I>& a, const U* __restrict x, Stride stride, Out* __restrict o, int64_t i0,
                    int64_t i1) {
  const I* __restrict p = a.p;
  const I* __restrict c = a.c;
  const T* __restrict v = a.v;
  const uint64_t n = static_cast<uint64_t>(a.n);
  for (int64_t i = i0; i < i1; ++i) {
    Out acc = Out(0);
    // Counting up to 0 from the row's end: one register for the entry.
    const int64_t end = p[i + 1];
    const I* __restrict cols = c + end;
    const T* __restrict vals = v + end;
    for (int64_t k = p[i] - end; k < 0; ++k) {
      int64_t j = cols[k];
      // Kept scalar: at -march=native GCC would vectorize the loads into
      // AVX-512 gathers summed lane by lane, 2-3x slower than scalar loads
      // on the machines measured. The empty asm (no instruction) on the
      // index is what the vectorizer cannot see through.
      asm("" : "+r"(j));
      if (Check && __builtin_expect(static_cast<uint64_t>(j) >= n, 0)) return false;  // negative: huge
      if (Prefetch) prefetch_gather(x, stride, c, end + k + kGatherPrefetchDistance, a.nnz);
      acc = sp_matvec_term<Out>(acc, vals[k], x[j * stride]);
    }
    o[i] = acc;
  }
  return true;
}
}  // namespace detail

/// spmv(S, x): S @ x for a 1-D x (csr_matvec: one sequential sum per row).
/// The column indices of a borrowed matrix are range-checked as the rows
/// read them (an out-of-range one stops the rows, then raises scipy's
/// error), so a call from Python reads the structure once, as scipy does.
template <class R = void, class T, class U>
Array<detail::sp_result_t<R, T, U>, 1> spmv(const SparseMat<T>& S, const Array<U, 1>& x) {
  using Out = detail::sp_result_t<R, T, U>;
  if (x.shape(0) != S.cols()) {
    const int64_t ss[2] = {S.rows(), S.cols()};
    detail::sp_shape_error("spmv", "dimension mismatch", ss, 2, x.shape(), 1);
  }
  const bool fused_check = !S.columns_checked() && S.cols() > 0;
  return detail::with_csr(S, [&](const auto& a) {
    Array<Out, 1> out = detail::sp_vec<Out>(a.m);
    Out* o = out.data();
    const U* xp = x.data();
    std::atomic<bool> bad{false};
    FirstError interrupted;
    const bool gathers_ahead = detail::gathers_miss_cache<U>(x.shape(0), x.stride(0));
    // Rows r0..r1: each row's sum is one thread's, in scipy's order, so a
    // large product splits its rows among threads with the same result.
    // Where rows are long and x is short, two rows at a time (the same
    // sums, bit for bit; sp_rows_in_pairs declines otherwise, or at an
    // out-of-range column, and the rows run one by one). Out of line: one
    // copy serves both paths (a kernel instantiating spmv for other types
    // compiles it once per stride kind, not twice).
    auto part = [&](auto stride, int64_t r0, int64_t r1) __attribute__((noinline)) {
      try {
        if (detail::sp_rows_in_pairs<Out>(
                a, r0, r1, /*rerun=*/true, [](int64_t) { return Out(0); },
                [&](int64_t, Out acc, int64_t j, T value) { return detail::sp_matvec_term<Out>(acc, value, xp[j * stride]); },
                [&](int64_t i, Out acc) { o[i] = acc; }))
          return;
      } catch (...) {  // Ctrl-C: rethrown after the threads' parts
        interrupted.capture();
        return;
      }
      auto rows = [&](auto check) {
        constexpr bool Check = decltype(check)::value;
        return gathers_ahead ? detail::sp_matvec_rows<Check, true>(a, xp, stride, o, r0, r1)
                             : detail::sp_matvec_rows<Check, false>(a, xp, stride, o, r0, r1);
      };
      if (fused_check) {
        if (!rows(std::true_type{})) bad.store(true, std::memory_order_relaxed);
      } else {
        rows(std::false_type{});
      }
    };
    auto run = [&](auto stride) {
      if (detail::parallel_reduction(a.nnz)) parallel_range(0, a.m, [&](int64_t r0, int64_t r1) { part(stride, r0, r1); });
      else part(stride, 0, a.m);
    };
    using Unit = std::integral_constant<int64_t, 1>;
    if (x.stride(0) == 1) run(Unit{});
    else run(x.stride(0));
    interrupted.rethrow();
    if (fused_check) {
      if (bad.load(std::memory_order_relaxed)) S.check_columns();  // raises scipy's message
      S.set_columns_checked();
    }
    return out;
  }, /*check_columns=*/!fused_check);
}

/// spmm(A, B): sparse @ sparse (Gustavson: a dense accumulator and a marker
/// per column, reused across rows). Rows in first-seen order (unsorted);
/// zero sums dropped, as scipy's csr_matmat.
template <class R = void, class T, class U>
SparseMat<detail::sp_result_t<R, T, U>> spmm(const SparseMat<T>& A, const SparseMat<U>& B) {
  using Out = detail::sp_result_t<R, T, U>;
  if (A.cols() != B.rows()) {
    const int64_t sa[2] = {A.rows(), A.cols()}, sb[2] = {B.rows(), B.cols()};
    detail::sp_shape_error("spmm", "dimension mismatch", sa, 2, sb, 2);
  }
  return detail::with_csr2(A, B, [&](const auto& a, const auto& b) {
    const int64_t m = a.m, n = b.n;
    Array<int64_t, 1> indptr = detail::sp_vec<int64_t>(m + 1);
    int64_t* ip = indptr.data();
    // Capacity: the products' count per row (capped at n), which is exact
    // without cancellations; beyond 16M entries it grows on demand instead.
    int64_t bound = 0;
    for (int64_t i = 0; i < m; ++i) {
      int64_t r = 0;
      for (int64_t ka = a.p[i]; ka < a.p[i + 1] && r < n; ++ka) r += b.p[a.c[ka] + 1] - b.p[a.c[ka]];
      bound += r < n ? r : n;
    }
    const int64_t cap_limit = std::max<int64_t>(4 * (a.nnz + b.nnz), int64_t{1} << 24);
    detail::SpOut<Out> out(bound < cap_limit ? bound : cap_limit);
    // Row i's columns are marked with the row number (mark[j] == i) and
    // listed as first seen; the row comes out in that order, unsorted, as
    // scipy's csr_matmat leaves it.
    std::unique_ptr<Out[]> acc(new Out[n > 0 ? n : 1]);
    std::unique_ptr<int64_t[]> mark(new int64_t[n > 0 ? n : 1]);
    std::fill(mark.get(), mark.get() + n, int64_t{-1});
    std::unique_ptr<int64_t[]> list(new int64_t[n > 0 ? n : 1]);
    ip[0] = 0;
    for (int64_t i = 0; i < m; ++i) {
      int64_t len = 0;
      for (int64_t ka = a.p[i]; ka < a.p[i + 1]; ++ka) {
        const int64_t l = a.c[ka];
        const Out x = static_cast<Out>(a.v[ka]);
        for (int64_t kb = b.p[l]; kb < b.p[l + 1]; ++kb) {
          const int64_t j = b.c[kb];
          const Out prod = detail::sp_mul<Out>(x, static_cast<Out>(b.v[kb]));
          if (mark[j] != i) {
            mark[j] = i;
            acc[j] = detail::sp_add<Out>(Out(0), prod);  // 0 + p, as scipy's sums
            list[len++] = j;
          } else {
            acc[j] = detail::sp_add<Out>(acc[j], prod);
          }
        }
      }
      out.ensure(len);
      int64_t* oc = out.c;
      Out* ov = out.v;
      int64_t w = out.nnz;
      for (int64_t t = 0; t < len; ++t) {
        const int64_t j = list[t];
        if (acc[j] != Out(0)) oc[w] = j, ov[w++] = acc[j];
      }
      out.nnz = w;
      ip[i + 1] = w;
    }
    return detail::sp_make<Out>(m, n, indptr, out.cols, out.vals, out.nnz);
  });
}

namespace detail {
/// The largest magnitude of the stored values (infinity when one is not
/// finite) and the longest row.
template <class C>
double sp_max_abs(const C& a) {
  double m = 0;
  for (int64_t k = 0; k < a.nnz; ++k) {
    const double x = static_cast<double>(a.v[k] < 0 ? -a.v[k] : a.v[k]);
    m = x > m || x != x ? x : m;
  }
  return m == m ? m : std::numeric_limits<double>::infinity();
}
template <class C>
int64_t sp_longest_row(const C& a) {
  int64_t l = 0;
  for (int64_t i = 0; i < a.m; ++i) l = std::max<int64_t>(l, a.p[i + 1] - a.p[i]);
  return l;
}
}  // namespace detail

/// masked_spmm(M, A, B, mask_first): spm_mul(M, spmm(A, B)) (the operands of
/// spm_mul swapped when !mask_first) computing only the entries of A @ B at
/// M's stored positions (a masked sparse product; triangle counting's
/// spm_mul(spmm(A, A), A)): spmm's row loop without its bookkeeping of the
/// columns a row reaches, and no intermediate matrix. It
/// gives what the two operations give: each kept entry adds the same
/// products in the same order, zero sums and zero products are dropped, and
/// for floats no entry outside M's structure survives (SciPy's multiply
/// keeps x * 0 only for an infinite or NaN x) because every value is finite
/// and no sum can overflow, which is checked first. A row of M with a
/// duplicate column, or values that fail that check, run the two operations
/// as written.
template <class T>
SparseMat<T> masked_spmm(const SparseMat<T>& M, const SparseMat<T>& A, const SparseMat<T>& B, bool mask_first) {
  auto general = [&] { return mask_first ? spm_mul<T>(M, spmm<T>(A, B)) : spm_mul<T>(spmm<T>(A, B), M); };
  if (A.cols() != B.rows() || M.rows() != A.rows() || M.cols() != B.cols()) return general();  // their errors
  auto masked = [&](const auto& m, const auto& a, const auto& b) -> SparseMat<T> {
    if constexpr (std::is_floating_point_v<T>) {
      const double bound = detail::sp_max_abs(a) * detail::sp_max_abs(b) * static_cast<double>(detail::sp_longest_row(a));
      if (!(bound <= static_cast<double>(std::numeric_limits<T>::max())) || !(detail::sp_max_abs(m) < HUGE_VAL))
        return general();
    }
    const int64_t rows = m.m, n = m.n;
    Array<int64_t, 1> indptr = detail::sp_vec<int64_t>(rows + 1);
    Array<int64_t, 1> cols = detail::sp_vec<int64_t>(m.nnz);
    Array<T, 1> vals = detail::sp_vec<T>(m.nnz);
    int64_t* ip = indptr.data();
    int64_t* oc = cols.data();
    T* ov = vals.data();
    // Rows r0..r1. Row i's products are summed into acc[j] for every
    // column, as spmm sums them, without a test per product: the columns
    // M's row stores are reset to zero first and are the only ones read. A
    // sum that is zero, or that no product reached, is no entry (values are
    // finite). A row keeps at most M's row's entries: they are written from
    // where M's row starts, with their count in ip[i + 1], and moved
    // together afterwards, so that rows can run on any thread. False on a
    // duplicate column in a row of M, or when the scratch arrays cannot be
    // allocated (a part runs inside an OpenMP region, where nothing may throw).
    auto part = [&](int64_t r0, int64_t r1) -> bool {
      std::unique_ptr<int64_t[]> mask(new (std::nothrow) int64_t[n > 0 ? n : 1]);
      std::unique_ptr<T[]> acc(new (std::nothrow) T[n > 0 ? n : 1]);
      if (!mask || !acc) return false;
      std::fill(mask.get(), mask.get() + n, int64_t{-1});
      std::fill(acc.get(), acc.get() + n, T(0));
      for (int64_t i = r0; i < r1; ++i) {
        for (int64_t e = m.p[i]; e < m.p[i + 1]; ++e) {
          const int64_t j = m.c[e];
          if (mask[j] == i) return false;  // a duplicate column
          mask[j] = i, acc[j] = T(0);
        }
        for (int64_t ka = a.p[i]; ka < a.p[i + 1]; ++ka) {
          const T x = a.v[ka];
          const int64_t l = a.c[ka];
          for (int64_t kb = b.p[l]; kb < b.p[l + 1]; ++kb)
            acc[b.c[kb]] = detail::sp_add<T>(acc[b.c[kb]], detail::sp_mul<T>(x, b.v[kb]));  // 0 + p first, as spmm
        }
        int64_t w = m.p[i];
        for (int64_t e = m.p[i]; e < m.p[i + 1]; ++e) {
          const int64_t j = m.c[e];
          if (acc[j] == T(0)) continue;
          const T r = mask_first ? detail::sp_mul<T>(m.v[e], acc[j]) : detail::sp_mul<T>(acc[j], m.v[e]);
          if (r != T(0)) oc[w] = j, ov[w++] = r;
        }
        ip[i + 1] = w - m.p[i];
      }
      return true;
    };
    // A large product splits its rows among threads (SciPy's is serial);
    // each row is one thread's, so the result is the same.
    bool done = true;
    if (detail::parallel_reduction(a.nnz + m.nnz)) {
      std::atomic<bool> all{true};
      parallel_range(0, rows, [&](int64_t r0, int64_t r1) {
        if (!part(r0, r1)) all.store(false, std::memory_order_relaxed);
      });
      done = all.load();
    } else {
      done = part(0, rows);
    }
    if (!done) return general();  // which raises MemoryError if memory is short
    int64_t w = 0;
    ip[0] = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t count = ip[i + 1], from = m.p[i];
      if (count && w != from) {
        std::memmove(oc + w, oc + from, sizeof(int64_t) * count);
        std::memmove(static_cast<void*>(ov + w), ov + from, sizeof(T) * count);
      }
      w += count;
      ip[i + 1] = w;
    }
    return detail::sp_make<T>(rows, n, indptr, cols, vals, w);
  };
  if (M.narrow() && A.narrow() && B.narrow())
    return masked(M.template csr<int32_t>(), A.template csr<int32_t>(), B.template csr<int32_t>());
  return masked(M.template csr<int64_t>(), A.template csr<int64_t>(), B.template csr<int64_t>());
}

/// spmm_dense(S, D): sparse @ dense 2-D -> dense.
template <class R = void, class T, class U>
Array<detail::sp_result_t<R, T, U>, 2> spmm_dense(const SparseMat<T>& S, const Array<U, 2>& D) {
  using Out = detail::sp_result_t<R, T, U>;
  if (D.shape(0) != S.cols()) {
    const int64_t ss[2] = {S.rows(), S.cols()};
    detail::sp_shape_error("spmm_dense", "dimension mismatch", ss, 2, D.shape(), 2);
  }
  return detail::with_csr(S, [&](const auto& a) {
    const int64_t m = a.m, n = D.shape(1);
    Array<Out, 2> out = Array<Out, 2>::zeros(std::array<int64_t, 2>{m, n});
    Out* o = out.data();
    const U* d = D.data();
    const int64_t s0 = D.stride(0), s1 = D.stride(1);
    auto run = [&](auto stride) {
      for (int64_t i = 0; i < m; ++i) {
        Out* orow = o + i * n;
        for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k) {
          const Out x = static_cast<Out>(a.v[k]);
          const U* drow = d + a.c[k] * s0;
          for (int64_t j = 0; j < n; ++j)
            orow[j] = detail::sp_add<Out>(orow[j], detail::sp_mul<Out>(x, static_cast<Out>(drow[j * stride])));
        }
      }
    };
    if (s1 == 1) run(std::integral_constant<int64_t, 1>{});
    else run(s1);
    return out;
  });
}

namespace detail {
/// D @ S for m >= 4 rows of D, given the rows of D.T (t, row stride st):
/// stored entry (l, j, v) adds D[:, l] * v to column j of the result. With
/// D and the result transposed, that is one contiguous (vectorized) update
/// of m elements per entry, where a loop over D's rows sweeps S once per
/// row. Each element sees the additions of that loop in the same order.
template <class Out, class U, class A>
Array<Out, 2> sp_dense_sparse_t(const U* t, int64_t st, int64_t m, const A& a) {
  const int64_t kdim = a.m, n = a.n;
  Array<Out, 2> ot = Array<Out, 2>::zeros(std::array<int64_t, 2>{n, m});
  Out* w = ot.data();
  for (int64_t l = 0; l < kdim; ++l) {
    const U* drow = t + l * st;
    for (int64_t k = a.p[l]; k < a.p[l + 1]; ++k) {
      const Out v = static_cast<Out>(a.v[k]);
      Out* wrow = w + a.c[k] * m;
      for (int64_t i = 0; i < m; ++i)
        wrow[i] = detail::sp_add<Out>(wrow[i], detail::sp_mul<Out>(static_cast<Out>(drow[i]), v));
    }
  }
  Array<Out, 2> out = Array<Out, 2>::empty(std::array<int64_t, 2>{m, n});
  Out* o = out.data();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) o[i * n + j] = w[j * m + i];
  return out;
}
}  // namespace detail

/// spmm_dense(D, S): dense 2-D @ sparse -> dense.
template <class R = void, class U, class T>
Array<detail::sp_result_t<R, T, U>, 2> spmm_dense(const Array<U, 2>& D, const SparseMat<T>& S) {
  using Out = detail::sp_result_t<R, T, U>;
  if (D.shape(1) != S.rows()) {
    const int64_t ss[2] = {S.rows(), S.cols()};
    detail::sp_shape_error("spmm_dense", "dimension mismatch", D.shape(), 2, ss, 2);
  }
  return detail::with_csr(S, [&](const auto& a) {
    const int64_t m = D.shape(0), kdim = a.m, n = a.n;
    const U* d = D.data();
    const int64_t s0 = D.stride(0), s1 = D.stride(1);
    if (m < 4) {
      Array<Out, 2> out = Array<Out, 2>::zeros(std::array<int64_t, 2>{m, n});
      Out* o = out.data();
      for (int64_t i = 0; i < m; ++i) {
        Out* orow = o + i * n;
        for (int64_t l = 0; l < kdim; ++l) {
          const Out x = static_cast<Out>(d[i * s0 + l * s1]);
          for (int64_t k = a.p[l]; k < a.p[l + 1]; ++k)
            orow[a.c[k]] = detail::sp_add<Out>(orow[a.c[k]], detail::sp_mul<Out>(x, static_cast<Out>(a.v[k])));
        }
      }
      return out;
    }
    // D.T with contiguous rows: a copy per call, which spmm_dense_t takes
    // from its caller instead (made once before a loop).
    Array<Out, 2> dt = Array<Out, 2>::empty(std::array<int64_t, 2>{kdim, m});
    Out* t = dt.data();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < kdim; ++l) t[l * m + i] = static_cast<Out>(d[i * s0 + l * s1]);
    return detail::sp_dense_sparse_t<Out>(t, m, m, a);
  });
}

/// spmm_dense_t(Dt, S): spmm_dense(D, S) given Dt = D.T, whose rows it
/// reads (a contiguous Dt is not copied): what the sparse layout pass
/// (opt/SparseLayout.h) calls with `ascontiguousarray(D.T)` made once
/// before a loop that does not change D. The result, its additions' order
/// and the errors (with D's shape) are spmm_dense's.
template <class R = void, class U, class T>
Array<detail::sp_result_t<R, T, U>, 2> spmm_dense_t(const Array<U, 2>& Dt, const SparseMat<T>& S) {
  using Out = detail::sp_result_t<R, T, U>;
  if (Dt.shape(1) < 4) {  // spmm_dense reads so few rows of D in place
    const int64_t shape[2] = {Dt.shape(1), Dt.shape(0)}, strides[2] = {Dt.stride(1), Dt.stride(0)};
    return spmm_dense<R>(Dt.template alias<2>(Dt.data(), shape, strides), S);
  }
  if (Dt.shape(0) != S.rows()) {
    const int64_t ds[2] = {Dt.shape(1), Dt.shape(0)}, ss[2] = {S.rows(), S.cols()};
    detail::sp_shape_error("spmm_dense", "dimension mismatch", ds, 2, ss, 2);
  }
  return detail::with_csr(S, [&](const auto& a) {
    const U* t;
    int64_t st;
    const Array<U, 2> rows = detail::sp_rows(Dt, false, &t, &st);
    return detail::sp_dense_sparse_t<Out>(t, st, Dt.shape(1), a);
  });
}

// ---- reductions -------------------------------------------------------------------------

namespace detail {

/// One row's sum as SciPy's `S.sum(1)` makes it: np.add.reduceat over the
/// row's stored values (the first value plus NumPy's pairwise sum of the
/// rest, whose short form, under 8 values, starts from -0.0), then added to
/// 0.0 by the `.sum(axis=())` SciPy ends with (so -0.0 becomes 0.0). The 8
/// partial sums of a longer row also make it faster than one chain of adds.
/// (Integer sums do not depend on the order: one loop of wrapping adds.)
template <class Out, class T>
inline Out sp_reduceat_sum(const T* v, int64_t n) {
  if constexpr (!std::is_floating_point_v<Out>) {
    Out acc = Out(0);
    for (int64_t k = 0; k < n; ++k) acc = sp_add<Out>(acc, static_cast<Out>(v[k]));
    return acc;
  } else {
    if (n == 0) return Out(0);
    const T* r = v + 1;
    const int64_t m = n - 1;
    Out tail = Out(-0.0);
    if (m < 8) {
      for (int64_t k = 0; k < m; ++k) tail += static_cast<Out>(r[k]);
    } else {
      // The block inline (most rows are short), pairwise_sum beyond it.
      tail = m <= 128 ? pairwise_block<Out, 1>(r, m, 1) : pairwise_sum<Out, 1>(r, m, 1);
    }
    return Out(0) + (static_cast<Out>(v[0]) + tail);
  }
}

/// Row sums as `S @ ones` makes them (csr_matvec: each row from 0, in
/// stored order), the first step of SciPy's `S.sum()`.
template <class Out, class Csr>
Array<Out, 1> sp_matvec_row_sums(const Csr& a) {
  Array<Out, 1> out = sp_vec<Out>(a.m);
  Out* o = out.data();
  for (int64_t i = 0; i < a.m; ++i) {
    Out acc = Out(0);
    for (int64_t k = a.p[i]; k < a.p[i + 1]; ++k) acc = sp_add<Out>(acc, static_cast<Out>(a.v[k]));
    o[i] = acc;
  }
  return out;
}

}  // namespace detail

/// sum_axis(S, axis): axis 0 -> column sums (ncols), 1 -> row sums (nrows);
/// negative axes wrap; ValueError otherwise. 1-D (scipy returns a matrix).
/// Both in SciPy's order: row sums by np.add.reduceat, column sums as
/// `ones @ S` scatters them (entry by entry, in stored order).
template <class R = void, class T>
Array<detail::sp_sum_t<R, T>, 1> sum_axis(const SparseMat<T>& S, int64_t axis) {
  using Out = detail::sp_sum_t<R, T>;
  const int ax = normalize_axis(axis, 2, ErrorKind::ValueError);
  // Row sums never read the column indices: no check of them.
  return detail::with_csr(S, [&](const auto& a) {
    if (ax == 1) {
      Array<Out, 1> out = detail::sp_vec<Out>(a.m);
      Out* o = out.data();
      for (int64_t i = 0; i < a.m; ++i) o[i] = detail::sp_reduceat_sum<Out>(a.v + a.p[i], a.p[i + 1] - a.p[i]);
      return out;
    }
    Array<Out, 1> out = Array<Out, 1>::zeros(std::array<int64_t, 1>{a.n});
    Out* o = out.data();
    for (int64_t k = 0; k < a.nnz; ++k) o[a.c[k]] = detail::sp_add<Out>(o[a.c[k]], static_cast<Out>(a.v[k]));
    return out;
  }, /*check_columns=*/ax == 0);
}

/// sum(S): scipy's order (`S @ ones`, then NumPy's sum of those row sums).
template <class R = void, class T>
detail::sp_sum_t<R, T> sum(const SparseMat<T>& S) {
  using Out = detail::sp_sum_t<R, T>;
  return pydd::sum<Out>(detail::with_csr(S, [](const auto& a) { return detail::sp_matvec_row_sums<Out>(a); }, false));
}

// ---- the original Intrepydd's diagonal matrix and row/column accessors ---------------

/// spm_diags(v) / sparse_diags(v): the n x n matrix with v on its diagonal,
/// as scipy.sparse.diags(v) converted to CSR (zeros are not stored; the
/// values converted to R, float64 unless v is float32).
template <class R, class T>
SparseMat<R> spm_diags(const Array<T, 1>& v) {
  const int64_t n = v.shape(0), s = v.stride(0);
  const T* p = v.data();
  int64_t nnz = 0;
  for (int64_t i = 0; i < n; ++i) nnz += p[i * s] != T(0);
  Array<int64_t, 1> indptr = detail::sp_vec<int64_t>(n + 1);
  Array<int64_t, 1> cols = detail::sp_vec<int64_t>(nnz);
  Array<R, 1> vals = detail::sp_vec<R>(nnz);
  int64_t* ip = indptr.data();
  int64_t k = 0;
  ip[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (p[i * s] != T(0)) cols.data()[k] = i, vals.data()[k++] = static_cast<R>(p[i * s]);
    ip[i + 1] = k;
  }
  return detail::sp_make<R>(n, n, indptr, cols, vals, nnz);
}

/// get_row(A, i) / get_col(A, j) of a dense 2-D array: the row or column
/// view A[i, :] / A[:, j] (negative indices count from the end, IndexError
/// outside), as the original Intrepydd's.
template <class T>
Array<T, 1> get_row(const Array<T, 2>& a, int64_t i) {
  const int64_t r = checked_index(i, a.shape(0), 0);
  const int64_t shape[1] = {a.shape(1)}, strides[1] = {a.stride(1)};
  return a.template alias<1>(a.data() + r * a.stride(0), shape, strides);
}
template <class T>
Array<T, 1> get_col(const Array<T, 2>& a, int64_t j) {
  const int64_t c = checked_index(j, a.shape(1), 1);
  const int64_t shape[1] = {a.shape(0)}, strides[1] = {a.stride(0)};
  return a.template alias<1>(a.data() + c * a.stride(1), shape, strides);
}

/// get_row(S, i) / get_col(S, j) of a sparse matrix: row i or column j as a
/// new dense 1-D array (repeated entries summed), as SciPy's
/// S.getrow(i).toarray().ravel().
template <class T>
Array<T, 1> get_row(const SparseMat<T>& S, int64_t i) {
  const int64_t r = checked_index(i, S.rows(), 0);
  return detail::with_csr(S, [&](const auto& a) {
    Array<T, 1> out = Array<T, 1>::zeros(std::array<int64_t, 1>{a.n});
    T* o = out.data();
    for (int64_t k = a.p[r]; k < a.p[r + 1]; ++k) o[a.c[k]] = detail::sp_add<T>(o[a.c[k]], a.v[k]);
    return out;
  });
}
template <class T>
Array<T, 1> get_col(const SparseMat<T>& S, int64_t j) {
  const int64_t c = checked_index(j, S.cols(), 1);
  return detail::with_csr(S, [&](const auto& a) {
    Array<T, 1> out = Array<T, 1>::zeros(std::array<int64_t, 1>{a.m});
    T* o = out.data();
    for (int64_t r = 0; r < a.m; ++r)
      for (int64_t k = a.p[r]; k < a.p[r + 1]; ++k)
        if (a.c[k] == c) o[r] = detail::sp_add<T>(o[r], a.v[k]);
    return out;
  });
}

}  // namespace pydd
