// pydd runtime: Python's print() for scalars and string literals.
//
// A line is formatted into a local buffer and handed to the sink in one
// piece, so that lines printed by concurrent threads never interleave
// mid-line and a Python host sees one sys.stdout.write per print.
//
// Floats print as Python's repr() does. The float formatting is compiled
// once into libpydd_runtime.a (runtime/src/format.cpp) rather than in every
// kernel that prints: optimizing it took most of such a kernel's build.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "pydd/abi.h"
#include "pydd/errors.h"

namespace pydd {

/// Where print() output goes. The Python bridge points it at sys.stdout;
/// when null (a C++ host), output goes to the C stdout stream.
inline abi::PrintHook print_hook = nullptr;

/// Writes `len` bytes of already formatted text to the print sink.
inline void print_text(const char* text, int64_t len) {
  if (len <= 0) return;
  if (abi::PrintHook hook = print_hook) {
    hook(text, len);
  } else {
    std::fwrite(text, 1, static_cast<size_t>(len), stdout);
  }
}

/// Room format_double / format_float need, terminating NUL included.
inline constexpr int kFloatTextCapacity = 32;

/// Python's repr(x) for a float64; `out` needs kFloatTextCapacity bytes.
/// Returns the length written (excluding the NUL).
int format_double(double x, char* out);

/// What NumPy prints for a float32 scalar (str(np.float32(x))): the shortest
/// digits that read back as the same float32; `out` needs kFloatTextCapacity
/// bytes. Returns the length written (excluding the NUL).
int format_float(float x, char* out);

namespace detail {

// Collects one line; spills to the heap only for long lines.
class LineBuilder {
 public:
  LineBuilder() = default;
  LineBuilder(const LineBuilder&) = delete;
  LineBuilder& operator=(const LineBuilder&) = delete;
  ~LineBuilder() {
    if (data_ != local_) std::free(data_);
  }

  void append(const char* s, int64_t n) {
    if (len_ + n > cap_) grow(len_ + n);
    std::memcpy(data_ + len_, s, static_cast<size_t>(n));
    len_ += n;
  }
  void append(char c) { append(&c, 1); }
  const char* data() const { return data_; }
  int64_t size() const { return len_; }

 private:
  void grow(int64_t need) {
    int64_t cap = cap_ * 2;
    while (cap < need) cap *= 2;
    char* mem = static_cast<char*>(std::malloc(static_cast<size_t>(cap)));
    if (!mem) throw Error(ErrorKind::MemoryError, "out of memory in print");
    std::memcpy(mem, data_, static_cast<size_t>(len_));
    if (data_ != local_) std::free(data_);
    data_ = mem;
    cap_ = cap;
  }

  char local_[256];
  char* data_ = local_;
  int64_t len_ = 0;
  int64_t cap_ = sizeof(local_);
};

template <class T>
inline constexpr bool always_false_v = false;

template <class T>
inline void append_value(LineBuilder& line, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    if (value) {
      line.append("True", 4);
    } else {
      line.append("False", 5);
    }
  } else if constexpr (std::is_integral_v<T>) {
    char rev[24];
    int n = 0;
    using U = std::make_unsigned_t<T>;
    // Negate in unsigned arithmetic so that INT64_MIN needs no special case.
    U mag = static_cast<U>(value);
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) mag = static_cast<U>(U(0) - mag);
    }
    do {
      rev[n++] = static_cast<char>('0' + mag % 10);
      mag = static_cast<U>(mag / 10);
    } while (mag != 0);
    if constexpr (std::is_signed_v<T>) {
      if (value < 0) rev[n++] = '-';
    }
    char text[24];
    for (int i = 0; i < n; ++i) text[i] = rev[n - 1 - i];
    line.append(text, n);
  } else if constexpr (std::is_same_v<T, double>) {
    char text[kFloatTextCapacity];
    line.append(text, format_double(value, text));
  } else if constexpr (std::is_same_v<T, float>) {
    char text[kFloatTextCapacity];
    line.append(text, format_float(value, text));
  } else if constexpr (std::is_convertible_v<const T&, const char*>) {
    const char* s = value;
    if (s) {
      line.append(s, static_cast<int64_t>(std::strlen(s)));
    } else {
      line.append("None", 4);
    }
  } else {
    static_assert(always_false_v<T>, "pydd::print: unsupported argument type");
  }
}

}  // namespace detail

/// Python's print(*args): arguments separated by one space, then a newline,
/// written to the sink in a single call.
template <class... Args>
void print(const Args&... args) {
  detail::LineBuilder line;
  bool first = true;
  auto one = [&](const auto& value) {
    if (!first) line.append(' ');
    first = false;
    detail::append_value(line, value);
  };
  (one(args), ...);
  (void)one;
  line.append('\n');
  print_text(line.data(), line.size());
}

}  // namespace pydd
