// Unit tests for the sparse matrix runtime (runtime/include/pydd/sparse.h).
// Expected values are evident by hand or come from SciPy 1.10 (structure and
// nnz of multiply / + / @, explicit zeros).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pydd/runtime.h"
#include "raises.h"

namespace {

using pydd::Array;
using pydd::ErrorKind;
using pydd::SparseMat;
using pydd::testing_support::Raises;

template <class T>
Array<T, 1> vec(std::vector<T> v) {
  Array<T, 1> a = Array<T, 1>::empty(std::array<int64_t, 1>{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.data()[i] = v[i];
  return a;
}
template <class T>
Array<T, 2> mat(int64_t m, int64_t n, std::vector<T> v) {
  Array<T, 2> a = Array<T, 2>::empty(std::array<int64_t, 2>{m, n});
  for (size_t i = 0; i < v.size(); ++i) a.data()[i] = v[i];
  return a;
}
/// CSR from a dense row-major matrix (zeros skipped), built with set_unsafe.
template <class T>
SparseMat<T> from_dense(int64_t m, int64_t n, const std::vector<T>& d) {
  SparseMat<T> s = pydd::empty_spm<T>(m, n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (d[i * n + j] != T(0)) s.set_unsafe(d[i * n + j], i, j);
  return s;
}
template <class T>
std::vector<T> to_dense(const SparseMat<T>& s) {
  std::vector<T> d(s.rows() * s.cols(), T(0));
  const int64_t* p = s.indptr().data();
  const int64_t* c = s.indices().data();
  const T* v = s.data().data();
  for (int64_t i = 0; i < s.rows(); ++i)
    for (int64_t k = p[i]; k < p[i + 1]; ++k) d[i * s.cols() + c[k]] += v[k];
  return d;
}
template <class T>
std::vector<int64_t> to_vec(const Array<T, 1>& a) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < a.shape(0); ++i) v.push_back(static_cast<int64_t>(a(i)));
  return v;
}
template <class T>
bool rows_sorted(const SparseMat<T>& s) {
  const int64_t* p = s.indptr().data();
  const int64_t* c = s.indices().data();
  for (int64_t i = 0; i < s.rows(); ++i)
    for (int64_t k = p[i] + 1; k < p[i + 1]; ++k)
      if (c[k] <= c[k - 1]) return false;
  return true;
}
using V64 = std::vector<int64_t>;
using VD = std::vector<double>;

// A = [[1, 0, 2], [0, 0, 3], [4, 5, 0]]
SparseMat<double> A3() { return from_dense<double>(3, 3, {1, 0, 2, 0, 0, 3, 4, 5, 0}); }
// B = [[0, 1, 2], [0, 0, -3], [0, 5, 7]]
SparseMat<double> B3() { return from_dense<double>(3, 3, {0, 1, 2, 0, 0, -3, 0, 5, 7}); }
// Row 0 has columns (2, 0) unsorted; rows 1 and 2 are empty.
SparseMat<double> unsorted() {
  return pydd::csr_to_spm(vec<double>({5, 7}), vec<int64_t>({2, 0}), vec<int64_t>({0, 2, 2, 2}), 3);
}

TEST(SparseMat, EmptyAndShape) {
  SparseMat<double> z;
  EXPECT_EQ(z.rows(), 0);
  EXPECT_EQ(z.cols(), 0);
  EXPECT_EQ(z.nnz(), 0);
  EXPECT_EQ(z.indptr().shape(0), 1);
  auto e = pydd::empty_spm<float>(2, 5);
  EXPECT_EQ(e.shape(0), 2);
  EXPECT_EQ(e.shape(1), 5);
  EXPECT_EQ(e.shape(-1), 5);
  EXPECT_EQ(e.shape(-2), 2);
  EXPECT_EQ(pydd::nnz(e), 0);
  EXPECT_EQ(to_vec(e.indptr()), (V64{0, 0, 0}));
  EXPECT_EQ(e.get(1, 4), 0.0f);
  EXPECT_TRUE(Raises([&] { e.shape(2); }, ErrorKind::IndexError, "tuple index out of range"));
  EXPECT_TRUE(Raises([] { pydd::empty_spm<double>(-1, 2); }, ErrorKind::ValueError,
                     "empty_spm: negative dimensions are not allowed"));
  // 0-row and 0-column matrices work with every operation.
  auto z0 = pydd::empty_spm<double>(0, 3);
  EXPECT_EQ(pydd::transpose(z0).rows(), 3);
  EXPECT_EQ(pydd::spmv(z0, vec<double>({1, 2, 3})).shape(0), 0);
  EXPECT_EQ(pydd::spmm(pydd::transpose(z0), z0).nnz(), 0);
  EXPECT_EQ(pydd::sum(z0), 0.0);
}

TEST(SparseMat, GetSetReferenceSemantics) {
  auto a = A3();
  EXPECT_EQ(a.nnz(), 5);
  EXPECT_EQ(to_vec(a.indptr()), (V64{0, 2, 3, 5}));
  EXPECT_EQ(to_vec(a.indices()), (V64{0, 2, 2, 0, 1}));
  EXPECT_EQ(a.get(2, 1), 5.0);
  EXPECT_EQ(a.get(1, 1), 0.0);
  EXPECT_EQ(a.get(-1, -2), 5.0);
  EXPECT_TRUE(Raises([&] { a.get(3, 0); }, ErrorKind::IndexError, "row index (3) out of range"));
  EXPECT_TRUE(Raises([&] { a.get(0, -4); }, ErrorKind::IndexError, "column index (-4) out of range"));
  SparseMat<double> b = a;  // shares storage
  b.set(9, 1, 1);           // insert into row 1 before column 2
  EXPECT_EQ(a.nnz(), 6);
  EXPECT_EQ(a.get(1, 1), 9.0);
  EXPECT_EQ(to_vec(a.indptr()), (V64{0, 2, 4, 6}));
  EXPECT_EQ(to_vec(a.indices()), (V64{0, 2, 1, 2, 0, 1}));
  EXPECT_TRUE(rows_sorted(a));
  b.set(-1, 0, 0);  // overwrite
  EXPECT_EQ(a.nnz(), 6);
  EXPECT_EQ(a.get(0, 0), -1.0);
  b.set(0, 0, 1);  // scipy stores an explicit zero
  EXPECT_EQ(a.nnz(), 7);
  EXPECT_EQ(a.get(0, 1), 0.0);
  EXPECT_TRUE(Raises([&] { b.set(1, 0, 3); }, ErrorKind::IndexError, "column index (3) out of range"));
}

TEST(SparseMat, SetUnsafeBuildsRowMajor) {
  auto s = pydd::empty_spm<int64_t>(4, 3);
  s.set_unsafe(1, 0, 1);
  s.set_unsafe(2, 2, 0);
  EXPECT_EQ(s.get(2, 0), 2);  // readable before the row pointers are written out
  EXPECT_EQ(s.get(1, 0), 0);
  EXPECT_EQ(s.get(3, 0), 0);
  s.set_unsafe(3, 2, 2);
  EXPECT_EQ(to_vec(s.indptr()), (V64{0, 1, 1, 3, 3}));
  s.set_unsafe(4, 3, 1);  // appending after a read
  EXPECT_EQ(to_vec(s.indptr()), (V64{0, 1, 1, 3, 4}));
  EXPECT_EQ(to_vec(s.indices()), (V64{1, 0, 2, 1}));
  EXPECT_EQ(to_vec(s.data()), (V64{1, 2, 3, 4}));
  // A broken promise (row 1 while row 2 has entries) falls back to set().
  s.set_unsafe(5, 1, 2);
  EXPECT_EQ(to_vec(s.indptr()), (V64{0, 1, 2, 4, 5}));
  EXPECT_EQ(s.get(1, 2), 5);
  EXPECT_EQ(s.get(3, 1), 4);
  // Many appends (capacity growth).
  auto big = pydd::empty_spm<double>(1000, 1000);
  for (int64_t i = 0; i < 1000; ++i)
    for (int64_t j = i % 7; j < 1000; j += 97) big.set_unsafe(double(i + j), i, j);
  EXPECT_EQ(big.indptr()(1000), big.nnz());
  EXPECT_EQ(big.get(500, 500 % 7 + 97), double(500 + 500 % 7 + 97));
}

TEST(SparseMat, FromCsrValidates) {
  auto ip = vec<int64_t>({0, 1, 2});
  auto c = vec<int64_t>({0, 1});
  auto d = vec<double>({1, 2});
  EXPECT_EQ(SparseMat<double>::from_csr(2, 2, ip, c, d).nnz(), 2);
  // Adopted without copying.
  EXPECT_EQ(SparseMat<double>::from_csr(2, 2, ip, c, d).data().data(), d.data());
  EXPECT_TRUE(Raises([&] { SparseMat<double>::from_csr(3, 2, ip, c, d); }, ErrorKind::ValueError,
                     "index pointer size (3) should be (4)"));
  EXPECT_TRUE(Raises([&] { SparseMat<double>::from_csr(2, 2, ip, c, vec<double>({1})); }, ErrorKind::ValueError,
                     "indices and data should have the same size"));
  EXPECT_TRUE(Raises([&] { SparseMat<double>::from_csr(2, 2, vec<int64_t>({1, 1, 2}), c, d); },
                     ErrorKind::ValueError, "index pointer should start with 0"));
  EXPECT_TRUE(Raises([&] { SparseMat<double>::from_csr(2, 2, vec<int64_t>({0, 1, 3}), c, d); },
                     ErrorKind::ValueError,
                     "Last value of index pointer should be less than the size of index and data arrays"));
  EXPECT_TRUE(Raises([&] { SparseMat<double>::from_csr(2, 2, vec<int64_t>({0, 2, 1}), c, d); },
                     ErrorKind::ValueError, "index pointer values must form a non-decreasing sequence"));
  // The same check, vectorized over many rows: one decrease anywhere (in a
  // vector body or the tail), at either index width, is found.
  auto decreasing_at = [](auto width, int64_t rows, int64_t at) {
    using I = decltype(width);
    std::vector<I> p(rows + 1);
    for (int64_t r = 0; r <= rows; ++r) p[r] = static_cast<I>(r);
    p[at] = static_cast<I>(at - 2);  // p[at] < p[at - 1] (and p[0] stays 0)
    return Raises([&] { SparseMat<double>::from_csr(rows, rows, vec<I>(p), vec<I>(std::vector<I>(rows, 0)),
                                                    vec<double>(std::vector<double>(rows, 1.0))); },
                  ErrorKind::ValueError, "index pointer values must form a non-decreasing sequence");
  };
  for (int64_t at : {2, 517, 998, 999}) {
    EXPECT_TRUE(decreasing_at(int32_t{}, 1000, at)) << at;
    EXPECT_TRUE(decreasing_at(int64_t{}, 1000, at)) << at;
  }
  // Column indices are checked when first read (here: transpose), not by
  // from_csr: S.sum(1) or nnz(S) of a caller's matrix never scan them.
  auto bad_high = SparseMat<double>::from_csr(2, 1, ip, c, d);
  EXPECT_EQ(pydd::nnz(bad_high), 2);
  EXPECT_TRUE(Raises([&] { pydd::transpose(bad_high); }, ErrorKind::ValueError, "column index values must be < 1"));
  auto bad_low = SparseMat<double>::from_csr(2, 2, ip, vec<int64_t>({0, -1}), d);
  EXPECT_TRUE(Raises([&] { pydd::transpose(bad_low); }, ErrorKind::ValueError, "column index values must be >= 0"));
  // spmv checks in the same pass, for int32 structures too.
  auto bad32 = SparseMat<double>::from_csr(2, 2, vec<int32_t>({0, 1, 2}), vec<int32_t>({1, 2}), d);
  EXPECT_TRUE(bad32.narrow());
  EXPECT_TRUE(Raises([&] { pydd::spmv(bad32, vec<double>({1, 1})); }, ErrorKind::ValueError,
                     "column index values must be < 2"));
  EXPECT_TRUE(Raises([&] { pydd::spmv(bad_low, vec<double>({1, 1})); }, ErrorKind::ValueError,
                     "column index values must be >= 0"));
  // The compiler's row loops check each column index as they read it.
  const auto raw = bad32.csr<int32_t>(false);
  EXPECT_EQ(pydd::detail::sp_column(raw.c[0], raw.n), 1);
  EXPECT_TRUE(Raises([&] { (void)pydd::detail::sp_column(raw.c[1], raw.n); }, ErrorKind::ValueError,
                     "column index values must be < 2"));
  EXPECT_TRUE(Raises([&] { (void)pydd::detail::sp_column(int64_t{-1}, 2); }, ErrorKind::ValueError,
                     "column index values must be >= 0"));
  // Arrays longer than nnz: the tail is ignored, and an insertion does not
  // write into it.
  auto c3 = vec<int64_t>({0, 1, 77});
  auto d3 = vec<double>({1, 2, 99});
  auto s = SparseMat<double>::from_csr(2, 2, ip, c3, d3);
  EXPECT_EQ(s.nnz(), 2);
  EXPECT_EQ(s.indices().shape(0), 2);
  s.set(5, 0, 1);
  EXPECT_EQ(c3(2), 77);
  EXPECT_EQ(d3(2), 99);
  EXPECT_EQ(to_dense(s), (VD{1, 5, 0, 2}));
}

TEST(SparseMat, CsrToSpmInt32AndSpmToCsr) {
  auto s = pydd::csr_to_spm(vec<float>({1, 2, 3}), vec<int32_t>({1, 0, 2}), vec<int32_t>({0, 1, 1, 3}), 4);
  EXPECT_EQ(s.rows(), 3);
  EXPECT_EQ(s.cols(), 4);
  EXPECT_EQ(s.get(2, 2), 3.0f);
  EXPECT_EQ(s.get(0, 1), 1.0f);
  auto values = vec<float>({0, 0, 0, -1});
  auto columns = vec<int32_t>({0, 0, 0});
  auto indexes = vec<int64_t>({0, 0, 0, 0, -1});
  pydd::spm_to_csr(s, values, columns, indexes);
  EXPECT_EQ(to_vec(values), (V64{1, 2, 3, -1}));
  EXPECT_EQ(to_vec(columns), (V64{1, 0, 2}));
  EXPECT_EQ(to_vec(indexes), (V64{0, 1, 1, 3, -1}));
  // Too small: ValueError naming the array, nothing written.
  auto small = vec<float>({7, 7});
  EXPECT_TRUE(Raises([&] { pydd::spm_to_csr(s, small, columns, indexes); }, ErrorKind::ValueError,
                     "spm_to_csr: values has 2 elements, the matrix needs 3 (nnz)"));
  EXPECT_EQ(small(1), 7.0f);
  EXPECT_TRUE(Raises([&] { pydd::spm_to_csr(s, values, vec<int64_t>({0, 0}), indexes); }, ErrorKind::ValueError,
                     "spm_to_csr: columns has 2 elements, the matrix needs 3 (nnz)"));
  EXPECT_TRUE(Raises([&] { pydd::spm_to_csr(s, values, columns, vec<int32_t>({0, 0, 0})); },
                     ErrorKind::ValueError, "spm_to_csr: indexes has 3 elements, the matrix needs 4 (rows + 1)"));
  EXPECT_TRUE(Raises([&] { pydd::csr_to_spm(vec<float>({}), vec<int32_t>({}), vec<int32_t>({}), 2); },
                     ErrorKind::ValueError, "csr_to_spm: indexes must hold at least one row pointer"));
  EXPECT_TRUE(Raises([&] { pydd::csr_to_spm(vec<float>({1}), vec<int32_t>({5}), vec<int32_t>({0, 1}), 2); },
                     ErrorKind::ValueError, "column index values must be < 2"));
}

TEST(SparseMat, UnsortedIndices) {
  auto u = unsorted();
  EXPECT_EQ(u.get(0, 0), 7.0);
  EXPECT_EQ(u.get(0, 2), 5.0);
  EXPECT_EQ(to_vec(pydd::spmv(u, vec<double>({1, 10, 100}))), (V64{507, 0, 0}));
  auto t = pydd::transpose(u);
  EXPECT_TRUE(rows_sorted(t));
  EXPECT_EQ(to_dense(t), (VD{7, 0, 0, 0, 0, 0, 5, 0, 0}));
  // An unsorted row goes through the accumulators and keeps first-seen
  // order (u's columns, then A's others), as scipy's general path.
  auto m = pydd::spm_mul(u, A3());  // A row 0 = [1, 0, 2]
  EXPECT_EQ(to_dense(m), (VD{7, 0, 10, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(to_vec(m.indices()), (V64{2, 0}));
  auto p = pydd::spm_add(u, A3());
  EXPECT_EQ(to_dense(p), (VD{8, 0, 7, 0, 0, 3, 4, 5, 0}));
  EXPECT_EQ(to_vec(p.indices()), (V64{2, 0, 2, 0, 1}));
  auto q = pydd::spmm(u, A3());  // u's row 0: (2, 5) then (0, 7)
  EXPECT_EQ(to_dense(q), (VD{27, 25, 14, 0, 0, 0, 0, 0, 0}));
  // Scaling keeps S's order.
  EXPECT_EQ(to_vec(pydd::spm_mul(u, 2.0).indices()), (V64{2, 0}));
  // Duplicates: get sums them, set merges them.
  auto dup = pydd::csr_to_spm(vec<double>({1, 2, 3}), vec<int64_t>({2, 0, 2}), vec<int64_t>({0, 3, 3}), 3);
  EXPECT_EQ(dup.get(0, 2), 4.0);
  EXPECT_EQ(to_vec(pydd::spmv(dup, vec<double>({1, 1, 1}))), (V64{6, 0}));
  EXPECT_EQ(pydd::spm_mul(dup, dup).get(0, 2), 16.0);
  dup.set(9, 0, 2);
  EXPECT_EQ(dup.nnz(), 2);
  EXPECT_EQ(dup.get(0, 2), 9.0);
}

TEST(SparseMat, AddAndMulFollowScipy) {
  auto a = A3(), b = B3();
  // A + B: scipy nnz 6.
  auto s = pydd::spm_add(a, b);
  EXPECT_EQ(s.nnz(), 6);
  EXPECT_EQ(to_dense(s), (VD{1, 1, 4, 0, 0, 0, 4, 10, 7}));
  // A + (-A): everything cancels, nnz 0.
  EXPECT_EQ(pydd::spm_add(a, pydd::spm_scale(a, -1.0)).nnz(), 0);
  // A.multiply(B): nnz 3.
  auto m = pydd::spm_mul(a, b);
  EXPECT_EQ(m.nnz(), 3);
  EXPECT_EQ(to_dense(m), (VD{0, 0, 4, 0, 0, -9, 0, 25, 0}));
  // inf outside the intersection gives a stored nan (scipy nnz 4).
  auto ai = from_dense<double>(3, 3, {INFINITY, 0, 2, 0, 0, 3, 4, 5, 0});
  auto mi = pydd::spm_mul(ai, b);
  EXPECT_EQ(mi.nnz(), 4);
  EXPECT_TRUE(std::isnan(mi.get(0, 0)));
  // Integers: a plain intersection; mixed dtypes via R.
  auto ia = from_dense<int32_t>(2, 2, {1, 2, 0, 3});
  auto ib = from_dense<int64_t>(2, 2, {0, 5, 6, 7});
  auto im = pydd::spm_mul<int64_t>(ia, ib);
  EXPECT_EQ(im.nnz(), 2);
  EXPECT_EQ(im.get(0, 1), 10);
  EXPECT_EQ(im.get(1, 1), 21);
  // Explicit zeros of the operands are dropped by sparse + sparse.
  auto z = pydd::csr_to_spm(vec<double>({1, 0, 2}), vec<int64_t>({0, 1, 2}), vec<int64_t>({0, 3, 3, 3}), 3);
  EXPECT_EQ(pydd::spm_add(z, z).nnz(), 2);
  EXPECT_EQ(pydd::spm_mul(z, b).nnz(), 1);
  // ... but kept by sparse * dense and * scalar (scipy: nnz 3, nnz 5).
  EXPECT_EQ(pydd::spm_mul(z, Array<double, 2>::ones(std::array<int64_t, 2>{3, 3})).nnz(), 3);
  EXPECT_EQ(pydd::spm_mul(a, 0.0).nnz(), 5);
  EXPECT_EQ(pydd::spm_scale(z, 2.0).nnz(), 3);
  EXPECT_TRUE(Raises([&] { pydd::spm_add(a, pydd::empty_spm<double>(4, 2)); }, ErrorKind::ValueError,
                     "spm_add: inconsistent shapes (3, 3) and (4, 2)"));
  EXPECT_TRUE(Raises([&] { pydd::spm_mul(a, pydd::empty_spm<double>(3, 2)); }, ErrorKind::ValueError,
                     "spm_mul: inconsistent shapes (3, 3) and (3, 2)"));
}

TEST(SparseMat, MulDenseBroadcasts) {
  auto a = A3();
  auto d = mat<double>(3, 3, {0, 1, 1, 1, 1, 0, 1, 0, 1});
  auto r = pydd::spm_mul(a, d);  // scipy: nnz 5, data [0, 2, 0, 4, 0]
  EXPECT_EQ(r.nnz(), 5);
  EXPECT_EQ(to_vec(r.data()), (V64{0, 2, 0, 4, 0}));
  auto row = pydd::spm_mul(a, vec<double>({0, 1, 2}));  // scipy: [0, 4, 6, 0, 5]
  EXPECT_EQ(to_vec(row.data()), (V64{0, 4, 6, 0, 5}));
  auto col = pydd::spm_mul(a, mat<double>(3, 1, {0, 1, 2}));  // scipy: [0, 0, 3, 8, 10]
  EXPECT_EQ(to_vec(col.data()), (V64{0, 0, 3, 8, 10}));
  auto one = pydd::spm_mul(mat<double>(1, 1, {2}), a);
  EXPECT_EQ(to_dense(one), (VD{2, 0, 4, 0, 0, 6, 8, 10, 0}));
  // A sparse row broadcast against a (2, 3) matrix: entries replicated.
  auto srow = from_dense<double>(1, 3, {1, 0, 2});
  auto br = pydd::spm_mul(srow, mat<double>(2, 3, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(br.rows(), 2);
  EXPECT_EQ(br.nnz(), 4);
  EXPECT_EQ(to_dense(br), (VD{1, 0, 6, 4, 0, 12}));
  // A sparse column against a dense row: (2, 1) * (1, 3) -> (2, 3).
  auto scol = from_dense<double>(2, 1, {3, 0});
  auto bc = pydd::spm_mul(scol, mat<double>(1, 3, {1, 2, 3}));
  EXPECT_EQ(bc.cols(), 3);
  EXPECT_EQ(bc.nnz(), 3);
  EXPECT_EQ(to_dense(bc), (VD{3, 6, 9, 0, 0, 0}));
  // int * float -> float64 via R.
  auto ia = from_dense<int32_t>(1, 2, {3, 0});
  auto fm = pydd::spm_mul<double>(ia, vec<double>({0.5, 2}));
  EXPECT_EQ(fm.get(0, 0), 1.5);
  EXPECT_TRUE(Raises([&] { pydd::spm_mul(a, vec<double>({1, 2})); }, ErrorKind::ValueError,
                     "spm_mul: inconsistent shapes (3, 3) and (1, 2)"));
  EXPECT_TRUE(Raises([&] { pydd::spm_mul(a, mat<double>(2, 3, {1, 2, 3, 4, 5, 6})); }, ErrorKind::ValueError,
                     "spm_mul: inconsistent shapes (3, 3) and (2, 3)"));
}

TEST(SparseMat, AddDense) {
  auto a = A3();
  auto d = mat<int32_t>(3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  auto r = pydd::spm_add<double>(a, d);
  EXPECT_EQ(r.shape(0), 3);
  EXPECT_EQ(r(0, 0), 2.0);
  EXPECT_EQ(r(1, 1), 1.0);
  EXPECT_EQ(r(2, 1), 6.0);
  auto r2 = pydd::spm_add<double>(d, a);
  EXPECT_EQ(r2(0, 2), 3.0);
  // Strided dense operand (a transpose).
  auto t = pydd::transpose(mat<double>(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  auto r3 = pydd::spm_add(a, t);
  EXPECT_EQ(r3(0, 1), 4.0);
  EXPECT_EQ(r3(2, 0), 7.0);
  EXPECT_TRUE(Raises([&] { pydd::spm_add(a, mat<double>(3, 2, {1, 2, 3, 4, 5, 6})); }, ErrorKind::ValueError,
                     "spm_add: inconsistent shapes (3, 3) and (3, 2)"));
  // A row (1-D or 1 x n) and a column broadcast, as SciPy's S + D does.
  auto r4 = pydd::spm_add(a, vec<double>({10, 20, 30}));
  EXPECT_EQ(r4(0, 1), 20.0);
  EXPECT_EQ(r4(0, 0), 11.0);
  auto r5 = pydd::spm_add(a, mat<double>(3, 1, {10, 20, 30}));
  EXPECT_EQ(r5(1, 0), 20.0);
  EXPECT_TRUE(Raises([&] { pydd::spm_add(a, vec<double>({1, 2})); }, ErrorKind::ValueError,
                     "spm_add: inconsistent shapes (3, 3) and (2,)"));
}

TEST(SparseMat, Products) {
  auto a = A3();
  auto y = pydd::spmv<double>(a, vec<int64_t>({1, 2, 3}));
  EXPECT_EQ(to_vec(y), (V64{7, 9, 14}));
  // Strided vector.
  auto m = mat<double>(3, 2, {1, 0, 2, 0, 3, 0});
  Array<double, 1> colv = m.alias<1>(m.data(), std::array<int64_t, 1>{3}.data(), std::array<int64_t, 1>{2}.data());
  EXPECT_EQ(to_vec(pydd::spmv(a, colv)), (V64{7, 9, 14}));
  EXPECT_TRUE(Raises([&] { pydd::spmv(a, vec<double>({1, 2})); }, ErrorKind::ValueError,
                     "spmv: dimension mismatch (3, 3) and (2,)"));
  // spmm: A @ B = [[0, 11, 16], [0, 15, 21], [0, 4, -7]]; first column drops out.
  auto p = pydd::spmm(a, B3());
  EXPECT_EQ(to_dense(p), (VD{0, 11, 16, 0, 15, 21, 0, 4, -7}));
  EXPECT_EQ(p.nnz(), 6);
  EXPECT_TRUE(rows_sorted(p));
  // Cancelling products are dropped (scipy's csr_matmat).
  auto c = from_dense<double>(1, 2, {1, 1});
  auto cd = from_dense<double>(2, 1, {1, -1});
  EXPECT_EQ(pydd::spmm(c, cd).nnz(), 0);
  EXPECT_TRUE(Raises([&] { pydd::spmm(a, pydd::empty_spm<double>(2, 3)); }, ErrorKind::ValueError,
                     "spmm: dimension mismatch (3, 3) and (2, 3)"));
  // spmm_dense both ways.
  auto d = mat<double>(3, 2, {1, 2, 3, 4, 5, 6});
  auto sd = pydd::spmm_dense(a, d);
  EXPECT_EQ(sd(0, 0), 11.0);
  EXPECT_EQ(sd(2, 1), 28.0);
  auto ds = pydd::spmm_dense(pydd::transpose(d), a);  // (2, 3) @ (3, 3)
  EXPECT_EQ(ds(0, 0), 21.0);
  EXPECT_EQ(ds(1, 2), 16.0);
  EXPECT_TRUE(Raises([&] { pydd::spmm_dense(a, mat<double>(2, 2, {1, 2, 3, 4})); }, ErrorKind::ValueError,
                     "spmm_dense: dimension mismatch (3, 3) and (2, 2)"));
  EXPECT_TRUE(Raises([&] { pydd::spmm_dense(mat<double>(2, 2, {1, 2, 3, 4}), a); }, ErrorKind::ValueError,
                     "spmm_dense: dimension mismatch (2, 2) and (3, 3)"));
  // A very wide product with short rows: the accumulator is indexed by
  // column, cancellations are dropped.
  auto wa = from_dense<double>(1, 2, {1, 1});
  auto wb = pydd::csr_to_spm(vec<double>({4, 1, 2, 3, -1}), vec<int64_t>({1999999, 7, 123456, 7, 1999999}),
                             vec<int64_t>({0, 3, 5}), 2000000);
  auto wp = pydd::spmm(wa, wb);
  // First-seen order (row 0 of wb, then row 1's new column), as csr_matmat.
  EXPECT_EQ(to_vec(wp.indices()), (V64{1999999, 7, 123456}));
  EXPECT_EQ(to_vec(wp.data()), (V64{3, 4, 2}));
  EXPECT_EQ(pydd::spmm(wa, pydd::spm_add(wb, pydd::spm_scale(wb, -1.0))).nnz(), 0);
  // Integer products.
  auto ia = from_dense<int32_t>(2, 2, {1, 2, 0, 3});
  EXPECT_EQ(to_vec(pydd::spmv<int64_t>(ia, vec<int64_t>({4, 5}))), (V64{14, 15}));
}

TEST(SparseMat, Sums) {
  auto a = A3();
  EXPECT_EQ(pydd::sum(a), 15.0);
  EXPECT_EQ(to_vec(pydd::sum_axis(a, 0)), (V64{5, 5, 5}));
  EXPECT_EQ(to_vec(pydd::sum_axis(a, 1)), (V64{3, 3, 9}));
  EXPECT_EQ(to_vec(pydd::sum_axis(a, -1)), (V64{3, 3, 9}));
  EXPECT_TRUE(Raises([&] { pydd::sum_axis(a, 2); }, ErrorKind::ValueError,
                     "axis 2 is out of bounds for array of dimension 2"));
  auto ia = from_dense<int32_t>(2, 2, {INT32_MAX, 1, 0, 3});
  static_assert(std::is_same_v<decltype(pydd::sum(ia)), int64_t>);
  EXPECT_EQ(pydd::sum(ia), int64_t(INT32_MAX) + 4);
  EXPECT_EQ(pydd::sum<double>(from_dense<bool>(1, 2, {true, true})), 2.0);
}

TEST(SparseMat, TransposeKeepsExplicitZeros) {
  auto z = pydd::csr_to_spm(vec<double>({1, 0, 2}), vec<int64_t>({2, 1, 0}), vec<int64_t>({0, 2, 3}), 3);
  auto t = pydd::transpose(z);
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cols(), 2);
  EXPECT_EQ(t.nnz(), 3);
  EXPECT_EQ(to_vec(t.indptr()), (V64{0, 1, 2, 3}));
  EXPECT_EQ(to_vec(t.indices()), (V64{1, 0, 0}));
  EXPECT_EQ(to_dense(pydd::transpose(t)), to_dense(z));
}

// ---- randomized comparison against a dense reference ----------------------------------

struct Rand {
  std::mt19937_64 g{12345};
  /// A random m x n matrix with about `density` non-zeros of small integer
  /// values (exact in double), unsorted rows and some explicit zeros.
  /// narrow: int32 row pointers and column indices, as SciPy hands them in.
  SparseMat<double> sparse(int64_t m, int64_t n, double density, std::vector<double>* dense, bool narrow) {
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<int> val(-4, 4);
    dense->assign(m * n, 0.0);
    std::vector<int64_t> ip{0}, ci;
    std::vector<double> dv;
    for (int64_t i = 0; i < m; ++i) {
      std::vector<int64_t> cols;
      for (int64_t j = 0; j < n; ++j)
        if (u(g) < density) cols.push_back(j);
      std::shuffle(cols.begin(), cols.end(), g);
      for (int64_t j : cols) {
        const double v = val(g);
        ci.push_back(j), dv.push_back(v), (*dense)[i * n + j] = v;
      }
      ip.push_back(static_cast<int64_t>(ci.size()));
    }
    if (narrow) {
      std::vector<int32_t> ip32(ip.begin(), ip.end()), ci32(ci.begin(), ci.end());
      return pydd::csr_to_spm(vec<double>(dv), vec<int32_t>(ci32), vec<int32_t>(ip32), n);
    }
    return pydd::csr_to_spm(vec<double>(dv), vec<int64_t>(ci), vec<int64_t>(ip), n);
  }
};

void expect_no_zeros(const SparseMat<double>& s) {
  for (int64_t k = 0; k < s.nnz(); ++k) ASSERT_NE(s.data()(k), 0.0);
}

TEST(SparseMat, RandomizedAgainstDense) {
  Rand r;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t m = 1 + trial % 7, k = 1 + (trial * 3) % 11, n = 1 + (trial * 5) % 9;
    const double dens = 0.1 + 0.15 * (trial % 5);
    std::vector<double> da, db, dc;
    // Every mix of int32 (narrow) and int64 operands.
    const bool na = trial % 2 == 1, nb = trial % 4 >= 2, nc = trial % 8 >= 4;
    auto a = r.sparse(m, k, dens, &da, na);
    auto b = r.sparse(k, n, dens, &db, nb);
    auto c = r.sparse(m, k, dens, &dc, nc);
    // spmm
    std::vector<double> ref(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j) ref[i * n + j] += da[i * k + l] * db[l * n + j];
    auto p = pydd::spmm(a, b);
    EXPECT_EQ(to_dense(p), ref) << "spmm trial " << trial;
    expect_no_zeros(p);
    // spmm_dense both ways
    auto bd = mat<double>(k, n, db);
    auto sd = pydd::spmm_dense(a, bd);
    auto ds = pydd::spmm_dense(mat<double>(m, k, da), b);
    for (int64_t i = 0; i < m * n; ++i) {
      EXPECT_EQ(sd.data()[i], ref[i]);
      EXPECT_EQ(ds.data()[i], ref[i]);
    }
    // spm_add / spm_mul (sparse, sparse)
    std::vector<double> add(m * k), mul(m * k);
    for (int64_t i = 0; i < m * k; ++i) add[i] = da[i] + dc[i], mul[i] = da[i] * dc[i];
    auto s = pydd::spm_add(a, c);
    auto t = pydd::spm_mul(a, c);
    EXPECT_EQ(to_dense(s), add) << "spm_add trial " << trial;
    EXPECT_EQ(to_dense(t), mul) << "spm_mul trial " << trial;
    // Inputs with unsorted rows give unsorted rows (as scipy).
    // A narrow operand is widened (once, in place) only when an operation
    // pairs it with an int64 one.
    EXPECT_EQ(a.narrow(), na && nb && nc);
    EXPECT_EQ(c.narrow(), nc && na && nb);
    expect_no_zeros(s);
    expect_no_zeros(t);
    int64_t nz_add = 0, nz_mul = 0;
    for (int64_t i = 0; i < m * k; ++i) nz_add += add[i] != 0, nz_mul += mul[i] != 0;
    EXPECT_EQ(s.nnz(), nz_add);
    EXPECT_EQ(t.nnz(), nz_mul);
    // spm_mul (sparse, dense): S's structure.
    auto cd = mat<double>(m, k, dc);
    auto u = pydd::spm_mul(a, cd);
    EXPECT_EQ(u.nnz(), a.nnz());
    EXPECT_EQ(to_dense(u), mul);
    // transpose
    auto at = pydd::transpose(a);
    EXPECT_TRUE(rows_sorted(at));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t l = 0; l < k; ++l) EXPECT_EQ(at.get(l, i), da[i * k + l]);
    // spmv and sums
    std::vector<double> x(k);
    for (int64_t l = 0; l < k; ++l) x[l] = double(l + 1);
    auto y = pydd::spmv(a, vec<double>(x));
    double total = 0;
    for (int64_t i = 0; i < m; ++i) {
      double want = 0;
      for (int64_t l = 0; l < k; ++l) want += da[i * k + l] * x[l], total += da[i * k + l];
      EXPECT_EQ(y(i), want);
    }
    EXPECT_EQ(pydd::sum(a), total);
  }
}


// interrupt_strip_end: the longest strip of rows whose work (entries plus
// kInterruptRowWork a row) is at most kInterruptStripWork, and at least one
// row, checked against a linear scan on row lengths from empty to long.
TEST(SparseMat, InterruptStrips) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 12000);
    std::vector<int32_t> indptr(rows + 1, 0);
    const int kind = trial % 4;  // empty rows, short rows, a mix with long ones, all long
    for (int64_t r = 0; r < rows; ++r) {
      int64_t len = 0;
      if (kind == 1) len = rng() % 20;
      if (kind == 2) len = rng() % 8 == 0 ? rng() % 90000 : rng() % 40;
      if (kind == 3) len = 30000 + rng() % 30000;
      indptr[r + 1] = indptr[r] + static_cast<int32_t>(len);
    }
    const int64_t stop = rows - static_cast<int64_t>(rng() % 3 == 0 ? rng() % rows : 0);
    int64_t strips = 0;
    for (int64_t at = 0; at < stop; ++strips) {
      int64_t want = at + 1;  // the linear scan: extend while the next row fits
      while (want < stop && indptr[want + 1] - indptr[at] + pydd::kInterruptRowWork * (want + 1 - at) <=
                                pydd::kInterruptStripWork)
        ++want;
      const int64_t end = pydd::interrupt_strip_end(indptr.data(), at, stop);
      ASSERT_EQ(end, want) << "trial " << trial << " at " << at;
      at = end;
    }
    if (kind == 0) {
      constexpr int64_t empty_rows = pydd::kInterruptStripWork / pydd::kInterruptRowWork;  // a strip
      EXPECT_EQ(strips, (stop + empty_rows - 1) / empty_rows);
    }
  }
}

/// Row folds two rows at a time (sp_rows_in_pairs) against the plain loop:
/// every row's fold in entry order (a chain of subtractions, whose result
/// depends on the order), on structures of empty, short and long rows,
/// sub-ranges of rows, and both decline rules.
TEST(SparseMat, RowsInPairs) {
  std::mt19937_64 rng(11);
  int paired = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 400), cols = trial % 7 == 0 ? 20000 : 1 + rng() % 3000;
    std::vector<int32_t> indptr(rows + 1, 0), index;
    std::vector<double> value;
    const int kind = trial % 4;  // short rows, long rows, a mix with empty ones, one huge row
    for (int64_t r = 0; r < rows; ++r) {
      int64_t len = kind == 0 ? rng() % 12 : kind == 1 ? 20 + rng() % 80 : rng() % 3 == 0 ? 0 : rng() % 90;
      if (kind == 3 && r == rows / 2) len = 9000;
      for (int64_t k = 0; k < len; ++k) {
        index.push_back(static_cast<int32_t>(rng() % cols));
        value.push_back(std::ldexp(static_cast<double>(rng() % 1000), -static_cast<int>(rng() % 40)));
      }
      indptr[r + 1] = static_cast<int32_t>(index.size());
    }
    const pydd::detail::Csr<double, int32_t> s{rows, cols, indptr[rows], indptr.data(), index.data(), value.data()};
    const int64_t from = rng() % 4 == 0 ? rng() % rows : 0, to = from + (rows - from) - (rng() % 4 == 0 ? rng() % (rows - from) : 0);
    std::vector<double> want(rows, -1.0), got(rows, -1.0);
    auto start = [](int64_t r) { return static_cast<double>(r); };
    auto step = [](int64_t r, double acc, int64_t c, double v) { return acc - v * static_cast<double>(c + r); };
    for (int64_t r = from; r < to; ++r) {
      double acc = start(r);
      for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) acc = step(r, acc, index[k], value[k]);
      want[r] = acc;
    }
    int64_t finished = 0;
    const bool ran = pydd::detail::sp_rows_in_pairs<double>(s, from, to, true, start, step, [&](int64_t r, double acc) {
      ++finished;
      got[r] = acc;
    });
    const int64_t entries = indptr[to] - indptr[from];
    const bool pays = to - from >= 2 && cols <= pydd::detail::kPairedRowsMostColumns &&
                      entries >= pydd::detail::kPairedRowsMinLength * (to - from);
    ASSERT_EQ(ran, pays) << "trial " << trial;
    if (!ran) {
      EXPECT_EQ(finished, 0) << "trial " << trial;
      continue;
    }
    ++paired;
    EXPECT_EQ(finished, to - from) << "trial " << trial;
    for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(got[r], want[r]) << "trial " << trial << " row " << r;
  }
  EXPECT_GT(paired, 100);
}

/// A step that raises: with `rerun` it returns false (the caller runs the
/// loop as written); without, the first bad column in row order raises,
/// though the second stream meets its own first. Ctrl-C propagates.
TEST(SparseMat, RowsInPairsErrors) {
  const int64_t rows = 200, cols = 50;
  std::vector<int32_t> indptr(rows + 1), index;
  std::vector<double> value;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < 30; ++k) {
      index.push_back(static_cast<int32_t>((r + k) % cols));
      value.push_back(1.0);
    }
    indptr[r + 1] = static_cast<int32_t>(index.size());
  }
  index[indptr[80]] = -3;        // first in row order
  index[indptr[110]] = cols + 1;  // met first: the second stream starts at row 100
  const pydd::detail::Csr<double, int32_t> s{rows, cols, indptr[rows], indptr.data(), index.data(), value.data()};
  auto start = [](int64_t) { return 0.0; };
  auto step = [](int64_t, double acc, int64_t, double v) { return acc + v; };
  auto finish = [](int64_t, double) {};
  EXPECT_FALSE(pydd::detail::sp_rows_in_pairs<double>(s, 0, rows, true, start, step, finish));
  EXPECT_TRUE(Raises([&] { pydd::detail::sp_rows_in_pairs<double>(s, 0, rows, false, start, step, finish); },
                     ErrorKind::ValueError, "column index values must be >= 0"));
  index[indptr[80]] = 0;
  index[indptr[110]] = 0;
  pydd::Interrupt::requested = 1;
  EXPECT_TRUE(Raises([&] { pydd::detail::sp_rows_in_pairs<double>(s, 0, rows, true, start, step, finish); },
                     ErrorKind::KeyboardInterrupt, "interrupted"));
  pydd::Interrupt::requested = 0;
}

/// spmv sums two rows at a time where that pays, on each thread's rows:
/// the same sums as row by row, and Ctrl-C there propagates from the
/// calling thread (none may leave an OpenMP region).
TEST(SparseMat, SpmvRowsInPairs) {
  const int64_t rows = 400, cols = 300;  // 200 a row: 80000 entries, enough for threads
  std::vector<int32_t> indptr(rows + 1), index;
  std::vector<double> value;
  std::mt19937_64 rng(12);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < 200; ++k) {
      index.push_back(static_cast<int32_t>(rng() % cols));
      value.push_back(std::ldexp(static_cast<double>(rng() % 1000), -static_cast<int>(rng() % 40)));
    }
    indptr[r + 1] = static_cast<int32_t>(index.size());
  }
  std::vector<double> xs(cols), want(rows);
  for (auto& e : xs) e = std::ldexp(static_cast<double>(rng() % 1000) - 500.0, -static_cast<int>(rng() % 20));
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0.0;
    for (int64_t k = indptr[r]; k < indptr[r + 1]; ++k) acc = acc + value[k] * xs[index[k]];
    want[r] = acc;
  }
  const auto S = SparseMat<double>::from_csr(rows, cols, vec<int32_t>(indptr), vec<int32_t>(index), vec<double>(value));
  const auto x = vec<double>(xs);
  for (int threads : {1, 2}) {
    pydd::set_num_threads(threads);
    const auto y = pydd::spmv(S, x);
    for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(y.data()[r], want[r]) << threads << " threads, row " << r;
    pydd::Interrupt::requested = 1;
    EXPECT_TRUE(Raises([&] { pydd::spmv(S, x); }, ErrorKind::KeyboardInterrupt, "interrupted")) << threads;
    pydd::Interrupt::requested = 0;
  }
  pydd::set_num_threads(0);
}

}  // namespace
