// pydd runtime: print() formatting, compiled once (see print.h).
//
// repr is the shortest decimal string that reads back as the same value.
// glibc's printf rounds correctly for any precision, so the shortest
// precision can be found by trying 1..17 digits (1..9 for float32) and
// checking each with strtod/strtof.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

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

// ---- NumPy's str() of a 1-D array (numpy/core/arrayprint.py, default
// options: precision 8, floatmode 'maxprec', threshold 1000, edgeitems 3,
// linewidth 75).

// "%.8f" of |x|: Dragon4's cut-off at 8 fractional digits rounds the exact
// binary value, as glibc's printf does.
std::string fixed8(double ax) {
  char text[400];
  std::snprintf(text, sizeof text, "%.8f", ax);
  std::string out;
  const char* s = text;
  while (*s >= '0' && *s <= '9') out += *s++;
  out += '.';
  while (*s && !(*s >= '0' && *s <= '9')) ++s;  // the locale's decimal point
  out += s;
  while (out.back() == '0') out.pop_back();
  return out;
}

// dragon4_positional(x, precision=8, unique=True, fractional=True,
// trim='.'): shortest round-trip digits, cut at 8 fractional digits.
template <class T>
std::string positional(T x, bool plus = false) {
  std::string out = std::signbit(x) ? "-" : plus ? "+" : "";
  if (x == 0) return out + "0.";
  ShortestDigits d;
  shortest_digits(std::fabs(x), &d);
  const int point = d.exp10 + 1;  // digits before the decimal point
  if (d.count - point > 8) return out + fixed8(std::fabs(static_cast<double>(x)));
  if (point <= 0) return out + "0." + std::string(-point, '0') + d.digits;
  if (point >= d.count) return out + d.digits + std::string(point - d.count, '0') + ".";
  return out + std::string(d.digits, point) + "." + (d.digits + point);
}

// dragon4_scientific(x, precision=8, unique=True, trim='.'): mantissa
// digits and decimal exponent; at most 9 significant digits.
template <class T>
void scientific(T x, std::string* mantissa, int* exp10, bool plus = false) {
  *mantissa = std::signbit(x) ? "-" : plus ? "+" : "";
  if (x == 0) {
    *mantissa += "0.";
    *exp10 = 0;
    return;
  }
  ShortestDigits d;
  shortest_digits(std::fabs(x), &d);
  if (d.count > 9) {
    char text[48];
    std::snprintf(text, sizeof text, "%.8e", std::fabs(static_cast<double>(x)));
    uint64_t m = 0;
    const char* s = text;
    while (*s && *s != 'e') {
      if (*s >= '0' && *s <= '9') m = m * 10 + static_cast<uint64_t>(*s - '0');
      ++s;
    }
    set_digits(&d, m, std::atoi(s + 1) - 8);
  }
  *mantissa += d.digits[0];
  *mantissa += '.';
  *mantissa += d.digits + 1;
  *exp10 = d.exp10;
}

// FloatingFormat.fillFormat and __call__ for the shown elements; `plus`
// is its sign='+' (the imaginary parts of complex numbers).
template <class T>
std::vector<std::string> format_floats(const std::vector<T>& v, bool plus = false) {
  bool exp_format = false, any_finite = false, neg_inf = false, non_finite = false;
  T max_val = 0, min_val = 0;
  for (T x : v) {
    if (!std::isfinite(x)) {
      non_finite = true;
      neg_inf = neg_inf || plus || (std::isinf(x) && x < 0);
      continue;
    }
    any_finite = true;
    if (x == 0) continue;
    const T a = std::fabs(x);
    if (min_val == 0 || a < min_val) min_val = a;
    if (a > max_val) max_val = a;
  }
  // The test runs in the array's type, as NumPy compares its own scalars.
  if (min_val != 0) exp_format = max_val >= T(1e8) || min_val < T(0.0001) || max_val / min_val > T(1000);

  std::vector<std::string> ints(v.size()), fracs(v.size());
  std::vector<int> exps(v.size());
  size_t pad_left = 0, pad_right = 0;
  size_t exp_size = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) continue;
    std::string s;
    if (exp_format) {
      scientific(v[i], &s, &exps[i], plus);
      const int e = exps[i] < 0 ? -exps[i] : exps[i];
      exp_size = std::max<size_t>(exp_size, e >= 100 ? 3 : 2);
    } else {
      s = positional(v[i], plus);
    }
    const size_t dot = s.find('.');
    ints[i] = s.substr(0, dot);
    fracs[i] = s.substr(dot + 1);
    pad_left = std::max(pad_left, ints[i].size());
    pad_right = std::max(pad_right, fracs[i].size());
  }
  if (exp_format) {
    // The second pass prints every mantissa with the longest one's digit
    // count (min_digits): the digits of the exact value, not zeros, so
    // float32 values show digits past their shortest repr.
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) continue;
      char text[64];
      std::snprintf(text, sizeof text, "%.*e", static_cast<int>(pad_right), std::fabs(static_cast<double>(v[i])));
      const char* t = text;
      fracs[i].clear();
      ints[i] = std::signbit(v[i]) ? "-" : plus ? "+" : "";
      ints[i] += *t++;
      for (; *t && *t != 'e'; ++t)
        if (*t >= '0' && *t <= '9') fracs[i] += *t;
      exps[i] = std::atoi(t + 1);
    }
    pad_right += exp_size + 2;
  }
  if (!any_finite) pad_left = pad_right = 0;
  if (non_finite) {
    // "nan" / "inf" / "-inf" must fit in pad_left + '.' + pad_right.
    const size_t offset = pad_right + 1, widest = neg_inf ? 4 : 3;
    if (widest > offset) pad_left = std::max(pad_left, widest - offset);
  }
  std::vector<std::string> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const T x = v[i];
    std::string s;
    if (!std::isfinite(x)) {
      s = std::isnan(x) ? (plus ? "+nan" : "nan") : x < 0 ? "-inf" : plus ? "+inf" : "inf";
      out[i] = std::string(pad_left + pad_right + 1 - s.size(), ' ') + s;
      continue;
    }
    s = std::string(pad_left - ints[i].size(), ' ') + ints[i] + "." + fracs[i];
    if (exp_format) {
      char e[8];
      std::snprintf(e, sizeof e, "e%c%0*d", exps[i] < 0 ? '-' : '+', static_cast<int>(exp_size), exps[i] < 0 ? -exps[i] : exps[i]);
      s += e;
    } else {
      s += std::string(pad_right - fracs[i].size(), ' ');
    }
    out[i] = s;
  }
  return out;
}

// ComplexFloatingFormat: the real parts formatted together, the imaginary
// parts together with a sign, and 'j' before the imaginary part's padding.
template <class T>
std::vector<std::string> format_complex(const std::vector<std::complex<T>>& v) {
  std::vector<T> re, im;
  for (const std::complex<T>& z : v) re.push_back(z.real()), im.push_back(z.imag());
  std::vector<std::string> r = format_floats(re), i = format_floats(im, true), out;
  for (size_t k = 0; k < v.size(); ++k) {
    const size_t end = i[k].find_last_not_of(' ') + 1;
    out.push_back(r[k] + i[k].substr(0, end) + "j" + i[k].substr(end));
  }
  return out;
}

template <class T>
struct is_complex_elem : std::false_type {};
template <class T>
struct is_complex_elem<std::complex<T>> : std::true_type {};

template <class T>
std::vector<std::string> format_elements(const std::vector<T>& v) {
  std::vector<std::string> out;
  if constexpr (is_complex_elem<T>::value) {
    out = format_complex(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    out = format_floats(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    for (bool x : v) out.push_back(x ? " True" : "False");
  } else {
    size_t width = 0;
    for (T x : v) {
      out.push_back(std::to_string(x));
      width = std::max(width, out.back().size());
    }
    for (std::string& s : out) s.insert(0, width - s.size(), ' ');
  }
  return out;
}

// _formatArray for one axis: words separated by ' ', wrapped before a word
// that would pass column 74 (the ']' needs the last), continuation lines
// indented by one space.
template <class T>
std::string format_array(const T* p, int64_t n, int64_t stride) {
  if (n == 0) return "[]";
  const bool summary = n > 1000;
  std::vector<T> shown;
  for (int64_t i = 0; i < n; ++i) {
    if (summary && i == 3) i = n - 3;
    shown.push_back(p[i * stride]);
  }
  std::vector<std::string> words = format_elements(shown);
  if (summary) words.insert(words.begin() + 3, "...");
  constexpr size_t kWidth = 75 - 1;
  std::string s, line = " ";
  for (size_t i = 0; i < words.size(); ++i) {
    if (line.size() + words[i].size() > kWidth && line.size() > 1) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      s += line + "\n";
      line = " ";
    }
    line += words[i];
    if (i + 1 < words.size()) line += ' ';
  }
  s += line;
  return "[" + s.substr(1) + "]";
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

namespace {
// A part of a complex repr: the float's repr without a trailing ".0"
// (Python's 'r' format without Py_DTSF_ADD_DOT_0), with a sign if asked.
template <class T>
std::string complex_part(T x, bool sign) {
  char text[kFloatTextCapacity];
  int n = std::is_same_v<T, float> ? format_float(static_cast<float>(x), text) : format_double(static_cast<double>(x), text);
  std::string s(text, static_cast<size_t>(n));
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (sign && s[0] != '-') s.insert(0, "+");
  return s;
}
// complex_repr (Objects/complexobject.c): a real part of +0 is left out.
template <class T>
std::string complex_repr(std::complex<T> z) {
  if (z.real() == 0 && !std::signbit(z.real())) return complex_part(z.imag(), false) + "j";
  return "(" + complex_part(z.real(), false) + complex_part(z.imag(), true) + "j)";
}
}  // namespace

void PrintLine::add(std::complex<double> value) {
  separate();
  const std::string s = complex_repr(value);
  append(s.data(), static_cast<int64_t>(s.size()));
}

void PrintLine::add(std::complex<float> value) {
  separate();
  const std::string s = complex_repr(value);
  append(s.data(), static_cast<int64_t>(s.size()));
}

void PrintLine::add(const char* text) {
  separate();
  if (text)
    append(text, static_cast<int64_t>(std::strlen(text)));
  else
    append("None", 4);
}

void PrintLine::add_array(PrintElem elem, const void* data, int64_t n, int64_t stride) {
  separate();
  std::string text;
  switch (elem) {
    case PrintElem::Bool: text = format_array(static_cast<const bool*>(data), n, stride); break;
    case PrintElem::Int32: text = format_array(static_cast<const int32_t*>(data), n, stride); break;
    case PrintElem::Int64: text = format_array(static_cast<const int64_t*>(data), n, stride); break;
    case PrintElem::Float32: text = format_array(static_cast<const float*>(data), n, stride); break;
    case PrintElem::Float64: text = format_array(static_cast<const double*>(data), n, stride); break;
    case PrintElem::Complex64: text = format_array(static_cast<const std::complex<float>*>(data), n, stride); break;
    case PrintElem::Complex128: text = format_array(static_cast<const std::complex<double>*>(data), n, stride); break;
    case PrintElem::Int8: text = format_array(static_cast<const int8_t*>(data), n, stride); break;
    case PrintElem::Int16: text = format_array(static_cast<const int16_t*>(data), n, stride); break;
    case PrintElem::UInt8: text = format_array(static_cast<const uint8_t*>(data), n, stride); break;
    case PrintElem::UInt16: text = format_array(static_cast<const uint16_t*>(data), n, stride); break;
    case PrintElem::UInt32: text = format_array(static_cast<const uint32_t*>(data), n, stride); break;
    case PrintElem::UInt64: text = format_array(static_cast<const uint64_t*>(data), n, stride); break;
  }
  append(text.data(), static_cast<int64_t>(text.size()));
}

void PrintLine::open(const char* text) {
  separate();
  append(text, static_cast<int64_t>(std::strlen(text)));
  first_ = true;
}

void PrintLine::between(const char* text) {
  append(text, static_cast<int64_t>(std::strlen(text)));
  first_ = true;
}

void PrintLine::close(const char* text) {
  append(text, static_cast<int64_t>(std::strlen(text)));
  first_ = false;
}

void PrintLine::finish() {
  append("\n", 1);
  print_text(data_, len_);
}

}  // namespace detail

}  // namespace pydd
