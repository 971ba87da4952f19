// pydd runtime: Python/NumPy semantics for scalar arithmetic.
//
// C++ operators differ from Python's: `/` and `%` truncate toward zero,
// INT_MIN / -1 traps, and a zero divisor is undefined behaviour. The code
// generator calls these helpers instead, with both operands already
// converted to the common type T (int32_t, int64_t, float or double).
//
// Integer results wrap on overflow like NumPy's fixed-width integers (kernels
// are compiled with -fwrapv; the helpers here avoid signed overflow anyway so
// that they are also correct without it). Float division and modulo by zero
// raise ZeroDivisionError as in Python, Numba and Cython, not NumPy's inf/nan.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "pydd/complex.h"
#include "pydd/errors.h"
#include "pydd/scalar_core.h"

namespace pydd {

namespace detail {

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace detail

/// Python's `a // b`: the quotient rounded toward negative infinity.
template <class T>
T floordiv(T a, T b) {
  static_assert(std::is_arithmetic_v<T>, "floordiv needs an arithmetic type");
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "float floor division by zero");
    T q, m;
    detail::float_divmod(a, b, &q, &m);
    return q;
  } else {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "integer division or modulo by zero");
    return detail::int_floordiv(a, b);
  }
}

/// Python's `a % b`: the remainder takes the sign of the divisor.
template <class T>
T mod(T a, T b) {
  static_assert(std::is_arithmetic_v<T>, "mod needs an arithmetic type");
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "float modulo");
    return detail::float_mod(a, b);
  } else {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "integer division or modulo by zero");
    return detail::int_mod(a, b);
  }
}

/// Python's ZeroDivisionError for `/`, out of line: a loop that divides
/// keeps one compare and branch.
[[noreturn]] __attribute__((noinline, cold)) inline void throw_zero_division() {
  throw Error(ErrorKind::ZeroDivisionError, "division by zero");
}

/// Python's `a / b` on floats (the compiler converts int operands first).
template <class T>
T truediv(T a, T b) {
  static_assert(std::is_floating_point_v<T>, "truediv needs float operands");
  if (b == 0) throw_zero_division();
  return a / b;
}

/// `a / b` in a loop marked For::defersDivisionChecks
/// (opt/DeferDivisionChecks.h): a zero divisor is recorded in `zero`, which
/// the loop tests when it ends, and the quotient is IEEE's (an infinity or
/// nan). An integer flag and no branch, so g++ vectorizes the loop (a bool
/// flag kept it scalar).
template <class T>
T truediv_deferred(T a, T b, int64_t& zero) {
  static_assert(std::is_floating_point_v<T>, "truediv_deferred needs float operands");
  zero |= int64_t(b == 0);
  return a / b;
}

/// Python's `a / b` on complex numbers: NumPy's division, but a zero
/// divisor raises ZeroDivisionError as Python's complex division does.
template <class T>
std::complex<T> truediv(std::complex<T> a, std::complex<T> b) {
  if (b.real() == 0 && b.imag() == 0) throw Error(ErrorKind::ZeroDivisionError, "complex division by zero");
  return complex_div(a, b);
}

/// `a ** b` with NumPy's semantics for fixed-width types.
template <class T>
T power(T a, T b) {
  static_assert(is_number_v<T>, "power needs a number type");
  if constexpr (is_complex_v<T>) {
    // NumPy's npy_cpow, also for scalars: 0j ** -1 is nan, not Python's error.
    return complex_pow(a, b);
  } else if constexpr (std::is_floating_point_v<T>) {
    // NumPy, not Python: a negative base to a fractional power is nan rather
    // than a complex number, and 0.0 ** -1 is inf rather than an error.
    return std::pow(a, b);
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0)
        throw Error(ErrorKind::ValueError, "Integers to negative integer powers are not allowed.");
    }
    return detail::int_power(a, b);
  }
}

/// NumPy's astype for one scalar among bool, int32_t, int64_t, float, double
/// and the complex types.
template <class To, class From>
To convert(From x) {
  static_assert(is_number_v<To> && is_number_v<From>, "convert needs number types");
  if constexpr (is_complex_v<To>) {
    if constexpr (is_complex_v<From>) return To(x);
    else return To(static_cast<typename To::value_type>(x), 0);
  } else if constexpr (is_complex_v<From>) {
    // astype to a real type keeps the real part (NumPy's ComplexWarning
    // case); bool is the truth value of both parts.
    if constexpr (std::is_same_v<To, bool>) return truthy(x);
    else return convert<To>(x.real());
  } else {
    return detail::real_convert<To>(x);
  }
}

/// Python's truth value of a number: nonzero (nan included) is true.
template <class T>
bool truthy(T x) {
  return x != 0;
}

/// where(c, a, b) on scalars: a call, so that both values are evaluated
/// before one is chosen, as NumPy evaluates its arguments.
template <class T>
inline T select(bool c, T a, T b) {
  return c ? a : b;
}

/// Python's math.log(x, base): ValueError("math domain error") for a value
/// <= 0 (or -inf), ZeroDivisionError when log(base) is 0; NaN propagates.
inline double log_base_value(double x, double base) {
  auto ln = [](double v) {
    if (!(v > 0) && !std::isnan(v)) throw Error(ErrorKind::ValueError, "math domain error");
    return std::log(v);
  };
  const double num = ln(x), den = ln(base);
  if (den == 0) throw Error(ErrorKind::ZeroDivisionError, "float division by zero");
  return num / den;
}

}  // namespace pydd
