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

namespace pydd::op {

// Transcendentals run on the compute type (float32 stays float32, as
// NumPy's loops); integer operands arrive as float64.
#define PYDD_UFUNC_FLOAT1(name, fn)                                  \
  struct name {                                                      \
    template <class T>                                               \
    auto operator()(T a) const {                                     \
      if constexpr (std::is_floating_point_v<T>) return std::fn(a);  \
      else return std::fn(static_cast<double>(a));                   \
    }                                                                \
  };
PYDD_UFUNC_FLOAT1(tanh, tanh)
PYDD_UFUNC_FLOAT1(sinh, sinh)
PYDD_UFUNC_FLOAT1(cosh, cosh)
PYDD_UFUNC_FLOAT1(log2, log2)
PYDD_UFUNC_FLOAT1(log10, log10)
PYDD_UFUNC_FLOAT1(exp2, exp2)
PYDD_UFUNC_FLOAT1(expm1, expm1)
PYDD_UFUNC_FLOAT1(log1p, log1p)
#undef PYDD_UFUNC_FLOAT1

#define PYDD_UFUNC_FLOAT2(name, fn)                                                            \
  struct name {                                                                                \
    template <class T>                                                                         \
    auto operator()(T a, T b) const {                                                          \
      if constexpr (std::is_floating_point_v<T>) return std::fn(a, b);                         \
      else return std::fn(static_cast<double>(a), static_cast<double>(b));                     \
    }                                                                                          \
  };
PYDD_UFUNC_FLOAT2(arctan2, atan2)
PYDD_UFUNC_FLOAT2(hypot, hypot)
#undef PYDD_UFUNC_FLOAT2

/// x * x in x's type (integers wrap, as NumPy's fixed-width integers).
struct square {
  template <class T>
  T operator()(T a) const { return static_cast<T>(a * a); }
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
