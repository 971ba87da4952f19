// pydd runtime: complex numbers (complex64 is std::complex<float>,
// complex128 std::complex<double>) with NumPy's arithmetic.
//
// std::complex's operator* and operator/ follow C99 Annex G: they test
// for infinities and NaNs on every call (libgcc's __muldc3 / __divdc3) and
// give other values than NumPy where an operand is infinite or a divisor
// is zero. The helpers here are NumPy's loops (numpy/core/src/umath
// loops.c.src and npymath's npy_cpow), which Python's own complex
// arithmetic matches except that Python raises for a zero divisor.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace pydd {

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

/// A value pydd computes with element by element: bool, an integer, a
/// float or a complex number.
template <class T>
inline constexpr bool is_number_v = std::is_arithmetic_v<T> || is_complex_v<T>;

/// The parts' type of a complex type (float for complex64); T otherwise.
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_of_t = typename real_of<T>::type;

/// a * b without Annex G's recovery of infinities (NumPy's and Python's).
template <class T>
std::complex<T> complex_mul(std::complex<T> a, std::complex<T> b) {
  T rr = a.real() * b.real(), ii = a.imag() * b.imag(), ri = a.real() * b.imag(), ir = a.imag() * b.real();
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  // GCC 12's vectorizer recognizes this formula as a complex product and
  // emits vfmaddsub (one rounding fewer) even under -ffp-contract=off; an
  // empty asm keeps each product rounded, as NumPy's loops round it.
  asm("" : "+x"(rr), "+x"(ii), "+x"(ri), "+x"(ir));
#endif
  return {rr - ii, ri + ir};
}

/// a / b as NumPy's division loop: Smith's algorithm, scaling by the larger
/// part of b; a zero b divides each part of a by zero (inf or nan parts).
template <class T>
std::complex<T> complex_div(std::complex<T> a, std::complex<T> b) {
  const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const T abs_br = std::fabs(br), abs_bi = std::fabs(bi);
  if (abs_br >= abs_bi) {
    if (abs_br == 0 && abs_bi == 0) return {ar / abs_br, ai / abs_br};
    const T rat = bi / br, scl = T(1) / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  const T rat = br / bi, scl = T(1) / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

/// a ** b as NumPy's npy_cpow: 1 for a zero exponent, 0 for a zero base
/// and a positive real exponent (nan otherwise), repeated multiplication
/// for integer exponents below 100 in magnitude, the C library's cpow
/// for the rest.
template <class T>
std::complex<T> complex_pow(std::complex<T> a, std::complex<T> b) {
  using C = std::complex<T>;
  const T br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return C(1, 0);
  if (a.real() == 0 && a.imag() == 0) {
    if (br > 0 && bi == 0) return C(0, 0);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    return C(nan, nan);
  }
  if (bi == 0 && br > -100 && br < 100 && static_cast<T>(static_cast<int64_t>(br)) == br) {
    int64_t n = static_cast<int64_t>(br);
    if (n == 1) return a;
    if (n == 2) return complex_mul(a, a);
    if (n == 3) return complex_mul(a, complex_mul(a, a));
    C acc(1, 0), p = a;
    for (int64_t m = n < 0 ? -n : n; m; m >>= 1) {
      if (m & 1) acc = complex_mul(acc, p);
      if (m > 1) p = complex_mul(p, p);
    }
    return n < 0 ? complex_div(C(1, 0), acc) : acc;
  }
  return std::pow(a, b);
}

/// Python's truth value: nonzero in either part (nan included).
template <class T>
bool truthy(std::complex<T> x) {
  return x.real() != 0 || x.imag() != 0;
}

/// abs(z): |z| of the parts' type (hypot, as NumPy's npy_cabs).
template <class T>
T abs_value(std::complex<T> x) {
  return std::hypot(x.real(), x.imag());
}

/// z.real, z.imag of a scalar; of a real number, itself and zero.
template <class T>
real_of_t<T> real_part(T x) {
  if constexpr (is_complex_v<T>) return x.real();
  else return x;
}
template <class T>
real_of_t<T> imag_part(T x) {
  if constexpr (is_complex_v<T>) return x.imag();
  else return T(0);
}

namespace op {

/// NumPy's conjugate: (re, -im); a real number unchanged.
struct conjugate {
  template <class T>
  T operator()(T a) const {
    if constexpr (is_complex_v<T>) return std::conj(a);
    else return a;
  }
};

/// NumPy's angle: arctan2(imag, real), of the parts' type.
struct angle {
  template <class T>
  auto operator()(T a) const {
    if constexpr (is_complex_v<T>) return std::atan2(a.imag(), a.real());
    else return std::atan2(T(0), a);
  }
};

}  // namespace op

/// NumPy's complex log2, exp2, expm1 and log1p (nc_log2... in
/// numpy/core/src/umath/funcs.inc.src), which the C++ library lacks.
namespace complex_fn {

template <class T>
std::complex<T> log2(std::complex<T> z) {
  const std::complex<T> l = std::log(z);
  const T k = T(1.442695040888963407359924681001892137);  // log2(e)
  return {l.real() * k, l.imag() * k};
}
template <class T>
std::complex<T> exp2(std::complex<T> z) {
  const T ln2 = T(0.693147180559945309417232121458176568);
  return std::exp(std::complex<T>(z.real() * ln2, z.imag() * ln2));
}
template <class T>
std::complex<T> expm1(std::complex<T> z) {
  const T a = std::sin(z.imag() / 2);
  return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * a * a, std::exp(z.real()) * std::sin(z.imag())};
}
template <class T>
std::complex<T> log1p(std::complex<T> z) {
  const T l = std::hypot(z.real() + 1, z.imag());
  return {std::log(l), std::atan2(z.imag(), z.real() + 1)};
}

}  // namespace complex_fn

}  // namespace pydd

// OpenMP reductions over complex numbers, for `s += z` and `p *= z` in a pfor
// (OpenMP predefines + and * for arithmetic types only). Global, so that
// the generated code in its own namespace finds them.
#ifdef _OPENMP
#pragma omp declare reduction(+ : std::complex<float>, std::complex<double> : omp_out += omp_in) \
    initializer(omp_priv = decltype(omp_orig)(0))
#pragma omp declare reduction(* : std::complex<float>, std::complex<double> : omp_out = pydd::complex_mul(omp_out, omp_in)) \
    initializer(omp_priv = decltype(omp_orig)(1))
#endif
