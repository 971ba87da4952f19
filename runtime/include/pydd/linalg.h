// pydd runtime: linear algebra on OpenBLAS (float32/float64, complex64/complex128) and plain loops
// (integers, bool). Kernels that use it link -lopenblas (LAPACK included).
//
// Float products make the same BLAS calls NumPy's matmul makes (gemm, gemv,
// dot, and syrk for A @ A.T), so with the same OpenBLAS the results agree
// bit for bit. Operands BLAS cannot address (negative or non-unit inner
// strides) are copied first.
#pragma once

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>

#include "pydd/elementwise.h"
#include "pydd/slice.h"

extern "C" {
// LAPACK LU factorization with partial pivoting (column-major, 1-based ipiv).
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
// LAPACK's solve of A X = B from A's LU factors (column-major B, nrhs columns).
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t trans_len);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t trans_len);
}

namespace pydd {

/// a.T: the same buffer with reversed shape and strides (no copy).
template <class T, int N>
Array<T, N> transpose(const Array<T, N>& a) {
  int64_t shape[N], strides[N];
  for (int k = 0; k < N; ++k) shape[k] = a.shape(N - 1 - k), strides[k] = a.stride(N - 1 - k);
  return a.template alias<N>(a.data(), shape, strides);
}

namespace detail {

/// How the OpenBLAS this process runs adds the products of contiguous
/// vectors shorter than its 16-wide block in ddot. Its kernel for the
/// processor decides: the Haswell and SkylakeX kernels add them in index
/// order with fused multiply-adds, the Zen one in index order with a
/// product then a sum, and the SSE2 kernel it falls back to on a processor
/// it does not recognize (a virtual machine's "Intel Xeon Processor" is
/// "Prescott") in interleaved lanes, an order that depends on alignment.
/// Asked once, at load, by comparing both in-order sums with cblas_ddot on
/// fixed pseudo-random vectors of every length below 16.
enum class BlasDotOrder { Fused, Rounded, Other };

/// `acc + a * b` rounded once (fused) or after the product and the sum.
inline double dot_step(double a, double b, double acc, bool fused) {
  if (fused) return std::fma(a, b, acc);
  double product = a * b;
  asm("" : "+x"(product));  // rounded on its own even where a host's flags contract a * b + c
  return acc + product;
}

inline double in_order_dot(const double* x, const double* y, int64_t n, bool fused) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc = dot_step(y[i], x[i], acc, fused);
  return acc;
}

inline BlasDotOrder probe_blas_dot_order() {
  double x[15], y[15];
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {  // a fixed LCG: the same vectors every run
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(static_cast<int64_t>(state >> 11) - (int64_t(1) << 52)) * 0x1p-52;
  };
  bool fused = true, rounded = true;
  for (int64_t n = 1; n < 16; ++n)
    for (int trial = 0; trial < 8; ++trial) {
      for (int64_t i = 0; i < n; ++i) x[i] = next(), y[i] = next();
      double blas = cblas_ddot(static_cast<int>(n), x, 1, y, 1);
      fused = fused && in_order_dot(x, y, n, true) == blas;
      rounded = rounded && in_order_dot(x, y, n, false) == blas;
    }
  return fused ? BlasDotOrder::Fused : rounded ? BlasDotOrder::Rounded : BlasDotOrder::Other;
}
inline const BlasDotOrder blas_dot_order = probe_blas_dot_order();

/// The length below which the loop over i < n of blas_dot_step(y[i], x[i],
/// acc) from acc = 0 is NumPy's x @ y bit for bit: OpenBLAS's block, or 0
/// when this OpenBLAS does not add a short vector in index order (every dot
/// then takes the library call).
inline int64_t blas_dot_inline_limit() { return blas_dot_order == BlasDotOrder::Other ? 0 : 16; }

/// One step of that sum, `acc + a * b` as OpenBLAS's ddot rounds it.
inline double blas_dot_step(double a, double b, double acc) {
  return dot_step(a, b, acc, blas_dot_order == BlasDotOrder::Fused);
}

template <class T>
inline constexpr bool is_blas_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                  std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

[[noreturn]] inline void throw_core_mismatch(int64_t got, int64_t want) {
  char msg[200];
  std::snprintf(msg, sizeof msg,
                "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                "(n?,k),(k,m?)->(n?,m?) (size %lld is different from %lld)",
                static_cast<long long>(got), static_cast<long long>(want));
  throw Error(ErrorKind::ValueError, msg);
}

/// A matrix as BLAS reads it: row-major with leading dimension `ld`, or
/// (trans) the transpose of such a matrix. `keep` holds a contiguous copy
/// when the original layout is not addressable.
template <class T>
struct BlasMatrix {
  const T* data;
  CBLAS_TRANSPOSE trans;
  int ld;
  Array<T, 2> keep;
};

// NumPy's is_blasable2d: unit stride along the second axis, and a first
// stride that is a legal leading dimension.
inline bool blasable(int64_t s_outer, int64_t s_inner, int64_t n_inner) {
  return s_inner == 1 && s_outer >= (n_inner > 1 ? n_inner : 1) && s_outer <= INT32_MAX;
}

template <class T>
BlasMatrix<T> blas_matrix(const Array<T, 2>& a) {
  const int64_t r = a.shape(0), c = a.shape(1);
  // Strides of length-1 axes are meaningless; give them the contiguous value.
  const int64_t s0 = r == 1 ? (c > 1 ? c : 1) : a.stride(0), s1 = c == 1 ? 1 : a.stride(1);
  if (blasable(s0, s1, c)) return {a.data(), CblasNoTrans, int(s0), {}};
  const int64_t t1 = c == 1 ? (r > 1 ? r : 1) : a.stride(1), t0 = r == 1 ? 1 : a.stride(0);
  if (blasable(t1, t0, r)) return {a.data(), CblasTrans, int(t1), {}};
  Array<T, 2> c2 = copy(a);
  return {c2.data(), CblasNoTrans, int(c > 1 ? c : 1), c2};
}

/// A vector as BLAS reads it: positive increment, else a contiguous copy.
template <class T>
struct BlasVector {
  const T* data;
  int inc;
  Array<T, 1> keep;
};
template <class T>
BlasVector<T> blas_vector(const Array<T, 1>& x) {
  if (x.stride(0) > 0 && x.stride(0) <= INT32_MAX) return {x.data(), int(x.stride(0)), {}};
  Array<T, 1> c = copy(x);
  return {c.data(), 1, c};
}

// Complex BLAS (cdotu, zgemv, zgemm, zsyrk: NumPy's calls for complex64 and
// complex128) takes its scalars by address.
template <class T>
T blas_dot(int n, const T* x, int incx, const T* y, int incy) {
  if constexpr (std::is_same_v<T, float>) return cblas_sdot(n, x, incx, y, incy);
  else if constexpr (std::is_same_v<T, double>) return cblas_ddot(n, x, incx, y, incy);
  else {
    T r;
    if constexpr (std::is_same_v<T, std::complex<float>>) cblas_cdotu_sub(n, x, incx, y, incy, &r);
    else cblas_zdotu_sub(n, x, incx, y, incy, &r);
    return r;
  }
}
template <class T>
void blas_gemv(CBLAS_TRANSPOSE t, int m, int n, const T* a, int lda, const T* x, int incx, T* y) {
  const T one(1), zero(0);
  if constexpr (std::is_same_v<T, float>) cblas_sgemv(CblasRowMajor, t, m, n, 1, a, lda, x, incx, 0, y, 1);
  else if constexpr (std::is_same_v<T, double>) cblas_dgemv(CblasRowMajor, t, m, n, 1, a, lda, x, incx, 0, y, 1);
  else if constexpr (std::is_same_v<T, std::complex<float>>) cblas_cgemv(CblasRowMajor, t, m, n, &one, a, lda, x, incx, &zero, y, 1);
  else cblas_zgemv(CblasRowMajor, t, m, n, &one, a, lda, x, incx, &zero, y, 1);
}
template <class T>
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb,
               T* c, int ldc) {
  const T one(1), zero(0);
  if constexpr (std::is_same_v<T, float>) cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
  else if constexpr (std::is_same_v<T, double>) cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  else cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
}
template <class T>
void blas_syrk(CBLAS_TRANSPOSE t, int n, int k, const T* a, int lda, T* c, int ldc) {
  const T one(1), zero(0);
  if constexpr (std::is_same_v<T, float>) cblas_ssyrk(CblasRowMajor, CblasUpper, t, n, k, 1, a, lda, 0, c, ldc);
  else if constexpr (std::is_same_v<T, double>) cblas_dsyrk(CblasRowMajor, CblasUpper, t, n, k, 1, a, lda, 0, c, ldc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_csyrk(CblasRowMajor, CblasUpper, t, n, k, &one, a, lda, &zero, c, ldc);
  else cblas_zsyrk(CblasRowMajor, CblasUpper, t, n, k, &one, a, lda, &zero, c, ldc);
}

/// Integer/bool products: out(i,j) = sum_k a(i,k) b(k,j) in i-k-j order so
/// the innermost loop runs along rows of b and out (bool: or of ands).
template <class T>
void loop_matmul(const View<T, 2>& a, const View<T, 2>& b, T* out, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    T* o = out + i * n;
    for (int64_t j = 0; j < n; ++j) o[j] = T(0);
    for (int64_t l = 0; l < k; ++l) {
      const T x = a(i, l);
      const T* br = &b(l, 0);
      const int64_t s = b.strides[1];
      if (s == 1) {
        for (int64_t j = 0; j < n; ++j) o[j] = op::add{}(o[j], op::mul{}(x, br[j]));
      } else {
        for (int64_t j = 0; j < n; ++j) o[j] = op::add{}(o[j], op::mul{}(x, br[j * s]));
      }
    }
  }
}

template <class T>
Array<T, 1> matrix_vector(const Array<T, 2>& a, const Array<T, 1>& x, bool trans);
template <class T>
T vector_dot(const Array<T, 1>& x, const Array<T, 1>& y);

/// Copies the upper triangle of the m x m matrix o (row length n) onto its
/// lower triangle, a tile of 32 x 32 at a time: column by column, each
/// store touched another cache line (bigCLAM's 500 x 4 F @ F.T took 108
/// us with that loop, 100 us tiled).
template <class T>
void mirror_upper_triangle(T* o, int64_t m, int64_t n) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < m; i0 += kTile) {
    const int64_t i1 = std::min(i0 + kTile, m);
    for (int64_t j0 = i0; j0 < m; j0 += kTile) {
      const int64_t j1 = std::min(j0 + kTile, m);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = std::max(j0, i + 1); j < j1; ++j) o[j * n + i] = o[i * n + j];
    }
  }
}

/// (m,k) @ (k,n) for matrices already checked to agree.
template <class T>
Array<T, 2> matrix_product(const Array<T, 2>& a, const Array<T, 2>& b) {
  const int64_t m = a.shape(0), k = a.shape(1), n = b.shape(1);
  // BLAS writes every element (beta = 0): no fill first, which for a large
  // result would also run on all threads (pydd/array.h) right before
  // OpenBLAS's own threads want the cores.
  const bool blasWritesAll = is_blas_v<T> && m > 0 && n > 0 && k > 0;
  Array<T, 2> out = blasWritesAll ? Array<T, 2>::empty({m, n}) : Array<T, 2>::zeros({m, n});
  if (m == 0 || n == 0 || k == 0) return out;
  if constexpr (is_blas_v<T>) {
    // NumPy's matmul hands a row or column operand to dot / gemv.
    if (m == 1 || n == 1) {
      const Array<T, 1> row = subarray<1>(a, int64_t{0}), col = subarray<1>(b, Slice{0, 0, 1, false, false}, int64_t{0});
      T* o = out.data();
      if (m == 1 && n == 1) {
        o[0] = vector_dot(row, col);
      } else {
        const Array<T, 1> r = m == 1 ? matrix_vector(b, row, true) : matrix_vector(a, col, false);
        for (int64_t i = 0, e = r.size(); i < e; ++i) o[i] = r.data()[i];
      }
      return out;
    }
    const BlasMatrix<T> x = blas_matrix(a), y = blas_matrix(b);
    // NumPy computes A @ A.T (one buffer, transposed) with syrk and mirrors
    // the upper triangle; doing the same keeps the result bit-identical.
    if (x.data == y.data && m == n && x.trans != y.trans && x.ld == y.ld && x.keep.data() == nullptr) {
      // OpenBLAS runs a syrk of this size on all threads, which takes longer
      // than one thread (bigCLAM's 500x4 F @ F.T: 0.36 vs 0.21 ms) and leaves
      // its threads spinning, slowing what runs next on the other cores. The
      // result is NumPy's with one BLAS thread; a threaded syrk rounds a few
      // elements differently (NumPy's own X @ X.T of 500 x 4 differs in 48
      // elements, by one unit in the last place, between 1 and 2 threads).
      const uint64_t work = uint64_t(m) * uint64_t(m) * uint64_t(k);
      std::optional<BlasSerial> serial;
      if (work >= (uint64_t{1} << 14) && work < (uint64_t{1} << 23)) serial.emplace();
      blas_syrk(x.trans, int(m), int(k), x.data, x.ld, out.data(), int(n));
      mirror_upper_triangle(out.data(), m, n);
    } else {
      blas_gemm(x.trans, y.trans, int(m), int(n), int(k), x.data, x.ld, y.data, y.ld, out.data(), int(n));
    }
  } else {
    loop_matmul(a.view(), b.view(), out.data(), m, n, k);
  }
  return out;
}

/// A (m,k) @ x (k,) when trans is false, x (k,) @ A (k,n) when true.
template <class T>
Array<T, 1> matrix_vector(const Array<T, 2>& a, const Array<T, 1>& x, bool trans) {
  const int64_t m = a.shape(0), k = a.shape(1);
  Array<T, 1> out = Array<T, 1>::zeros({trans ? k : m});
  if (m == 0 || k == 0) return out;
  if constexpr (is_blas_v<T>) {
    const BlasMatrix<T> am = blas_matrix(a);
    const BlasVector<T> xv = blas_vector(x);
    const bool t = (am.trans == CblasTrans) != trans;
    const int rows = am.trans == CblasTrans ? int(k) : int(m), cols = am.trans == CblasTrans ? int(m) : int(k);
    blas_gemv(t ? CblasTrans : CblasNoTrans, rows, cols, am.data, am.ld, xv.data, xv.inc, out.data());
  } else {
    // As a matrix product with x as a row (trans) or a column.
    const int64_t len = x.shape(0), s = x.stride(0);
    const Array<T, 2> xm = Array<T, 2>::borrow(x.data(), {trans ? 1 : len, trans ? len : 1}, {s, s});
    const Array<T, 2> r = trans ? matrix_product(xm, a) : matrix_product(a, xm);
    const int64_t unit[1] = {1};
    return r.template alias<1>(r.data(), out.shape(), unit);
  }
  return out;
}

template <class T>
T vector_dot(const Array<T, 1>& x, const Array<T, 1>& y) {
  const int64_t n = x.shape(0);
  if (n == 0) return T(0);
  if constexpr (is_blas_v<T>) {
    const BlasVector<T> a = blas_vector(x), b = blas_vector(y);
    return blas_dot(int(n), a.data, a.inc, b.data, b.inc);
  } else {
    T acc = T(0);
    for (int64_t i = 0; i < n; ++i) acc = op::add{}(acc, op::mul{}(x(i), y(i)));
    return acc;
  }
}

/// Lower triangle of a square matrix mirrored into a full symmetric one.
template <class T>
Array<T, 2> symmetric_from_lower(const Array<T, 2>& a) {
  const int64_t n = a.shape(0);
  Array<T, 2> s = Array<T, 2>::empty({n, n});
  const View<T, 2> v = a.view();
  T* o = s.data();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) o[i * n + j] = i >= j ? v(i, j) : v(j, i);
  return s;
}

template <class T>
void check_square(const char* name, const Array<T, 2>& a) {
  if (a.shape(0) != a.shape(1)) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "%s: expected a square matrix, got shape (%lld,%lld)", name,
                  static_cast<long long>(a.shape(0)), static_cast<long long>(a.shape(1)));
    throw Error(ErrorKind::ValueError, msg);
  }
}

}  // namespace detail

/// a @ b for operands of element type R: (1,1) -> R, (2,1)/(1,2) -> 1-D,
/// (2,2) -> 2-D. A core-dimension mismatch raises NumPy's ValueError.
template <class R, class A, class B>
auto matmul(const A& a, const B& b) {
  constexpr int Na = detail::rank_v<A>, Nb = detail::rank_v<B>;
  static_assert(std::is_same_v<detail::elem_t<A>, R> && std::is_same_v<detail::elem_t<B>, R>,
                "matmul: operands must already have the result's element type");
  static_assert(Na >= 1 && Na <= 2 && Nb >= 1 && Nb <= 2, "matmul needs 1-D or 2-D operands");
  const int64_t k = a.shape(Na - 1);
  if (b.shape(0) != k) detail::throw_core_mismatch(b.shape(0), k);
  if constexpr (Na == 1 && Nb == 1) {
    // OpenBLAS's ddot adds the products of a vector shorter than its 16-wide
    // block in order on most kernels (detail::blas_dot_step); doing the same inline gives
    // its result bit for bit without a library call per short-vector dot
    // (bigCLAM's F[j] @ F[i] on 4-element rows).
    if constexpr (std::is_same_v<R, double>) {
      if (k < detail::blas_dot_inline_limit() && a.stride(0) == 1 && b.stride(0) == 1) {
        const double *x = a.data(), *y = b.data();
        double acc = 0.0;
        for (int64_t i = 0; i < k; ++i) acc = detail::blas_dot_step(y[i], x[i], acc);
        return acc;
      }
    }
    return detail::vector_dot(a, b);
  }
  else if constexpr (Na == 2 && Nb == 1) return detail::matrix_vector(a, b, false);
  else if constexpr (Na == 1 && Nb == 2) return detail::matrix_vector(b, a, true);
  else return detail::matrix_product(a, b);
}

/// Named forms of matmul.
template <class T>
T innerprod(const Array<T, 1>& x, const Array<T, 1>& y) {
  return matmul<T>(x, y);
}
template <class T>
Array<T, 1> matvect(const Array<T, 2>& a, const Array<T, 1>& x) {
  return matmul<T>(a, x);
}
template <class T>
Array<T, 1> vectmat(const Array<T, 1>& x, const Array<T, 2>& a) {
  return matmul<T>(x, a);
}
template <class T>
Array<T, 2> matmat(const Array<T, 2>& a, const Array<T, 2>& b) {
  return matmul<T>(a, b);
}

/// A @ A.T (syrk, symmetric result, as NumPy computes it).
template <class T>
Array<T, 2> syrk(const Array<T, 2>& a) {
  return matmul<T>(a, transpose(a));
}

/// A @ B.T + B @ A.T, computed as NumPy evaluates that expression.
template <class T>
Array<T, 2> syr2k(const Array<T, 2>& a, const Array<T, 2>& b) {
  return map2<T, T>("add", op::add{}, matmul<T>(a, transpose(b)), matmul<T>(b, transpose(a)));
}

/// A @ B for a symmetric A of which only the lower triangle is read
/// (np.tril(A) + np.tril(A, -1).T) @ B.
template <class T>
Array<T, 2> symm(const Array<T, 2>& a, const Array<T, 2>& b) {
  detail::check_square("symm", a);
  const int64_t m = a.shape(0), n = b.shape(1);
  if (b.shape(0) != m) detail::throw_core_mismatch(b.shape(0), m);
  if constexpr (detail::is_blas_v<T>) {
    Array<T, 2> out = Array<T, 2>::zeros({m, n});
    if (m == 0 || n == 0) return out;
    // dsymm has no transpose flag: it needs both operands row-major.
    const Array<T, 2> ac = a.is_contiguous() ? a : copy(a), bc = b.is_contiguous() ? b : copy(b);
    if constexpr (std::is_same_v<T, float>)
      cblas_ssymm(CblasRowMajor, CblasLeft, CblasLower, int(m), int(n), 1, ac.data(), int(m), bc.data(), int(n), 0,
                  out.data(), int(n));
    else
      cblas_dsymm(CblasRowMajor, CblasLeft, CblasLower, int(m), int(n), 1, ac.data(), int(m), bc.data(), int(n), 0,
                  out.data(), int(n));
    return out;
  } else {
    return matmul<T>(detail::symmetric_from_lower(a), b);
  }
}

/// np.tril(A) @ B for a square A.
template <class T>
Array<T, 2> trmm(const Array<T, 2>& a, const Array<T, 2>& b) {
  detail::check_square("trmm", a);
  const int64_t m = a.shape(0), n = b.shape(1);
  if (b.shape(0) != m) detail::throw_core_mismatch(b.shape(0), m);
  if constexpr (detail::is_blas_v<T>) {
    Array<T, 2> out = copy(b);  // dtrmm works in place
    if (m == 0 || n == 0) return out;
    const Array<T, 2> ac = a.is_contiguous() ? a : copy(a);
    if constexpr (std::is_same_v<T, float>)
      cblas_strmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, int(m), int(n), 1, ac.data(),
                  int(m), out.data(), int(n));
    else
      cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, int(m), int(n), 1, ac.data(),
                  int(m), out.data(), int(n));
    return out;
  } else {
    Array<T, 2> lower = copy(a);
    T* p = lower.data();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = i + 1; j < m; ++j) p[i * m + j] = T(0);
    return matmul<T>(lower, b);
  }
}

namespace detail {

/// LAPACK's element type for an input: float32 stays float32, all else float64.
template <class T>
using lapack_t = std::conditional_t<std::is_same_v<T, float>, float, double>;

/// getrf on a column-major copy of A: returns the factors column-major as a
/// C-contiguous (n, m) array, and the 1-based pivots.
template <class T>
Array<lapack_t<T>, 2> getrf(const Array<T, 2>& a, Array<int32_t, 1>* piv) {
  using F = lapack_t<T>;
  Array<F, 2> f = astype<F>(transpose(a));  // (n, m) C order == A in Fortran order
  const F* p = f.data();
  for (int64_t i = 0, e = f.size(); i < e; ++i)
    if (!std::isfinite(p[i])) throw Error(ErrorKind::ValueError, "array must not contain infs or NaNs");
  const int m = int(a.shape(0)), n = int(a.shape(1)), lda = m > 1 ? m : 1;
  *piv = Array<int32_t, 1>::zeros({m < n ? m : n});
  if (m == 0 || n == 0) return f;
  int info = 0;
  if constexpr (std::is_same_v<F, float>) sgetrf_(&m, &n, f.data(), &lda, piv->data(), &info);
  else dgetrf_(&m, &n, f.data(), &lda, piv->data(), &info);
  // info > 0 only reports an exactly singular U, which SciPy returns too.
  if (info < 0) throw Error(ErrorKind::RuntimeError, "getrf: illegal argument");
  return f;
}

}  // namespace detail

/// scipy.linalg.lu(A): (P, L, U) with A = P @ L @ U; A is (m, n), L is
/// (m, k) unit lower, U is (k, n) upper, k = min(m, n).
template <class T>
std::tuple<Array<detail::lapack_t<T>, 2>, Array<detail::lapack_t<T>, 2>, Array<detail::lapack_t<T>, 2>> lu(
    const Array<T, 2>& a) {
  using F = detail::lapack_t<T>;
  Array<int32_t, 1> piv;
  const Array<F, 2> f = detail::getrf(a, &piv);
  const int64_t m = a.shape(0), n = a.shape(1), k = m < n ? m : n;
  const F* lu = f.data();  // element (i, j) at lu[j * m + i]
  Array<F, 2> P = Array<F, 2>::zeros({m, m}), L = Array<F, 2>::zeros({m, k}), U = Array<F, 2>::zeros({k, n});
  // Row interchanges applied in order give the row of A each row of L U is.
  Array<int64_t, 1> perm = arange<int64_t>(int64_t(0), m, int64_t(1));
  int64_t* pr = perm.data();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = piv(i) - 1, t = pr[i];
    pr[i] = pr[j], pr[j] = t;
  }
  for (int64_t i = 0; i < m; ++i) P(pr[i], i) = F(1);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j) L(i, j) = i > j ? lu[j * m + i] : F(i == j);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = i; j < n; ++j) U(i, j) = lu[j * m + i];
  return {P, L, U};
}

/// scipy.linalg.lu_factor(A) for a square A: (LU, piv) with L's multipliers
/// below the diagonal, U on and above it, and 0-based pivot rows.
template <class T>
std::tuple<Array<detail::lapack_t<T>, 2>, Array<int32_t, 1>> ludcmp(const Array<T, 2>& a) {
  if (a.shape(0) != a.shape(1)) throw Error(ErrorKind::ValueError, "expected square matrix");
  Array<int32_t, 1> piv;
  const auto f = detail::getrf(a, &piv);
  int32_t* p = piv.data();
  for (int64_t i = 0, n = piv.size(); i < n; ++i) p[i] -= 1;
  return {copy(transpose(f)), piv};
}

// ---- numpy.linalg: det, inv, solve, norm ----------------------------------

namespace detail {

/// The LU factors of a square A for numpy.linalg (no finiteness check: NaN
/// propagates, as in NumPy), column-major, and whether A is singular.
template <class T>
Array<lapack_t<T>, 2> square_lu(const char* name, const Array<T, 2>& a, Array<int32_t, 1>* piv, bool* singular) {
  using F = lapack_t<T>;
  if (a.shape(0) != a.shape(1)) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "%s: Last 2 dimensions of the array must be square", name);
    throw Error(ErrorKind::LinAlgError, msg);
  }
  Array<F, 2> f = astype<F>(transpose(a));
  const int n = int(a.shape(0)), lda = n > 1 ? n : 1;
  *piv = Array<int32_t, 1>::zeros({n});
  int info = 0;
  if (n > 0) {
    if constexpr (std::is_same_v<F, float>) sgetrf_(&n, &n, f.data(), &lda, piv->data(), &info);
    else dgetrf_(&n, &n, f.data(), &lda, piv->data(), &info);
  }
  *singular = info > 0;
  return f;
}

/// X with A X = B, B given column-major as an (nrhs, n) C-order array (overwritten).
template <class F>
void lu_solve(const Array<F, 2>& lu, const Array<int32_t, 1>& piv, bool singular, Array<F, 2>& b) {
  if (singular) throw Error(ErrorKind::LinAlgError, "Singular matrix");
  const int n = int(lu.shape(0)), nrhs = int(b.shape(0)), lda = n > 1 ? n : 1;
  if (n == 0 || nrhs == 0) return;
  int info = 0;
  const char trans = 'N';
  if constexpr (std::is_same_v<F, float>) sgetrs_(&trans, &n, &nrhs, lu.data(), &lda, piv.data(), b.data(), &lda, &info, 1);
  else dgetrs_(&trans, &n, &nrhs, lu.data(), &lda, piv.data(), b.data(), &lda, &info, 1);
}

}  // namespace detail

/// numpy.linalg.det(A) as NumPy computes it: the sign and the log of |det|
/// from the LU factors, then sign * exp(logdet).
template <class T>
detail::lapack_t<T> det(const Array<T, 2>& a) {
  using F = detail::lapack_t<T>;
  Array<int32_t, 1> piv;
  bool singular;
  const Array<F, 2> f = detail::square_lu("det", a, &piv, &singular);
  const int64_t n = a.shape(0);
  F sign = F(1), logdet = F(0);
  for (int64_t i = 0; i < n; ++i) {
    const F d = f.data()[i * n + i];
    if (piv.data()[i] != i + 1) sign = -sign;
    if (d < 0) sign = -sign;
    logdet += std::log(std::abs(d));
    if (d == 0) sign = F(0);
  }
  if (sign == F(0)) return F(0);
  return sign * std::exp(logdet);
}

/// numpy.linalg.inv(A): solves A X = I (LinAlgError for a singular A).
template <class T>
Array<detail::lapack_t<T>, 2> inv(const Array<T, 2>& a) {
  using F = detail::lapack_t<T>;
  Array<int32_t, 1> piv;
  bool singular;
  const Array<F, 2> f = detail::square_lu("inv", a, &piv, &singular);
  const int64_t n = a.shape(0);
  Array<F, 2> x = Array<F, 2>::zeros({n, n});
  for (int64_t i = 0; i < n; ++i) x.data()[i * n + i] = F(1);
  detail::lu_solve(f, piv, singular, x);
  return copy(transpose(x));
}

/// numpy.linalg.solve(A, b) for a 1-D b or a 2-D B.
template <class T, class U, int N>
Array<detail::lapack_t<T>, N> solve(const Array<T, 2>& a, const Array<U, N>& b) {
  using F = detail::lapack_t<T>;
  Array<int32_t, 1> piv;
  bool singular;
  const Array<F, 2> f = detail::square_lu("solve", a, &piv, &singular);
  const int64_t n = a.shape(0);
  if (b.shape(0) != n) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "solve: Input operand 1 has a mismatch in its core dimension 0 (size %lld is different from %lld)",
                  static_cast<long long>(b.shape(0)), static_cast<long long>(n));
    throw Error(ErrorKind::ValueError, msg);
  }
  if constexpr (N == 1) {
    Array<F, 2> col = Array<F, 2>::empty({int64_t(1), n});
    for (int64_t i = 0; i < n; ++i) col.data()[i] = convert<F>(b(i));
    detail::lu_solve(f, piv, singular, col);
    Array<F, 1> out = Array<F, 1>::empty({n});
    for (int64_t i = 0; i < n; ++i) out.data()[i] = col.data()[i];
    return out;
  } else {
    Array<F, 2> cols = astype<F>(transpose(b));
    detail::lu_solve(f, piv, singular, cols);
    return copy(transpose(cols));
  }
}

}  // namespace pydd
