// pydd runtime: print() formatting, compiled once (see print.h).
//
// repr is the shortest decimal string that reads back as the same value.
// glibc's printf rounds correctly for any precision, so the shortest
// precision can be found by trying 1..17 digits (1..9 for float32) and
// checking each with strtod/strtof.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "pydd/print.h"

namespace pydd {

namespace {

// A finite, nonzero, positive value as decimal digits d1 d2 ... dn times
// 10^(exp10 - n + 1), i.e. d1.d2...dn e exp10.
struct ShortestDigits {
  char digits[24];
  int count;
  int exp10;
};

template <class T>
bool reads_back_as(const char* text, T x) {
  if constexpr (std::is_same_v<T, float>) {
    return std::strtof(text, nullptr) == x;
  } else {
    return std::strtod(text, nullptr) == x;
  }
}

void set_digits(ShortestDigits* out, uint64_t mantissa, int scale) {
  // mantissa * 10^scale, without trailing zeros in the digit string.
  while (mantissa != 0 && mantissa % 10 == 0) {
    mantissa /= 10;
    ++scale;
  }
  char rev[24];
  int n = 0;
  do {
    rev[n++] = static_cast<char>('0' + mantissa % 10);
    mantissa /= 10;
  } while (mantissa != 0);
  for (int i = 0; i < n; ++i) out->digits[i] = rev[n - 1 - i];
  out->digits[n] = '\0';
  out->count = n;
  out->exp10 = scale + n - 1;
}

template <class T>
void shortest_digits(T x, ShortestDigits* out) {
  constexpr int kMaxDigits = std::is_same_v<T, float> ? 9 : 17;
  char text[48];
  for (int p = 1; p <= kMaxDigits; ++p) {
    // printf rounds to the nearest p-digit decimal. Its output is parsed
    // without assuming '.' as the decimal point (LC_NUMERIC may differ);
    // strtod reads it back under the same locale.
    std::snprintf(text, sizeof(text), "%.*e", p - 1, static_cast<double>(x));
    uint64_t mantissa = 0;
    const char* s = text;
    while (*s && *s != 'e') {
      if (*s >= '0' && *s <= '9') mantissa = mantissa * 10 + static_cast<uint64_t>(*s - '0');
      ++s;
    }
    const int exp10 = (*s == 'e') ? std::atoi(s + 1) : 0;
    const int scale = exp10 - (p - 1);
    const T back = std::is_same_v<T, float> ? static_cast<T>(std::strtof(text, nullptr))
                                            : static_cast<T>(std::strtod(text, nullptr));
    if (back == x) {
      set_digits(out, mantissa, scale);
      return;
    }
    // Just above a power of two the values below x are spaced half as
    // densely as those above, so the nearest p-digit decimal can miss while
    // its neighbour on the other side of x still reads back. Python's repr
    // (David Gay's shortest mode) would pick that neighbour.
    const uint64_t other = back > x ? mantissa - 1 : mantissa + 1;
    if (other == 0) continue;
    std::snprintf(text, sizeof(text), "%llue%d", static_cast<unsigned long long>(other), scale);
    if (reads_back_as(text, x)) {
      set_digits(out, other, scale);
      return;
    }
  }
  // Unreachable: 17 (9) significant digits always round-trip.
  std::snprintf(text, sizeof(text), "%.*e", kMaxDigits - 1, static_cast<double>(x));
  uint64_t mantissa = 0;
  const char* s = text;
  while (*s && *s != 'e') {
    if (*s >= '0' && *s <= '9') mantissa = mantissa * 10 + static_cast<uint64_t>(*s - '0');
    ++s;
  }
  set_digits(out, mantissa, ((*s == 'e') ? std::atoi(s + 1) : 0) - (kMaxDigits - 1));
}

// Lays out digits like Python's float repr: positional with at least one
// digit after the point, or d.ddde+XX with at least two exponent digits.
int layout_float(bool negative, const ShortestDigits& d, bool scientific, char* out) {
  char* p = out;
  if (negative) *p++ = '-';
  if (scientific) {
    *p++ = d.digits[0];
    if (d.count > 1) {
      *p++ = '.';
      std::memcpy(p, d.digits + 1, static_cast<size_t>(d.count - 1));
      p += d.count - 1;
    }
    *p++ = 'e';
    int e = d.exp10;
    *p++ = e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e >= 100) *p++ = static_cast<char>('0' + e / 100);
    *p++ = static_cast<char>('0' + e / 10 % 10);
    *p++ = static_cast<char>('0' + e % 10);
  } else {
    const int point = d.exp10 + 1;  // digits before the decimal point
    if (point <= 0) {
      *p++ = '0';
      *p++ = '.';
      for (int i = 0; i < -point; ++i) *p++ = '0';
      std::memcpy(p, d.digits, static_cast<size_t>(d.count));
      p += d.count;
    } else if (point < d.count) {
      std::memcpy(p, d.digits, static_cast<size_t>(point));
      p += point;
      *p++ = '.';
      std::memcpy(p, d.digits + point, static_cast<size_t>(d.count - point));
      p += d.count - point;
    } else {
      std::memcpy(p, d.digits, static_cast<size_t>(d.count));
      p += d.count;
      for (int i = d.count; i < point; ++i) *p++ = '0';
      *p++ = '.';
      *p++ = '0';
    }
  }
  *p = '\0';
  return static_cast<int>(p - out);
}

int copy_text(const char* s, char* out) {
  const int n = static_cast<int>(std::strlen(s));
  std::memcpy(out, s, static_cast<size_t>(n) + 1);
  return n;
}

}  // namespace

/// Python's repr(x) for a float64; `out` needs kFloatTextCapacity bytes.
/// Returns the length written (excluding the NUL).
int format_double(double x, char* out) {
  if (std::isnan(x)) return copy_text("nan", out);
  if (std::isinf(x)) return copy_text(x < 0 ? "-inf" : "inf", out);
  if (x == 0) return copy_text(std::signbit(x) ? "-0.0" : "0.0", out);
  ShortestDigits d;
  shortest_digits(std::fabs(x), &d);
  // Python decides on the decimal exponent of the shortest digits.
  return layout_float(x < 0, d, d.exp10 < -4 || d.exp10 >= 16, out);
}

/// What NumPy prints for a float32 scalar (str(np.float32(x))): the shortest
/// digits that read back as the same float32; `out` needs kFloatTextCapacity
/// bytes. Returns the length written (excluding the NUL).
int format_float(float x, char* out) {
  if (std::isnan(x)) return copy_text("nan", out);
  if (std::isinf(x)) return copy_text(x < 0 ? "-inf" : "inf", out);
  if (x == 0) return copy_text(std::signbit(x) ? "-0.0" : "0.0", out);
  ShortestDigits d;
  const float a = std::fabs(x);
  shortest_digits(a, &d);
  // NumPy decides on the value itself, not on the rounded digits, which
  // differs from Python's rule only at the boundary: np.float32(1e-4) lies
  // just below 1e-4 and prints as 1e-04.
  const double v = static_cast<double>(a);
  return layout_float(x < 0, d, !(v >= 1e-4 && v < 1e16), out);
}

namespace detail {

PrintLine::~PrintLine() {
  if (data_ != local_) std::free(data_);
}

void PrintLine::append(const char* s, int64_t n) {
  if (len_ + n > cap_) {
    int64_t cap = cap_ * 2;
    while (cap < len_ + n) cap *= 2;
    char* mem = static_cast<char*>(std::malloc(static_cast<size_t>(cap)));
    if (!mem) throw Error(ErrorKind::MemoryError, "out of memory in print");
    std::memcpy(mem, data_, static_cast<size_t>(len_));
    if (data_ != local_) std::free(data_);
    data_ = mem;
    cap_ = cap;
  }
  std::memcpy(data_ + len_, s, static_cast<size_t>(n));
  len_ += n;
}

void PrintLine::separate() {
  if (!first_) append(" ", 1);
  first_ = false;
}

void PrintLine::add(bool value) {
  separate();
  if (value)
    append("True", 4);
  else
    append("False", 5);
}

void PrintLine::add(uint64_t value) {
  separate();
  char text[24];
  int n = std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(value));
  append(text, n);
}

void PrintLine::add(int64_t value) {
  separate();
  char text[24];
  int n = std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  append(text, n);
}

void PrintLine::add(double value) {
  separate();
  char text[kFloatTextCapacity];
  append(text, format_double(value, text));
}

void PrintLine::add(float value) {
  separate();
  char text[kFloatTextCapacity];
  append(text, format_float(value, text));
}

void PrintLine::add(const char* text) {
  separate();
  if (text)
    append(text, static_cast<int64_t>(std::strlen(text)));
  else
    append("None", 4);
}

void PrintLine::finish() {
  append("\n", 1);
  print_text(data_, len_);
}

}  // namespace detail

}  // namespace pydd
