// Unit tests for the dense array library: strided arrays, slices,
// element-wise operations, reductions, linear algebra and array printing.
// Expected values come from NumPy 1.24 / SciPy 1.10 (NEP 50 promotion) unless
// they are evident by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "pydd/runtime.h"
#include "raises.h"

namespace {

using pydd::Array;
using pydd::Error;
using pydd::ErrorKind;
using pydd::Slice;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Slice kAll{0, 0, 1, false, false};

using pydd::testing_support::Raises;

// Bitwise float equality (NaN equals NaN, -0.0 differs from 0.0).
template <class T>
::testing::AssertionResult Same(T expected, T actual) {
  if (std::memcmp(&expected, &actual, sizeof(T)) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expected << ", got " << actual;
}

// A new contiguous array holding `values` with the given shape.
template <class T, int N>
Array<T, N> make(const int64_t (&shape)[N], std::vector<T> values) {
  auto a = Array<T, N>::empty(shape);
  EXPECT_EQ(static_cast<size_t>(a.size()), values.size());
  for (size_t i = 0; i < values.size(); ++i) a.data()[i] = values[i];
  return a;
}

// The elements in C order, whatever the strides.
template <class T, int N>
std::vector<T> elements(const Array<T, N>& a) {
  std::vector<T> out;
  const auto c = pydd::copy(a);
  for (int64_t i = 0; i < c.size(); ++i) out.push_back(c.data()[i]);
  return out;
}

Array<double, 1> iota(int64_t n) { return pydd::arange<double>(int64_t{0}, n, int64_t{1}); }
Array<double, 2> iota2(int64_t r, int64_t c) {
  auto a = iota(r * c);
  return a.alias<2>(a.data(), std::array<int64_t, 2>{r, c}.data(), std::array<int64_t, 2>{c, 1}.data());
}

// ---------------------------------------------------------------------------
// Strided arrays

TEST(Strides, ContiguousByDefault) {
  auto a = Array<double, 3>::zeros({2, 3, 4});
  EXPECT_EQ(a.stride(0), 12);
  EXPECT_EQ(a.stride(1), 4);
  EXPECT_EQ(a.stride(2), 1);
  EXPECT_TRUE(a.is_contiguous());
  auto b = Array<int32_t, 2>::filled(std::array<int64_t, 2>{2, 2}, 7);
  EXPECT_EQ(b(1, 1), 7);
  double st[6] = {0, 1, 2, 3, 4, 5};
  auto c = Array<double, 2>::borrow(st, {2, 3});
  EXPECT_EQ(c.stride(0), 3);
  EXPECT_EQ(c(1, 2), 5.0);
}

TEST(Strides, BorrowWithStridesAndContiguity) {
  double st[6] = {0, 1, 2, 3, 4, 5};
  auto t = Array<double, 2>::borrow(st, {3, 2}, {1, 3});  // the transpose of a (2,3)
  EXPECT_EQ(t(2, 1), 5.0);
  EXPECT_EQ(t.view()(1, 0), 1.0);
  EXPECT_FALSE(t.is_contiguous());
  // Length-1 axes may have any stride; empty arrays are contiguous.
  EXPECT_TRUE((Array<double, 2>::borrow(st, {1, 3}, {99, 1}).is_contiguous()));
  EXPECT_TRUE((Array<double, 2>::borrow(st, {0, 3}, {7, 7}).is_contiguous()));
  EXPECT_FALSE((Array<double, 1>::borrow(st, {3}, {2}).is_contiguous()));
  auto rev = Array<double, 1>::borrow(st + 5, {6}, {-1});
  EXPECT_EQ(rev(0), 5.0);
  EXPECT_EQ(rev(5), 0.0);
}

TEST(Strides, AdoptAndCopySharesBuffer) {
  auto a = Array<double, 2>::zeros({2, 3});
  pydd::Buffer* buf = a.owner();
  {
    auto t = pydd::transpose(a);
    EXPECT_EQ(buf->refs.load(), 2);
    t(2, 1) = 9.0;
    auto c = t;  // copies share and keep the strides
    EXPECT_EQ(c.stride(0), 1);
    EXPECT_EQ(c.stride(1), 3);
  }
  EXPECT_EQ(buf->refs.load(), 1);
  EXPECT_EQ(a(1, 2), 9.0);
  buf->retain();
  const int64_t shape[2] = {3, 2}, strides[2] = {1, 3};
  auto b = Array<double, 2>::adopt(a.data(), shape, strides, buf);
  EXPECT_EQ(b(2, 1), 9.0);
  EXPECT_EQ(buf->refs.load(), 2);
}

// ---------------------------------------------------------------------------
// Slices

// Large buffers are recycled through a process-wide cache; a recycled block
// must behave exactly like a fresh one.
TEST(Buffers, LargeBuffersAreReusedAndZeroedWhenAsked) {
  auto& cache = pydd::detail::buffer_cache_v2;
  cache.clear();
  const int64_t n = int64_t{1} << 20;  // 8 MiB of doubles
  double* first;
  {
    auto a = Array<double, 1>::empty({n});
    first = a.data();
    std::memset(static_cast<void*>(a.data()), 0xff, n * sizeof(double));  // dirty it
  }
  EXPECT_EQ(cache.total > 0, true);
  auto z = Array<double, 2>::zeros({1024, 1024});
  EXPECT_EQ(z.data(), first);  // the same block came back...
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += z.data()[i] != 0.0;
  EXPECT_EQ(nonzero, 0);  // ...and zeros() cleared it
  EXPECT_EQ(cache.total, size_t{0});
  std::memset(static_cast<void*>(z.data()), 0xff, n * sizeof(double));
  z = Array<double, 2>();  // back to the cache
  auto o = Array<int32_t, 1>::filled({2 * n}, 7);  // the same bytes as int32
  EXPECT_EQ(static_cast<void*>(o.data()), static_cast<void*>(first));
  int64_t wrong = 0;
  for (int64_t i = 0; i < 2 * n; ++i) wrong += o.data()[i] != 7;
  EXPECT_EQ(wrong, 0);
  o = Array<int32_t, 1>();
  // A much smaller or a larger request does not take the cached block.
  {
    auto small = Array<double, 1>::zeros({n / 2});
    EXPECT_NE(small.data(), first);
    auto big = Array<double, 1>::zeros({4 * n});
    EXPECT_NE(big.data(), first);
    for (int64_t i = 0; i < 4 * n; i += 4093) EXPECT_EQ(big.data()[i], 0.0);
  }
  // At most kSlots blocks and 1 GiB stay cached; the oldest go first.
  {
    std::vector<Array<double, 1>> many;
    for (int k = 0; k < pydd::detail::BufferCache::kSlots + 2; ++k)
      many.push_back(Array<double, 1>::empty({n + k * (n / 8)}));
  }
  int held = 0;
  for (void* b : cache.block) held += b != nullptr;
  EXPECT_EQ(held, pydd::detail::BufferCache::kSlots);
  EXPECT_LE(cache.total, pydd::detail::BufferCache::kMaxBytes);
  { auto huge = Array<char, 1>::empty({int64_t{600} << 20}); }
  { auto huge2 = Array<char, 1>::empty({int64_t{700} << 20}); }  // would exceed 1 GiB with the first
  EXPECT_LE(cache.total, pydd::detail::BufferCache::kMaxBytes);
  cache.clear();
  EXPECT_EQ(cache.total, size_t{0});
}

// The loop `t = u + u` allocates the next temporary before the last one is
// freed: medium blocks (32 KiB up to the huge ones) must come back from the
// cache too, or every iteration page-faults a fresh mapping.
TEST(Buffers, MediumBuffersAlternateThroughTheCache) {
  auto& cache = pydd::detail::buffer_cache_v2;
  cache.clear();
  for (int64_t n : {int64_t{8192}, int64_t{65536}, int64_t{300000}}) {  // 64 KiB, 512 KiB, 2.3 MiB
    auto t = Array<double, 1>::filled({n}, 1.0);
    double* const a = t.data();
    auto t2 = Array<double, 1>::filled({n}, 2.0);
    double* const b = t2.data();
    t = Array<double, 1>();  // the first block goes to the cache
    t = Array<double, 1>::zeros({n});
    EXPECT_EQ(t.data(), a);
    EXPECT_EQ(t.data()[n - 1], 0.0);
    t2 = Array<double, 1>();
    t2 = Array<double, 1>::empty({n - 7});  // nearly the same size: the same class
    EXPECT_EQ(t2.data(), b);
  }
  cache.clear();
  {
    auto small = Array<double, 1>::empty({1000});  // 8 KB: left to malloc
  }
  EXPECT_EQ(cache.total, size_t{0});
}

TEST(Buffers, CacheIsThreadSafe) {
  // Threads allocate, fill, check and free large arrays of a few sizes; some
  // arrays are released on another thread than the one that made them.
  const int64_t n = int64_t{1} << 19;  // 4 MiB of doubles
  std::vector<Array<double, 1>> handoff(4);
  std::vector<std::thread> threads;
  std::atomic<int64_t> errors{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, n, &handoff, &errors] {
      for (int it = 0; it < 60; ++it) {
        const int64_t len = n + (it % 3) * (n / 4);
        auto a = (it + t) % 2 ? Array<double, 1>::zeros({len}) : Array<double, 1>::filled({len}, 0.0);
        for (int64_t i = 0; i < len; i += 511) errors += a.data()[i] != 0.0;
        for (int64_t i = 0; i < len; i += 511) a.data()[i] = t * 1000 + it;
        for (int64_t i = 0; i < len; i += 511) errors += a.data()[i] != t * 1000 + it;
        if (it == 30) handoff[t] = a;  // freed by the main thread below
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(handoff[t].data()[0], t * 1000 + 30);
  handoff.clear();
  EXPECT_EQ(errors.load(), 0);
  pydd::detail::buffer_cache_v2.clear();
}

TEST(Slices, PythonIndicesRules) {
  struct Case {
    Slice s;
    int64_t n, len, first;
  };
  // From len(range(n)[slice]) and its first element in Python.
  const Case cases[] = {
      {{0, 0, 1, false, false}, 5, 5, 0},   {{1, 0, 1, true, false}, 5, 4, 1},
      {{0, 0, -1, false, false}, 5, 5, 4},  {{-2, 0, -1, true, false}, 5, 4, 3},
      {{10, -10, -3, true, true}, 7, 3, 6}, {{-100, 100, 2, true, true}, 7, 4, 0},
      {{3, 1, 1, true, true}, 5, 0, -1},    {{0, -1, -2, false, true}, 6, 0, -1},
      {{5, 0, 1, true, false}, 5, 0, -1},
  };
  for (const Case& c : cases) {
    auto a = pydd::arange<int64_t>(int64_t{0}, c.n, int64_t{1});
    auto v = pydd::subarray<1>(a, c.s);
    ASSERT_EQ(v.shape(0), c.len) << c.s.start << ":" << c.s.stop << ":" << c.s.step;
    if (c.len > 0) {
      EXPECT_EQ(v(0), c.first);
      EXPECT_EQ(v(c.len - 1), c.first + (c.len - 1) * c.s.step);
    }
  }
}

TEST(Slices, MixedIndicesAliasTheBuffer) {
  auto a = iota2(3, 4);  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  auto col = pydd::subarray<1>(a, Slice{1, 0, 1, true, false}, int64_t{2});  // a[1:, 2]
  ASSERT_EQ(col.shape(0), 2);
  EXPECT_EQ(col(0), 6.0);
  EXPECT_EQ(col(1), 10.0);
  col(1) = -1.0;
  EXPECT_EQ(a(2, 2), -1.0);
  auto row = pydd::subarray<1>(a, int64_t{-1});  // a[-1]: remaining axis whole
  EXPECT_EQ(row.shape(0), 4);
  EXPECT_EQ(row(3), 11.0);
  auto rev = pydd::subarray<2>(a, Slice{0, 0, -2, false, false}, Slice{0, 0, -1, false, false});  // a[::-2, ::-1]
  EXPECT_EQ(rev.shape(0), 2);
  EXPECT_EQ(elements(rev), (std::vector<double>{11, -1, 9, 8, 3, 2, 1, 0}));
  EXPECT_EQ(a.owner()->refs.load(), 4);
  auto e = pydd::subarray<2>(a, Slice{5, 9, 1, true, true});
  EXPECT_EQ(e.shape(0), 0);
  EXPECT_EQ(e.shape(1), 4);
  EXPECT_EQ(e.size(), 0);
}

TEST(Slices, ViewOutlivesItsBase) {
  Array<double, 1> v;
  {
    auto a = iota(10);
    v = pydd::subarray<1>(a, Slice{2, 8, 3, true, true});
  }
  ASSERT_EQ(v.shape(0), 2);
  EXPECT_EQ(v(0), 2.0);
  EXPECT_EQ(v(1), 5.0);
  EXPECT_EQ(v.owner()->refs.load(), 1);
}

TEST(Slices, Errors) {
  auto a = iota2(3, 3);
  EXPECT_TRUE(Raises([&] { pydd::subarray<1>(a, Slice{1, 0, 1, true, false}, int64_t{5}); }, ErrorKind::IndexError,
                     "index 5 is out of bounds for axis 1 with size 3"));
  EXPECT_TRUE(Raises([&] { pydd::subarray<1>(a, int64_t{-4}); }, ErrorKind::IndexError,
                     "index -4 is out of bounds for axis 0 with size 3"));
  EXPECT_TRUE(Raises([&] { pydd::subarray<2>(a, Slice{0, 0, 0, false, false}); }, ErrorKind::ValueError,
                     "slice step cannot be zero"));
}

// ---------------------------------------------------------------------------
// Element-wise

TEST(Elementwise, BroadcastShapes) {
  auto col = make<double, 2>({3, 1}, {0, 10, 20});
  auto row = iota(4);
  auto s = pydd::map2<double, double>("add", pydd::op::add{}, col, row);
  ASSERT_EQ(s.shape(0), 3);
  ASSERT_EQ(s.shape(1), 4);
  EXPECT_EQ(elements(s), (std::vector<double>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
  auto t = pydd::map2<double, double>("sub", pydd::op::sub{}, 1.5, row);  // scalar first
  EXPECT_EQ(elements(t), (std::vector<double>{1.5, 0.5, -0.5, -1.5}));
  auto u = pydd::map2<int64_t, int64_t>("mul", pydd::op::mul{}, pydd::arange<int32_t>(0, 3, 1), int64_t{3});
  EXPECT_EQ(elements(u), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ((pydd::map2<double, double>("add", pydd::op::add{}, 2, 0.5)), 2.5);
}

TEST(Elementwise, StridedAndTransposedOperands) {
  auto a = iota2(3, 4);
  auto t = pydd::transpose(a);  // (4,3)
  auto r = pydd::map2<double, double>("add", pydd::op::add{}, t, pydd::subarray<1>(a, int64_t{0}, Slice{0, 3, 1, false, true}));
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_EQ(elements(r), (std::vector<double>{0, 5, 10, 1, 6, 11, 2, 7, 12, 3, 8, 13}));
  auto rev = pydd::subarray<1>(iota(6), Slice{0, 0, -2, false, false});  // [5 3 1]
  auto n = pydd::map1<double, double>("negative", pydd::op::negative{}, rev);
  EXPECT_EQ(elements(n), (std::vector<double>{-5, -3, -1}));
}

TEST(Elementwise, BroadcastErrorNamesTheOperation) {
  EXPECT_TRUE(Raises([] { pydd::map2<double, double>("add", pydd::op::add{}, iota(3), iota(4)); },
                     ErrorKind::ValueError, "add: operands could not be broadcast together with shapes (3,) (4,) "));
  EXPECT_TRUE(Raises([] { pydd::map2<double, double>("mul", pydd::op::mul{}, iota2(2, 3), iota(4)); },
                     ErrorKind::ValueError, "mul: operands could not be broadcast together with shapes (2,3) (4,) "));
}

TEST(Elementwise, ZeroSize) {
  auto e = Array<double, 2>::zeros({0, 3});
  auto r = pydd::map2<double, double>("add", pydd::op::add{}, e, iota(3));
  EXPECT_EQ(r.shape(0), 0);
  EXPECT_EQ(r.shape(1), 3);
  auto r2 = pydd::map2<double, double>("add", pydd::op::add{}, Array<double, 1>::zeros({0}), 1.0);
  EXPECT_EQ(r2.size(), 0);
  EXPECT_TRUE(Raises([] { pydd::map2<double, double>("add", pydd::op::add{}, Array<double, 1>::zeros({0}), iota(2)); },
                     ErrorKind::ValueError, "add: operands could not be broadcast together with shapes (0,) (2,) "));
}

TEST(Elementwise, FloatFloordivModMatchNumPy) {
  auto a = make<double, 1>({9}, {7.5, -3.25, 0.0, -0.0, 2.0, -7.5, kInf, -kInf, kNaN});
  auto b = make<double, 1>({9}, {2.0, 0.0, -2.0, 3.0, -0.0, kInf, 2.0, -kInf, 1.0});
  auto q = pydd::map2<double, double>("floor_divide", pydd::op::floordiv{}, a, b);
  auto m = pydd::map2<double, double>("remainder", pydd::op::mod{}, a, b);
  const double eq[] = {3.0, -kInf, -0.0, -0.0, -kInf, -1.0, kNaN, kNaN, kNaN};
  const double em[] = {1.5, kNaN, -0.0, 0.0, kNaN, kInf, kNaN, kNaN, kNaN};
  for (int i = 0; i < 9; ++i) {
    if (std::isnan(eq[i])) EXPECT_TRUE(std::isnan(q(i))) << i;
    else EXPECT_TRUE(Same(eq[i], q(i))) << i;
    if (std::isnan(em[i])) EXPECT_TRUE(std::isnan(m(i))) << i;
    else EXPECT_TRUE(Same(em[i], m(i))) << i;
  }
  auto d = pydd::map2<double, double>("true_divide", pydd::op::truediv{}, make<double, 1>({3}, {1, -1, 0}), 0.0);
  EXPECT_EQ(d(0), kInf);
  EXPECT_EQ(d(1), -kInf);
  EXPECT_TRUE(std::isnan(d(2)));
}

TEST(Elementwise, IntFloordivModByZeroAndOverflow) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  auto a = make<int64_t, 1>({7}, {7, -7, 7, -7, 5, lo, 0});
  auto b = make<int64_t, 1>({7}, {2, 2, -2, -2, 0, -1, 0});
  EXPECT_EQ(elements(pydd::map2<int64_t, int64_t>("floor_divide", pydd::op::floordiv{}, a, b)),
            (std::vector<int64_t>{3, -4, -4, 3, 0, lo, 0}));
  EXPECT_EQ(elements(pydd::map2<int64_t, int64_t>("remainder", pydd::op::mod{}, a, b)),
            (std::vector<int64_t>{1, 1, -1, -1, 0, 0, 0}));
}

TEST(Elementwise, PowerWrapsAndRejectsNegativeExponents) {
  auto p = pydd::map2<int64_t, int64_t>("power", pydd::op::power{}, make<int64_t, 1>({1}, {3}), int64_t{40});
  EXPECT_EQ(p(0), -6289078614652622815LL);
  auto q = pydd::map2<int32_t, int32_t>("power", pydd::op::power{}, make<int32_t, 1>({1}, {3}), 21);
  EXPECT_EQ(q(0), 1870418611);
  EXPECT_TRUE(Raises([] { pydd::map2<int64_t, int64_t>("power", pydd::op::power{}, iota(3), int64_t{-1}); },
                     ErrorKind::ValueError, "Integers to negative integer powers are not allowed."));
  auto f = pydd::map2<double, double>("power", pydd::op::power{}, make<double, 1>({2}, {-8, 0}), -1.0 / 3);
  EXPECT_TRUE(std::isnan(f(0)));
}

// Bases that exercise every branch of pow: signed zeros, infinities, NaNs
// (both signs), subnormals, squares that overflow or underflow, negative
// bases, plus random bit patterns.
template <class T, class U>
std::vector<T> power_bases(int64_t random_count) {
  std::vector<T> v = {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), -std::numeric_limits<T>::max(),
                      T(1), T(-1), T(2), T(-2), T(0.5), T(-0.5), T(3), T(1e-20), T(-1e-20), T(1e20), T(-3.25)};
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < random_count; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    U u = static_cast<U>(x >> (64 - 8 * sizeof(U)));
    T t;
    std::memcpy(&t, &u, sizeof t);
    v.push_back(t);
  }
  return v;
}

// What NumPy computes for float array ** scalar: its fast_scalar_power uses
// square, positive, ones_like, reciprocal and sqrt for these exponents and
// pow otherwise. (glibc's pow differs from x * x, 1 / x and sqrt in the last
// bit for ~0.05% of bases and in the sign of a NaN, so the fast paths are
// checked against NumPy's definition, and the rest against pow itself.)
template <class T>
T numpy_power(T x, double e) {
  volatile T exponent = static_cast<T>(e);  // pow at run time, not folded by g++
  if (e == 2) return x * x;
  if (e == 1) return x;
  if (e == 0) return T(1);
  if (e == -1) return T(1) / x;
  if (e == 0.5) return std::sqrt(x);
  return std::pow(x, static_cast<T>(exponent));
}

template <class T, class U>
void check_power_bits(double exponent) {
  const std::vector<T> bases = power_bases<T, U>(200000);
  const int64_t n = static_cast<int64_t>(bases.size());
  auto a = make<T, 1>({n}, bases);
  auto check = [&](const Array<T, 1>& r, const char* how) {
    ASSERT_EQ(r.size(), n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T want = numpy_power(bases[i], exponent);
      if (std::memcmp(&want, &r.data()[i], sizeof(T)) != 0 && bad++ < 3)
        ADD_FAILURE() << how << ": " << bases[i] << " ** " << exponent << " gave " << r.data()[i] << ", want "
                      << want;
    }
    EXPECT_EQ(bad, 0) << how << " exponent " << exponent;
  };
  check(pydd::map2<T, T>("power", pydd::op::power{}, a, static_cast<T>(exponent)), "float exponent");
  if (exponent == std::floor(exponent))
    check(pydd::map2<T, T>("power", pydd::op::power{}, a, static_cast<int64_t>(exponent)), "int exponent");
  // A strided view of the same bases: every other element.
  auto twice = Array<T, 1>::empty({2 * n});
  for (int64_t i = 0; i < n; ++i) twice.data()[2 * i] = bases[i], twice.data()[2 * i + 1] = T(7);
  auto every_other = Array<T, 1>::borrow(twice.data(), {n}, {2});
  check(pydd::map2<T, T>("power", pydd::op::power{}, every_other, static_cast<T>(exponent)), "strided base");
}

TEST(Elementwise, PowerScalarExponentMatchesNumPyBits) {
  for (double e : {2.0, 1.0, 0.0, -0.0, -1.0, 0.5, 3.0, -2.0, 2.5, -0.5})
    check_power_bits<double, uint64_t>(e), check_power_bits<float, uint32_t>(e);
  // NumPy's sqrt for ** 0.5, unlike pow: -0.0 stays -0.0 and -inf gives nan.
  auto h = pydd::map2<double, double>("power", pydd::op::power{}, make<double, 1>({3}, {-0.0, -kInf, 4}), 0.5);
  EXPECT_TRUE(Same(-0.0, h.data()[0]));
  EXPECT_TRUE(std::isnan(h.data()[1]));
  EXPECT_EQ(h.data()[2], 2.0);
  // A float32 array ** a float64 exponent that rounds to 2.0f is not squared.
  auto f = pydd::map2<float, float>("power", pydd::op::power{}, make<float, 1>({1}, {3.0f}), 2.0000000001);
  EXPECT_EQ(f.data()[0], std::pow(3.0f, 2.0f));
}

TEST(Elementwise, PowerScalarExponentShapesAndInts) {
  // Exponent 0 keeps the shape (also 2-D and empty) and gives ones, even for nan.
  auto x = make<double, 2>({2, 2}, {kNaN, -kInf, -0.0, 5});
  auto one = pydd::map2<double, double>("power", pydd::op::power{}, x, int64_t{0});
  EXPECT_EQ(one.shape(0), 2);
  EXPECT_EQ(one.shape(1), 2);
  EXPECT_EQ(elements(one), (std::vector<double>{1, 1, 1, 1}));
  auto none = pydd::map2<double, double>("power", pydd::op::power{}, Array<double, 2>::zeros({0, 3}), 2.0);
  EXPECT_EQ(none.shape(0), 0);
  EXPECT_EQ(none.shape(1), 3);
  // Transposed 2-D operand, result C-contiguous.
  auto t = pydd::map2<double, double>("power", pydd::op::power{}, pydd::transpose(iota2(2, 3)), 2.0);
  EXPECT_EQ(elements(t), (std::vector<double>{0, 9, 1, 16, 4, 25}));
  // Integers: squares wrap, 1 and 0 are exact; negative exponents still raise.
  const int64_t big = int64_t{3037000500};  // big * big overflows int64
  auto i = make<int64_t, 1>({4}, {-3, 0, big, INT64_MIN});
  for (int64_t e : {0, 1, 2, 3}) {
    auto r = pydd::map2<int64_t, int64_t>("power", pydd::op::power{}, i, e);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(r.data()[k], pydd::power(i.data()[k], e)) << k << " ** " << e;
  }
  auto i32 = pydd::map2<int32_t, int32_t>("power", pydd::op::power{}, make<int32_t, 1>({2}, {46341, -7}), 2);
  EXPECT_EQ(elements(i32), (std::vector<int32_t>{pydd::power(46341, 2), 49}));
  EXPECT_TRUE(Raises([] { pydd::map2<int64_t, int64_t>("power", pydd::op::power{}, iota(3), int64_t{-1}); },
                     ErrorKind::ValueError, "Integers to negative integer powers are not allowed."));
  // An int array with a float exponent computes in float64.
  auto f = pydd::map2<double, double>("power", pydd::op::power{}, make<int64_t, 1>({3}, {-2, 0, 3}), -1.0);
  EXPECT_EQ(elements(f), (std::vector<double>{-0.5, kInf, 1.0 / 3}));
  // bool ** bool is computed as bool.
  auto b = pydd::map2<bool, bool>("power", pydd::op::power{}, make<bool, 1>({2}, {false, true}), false);
  EXPECT_EQ(elements(b), (std::vector<bool>{true, true}));
}

TEST(Elementwise, IntArithmeticWraps) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  auto a = make<int32_t, 1>({2}, {big, std::numeric_limits<int32_t>::min()});
  EXPECT_EQ(elements(pydd::map2<int32_t, int32_t>("add", pydd::op::add{}, a, 1)),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::min() + 1}));
  EXPECT_EQ(elements(pydd::map1<int32_t, int32_t>("absolute", pydd::op::absolute{}, a)),
            (std::vector<int32_t>{big, std::numeric_limits<int32_t>::min()}));
}

TEST(Elementwise, MaximumMinimumPropagateNaN) {
  auto a = make<double, 1>({3}, {1, kNaN, 3});
  auto b = make<double, 1>({3}, {kNaN, 2, 1});
  auto mx = pydd::map2<double, double>("maximum", pydd::op::maximum{}, a, b);
  auto mn = pydd::map2<double, double>("minimum", pydd::op::minimum{}, a, b);
  EXPECT_TRUE(std::isnan(mx(0)) && std::isnan(mx(1)));
  EXPECT_TRUE(std::isnan(mn(0)) && std::isnan(mn(1)));
  EXPECT_EQ(mx(2), 3.0);
  EXPECT_EQ(mn(2), 1.0);
}

TEST(Elementwise, ComparisonsAndLogic) {
  auto a = make<double, 1>({4}, {1, kNaN, 3, 0});
  EXPECT_EQ(elements(pydd::map2<bool, double>("less", pydd::op::lt{}, a, 2.0)),
            (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(elements(pydd::map2<bool, double>("not_equal", pydd::op::ne{}, a, a)),
            (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(elements(pydd::map2<bool, double>("equal", pydd::op::eq{}, pydd::arange<int32_t>(0, 4, 1), 3.0)),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(elements(pydd::map2<bool, bool>("logical_and", pydd::op::logical_and{}, a, true)),
            (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(elements(pydd::map1<bool, double>("logical_not", pydd::op::logical_not{}, a)),
            (std::vector<bool>{false, false, false, true}));
  auto b = make<bool, 1>({2}, {true, false});
  EXPECT_EQ(elements(pydd::map2<bool, bool>("add", pydd::op::add{}, b, b)), (std::vector<bool>{true, false}));
  EXPECT_EQ(elements(pydd::map2<bool, bool>("multiply", pydd::op::mul{}, b, true)), (std::vector<bool>{true, false}));
}

TEST(Elementwise, UnaryMath) {
  auto a = make<double, 1>({4}, {4.0, -1.0, 0.0, kInf});
  auto s = pydd::map1<double, double>("sqrt", pydd::op::sqrt{}, a);
  EXPECT_EQ(s(0), 2.0);
  EXPECT_TRUE(std::isnan(s(1)));
  EXPECT_EQ(s(3), kInf);
  auto l = pydd::map1<double, double>("log", pydd::op::log{}, a);
  EXPECT_EQ(l(2), -kInf);
  auto i = make<int64_t, 1>({2}, {-3, 5});
  EXPECT_EQ(elements(pydd::map1<int64_t, int64_t>("floor", pydd::op::floor{}, i)), (std::vector<int64_t>{-3, 5}));
  EXPECT_EQ(elements(pydd::map1<double, double>("sqrt", pydd::op::sqrt{}, make<int64_t, 1>({2}, {9, 2}))),
            (std::vector<double>{3.0, std::sqrt(2.0)}));
  EXPECT_EQ(elements(pydd::map1<bool, int64_t>("isnan", pydd::op::isnan{}, i)), (std::vector<bool>{false, false}));
  EXPECT_EQ(elements(pydd::map1<bool, double>("isinf", pydd::op::isinf{}, a)),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(elements(pydd::map1<double, double>("ceil", pydd::op::ceil{}, make<double, 1>({2}, {-0.5, 1.2})))[1], 2.0);
  EXPECT_TRUE(Same(-0.0, pydd::op::ceil{}(-0.5)));
  auto f = pydd::map1<float, float>("exp", pydd::op::exp{}, make<float, 1>({1}, {1.0f}));
  EXPECT_EQ(f(0), std::exp(1.0f));
  EXPECT_EQ(pydd::op::arctan{}(1.0), std::atan(1.0));
}

TEST(Elementwise, Where) {
  auto c = make<bool, 1>({3}, {true, false, true});
  auto r = pydd::where<double, double>(c, iota(3), -1.0);
  EXPECT_EQ(elements(r), (std::vector<double>{0, -1, 2}));
  auto cond = pydd::map2<bool, double>("gt", pydd::op::gt{}, make<double, 2>({2, 1}, {0, 1}), 0.5);  // [[F],[T]]
  auto r2 = pydd::where<int64_t, int64_t>(cond, pydd::arange<int64_t>(0, 3, 1), int64_t{9});
  EXPECT_EQ(elements(r2), (std::vector<int64_t>{9, 9, 9, 0, 1, 2}));
  EXPECT_EQ((pydd::where<double, double>(false, 1, 2.5)), 2.5);
  EXPECT_TRUE(Raises([&] { pydd::where<double, double>(c, iota(2), 0.0); }, ErrorKind::ValueError,
                     "where: operands could not be broadcast together with shapes (3,) (2,) () "));
}

TEST(Elementwise, AssignBroadcastsAndConverts) {
  auto a = Array<double, 2>::zeros({2, 3});
  pydd::assign(a, make<int32_t, 1>({3}, {1, 2, 3}));
  EXPECT_EQ(elements(a), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  pydd::assign(pydd::subarray<1>(a, kAll, int64_t{1}), 7.5);  // a[:, 1] = 7.5
  EXPECT_EQ(elements(a), (std::vector<double>{1, 7.5, 3, 1, 7.5, 3}));
  auto i = Array<int64_t, 1>::zeros({3});
  pydd::assign(i, make<double, 1>({3}, {1.9, -1.9, kNaN}));  // astype truncates; NaN gives INT64_MIN on x86
  EXPECT_EQ(elements(i), (std::vector<int64_t>{1, -1, std::numeric_limits<int64_t>::min()}));
  pydd::fill(pydd::transpose(a), 2);
  EXPECT_EQ(elements(a), (std::vector<double>(6, 2.0)));
  EXPECT_TRUE(Raises([&] { pydd::assign(a, iota(4)); }, ErrorKind::ValueError,
                     "could not broadcast input array from shape (4,) into shape (2,3)"));
  EXPECT_TRUE(Raises([&] { pydd::assign(iota(4), iota(3)); }, ErrorKind::ValueError,
                     "could not broadcast input array from shape (3,) into shape (4,)"));
}

TEST(Elementwise, AssignOverlappingViewsCopiesFirst) {
  auto a = iota(6);
  pydd::assign(pydd::subarray<1>(a, Slice{1, 0, 1, true, false}), pydd::subarray<1>(a, Slice{0, -1, 1, false, true}));
  EXPECT_EQ(elements(a), (std::vector<double>{0, 0, 1, 2, 3, 4}));
  auto b = iota(6);
  pydd::assign(pydd::subarray<1>(b, Slice{0, -1, 1, false, true}), pydd::subarray<1>(b, Slice{1, 0, 1, true, false}));
  EXPECT_EQ(elements(b), (std::vector<double>{1, 2, 3, 4, 5, 5}));
  auto c = iota(4);
  pydd::assign(c, pydd::subarray<1>(c, Slice{0, 0, -1, false, false}));  // c[:] = c[::-1]
  EXPECT_EQ(elements(c), (std::vector<double>{3, 2, 1, 0}));
  auto m = iota2(3, 3);
  pydd::assign(m, pydd::transpose(m));  // m[:] = m.T
  EXPECT_EQ(elements(m), (std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
}

TEST(Elementwise, AstypeCopyFull) {
  auto t = pydd::transpose(iota2(2, 3));
  auto c = pydd::copy(t);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.data(), t.data());
  EXPECT_EQ(elements(c), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  auto f = pydd::astype<float>(make<double, 1>({2}, {0.1, 1e40}));
  EXPECT_EQ(f(0), 0.1f);
  EXPECT_EQ(f(1), std::numeric_limits<float>::infinity());
  auto b = pydd::astype<bool>(make<double, 1>({3}, {0.0, kNaN, -0.0}));
  EXPECT_EQ(elements(b), (std::vector<bool>{false, true, false}));
  auto w = pydd::astype<int32_t>(make<int64_t, 1>({1}, {(int64_t{1} << 32) + 5}));
  EXPECT_EQ(w(0), 5);
  auto full = pydd::full<int32_t, 2>({2, 2}, 3.7);
  EXPECT_EQ(elements(full), (std::vector<int32_t>{3, 3, 3, 3}));
}

TEST(Elementwise, ArangeMatchesNumPy) {
  auto a = pydd::arange<double>(0, 1, 0.1);
  ASSERT_EQ(a.shape(0), 10);
  EXPECT_TRUE(Same(0.7000000000000001, a(7)));
  auto b = pydd::arange<double>(0.1, 2.0, 0.3);
  ASSERT_EQ(b.shape(0), 7);
  EXPECT_TRUE(Same(1.9000000000000004, b(6)));
  EXPECT_EQ(pydd::arange<double>(1, 0, -0.3).shape(0), 4);
  auto i = pydd::arange<int64_t>(int64_t{10}, int64_t{-3}, int64_t{-4});
  EXPECT_EQ(elements(i), (std::vector<int64_t>{10, 6, 2, -2}));
  EXPECT_EQ(pydd::arange<int64_t>(int64_t{5}, int64_t{5}, int64_t{1}).shape(0), 0);
  EXPECT_EQ(pydd::arange<int64_t>(int64_t{0}, int64_t{7}, int64_t{3}).shape(0), 3);
  EXPECT_TRUE(Raises([] { pydd::arange<int64_t>(int64_t{0}, int64_t{7}, int64_t{0}); }, ErrorKind::ValueError,
                     "arange: step must not be zero"));
}

// Large operands take the flat fast path; check it against element access.
TEST(Elementwise, LargeContiguousAndScalarPaths) {
  const int64_t n = 100003;
  auto a = iota(n);
  auto b = pydd::map2<double, double>("mul", pydd::op::mul{}, a, 0.5);
  auto c = pydd::map2<double, double>("add", pydd::op::add{}, a, b);
  for (int64_t i = 0; i < n; i += 977) EXPECT_EQ(c(i), 1.5 * double(i));
  auto v = pydd::subarray<1>(a, Slice{0, 0, 3, false, false});
  auto d = pydd::map2<double, double>("sub", pydd::op::sub{}, v, v);
  EXPECT_EQ(pydd::max(d), 0.0);
}

// ---------------------------------------------------------------------------
// Reductions

// 100003 float32 values (i * 7919 % 1000) / 7, as NumPy builds them.
Array<float, 1> pattern_f32() {
  auto a = Array<float, 1>::empty({100003});
  for (int64_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<float>(static_cast<double>(i * 7919 % 1000) / 7.0);
  return a;
}
Array<double, 1> pattern_f64() {
  auto a = Array<double, 1>::empty({100003});
  for (int64_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<double>(i * 7919 % 1000) / 7.0;
  return a;
}

TEST(Reduce, PairwiseSumMatchesNumPyBits) {
  auto f = pattern_f32();
  EXPECT_TRUE(Same(7135965.0f, pydd::sum<float>(f)));
  EXPECT_TRUE(Same(71.357506f, pydd::mean<float>(f)));
  EXPECT_TRUE(Same(2378695.2f, pydd::sum<float>(pydd::subarray<1>(f, Slice{0, 0, 3, false, false}))));
  auto d = pattern_f64();
  EXPECT_TRUE(Same(7135965.285714285, pydd::sum<double>(d)));
  auto m = d.alias<2>(d.data(), std::array<int64_t, 2>{400, 250}.data(), std::array<int64_t, 2>{250, 1}.data());
  EXPECT_TRUE(Same(7135714.285714285, pydd::sum<double>(pydd::transpose(m))));
  auto s0 = pydd::sum_axis<double>(m, 0);
  auto s1 = pydd::sum_axis<double>(m, -1);
  ASSERT_EQ(s0.shape(0), 250);
  ASSERT_EQ(s1.shape(0), 400);
  // Checked against NumPy's repr to 10 significant digits and by exact sums.
  EXPECT_NEAR(s0(0), 21428.57142857, 1e-7);
  EXPECT_NEAR(s1(1), 17910.71428571, 1e-7);
  auto t0 = pydd::sum_axis<double>(pydd::transpose(m), 0);
  EXPECT_TRUE(Same(s1(0), t0(0)));
  EXPECT_TRUE(Same(0.0, pydd::sum<double>(make<double, 1>({1}, {-0.0}))));
}

TEST(Reduce, IntegerSumsProdsMeans) {
  auto i = make<int32_t, 1>({3}, {std::numeric_limits<int32_t>::max(), 1, 1});
  EXPECT_EQ(pydd::sum<int64_t>(i), int64_t{2147483649});
  auto z = Array<int32_t, 1>::empty({100003});
  for (int64_t k = 0; k < z.size(); ++k) z.data()[k] = int32_t(k % 1000);
  EXPECT_TRUE(Same(499.4850454486365, pydd::mean<double>(z)));
  EXPECT_EQ(pydd::mean<double>(pydd::arange<int64_t>(int64_t{0}, int64_t{20000}, int64_t{1})), 9999.5);
  EXPECT_EQ(pydd::prod<int64_t>(make<int64_t, 1>({4}, {2, -3, 4, 5})), -120);
  EXPECT_EQ(pydd::prod<int64_t>(make<int64_t, 1>({2}, {int64_t{1} << 62, 4})), 0);  // wraps
  EXPECT_EQ(pydd::sum<int64_t>(make<bool, 1>({3}, {true, false, true})), 2);
  EXPECT_EQ(pydd::prod<double>(Array<double, 1>::zeros({0})), 1.0);
  EXPECT_EQ(pydd::sum<double>(Array<double, 2>::zeros({0, 4})), 0.0);
  EXPECT_TRUE(std::isnan(pydd::mean<double>(Array<double, 1>::zeros({0}))));
}

TEST(Reduce, MinMaxNaNAndEmpty) {
  auto a = make<double, 1>({4}, {3, -1, kNaN, 7});
  EXPECT_TRUE(std::isnan(pydd::min(a)));
  EXPECT_TRUE(std::isnan(pydd::max(a)));
  auto b = make<double, 2>({2, 2}, {3, -1, 0, 7});
  EXPECT_EQ(pydd::min(b), -1.0);
  EXPECT_EQ(pydd::max(pydd::transpose(b)), 7.0);
  EXPECT_EQ(pydd::max(make<int64_t, 1>({3}, {-5, -2, -9})), -2);
  EXPECT_TRUE(Raises([] { pydd::min(Array<double, 1>::zeros({0})); }, ErrorKind::ValueError,
                     "zero-size array to reduction operation minimum which has no identity"));
  EXPECT_TRUE(Raises([] { pydd::max(Array<int32_t, 2>::zeros({3, 0})); }, ErrorKind::ValueError,
                     "zero-size array to reduction operation maximum which has no identity"));
}

TEST(Reduce, ArgminArgmax) {
  auto a = make<double, 1>({6}, {3, 1, 5, 1, 5, 0.5});
  EXPECT_EQ(pydd::argmax(a), 2);
  EXPECT_EQ(pydd::argmin(a), 5);
  EXPECT_EQ(pydd::argmin(make<double, 1>({4}, {3, kNaN, 0, kNaN})), 1);
  EXPECT_EQ(pydd::argmax(make<double, 1>({3}, {kNaN, 9, 9})), 0);
  // C order over the logical shape of a transposed view.
  auto m = make<double, 2>({2, 3}, {0, 9, 2, 9, 1, 0});
  EXPECT_EQ(pydd::argmax(m), 1);
  EXPECT_EQ(pydd::argmax(pydd::transpose(m)), 1);  // t = [[0 9] [9 1] [2 0]]
  EXPECT_EQ(pydd::argmin(pydd::transpose(m)), 0);
  EXPECT_EQ(pydd::argmax(make<bool, 1>({3}, {false, true, true})), 1);
  // Long arrays: the best sits in a later block; a tie earlier must not win.
  auto big = iota(5000);
  big(4000) = 1e9;
  big(4500) = 1e9;
  EXPECT_EQ(pydd::argmax(big), 4000);
  big(3000) = kNaN;
  EXPECT_EQ(pydd::argmax(big), 3000);
  EXPECT_EQ(pydd::argmin(pydd::subarray<1>(iota(5000), Slice{0, 0, -1, false, false})), 4999);
  // Ties in different vector lanes: the smaller index wins, whatever the lane.
  auto ties = Array<double, 1>::zeros({64});
  ties(16) = 5, ties(13) = 5;
  EXPECT_EQ(pydd::argmax(ties), 13);
  auto ti = Array<int32_t, 1>::zeros({100});
  ti(70) = -1, ti(33) = -1;
  EXPECT_EQ(pydd::argmin(ti), 33);
  auto tf = pydd::astype<float>(iota(100));
  tf(90) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(pydd::argmin(tf), 90);
  EXPECT_EQ(pydd::argmax(pydd::astype<float>(iota(100))), 99);
  EXPECT_TRUE(Raises([] { pydd::argmin(Array<double, 1>::zeros({0})); }, ErrorKind::ValueError,
                     "attempt to get argmin of an empty sequence"));
  EXPECT_TRUE(Raises([] { pydd::argmax(Array<double, 1>::zeros({0})); }, ErrorKind::ValueError,
                     "attempt to get argmax of an empty sequence"));
}

TEST(Reduce, AnyAllContainsNonzero) {
  auto z = Array<double, 1>::zeros({3000});
  EXPECT_FALSE(pydd::any(z));
  EXPECT_TRUE(pydd::all(Array<double, 1>::zeros({0})));
  EXPECT_FALSE(pydd::any(Array<double, 1>::zeros({0})));
  z(2999) = kNaN;
  EXPECT_TRUE(pydd::any(z));
  EXPECT_FALSE(pydd::all(z));
  EXPECT_TRUE(pydd::all(make<double, 1>({2}, {kNaN, -1})));
  EXPECT_TRUE(pydd::contains(iota(5), int64_t{3}));
  EXPECT_FALSE(pydd::contains(iota(5), 2.5));
  EXPECT_FALSE(pydd::contains(make<double, 1>({1}, {kNaN}), kNaN));
  EXPECT_TRUE(pydd::contains(pydd::transpose(iota2(3, 3)), 8));
  auto nz = pydd::nonzero(make<double, 1>({5}, {0, 1, 0, -2, kNaN}));
  EXPECT_EQ(elements(nz), (std::vector<int64_t>{1, 3, 4}));
}

// Plain-loop references for max/min/argmax/argmin (NaN propagates; the
// first NaN is the arg result, otherwise the first extreme).
template <class T>
int64_t ref_arg(const std::vector<T>& v, bool greater) {
  int64_t at = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != v[i]) return static_cast<int64_t>(i);
    if (greater ? v[i] > v[at] : v[i] < v[at]) at = static_cast<int64_t>(i);
  }
  return at;
}

// Checks the four reductions on v, contiguous and as every other element
// of a strided view.
template <class T>
void check_extremes(const std::vector<T>& v, const std::string& what) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t imax = ref_arg(v, true), imin = ref_arg(v, false);
  auto a = make<T, 1>({n}, v);
  auto twice = Array<T, 1>::zeros({2 * n});
  for (int64_t i = 0; i < n; ++i) twice.data()[2 * i] = v[static_cast<size_t>(i)];
  auto strided = Array<T, 1>::borrow(twice.data(), {n}, {2});
  for (const auto& x : {a, strided}) {
    EXPECT_EQ(pydd::argmax(x), imax) << what << " n=" << n;
    EXPECT_EQ(pydd::argmin(x), imin) << what << " n=" << n;
    // Values: the bits of the reference element (NaN stays NaN); signed
    // zeros may come back either way, as from NumPy.
    const T mx = pydd::max(x), mn = pydd::min(x), rmx = v[static_cast<size_t>(imax)],
            rmn = v[static_cast<size_t>(imin)];
    EXPECT_TRUE(rmx != rmx ? mx != mx : mx == rmx) << what << " max n=" << n << " got " << mx << " want " << rmx;
    EXPECT_TRUE(rmn != rmn ? mn != mn : mn == rmn) << what << " min n=" << n << " got " << mn << " want " << rmn;
  }
}

template <class T>
void check_extremes_for_type(const char* type) {
  uint64_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>(seed >> 40) % 1000 - 500;  // many ties
  };
  // Every length up to past two 4 x 64-byte blocks of any type (the vector
  // loops start at 64 elements), around later block edges, and longer.
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 72; ++n) lengths.push_back(n);
  for (int64_t n : {95, 96, 97, 127, 128, 129, 191, 255, 256, 257, 300, 511, 512, 513, 1000, 4099})
    lengths.push_back(n);
  for (int64_t n : lengths) {
    std::vector<T> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<T>(next());
    check_extremes(v, std::string(type) + " random");
    // The extreme value at one position only, anywhere (blocks, lanes, tail).
    for (int64_t k = 0; k < n; k += n > 300 ? 37 : 1) {
      std::vector<T> w = v;
      w[static_cast<size_t>(k)] = T(10000);
      check_extremes(w, std::string(type) + " one max at " + std::to_string(k));
      w[static_cast<size_t>(k)] = T(-10000);
      check_extremes(w, std::string(type) + " one min at " + std::to_string(k));
      if constexpr (std::is_floating_point_v<T>) {
        w[static_cast<size_t>(k)] = std::numeric_limits<T>::quiet_NaN();
        check_extremes(w, std::string(type) + " NaN at " + std::to_string(k));
        w[static_cast<size_t>(n - 1)] = -std::numeric_limits<T>::quiet_NaN();  // a second NaN after it
        check_extremes(w, std::string(type) + " NaNs at " + std::to_string(k) + " and the end");
        w = v;
        w[static_cast<size_t>(k)] = std::numeric_limits<T>::infinity();
        check_extremes(w, std::string(type) + " inf at " + std::to_string(k));
      }
    }
  }
  // Equal values everywhere: index 0.
  check_extremes(std::vector<T>(1000, T(3)), std::string(type) + " constant");
}

TEST(Reduce, ExtremesAgreeWithPlainLoopsAtEveryPosition) {
  check_extremes_for_type<double>("float64");
  check_extremes_for_type<float>("float32");
  check_extremes_for_type<int64_t>("int64");
  check_extremes_for_type<int32_t>("int32");
  // Extremes of the type itself.
  check_extremes(std::vector<int64_t>(100, INT64_MIN), "int64 min");
  std::vector<double> infs(200, -kInf);
  infs[150] = kInf;
  check_extremes(infs, "infinities");
  // Rows of a 2-D array: the first NaN in C order wins over a later row's.
  auto m = Array<double, 2>::zeros({4, 300});
  m(2, 10) = kNaN, m(1, 290) = kNaN, m(3, 0) = 5;
  EXPECT_EQ(pydd::argmax(m), 300 + 290);
  EXPECT_TRUE(std::isnan(pydd::max(m)));
  m(1, 290) = 1, m(2, 10) = 1;
  EXPECT_EQ(pydd::argmax(m), 900);
  EXPECT_EQ(pydd::argmax(pydd::transpose(m)), 3);
}

TEST(Reduce, AnyAllOfBoolsAtEveryPosition) {
  for (int64_t n : {1, 2, 31, 63, 64, 65, 1023, 1024, 1025, 2048, 3001}) {
    auto f = Array<bool, 1>::zeros({n});
    auto t = Array<bool, 1>::filled({n}, true);
    EXPECT_FALSE(pydd::any(f)) << n;
    EXPECT_TRUE(pydd::all(t)) << n;
    for (int64_t k = 0; k < n; ++k) {
      f(k) = true, t(k) = false;
      ASSERT_TRUE(pydd::any(f)) << "n=" << n << " true at " << k;
      ASSERT_FALSE(pydd::all(f) && n > 1) << "n=" << n << " true at " << k;
      ASSERT_FALSE(pydd::all(t)) << "n=" << n << " false at " << k;
      ASSERT_TRUE(pydd::any(t) || n == 1) << "n=" << n << " false at " << k;
      f(k) = false, t(k) = true;
    }
  }
  // Strided rows and a transposed 2-D view: only the viewed bytes count.
  auto backing = Array<bool, 1>::zeros({4000});
  auto odd = Array<bool, 1>::borrow(backing.data() + 1, {1999}, {2});
  backing(2000) = true;  // not in the view
  EXPECT_FALSE(pydd::any(odd));
  backing(2001) = true;
  EXPECT_TRUE(pydd::any(odd));
  for (int64_t i = 1; i < 4000; i += 2) backing(i) = true;
  backing(0) = false;
  EXPECT_TRUE(pydd::all(odd));
  backing(3999) = false;  // not in the view
  EXPECT_TRUE(pydd::all(odd));
  backing(3997) = false;  // its last element
  EXPECT_FALSE(pydd::all(odd));
  auto grid = Array<bool, 2>::filled({50, 70}, true);
  grid(49, 69) = false;
  EXPECT_FALSE(pydd::all(pydd::transpose(grid)));
  EXPECT_TRUE(pydd::any(pydd::transpose(grid)));
  EXPECT_TRUE(pydd::all(Array<bool, 2>::zeros({0, 5})));
  EXPECT_FALSE(pydd::any(Array<bool, 2>::zeros({5, 0})));
  // A byte other than 0/1 (a uint8 buffer viewed as bool in NumPy) is true.
  auto odd_bytes = Array<bool, 1>::zeros({2000});
  std::memset(static_cast<void*>(odd_bytes.data()), 2, 2000);
  EXPECT_TRUE(pydd::any(odd_bytes));
  EXPECT_TRUE(pydd::all(odd_bytes));
}

TEST(Reduce, Allclose) {
  EXPECT_FALSE(pydd::allclose(make<double, 1>({2}, {1e10, 1e-7}), make<double, 1>({2}, {1.00001e10, 1e-8})));
  EXPECT_TRUE(pydd::allclose(make<double, 1>({2}, {1e10, 1e-8}), make<double, 1>({2}, {1.00001e10, 1e-9})));
  EXPECT_TRUE(pydd::allclose(make<double, 1>({1}, {kInf}), make<double, 1>({1}, {kInf})));
  EXPECT_FALSE(pydd::allclose(make<double, 1>({1}, {kInf}), make<double, 1>({1}, {-kInf})));
  EXPECT_FALSE(pydd::allclose(make<double, 1>({1}, {kNaN}), make<double, 1>({1}, {kNaN})));
  EXPECT_TRUE(pydd::allclose(iota2(2, 3), pydd::subarray<1>(iota2(2, 3), int64_t{0}), 0.0, 3.0));  // broadcast
  EXPECT_TRUE(pydd::allclose(iota(3), 1.0, 0.0, 1.0));
  EXPECT_TRUE(Raises([] { pydd::allclose(iota(3), iota(2)); }, ErrorKind::ValueError,
                     "allclose: operands could not be broadcast together with shapes (3,) (2,) "));
}

TEST(Reduce, AxisForms) {
  auto a = make<int64_t, 3>({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto s1 = pydd::sum_axis<int64_t>(a, 1);
  EXPECT_EQ(elements(s1), (std::vector<int64_t>{5, 7, 9, 17, 19, 21}));
  auto p0 = pydd::prod_axis<int64_t>(a, -3);
  EXPECT_EQ(elements(p0), (std::vector<int64_t>{7, 16, 27, 40, 55, 72}));
  auto mx = pydd::max_axis(a, 2);
  EXPECT_EQ(elements(mx), (std::vector<int64_t>{3, 6, 9, 12}));
  auto mn = pydd::min_axis(pydd::transpose(a), 0);  // (2,2) of the minima over the last axis of a
  EXPECT_EQ(elements(mn), (std::vector<int64_t>{1, 7, 4, 10}));
  auto me = pydd::mean_axis<double>(a, 0);
  EXPECT_EQ(elements(me), (std::vector<double>{4, 5, 6, 7, 8, 9}));
  auto nan = pydd::max_axis(make<double, 2>({2, 2}, {1, kNaN, 3, 0}), 0);
  EXPECT_EQ(nan(0), 3.0);
  EXPECT_TRUE(std::isnan(nan(1)));
  EXPECT_EQ(pydd::sum_axis<double>(Array<double, 2>::zeros({0, 5}), 0).shape(0), 5);
  EXPECT_EQ(pydd::min_axis(Array<double, 2>::zeros({5, 0}), 0).shape(0), 0);
  EXPECT_TRUE(Raises([] { pydd::min_axis(Array<double, 2>::zeros({0, 5}), 0); }, ErrorKind::ValueError,
                     "zero-size array to reduction operation minimum which has no identity"));
  EXPECT_TRUE(Raises([&] { pydd::sum_axis<int64_t>(a, 3); }, ErrorKind::ValueError,
                     "axis 3 is out of bounds for array of dimension 3"));
  EXPECT_TRUE(Raises([&] { pydd::max_axis(a, -4); }, ErrorKind::ValueError,
                     "axis -4 is out of bounds for array of dimension 3"));
}

// ---------------------------------------------------------------------------
// Linear algebra

TEST(Linalg, MatmulForms) {
  auto a = iota2(2, 3);
  auto b = iota2(3, 2);
  auto c = pydd::matmul<double>(a, b);
  EXPECT_EQ(elements(c), (std::vector<double>{10, 13, 28, 40}));
  auto v = pydd::matmul<double>(a, iota(3));
  EXPECT_EQ(elements(v), (std::vector<double>{5, 14}));
  auto w = pydd::matmul<double>(iota(2), a);
  EXPECT_EQ(elements(w), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(pydd::matmul<double>(iota(3), iota(3)), 5.0);
  EXPECT_EQ(pydd::innerprod(iota(4), iota(4)), 14.0);
  EXPECT_EQ(elements(pydd::matvect(a, iota(3))), elements(v));
  EXPECT_EQ(elements(pydd::vectmat(iota(2), a)), elements(w));
  // Transposed and strided operands.
  auto at = pydd::transpose(iota2(3, 2));  // == [[0 2 4] [1 3 5]]
  EXPECT_EQ(elements(pydd::matmat(at, b)), (std::vector<double>{20, 26, 26, 35}));
  auto s = pydd::subarray<2>(iota2(4, 6), Slice{0, 0, 2, false, false}, Slice{0, 0, 2, false, false});  // (2,3)
  EXPECT_EQ(elements(pydd::matmul<double>(s, pydd::subarray<1>(iota(6), Slice{0, 0, -2, false, false}))),
            (std::vector<double>{0 * 5 + 2 * 3 + 4 * 1, 12 * 5 + 14 * 3 + 16 * 1}));
  auto row = pydd::matmul<double>(pydd::subarray<2>(a, Slice{0, 1, 1, false, true}), b);  // (1,3) @ (3,2)
  EXPECT_EQ(elements(row), (std::vector<double>{10, 13}));
  auto empty = pydd::matmul<double>(Array<double, 2>::zeros({2, 0}), Array<double, 2>::zeros({0, 3}));
  EXPECT_EQ(elements(empty), (std::vector<double>(6, 0.0)));
  EXPECT_TRUE(Raises([] { pydd::matmul<double>(iota2(2, 3), iota2(4, 5)); }, ErrorKind::ValueError,
                     "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                     "(n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"));
  EXPECT_TRUE(Raises([] { pydd::innerprod(iota(3), iota(4)); }, ErrorKind::ValueError,
                     "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                     "(n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)"));
}

TEST(Linalg, IntegerAndBoolProducts) {
  auto a = make<int64_t, 2>({2, 2}, {int64_t{1} << 62, 1, 2, 3});
  auto c = pydd::matmul<int64_t>(a, make<int64_t, 2>({2, 2}, {4, 0, 5, 1}));
  EXPECT_EQ(elements(c), (std::vector<int64_t>{5, 1, 23, 3}));  // 2^64 wraps to 0
  auto t = pydd::matmul<int32_t>(pydd::transpose(make<int32_t, 2>({2, 2}, {1, 2, 3, 4})), make<int32_t, 1>({2}, {1, 1}));
  EXPECT_EQ(elements(t), (std::vector<int32_t>{4, 6}));
  auto b = make<bool, 2>({2, 2}, {true, false, false, false});
  auto bb = pydd::matmul<bool>(b, make<bool, 2>({2, 2}, {true, true, true, false}));
  EXPECT_EQ(elements(bb), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(pydd::matmul<int64_t>(make<int64_t, 1>({2}, {3, 4}), make<int64_t, 1>({2}, {5, 6})), 39);
}

TEST(Linalg, Float32Matmul) {
  auto a = pydd::map2<float, float>("div", pydd::op::truediv{}, pydd::astype<float>(iota2(2, 3)), 3.0f);
  auto b = pydd::map2<float, float>("div", pydd::op::truediv{}, pydd::astype<float>(iota2(3, 2)), 7.0f);
  auto c = pydd::matmul<float>(a, b);
  EXPECT_EQ(elements(c), (std::vector<float>{0.4761905f, 0.61904764f, 1.3333334f, 1.9047619f}));
}

TEST(Linalg, SymmetricAndTriangularProducts) {
  auto a = make<double, 2>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto s = pydd::syrk(a);
  EXPECT_EQ(elements(s), (std::vector<double>{14, 32, 32, 77}));
  auto b = make<double, 2>({2, 3}, {0, 1, 0, 1, 0, 1});
  EXPECT_EQ(elements(pydd::syr2k(a, b)), (std::vector<double>{4, 9, 9, 20}));  // A B^T + B A^T
  auto l = make<double, 2>({2, 2}, {2, 99, 3, 4});  // upper triangle ignored
  EXPECT_EQ(elements(pydd::symm(l, a)), (std::vector<double>{14, 19, 24, 19, 26, 33}));
  EXPECT_EQ(elements(pydd::trmm(l, a)), (std::vector<double>{2, 4, 6, 19, 26, 33}));
  EXPECT_EQ(elements(pydd::symm(pydd::transpose(make<double, 2>({2, 2}, {2, 3, 99, 4})), a)),
            (std::vector<double>{14, 19, 24, 19, 26, 33}));
  auto li = make<int64_t, 2>({2, 2}, {2, 99, 3, 4});
  auto ai = make<int64_t, 2>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(elements(pydd::symm(li, ai)), (std::vector<int64_t>{14, 19, 24, 19, 26, 33}));
  EXPECT_EQ(elements(pydd::trmm(li, ai)), (std::vector<int64_t>{2, 4, 6, 19, 26, 33}));
  EXPECT_EQ(elements(pydd::syrk(ai)), (std::vector<int64_t>{14, 32, 32, 77}));
}

TEST(Linalg, LuMatchesSciPy) {
  auto a = make<double, 2>({3, 4}, {2, 1, 1, 3, 4, -6, 0, 1, -2, 7, 2, 5});
  {
    auto [P, L, U] = pydd::lu(a);
    EXPECT_EQ(elements(P), (std::vector<double>{0, 1, 0, 1, 0, 0, 0, 0, 1}));
    EXPECT_EQ(elements(L), (std::vector<double>{1, 0, 0, 0.5, 1, 0, -0.5, 1, 1}));
    EXPECT_EQ(elements(U), (std::vector<double>{4, -6, 0, 1, 0, 4, 1, 2.5, 0, 0, 1, 3}));
  }
  {
    auto [P, L, U] = pydd::lu(pydd::transpose(a));  // (4,3)
    EXPECT_EQ(elements(P), (std::vector<double>{0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0}));
    const std::vector<double> el = {1, 0, 0, 0.3333333333333333, 1, 0, 0.6666666666666666, -0.5263157894736843, 1,
                                     0.3333333333333333, 0.052631578947368425, -0.020833333333333405};
    const std::vector<double> eu = {3, 1, 5, 0, -6.333333333333333, 5.333333333333334, 0, 0, -2.526315789473683};
    auto gl = elements(L), gu = elements(U);
    for (size_t i = 0; i < el.size(); ++i) EXPECT_NEAR(el[i], gl[i], 1e-15) << i;
    for (size_t i = 0; i < eu.size(); ++i) EXPECT_NEAR(eu[i], gu[i], 1e-14) << i;
  }
  auto sq = pydd::subarray<2>(a, kAll, Slice{0, 3, 1, false, true});
  auto [lu, piv] = pydd::ludcmp(sq);
  EXPECT_EQ(elements(lu), (std::vector<double>{4, -6, 0, 0.5, 4, 1, -0.5, 1, 1}));
  EXPECT_EQ(elements(piv), (std::vector<int32_t>{1, 1, 2}));
  auto [lf, pf] = pydd::ludcmp(pydd::astype<float>(sq));
  static_assert(std::is_same_v<decltype(lf), Array<float, 2>>);
  EXPECT_EQ(lf(0, 0), 4.0f);
  auto [li, pi] = pydd::ludcmp(make<int64_t, 2>({2, 2}, {0, 1, 1, 0}));  // ints factor in float64
  EXPECT_EQ(elements(li), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(elements(pi), (std::vector<int32_t>{1, 1}));
  auto [ls, ps] = pydd::ludcmp(Array<double, 2>::zeros({2, 2}));  // singular: no error, as SciPy
  EXPECT_EQ(elements(ls), (std::vector<double>(4, 0.0)));
  EXPECT_TRUE(Raises([&] { pydd::ludcmp(a); }, ErrorKind::ValueError, "expected square matrix"));
  EXPECT_TRUE(Raises([] { pydd::lu(make<double, 2>({1, 2}, {1, kNaN})); }, ErrorKind::ValueError,
                     "array must not contain infs or NaNs"));
}

// ---------------------------------------------------------------------------
// print() of 1-D arrays

std::string captured;
void capture(const char* text, int64_t len) { captured.append(text, static_cast<size_t>(len)); }

template <class... A>
std::string printed(const A&... args) {
  captured.clear();
  pydd::print_hook = capture;
  pydd::print(args...);
  pydd::print_hook = nullptr;
  return captured;
}

TEST(PrintArray, IntsBoolsFloatsAsNumPy) {
  EXPECT_EQ(printed(make<int64_t, 1>({3}, {1, 2, 3})), "[1 2 3]\n");
  EXPECT_EQ(printed(make<int32_t, 1>({3}, {-5, 100000, 3})), "[    -5 100000      3]\n");
  EXPECT_EQ(printed(make<bool, 1>({2}, {true, false})), "[ True False]\n");
  EXPECT_EQ(printed(make<double, 1>({3}, {1, 2, 3})), "[1. 2. 3.]\n");
  EXPECT_EQ(printed(make<double, 1>({3}, {0.1, 0.25, 3})), "[0.1  0.25 3.  ]\n");
  EXPECT_EQ(printed(make<double, 1>({2}, {-0.0, 1})), "[-0.  1.]\n");
  EXPECT_EQ(printed(make<double, 1>({3}, {kNaN, 1, -kInf})), "[ nan   1. -inf]\n");
  EXPECT_EQ(printed(make<double, 1>({2}, {1e20, 1})), "[1.e+20 1.e+00]\n");
  EXPECT_EQ(printed(make<double, 1>({2}, {1e-5, 1.5})), "[1.0e-05 1.5e+00]\n");
  EXPECT_EQ(printed(make<double, 1>({3}, {1.0 / 3, 2.0 / 3, 1e-3})), "[0.33333333 0.66666667 0.001     ]\n");
  EXPECT_EQ(printed(make<float, 1>({2}, {16777216.0f, 0.3f})), "[1.6777216e+07 3.0000001e-01]\n");
  EXPECT_EQ(printed(Array<double, 1>::zeros({0})), "[]\n");
  EXPECT_EQ(printed("x", pydd::subarray<1>(iota(6), Slice{0, 0, -2, false, false}), 7), "x [5. 3. 1.] 7\n");
}

TEST(PrintArray, WrapsAt75ColumnsAndSummarizes) {
  EXPECT_EQ(printed(pydd::arange<int64_t>(int64_t{0}, int64_t{30}, int64_t{1})),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29]\n");
  EXPECT_EQ(printed(iota(3000)), "[0.000e+00 1.000e+00 2.000e+00 ... 2.997e+03 2.998e+03 2.999e+03]\n");
  EXPECT_EQ(printed(pydd::arange<int64_t>(int64_t{0}, int64_t{2000}, int64_t{1})), "[   0    1    2 ... 1997 1998 1999]\n");
}

}  // namespace
