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

namespace pydd {

namespace detail {

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Negation that wraps instead of overflowing for INT_MIN.
template <class T>
inline T wrapping_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

// CPython's _float_div_mod (Objects/floatobject.c), which NumPy's npy_divmod
// copies. Computing both results from one fmod keeps a == b*q + r as exact as
// floating point allows, and the signed-zero cases match Python bit for bit.
template <class T>
inline void float_divmod(T a, T b, T* floordiv, T* mod) {
  T m = std::fmod(a, b);
  // fmod is exact, but a - m is rounded, so div may be a hair off an integer.
  T div = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      div -= T(1);
    }
  } else {
    // fmod's sign for a zero remainder varies across platforms.
    m = std::copysign(T(0), b);
  }
  T q;
  if (div != 0) {
    q = std::floor(div);
    if (div - q > T(0.5)) q += T(1);
  } else {
    // Keep the sign the true quotient would have.
    q = std::copysign(T(0), a / b);
  }
  *floordiv = q;
  *mod = m;
}

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
    // INT_MIN / -1 traps on x86; NumPy returns INT_MIN, which is the wrapped negation.
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return detail::wrapping_neg(a);
    }
    T q = a / b;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) --q;
    return q;
  }
}

/// Python's `a % b`: the remainder takes the sign of the divisor.
template <class T>
T mod(T a, T b) {
  static_assert(std::is_arithmetic_v<T>, "mod needs an arithmetic type");
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "float modulo");
    // CPython's float_rem: the same adjustment as float_divmod, without the
    // quotient (so no spurious overflow from computing it).
    T m = std::fmod(a, b);
    if (m != 0) {
      if ((b < 0) != (m < 0)) m += b;
    } else {
      m = std::copysign(T(0), b);
    }
    return m;
  } else {
    if (b == 0) throw Error(ErrorKind::ZeroDivisionError, "integer division or modulo by zero");
    // INT_MIN % -1 traps on x86 although the answer is simply 0.
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
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
    // Unsigned arithmetic wraps by definition; the bits equal the signed
    // wrap-around result NumPy produces.
    using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>>;
    U base = static_cast<U>(a);
    U result = 1;
    U e = static_cast<U>(b);
    while (e != 0) {
      if (e & 1u) result = static_cast<U>(result * base);
      e >>= 1;
      if (e != 0) base = static_cast<U>(base * base);
    }
    return static_cast<T>(result);
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
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != 0;  // nan is truthy, as in NumPy and Python
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // A float outside To's range (or nan) is undefined behaviour to convert
    // in C++. x86's cvttsd2si returns the "integer indefinite" value, which
    // is To's minimum, and that is what NumPy shows on x86, so produce it
    // explicitly. The bounds are powers of two, hence exact in From.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = From(2) * static_cast<From>(std::numeric_limits<To>::max() / 2 + 1);
    if (!(x >= lo && x < hi)) return std::numeric_limits<To>::min();
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From> && !std::is_same_v<From, bool>) {
    // Keep the low bits (modular), like NumPy's int64 -> int32 astype.
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(x));
  } else {
    return static_cast<To>(x);
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
