// pydd runtime: more of NumPy's ufuncs as pydd::op functors (hyperbolic,
// base-2/10 logarithms, exp2/expm1/log1p, square, sign, arctan2, hypot,
// logical_xor, bitwise and/or/xor).
//
// Each is one functor applied by the broadcasting loops of elementwise.h
// (map1/map2) and directly to scalars; the catalog (stdlib/Elementwise.cpp)
// picks the compute type, so a functor sees operands already converted.
#pragma once

#include <cmath>
#include <type_traits>

#include "pydd/complex.h"

namespace pydd::op {

// Transcendentals run on the compute type (float32 stays float32, as
// NumPy's loops); integer operands arrive as float64.
template <class T>
auto as_float(T a) {
  if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) return a;
  else return static_cast<double>(a);
}
/// fn from std:: for real operands, from complex_fn for complex ones
/// (std:: has no complex log2, exp2, expm1 or log1p).
#define PYDD_REAL_OR_COMPLEX(name)                                  \
  struct name {                                                     \
    template <class T>                                              \
    auto operator()(T a) const {                                    \
      if constexpr (is_complex_v<T>) return complex_fn::name(a);    \
      else return std::name(as_float(a));                           \
    }                                                               \
  };
struct tanh { template <class T> auto operator()(T a) const { return std::tanh(as_float(a)); } };
struct sinh { template <class T> auto operator()(T a) const { return std::sinh(as_float(a)); } };
struct cosh { template <class T> auto operator()(T a) const { return std::cosh(as_float(a)); } };
PYDD_REAL_OR_COMPLEX(log2)
struct log10 { template <class T> auto operator()(T a) const { return std::log10(as_float(a)); } };
PYDD_REAL_OR_COMPLEX(exp2)
PYDD_REAL_OR_COMPLEX(expm1)
PYDD_REAL_OR_COMPLEX(log1p)
#undef PYDD_REAL_OR_COMPLEX
struct arctan2 { template <class T> auto operator()(T a, T b) const { return std::atan2(as_float(a), as_float(b)); } };
struct hypot { template <class T> auto operator()(T a, T b) const { return std::hypot(as_float(a), as_float(b)); } };

/// x * x in x's type (integers wrap, as NumPy's fixed-width integers).
struct square {
  template <class T>
  T operator()(T a) const {
    if constexpr (is_complex_v<T>) {
      return complex_mul(a, a);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // In unsigned arithmetic of at least int's width: wraps without UB.
      using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(a));
    } else {
      return static_cast<T>(a * a);
    }
  }
};

/// NumPy's sign: -1, 0 or 1 in the operand's type; NaN stays NaN and
/// -0.0 gives 0.0 (npy_sign's comparisons, in that order).
struct sign {
  template <class T>
  T operator()(T a) const {
    if (a > T(0)) return T(1);
    if (a < T(0)) return T(-1);
    if (a == T(0)) return T(0);
    return a;
  }
};

struct logical_xor {
  template <class T>
  bool operator()(T a, T b) const { return static_cast<bool>(a) != static_cast<bool>(b); }
};

// Integers and bools only (the catalog rejects floats, as NumPy does).
struct bitwise_and {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct bitwise_or {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct bitwise_xor {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

}  // namespace pydd::op
