// What the kernels codegen/CudaEmitter prints use, besides portable.h: the
// view of an array on the device, the scalar formulas of pydd's language
// (Python's // and %, wrap-around integer arithmetic, NumPy's astype), the
// element functors of the catalog's element-wise functions, and the host
// side of a launch (copies in and out, the no-device check).
//
// Device-safe: it includes portable.h, pydd/errors.h (plain C++, used by
// host functions only) and the C++ library's <cmath>, <cstdint> and
// <type_traits>, so a .cu file that includes it passes nvcc's front end.
// The formulas are those of pydd/scalar.h, pydd/builtins.h and pydd::op
// (pydd/elementwise.h, pydd/ufuncs.h) on real numbers, with one change: a
// kernel cannot throw, so what raises there sets `err` to an error code
// here (KernelErrors), and the kernel records its iteration.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "pydd/cuda/portable.h"
#include "pydd/errors.h"
#include "pydd/scalar_core.h"

namespace pydd::cuda {

// ---------------------------------------------------------------------------
// Error codes beyond portable.h's: each names the exception and message the
// CPU build raises for the same failure.

enum KernelErrorCode : int32_t {
  kIntZeroDivision = 4,   // ZeroDivisionError: integer division or modulo by zero
  kFloorZeroDivision = 5, // ZeroDivisionError: float floor division by zero
  kModZeroDivision = 6,   // ZeroDivisionError: float modulo
  kNegativePower = 7,     // ValueError: Integers to negative integer powers are not allowed.
  kNegativeShift = 8,     // ValueError: negative shift count
  kRangeStep = 9,         // ValueError: range() arg 3 must not be zero
};

/// Sets the thread's error code unless one is set: the first error of a
/// statement is the one the CPU build raises.
PYDD_HOST_DEVICE inline void fail(int32_t& err, int32_t code) {
  if (!err) err = code;
}

/// Raises the error `key` (KernelErrors::key, not kNoError) records, as the
/// CPU build raises it.
[[noreturn]] inline void raise_kernel_error(int64_t key) {
  switch (int32_t(key % kErrorCodes)) {
    case kZeroDivision: throw Error(ErrorKind::ZeroDivisionError, "division by zero");
    case kIntZeroDivision: throw Error(ErrorKind::ZeroDivisionError, "integer division or modulo by zero");
    case kFloorZeroDivision: throw Error(ErrorKind::ZeroDivisionError, "float floor division by zero");
    case kModZeroDivision: throw Error(ErrorKind::ZeroDivisionError, "float modulo");
    case kNegativePower: throw Error(ErrorKind::ValueError, "Integers to negative integer powers are not allowed.");
    case kNegativeShift: throw Error(ErrorKind::ValueError, "negative shift count");
    case kRangeStep: throw Error(ErrorKind::ValueError, "range() arg 3 must not be zero");
    case kIndex: throw Error(ErrorKind::IndexError, "index out of bounds (in a CUDA kernel)");
    default: throw Error(ErrorKind::ValueError, "shape mismatch (in a CUDA kernel)");
  }
}

// ---------------------------------------------------------------------------
// Arrays on the device

/// An array's elements on the device: the layout of pydd::View (strides in
/// elements, 0 for a broadcast axis, possibly negative).
template <class T, int N>
struct DView {
  T* data;
  int64_t shape[N];
  int64_t strides[N];
  template <class... I>
  PYDD_HOST_DEVICE T& operator()(I... idx) const {
    static_assert(sizeof...(I) == N, "wrong number of indices");
    const int64_t ix[N] = {static_cast<int64_t>(idx)...};
    int64_t off = 0;
    for (int k = 0; k < N; ++k) off += ix[k] * strides[k];
    return data[off];
  }
  PYDD_HOST_DEVICE int64_t size() const {
    int64_t n = 1;
    for (int k = 0; k < N; ++k) n *= shape[k];
    return n;
  }
};

/// Python's negative index rule (pydd::wrap_index).
PYDD_HOST_DEVICE inline int64_t wrap_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }
/// With --bounds-check: the rule and a range check (pydd::checked_index);
/// out of range sets `err` and gives index 0 (the element is not used: the
/// kernel records the error after the statement).
PYDD_HOST_DEVICE inline int64_t checked_index(int64_t i, int64_t n, int32_t& err) {
  int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) return fail(err, kIndex), 0;
  return j;
}

/// range(start, stop, step)'s length (pydd::range_length).
PYDD_HOST_DEVICE inline uint64_t range_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0) return start < stop ? (uint64_t(stop) - uint64_t(start) - 1) / uint64_t(step) + 1 : 0;
  return start > stop ? (uint64_t(start) - uint64_t(stop) - 1) / (0 - uint64_t(step)) + 1 : 0;
}
PYDD_HOST_DEVICE inline int64_t check_range_step(int64_t step, int32_t& err) {
  if (step == 0) fail(err, kRangeStep);
  return step == 0 ? 1 : step;
}

// ---------------------------------------------------------------------------
// Scalar formulas (pydd/scalar.h on real numbers)

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// `a OP b` as the CPU build computes it with -fwrapv: in the operands'
/// common type, integers wrapping (through its unsigned type), then
/// converted to the result type R.
#define PYDD_CUDA_WRAPPING(name, op)                                 \
  template <class R, class A, class B>                               \
  PYDD_HOST_DEVICE inline R name(A a, B b) {                         \
    using C = decltype(a op b);                                      \
    if constexpr (std::is_integral_v<C>) {                           \
      using U = std::make_unsigned_t<C>;                             \
      return static_cast<R>(static_cast<C>(U(a) op U(b)));           \
    } else {                                                         \
      return static_cast<R>(a op b);                                 \
    }                                                                \
  }
PYDD_CUDA_WRAPPING(wrap_add, +)
PYDD_CUDA_WRAPPING(wrap_sub, -)
PYDD_CUDA_WRAPPING(wrap_mul, *)
#undef PYDD_CUDA_WRAPPING

template <class R, class A>
PYDD_HOST_DEVICE inline R wrap_neg(A a) {
  using C = decltype(-a);
  if constexpr (std::is_integral_v<C>) return static_cast<R>(static_cast<C>(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(a)));
  else return static_cast<R>(-a);
}


/// Python's a // b (pydd::floordiv).
template <class T>
PYDD_HOST_DEVICE inline T floordiv(T a, T b, int32_t& err) {
  if (b == 0) return fail(err, std::is_floating_point_v<T> ? kFloorZeroDivision : kIntZeroDivision), T(0);
  if constexpr (std::is_floating_point_v<T>) {
    T q, m;
    pydd::detail::float_divmod(a, b, &q, &m);
    return q;
  } else {
    return pydd::detail::int_floordiv(a, b);
  }
}

/// Python's a % b (pydd::mod).
template <class T>
PYDD_HOST_DEVICE inline T mod(T a, T b, int32_t& err) {
  if (b == 0) return fail(err, std::is_floating_point_v<T> ? kModZeroDivision : kIntZeroDivision), T(0);
  if constexpr (std::is_floating_point_v<T>) return pydd::detail::float_mod(a, b);
  else return pydd::detail::int_mod(a, b);
}

/// Python's a / b on floats (pydd::truediv).
template <class T>
PYDD_HOST_DEVICE inline T truediv(T a, T b, int32_t& err) {
  if (b == 0) return fail(err, kZeroDivision), T(0);
  return a / b;
}

/// a ** b (pydd::power): NumPy's for floats, wrapping for integers.
template <class T>
PYDD_HOST_DEVICE inline T power(T a, T b, int32_t& err) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return fail(err, kNegativePower), T(0);
    }
    return pydd::detail::int_power(a, b);
  }
}

/// Python's << and >> (pydd::shift_left, shift_right).
template <class T>
PYDD_HOST_DEVICE inline T shift_left(T a, T count, int32_t& err) {
  if (count < 0) return fail(err, kNegativeShift), T(0);
  using U = std::make_unsigned_t<T>;
  if (count >= T(sizeof(T) * 8)) return T(0);
  return static_cast<T>(static_cast<U>(a) << count);
}
template <class T>
PYDD_HOST_DEVICE inline T shift_right(T a, T count, int32_t& err) {
  if (count < 0) return fail(err, kNegativeShift), T(0);
  if (count >= T(sizeof(T) * 8)) return a < 0 ? T(-1) : T(0);
  return static_cast<T>(a >> count);
}

/// NumPy's astype between real scalars (pydd::convert).
template <class To, class From>
PYDD_HOST_DEVICE inline To convert(From x) {
  return pydd::detail::real_convert<To>(x);
}

/// Python's abs of a real scalar (pydd::abs_value).
template <class T>
PYDD_HOST_DEVICE inline T abs_value(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
  else return x < T(0) ? T(-x) : x;
}

// ---------------------------------------------------------------------------
// Element functors: pydd::op's (NumPy's semantics, which raise nothing but
// `**` of a negative integer exponent), each holding the kernel's error code.

namespace op {

#define PYDD_CUDA_FUNCTOR(name, ...)                               \
  struct name {                                                    \
    int32_t& err;                                                  \
    template <class T>                                             \
    PYDD_HOST_DEVICE auto operator()(T a) const { __VA_ARGS__; }   \
  };
#define PYDD_CUDA_FUNCTOR2(name, ...)                                   \
  struct name {                                                         \
    int32_t& err;                                                       \
    template <class T>                                                  \
    PYDD_HOST_DEVICE auto operator()(T a, T b) const { __VA_ARGS__; }   \
  };

template <class T>
PYDD_HOST_DEVICE inline auto as_float(T a) {
  if constexpr (std::is_floating_point_v<T>) return a;
  else return static_cast<double>(a);
}

PYDD_CUDA_FUNCTOR2(add, if constexpr (std::is_same_v<T, bool>) return bool(a || b); else return wrap_add<T>(a, b))
PYDD_CUDA_FUNCTOR2(sub, if constexpr (std::is_same_v<T, bool>) return bool(a != b); else return wrap_sub<T>(a, b))
PYDD_CUDA_FUNCTOR2(mul, if constexpr (std::is_same_v<T, bool>) return bool(a && b); else return wrap_mul<T>(a, b))
PYDD_CUDA_FUNCTOR2(truediv, return as_float(a) / as_float(b))
PYDD_CUDA_FUNCTOR2(floordiv, return pydd::detail::numpy_floordiv(a, b))
PYDD_CUDA_FUNCTOR2(mod, return pydd::detail::numpy_mod(a, b))
PYDD_CUDA_FUNCTOR2(power, return pydd::cuda::power(a, b, err))
PYDD_CUDA_FUNCTOR2(maximum, return (a > b || a != a) ? a : b)
PYDD_CUDA_FUNCTOR2(minimum, return (a < b || a != a) ? a : b)
PYDD_CUDA_FUNCTOR2(eq, return bool(a == b))
PYDD_CUDA_FUNCTOR2(ne, return bool(a != b))
PYDD_CUDA_FUNCTOR2(lt, return bool(a < b))
PYDD_CUDA_FUNCTOR2(le, return bool(a <= b))
PYDD_CUDA_FUNCTOR2(gt, return bool(a > b))
PYDD_CUDA_FUNCTOR2(ge, return bool(a >= b))
PYDD_CUDA_FUNCTOR2(logical_and, return bool((a != 0) & (b != 0)))
PYDD_CUDA_FUNCTOR2(logical_or, return bool((a != 0) | (b != 0)))
PYDD_CUDA_FUNCTOR2(logical_xor, return static_cast<bool>(a) != static_cast<bool>(b))
PYDD_CUDA_FUNCTOR2(bitwise_and, return static_cast<T>(a & b))
PYDD_CUDA_FUNCTOR2(bitwise_or, return static_cast<T>(a | b))
PYDD_CUDA_FUNCTOR2(bitwise_xor, return static_cast<T>(a ^ b))
PYDD_CUDA_FUNCTOR2(arctan2, return std::atan2(as_float(a), as_float(b)))
PYDD_CUDA_FUNCTOR2(hypot, return std::hypot(as_float(a), as_float(b)))

PYDD_CUDA_FUNCTOR(negative, if constexpr (std::is_same_v<T, bool>) return a; else if constexpr (is_int_v<T>) return pydd::detail::wrapping_neg(a); else return T(-a))
PYDD_CUDA_FUNCTOR(absolute, if constexpr (std::is_floating_point_v<T>) return std::fabs(a); else if constexpr (is_int_v<T>) return a < 0 ? pydd::detail::wrapping_neg(a) : a; else return a)
PYDD_CUDA_FUNCTOR(logical_not, return bool(a == 0))
PYDD_CUDA_FUNCTOR(isnan, if constexpr (std::is_floating_point_v<T>) return bool(std::isnan(a)); else return false)
PYDD_CUDA_FUNCTOR(isinf, if constexpr (std::is_floating_point_v<T>) return bool(std::isinf(a)); else return false)
PYDD_CUDA_FUNCTOR(floor, if constexpr (std::is_floating_point_v<T>) return T(std::floor(a)); else return a)
PYDD_CUDA_FUNCTOR(ceil, if constexpr (std::is_floating_point_v<T>) return T(std::ceil(a)); else return a)
PYDD_CUDA_FUNCTOR(square, if constexpr (is_int_v<T>) return wrap_mul<T>(a, a); else return static_cast<T>(a * a))
PYDD_CUDA_FUNCTOR(sign, {
  if (a > T(0)) return T(1);
  if (a < T(0)) return T(-1);
  if (a == T(0)) return T(0);
  return a;
})
#define PYDD_CUDA_FLOAT_UNARY(name, fn) PYDD_CUDA_FUNCTOR(name, return std::fn(as_float(a)))
PYDD_CUDA_FLOAT_UNARY(sqrt, sqrt)
PYDD_CUDA_FLOAT_UNARY(exp, exp)
PYDD_CUDA_FLOAT_UNARY(log, log)
PYDD_CUDA_FLOAT_UNARY(cos, cos)
PYDD_CUDA_FLOAT_UNARY(sin, sin)
PYDD_CUDA_FLOAT_UNARY(tan, tan)
PYDD_CUDA_FLOAT_UNARY(arccos, acos)
PYDD_CUDA_FLOAT_UNARY(arcsin, asin)
PYDD_CUDA_FLOAT_UNARY(arctan, atan)
PYDD_CUDA_FLOAT_UNARY(tanh, tanh)
PYDD_CUDA_FLOAT_UNARY(sinh, sinh)
PYDD_CUDA_FLOAT_UNARY(cosh, cosh)
PYDD_CUDA_FLOAT_UNARY(log2, log2)
PYDD_CUDA_FLOAT_UNARY(log10, log10)
PYDD_CUDA_FLOAT_UNARY(exp2, exp2)
PYDD_CUDA_FLOAT_UNARY(expm1, expm1)
PYDD_CUDA_FLOAT_UNARY(log1p, log1p)
#undef PYDD_CUDA_FLOAT_UNARY
#undef PYDD_CUDA_FUNCTOR
#undef PYDD_CUDA_FUNCTOR2

}  // namespace op

// ---------------------------------------------------------------------------
// Launches

/// Threads per block of the generated kernels.
constexpr unsigned kBlockThreads = 256;
/// At most this many blocks: a kernel steps through the rest (grid stride).
constexpr uint64_t kMaxBlocks = uint64_t(1) << 20;

inline unsigned blocks_for(uint64_t n) {
  uint64_t b = (n + kBlockThreads - 1) / kBlockThreads;
  return unsigned(b > kMaxBlocks ? kMaxBlocks : b);
}

/// The device memory of one launch: every array argument's elements (the
/// address range its view spans) copied in before the kernel when the
/// kernel reads it, out after it when the kernel writes it. Arguments whose
/// ranges overlap (two views of one array) share one device buffer, so a
/// kernel sees them alias as the CPU build does.
class Transfers {
 public:
  enum Direction : unsigned { kIn = 1, kOut = 2 };

  ~Transfers() {
    for (auto& b : buffers_) device_free(b.device);
  }

  /// Registers a view (host data, shape and strides in elements); returns
  /// its number for view().
  size_t add(void* data, size_t elementBytes, int rank, const int64_t* shape, const int64_t* strides, unsigned direction) {
    Arg a;
    a.host = static_cast<char*>(data);
    bool empty = false;
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < rank; ++k) {
      if (shape[k] == 0) empty = true;
      int64_t reach = (shape[k] - 1) * strides[k];
      (reach < 0 ? lo : hi) += reach;
    }
    a.empty = empty || data == nullptr;
    a.lo = a.host + lo * int64_t(elementBytes);
    a.hi = a.host + (hi + 1) * int64_t(elementBytes);
    // kOut alone (the emitter's promise that the kernel stores every
    // element of the view) holds for the range only when the view fills it
    // (no gaps between strided elements, no broadcast axis): otherwise
    // copying the range out would put back what the device never had.
    int64_t count = 1;
    for (int k = 0; k < rank; ++k) count *= shape[k];
    if (direction == kOut && !empty && hi - lo + 1 != count) direction |= kIn;
    a.direction = direction;
    args_.push_back(a);
    return args_.size() - 1;
  }

  /// Allocates the device buffers and copies in what the kernel reads.
  void copy_in() {
    // Overlapping ranges merge into one buffer (a sweep in address order).
    std::vector<size_t> order;
    for (size_t i = 0; i < args_.size(); ++i)
      if (!args_[i].empty) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return args_[x].lo < args_[y].lo; });
    for (size_t i : order) {
      Arg& a = args_[i];
      if (buffers_.empty() || a.lo >= buffers_.back().hi) buffers_.push_back(Buffer{a.lo, a.hi, nullptr, 0});
      Buffer& b = buffers_.back();
      if (a.hi > b.hi) b.hi = a.hi;
      b.direction |= a.direction;
      a.buffer = buffers_.size() - 1;
    }
    for (auto& b : buffers_) {
      b.device = static_cast<char*>(device_alloc(size_t(b.hi - b.lo)));
      if (b.direction & kIn) copy_to_device(b.device, b.lo, size_t(b.hi - b.lo));
    }
  }

  /// The device view of argument `i`.
  template <class T, int N>
  DView<T, N> view(size_t i, const int64_t* shape, const int64_t* strides) const {
    DView<T, N> v;
    const Arg& a = args_[i];
    v.data = a.empty ? nullptr : reinterpret_cast<T*>(buffers_[a.buffer].device + (a.host - buffers_[a.buffer].lo));
    for (int k = 0; k < N; ++k) {
      v.shape[k] = shape[k];
      v.strides[k] = strides[k];
    }
    return v;
  }

  /// Copies back what the kernel wrote.
  void copy_out() {
    for (auto& b : buffers_)
      if (b.direction & kOut) copy_to_host(b.lo, b.device, size_t(b.hi - b.lo));
  }

 private:
  struct Arg {
    char* host = nullptr;
    char* lo = nullptr;
    char* hi = nullptr;
    unsigned direction = 0;
    bool empty = false;
    size_t buffer = 0;
  };
  struct Buffer {
    char* lo;
    char* hi;
    char* device;
    unsigned direction;
  };
  std::vector<Arg> args_;
  std::vector<Buffer> buffers_;
};

/// `n` device values starting as `initial`: a reduction's partial results,
/// a lastprivate's last value, the kernel's error record.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(size_t n, const T& initial) : n_(n), p_(static_cast<T*>(device_alloc(sizeof(T) * n))) {
    std::vector<T> host(n, initial);
    copy_to_device(p_, host.data(), sizeof(T) * n);
  }
  ~DeviceBuffer() { device_free(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  T at(size_t i) const {
    T v;
    copy_to_host(&v, p_ + i, sizeof(T));
    return v;
  }

 private:
  size_t n_;
  T* p_;
};

// ---------------------------------------------------------------------------
// Reductions: each thread folds its iterations into its own accumulator,
// then the block's accumulators meet in a fixed tree (block_fold), and one
// block folds the blocks' results (fold_partials); the grid is
// reduce_blocks(extent) blocks of kReduceThreads, so the order of the
// operations depends on the extent alone (portable.h's deterministic_sum).

namespace combine {
struct add {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return wrap_add<T>(a, b);
  }
};
struct mul {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return wrap_mul<T>(a, b);
  }
};
struct bit_and {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return T(a & b); }
};
struct bit_or {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return T(a | b); }
};
struct bit_xor {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return T(a ^ b); }
};
struct logical_and {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return T(a && b); }
};
struct logical_or {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return T(a || b); }
};
/// Python's max(a, b) and min(a, b): the first unless the second is larger
/// (smaller); OpenMP's max and min.
struct max {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return b > a ? b : a; }
};
struct min {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return b < a ? b : a; }
};
/// NumPy's maximum and minimum: a NaN propagates.
struct maximum {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
struct minimum {
  template <class T>
  PYDD_HOST_DEVICE T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};
}  // namespace combine

/// The block's accumulators (one per thread, kReduceThreads of them) in a
/// fixed tree; thread 0 writes the result to out[blockIdx.x]. Every thread
/// of the block must call it (it waits at barriers).
template <class T, class Op>
PYDD_DEVICE inline void block_fold(T acc, T* out, Op op) {
  PYDD_SHARED T partial[kReduceThreads];
  const unsigned t = pydd_threadIdx.x;
  partial[t] = acc;
  PYDD_SYNCTHREADS();
  for (unsigned half = kReduceThreads / 2; half > 0; half /= 2) {
    if (t < half) partial[t] = op(partial[t], partial[t + half]);
    PYDD_SYNCTHREADS();
  }
  if (t == 0) out[pydd_blockIdx.x] = partial[0];
}

/// The second pass, on one block: thread t folds in[t], in[t + T], ... in
/// order, then the block's tree; the result goes to out[0].
template <class T, class Op>
PYDD_GLOBAL void fold_partials(const T* in, int64_t n, T* out, T identity) {
  T acc = identity;
  for (int64_t i = pydd_threadIdx.x; i < n; i += kReduceThreads) acc = Op{}(acc, in[i]);
  block_fold(acc, out, Op{});
}

}  // namespace pydd::cuda
