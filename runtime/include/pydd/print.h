// pydd runtime: Python's print() for scalars and string literals.
//
// A line is formatted into a local buffer and handed to the sink in one
// piece, so that lines printed by concurrent threads never interleave
// mid-line and a Python host sees one sys.stdout.write per print.
//
// Floats and complex numbers print as Python's repr() does; 1-D arrays as NumPy's str() does. The formatting is compiled once into
// libpydd_runtime.a (runtime/src/print.cpp) rather than in every kernel that
// prints: optimizing it took most of such a kernel's build.
#pragma once

#include <complex>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <type_traits>

#include "pydd/abi.h"
#include "pydd/array.h"
#include "pydd/containers.h"
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

/// Element types print() knows how to show in an array.
enum class PrintElem : int {
  Bool, Int32, Int64, Float32, Float64, Complex64, Complex128, Int8, Int16, UInt8, UInt16, UInt32, UInt64
};

template <class T>
constexpr PrintElem print_elem() {
  if constexpr (std::is_same_v<T, bool>) return PrintElem::Bool;
  else if constexpr (std::is_same_v<T, int32_t>) return PrintElem::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return PrintElem::Int64;
  else if constexpr (std::is_same_v<T, float>) return PrintElem::Float32;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return PrintElem::Complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return PrintElem::Complex128;
  else if constexpr (std::is_same_v<T, int8_t>) return PrintElem::Int8;
  else if constexpr (std::is_same_v<T, int16_t>) return PrintElem::Int16;
  else if constexpr (std::is_same_v<T, uint8_t>) return PrintElem::UInt8;
  else if constexpr (std::is_same_v<T, uint16_t>) return PrintElem::UInt16;
  else if constexpr (std::is_same_v<T, uint32_t>) return PrintElem::UInt32;
  else if constexpr (std::is_same_v<T, uint64_t>) return PrintElem::UInt64;
  else return PrintElem::Float64;
}

template <class T>
struct is_array : std::false_type {};
template <class T, int N>
struct is_array<Array<T, N>> : std::true_type {};

/// One print() line: collected in a local buffer (spilling to the heap only
/// for long lines), then written to the sink. The methods are compiled once
/// in libpydd_runtime.a; only the thin variadic print() below is a template.
class PrintLine {
 public:
  PrintLine() = default;
  PrintLine(const PrintLine&) = delete;
  PrintLine& operator=(const PrintLine&) = delete;
  ~PrintLine();

  void add(bool value);
  void add(int64_t value);
  void add(uint64_t value);
  void add(double value);
  void add(float value);
  /// Python's repr of a complex: `(1+2j)`, `2j`; complex64 parts with
  /// float32's shortest digits, as NumPy prints them.
  void add(std::complex<double> value);
  void add(std::complex<float> value);
  void add(const char* text);  // null prints as None
  /// A 1-D array of n elements `stride` elements apart, as NumPy's str().
  void add_array(PrintElem elem, const void* data, int64_t n, int64_t stride);
  /// Ends the line with '\n' and writes it to the sink.
  void finish();
  /// A list, dict or tuple as Python's repr: `open` ("[", "{", "(") after
  /// the usual separator, `between` (", " or ": ") between its parts, then
  /// `close`; its parts are added without a separator of their own.
  void open(const char* text);
  void between(const char* text);
  void close(const char* text);

 private:
  void separate();
  void append(const char* s, int64_t n);

  char local_[256];
  char* data_ = local_;
  int64_t len_ = 0;
  int64_t cap_ = sizeof(local_);
  bool first_ = true;
};

template <class T>
inline constexpr bool always_false_v = false;

template <class T>
struct is_list : std::false_type {};
template <class T>
struct is_list<List<T>> : std::true_type {};
template <class T>
struct is_dict : std::false_type {};
template <class K, class V>
struct is_dict<Dict<K, V>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

template <class T>
inline void add_value(PrintLine& line, const T& value);

/// Lists, dicts and tuples of scalars (nested too), as Python prints them.
template <class T>
inline void add_container(PrintLine& line, const T& value) {
  if constexpr (is_list<T>::value) {
    line.open("[");
    for (int64_t i = 0; i < value.size(); ++i) {
      if (i) line.between(", ");
      add_value(line, value[i]);
    }
    line.close("]");
  } else if constexpr (is_dict<T>::value) {
    line.open("{");
    bool first = true;
    for (const auto& kv : value.items()) {
      if (!first) line.between(", ");
      first = false;
      add_value(line, kv.first);
      line.between(": ");
      add_value(line, kv.second);
    }
    line.close("}");
  } else {
    line.open("(");
    std::apply([&](const auto&... parts) {
      int i = 0;
      ((i++ ? line.between(", ") : void(), add_value(line, parts)), ...);
    }, value);
    line.close(std::tuple_size_v<T> == 1 ? ",)" : ")");
  }
}

template <class T>
inline void add_value(PrintLine& line, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    line.add(value);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    line.add(static_cast<int64_t>(value));
  } else if constexpr (std::is_integral_v<T>) {
    line.add(static_cast<uint64_t>(value));
  } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float> ||
                       std::is_same_v<T, std::complex<double>> || std::is_same_v<T, std::complex<float>>) {
    line.add(value);
  } else if constexpr (is_array<T>::value) {
    static_assert(T::rank == 1, "pydd::print: only 1-D arrays can be printed");
    using E = typename T::value_type;
    static_assert(std::is_same_v<E, bool> || std::is_integral_v<E> || std::is_same_v<E, float> ||
                      std::is_same_v<E, double> || std::is_same_v<E, std::complex<float>> ||
                      std::is_same_v<E, std::complex<double>>,
                  "pydd::print: unsupported array element type");
    line.add_array(print_elem<E>(), value.data(), value.shape(0), value.stride(0));
  } else if constexpr (std::is_convertible_v<const T&, const char*>) {
    line.add(static_cast<const char*>(value));
  } else if constexpr (is_list<T>::value || is_dict<T>::value || is_tuple<T>::value) {
    add_container(line, value);
  } else {
    static_assert(always_false_v<T>, "pydd::print: unsupported argument type");
  }
}

}  // namespace detail

/// Python's print(*args): arguments separated by one space, then a newline,
/// written to the sink in a single call.
template <class... Args>
void print(const Args&... args) {
  detail::PrintLine line;
  (detail::add_value(line, args), ...);
  line.finish();
}

}  // namespace pydd
