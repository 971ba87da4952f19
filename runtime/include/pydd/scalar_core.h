// pydd runtime: the cores of Python's scalar // and %, of ** on integers,
// of NumPy's element-wise // and % and of astype between real scalars, once
// for the CPU build (pydd/scalar.h, pydd/elementwise.h) and the CUDA
// kernels (pydd/cuda/kernel.h). Each assumes what its callers check first (a
// nonzero divisor, a non-negative exponent) and raises nothing, so it is
// device-safe: it includes only the C++ library's <cmath> and
// <type_traits>, and under nvcc every function is __host__ __device__.
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define PYDD_SCALAR_HD __host__ __device__
#else
#define PYDD_SCALAR_HD
#endif

namespace pydd::detail {

/// An integer type's range (std::numeric_limits is host-only under nvcc).
template <class T>
PYDD_SCALAR_HD constexpr T int_max() {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(~U(0)) >> (std::is_signed_v<T> ? 1 : 0));
}
template <class T>
PYDD_SCALAR_HD constexpr T int_min() {
  return std::is_signed_v<T> ? static_cast<T>(-int_max<T>() - 1) : T(0);
}

// Negation that wraps instead of overflowing for INT_MIN.
template <class T>
PYDD_SCALAR_HD inline T wrapping_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

// CPython's _float_div_mod (Objects/floatobject.c), which NumPy's npy_divmod
// copies. Computing both results from one fmod keeps a == b*q + r as exact as
// floating point allows, and the signed-zero cases match Python bit for bit.
template <class T>
PYDD_SCALAR_HD inline void float_divmod(T a, T b, T* floordiv, T* mod) {
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

/// CPython's float_rem: the adjustment of float_divmod without the quotient
/// (so no spurious overflow from computing it). b != 0.
template <class T>
PYDD_SCALAR_HD inline T float_mod(T a, T b) {
  T m = std::fmod(a, b);
  if (m != 0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(T(0), b);
  }
  return m;
}

/// Python's a // b on integers, b != 0. INT_MIN / -1 traps on x86; NumPy
/// returns INT_MIN, which is the wrapped negation.
template <class T>
PYDD_SCALAR_HD inline T int_floordiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrapping_neg(a);
  }
  T q = T(a / b);
  T r = T(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

/// Python's a % b on integers, b != 0 (INT_MIN % -1 traps on x86 although
/// the answer is simply 0).
template <class T>
PYDD_SCALAR_HD inline T int_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  T r = T(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/// a ** b on integers (and bool), b >= 0: unsigned arithmetic wraps by
/// definition, and its bits equal the signed wrap-around NumPy produces.
template <class T>
PYDD_SCALAR_HD inline T int_power(T a, T b) {
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

/// NumPy's floor_divide and remainder of one element (no error: a zero
/// divisor gives inf or nan for floats, 0 for integers, as NumPy's loops
/// after their warning).
template <class T>
PYDD_SCALAR_HD inline T numpy_floordiv(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return a / b;  // npy_floor_divide: inf or nan
    T q, m;
    float_divmod(a, b, &q, &m);
    return q;
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    if (b == 0) return T(0);  // NumPy warns and gives 0
    if constexpr (std::is_unsigned_v<T>) {
      return T(a / b);
    } else {
      if (b == T(-1)) return wrapping_neg(a);  // MIN // -1 wraps
      const T q = T(a / b), r = T(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? T(q - 1) : q;
    }
  }
}
template <class T>
PYDD_SCALAR_HD inline T numpy_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return std::fmod(a, b);  // npy_remainder: nan
    T q, m;
    float_divmod(a, b, &q, &m);
    return m;
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else {
    if (b == 0) return T(0);
    if constexpr (std::is_unsigned_v<T>) {
      return T(a % b);
    } else {
      if (b == T(-1)) return T(0);
      const T r = T(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
    }
  }
}

/// NumPy's astype between real scalars (bool, integers, floats).
template <class To, class From>
PYDD_SCALAR_HD inline To real_convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != 0;  // nan is truthy, as in NumPy and Python
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // A float outside To's range (or nan) is undefined behaviour to convert
    // in C++. x86's cvttsd2si returns the "integer indefinite" value, which
    // is To's minimum, and that is what NumPy shows on x86, so produce it
    // explicitly. The bounds are powers of two, hence exact in From.
    constexpr To min = int_min<To>(), max = int_max<To>();
    constexpr From lo = static_cast<From>(min);
    constexpr From hi = From(2) * static_cast<From>(max / 2 + 1);
    if (!(x >= lo && x < hi)) return min;
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From> && !std::is_same_v<From, bool>) {
    // Keep the low bits (modular), like NumPy's int64 -> int32 astype.
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace pydd::detail
