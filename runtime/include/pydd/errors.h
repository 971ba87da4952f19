// pydd runtime: errors raised by kernels.
//
// A kernel reports a failure by throwing pydd::Error. Its kind names the
// Python exception the Python bridge raises for it (host=python); a C++ host
// catches pydd::Error itself. The message lives in a fixed buffer so that
// this header does not pull <string> into every kernel's compile.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>

namespace pydd {

enum class ErrorKind : int {
  TypeError,
  ValueError,
  IndexError,
  ZeroDivisionError,
  MemoryError,
  RuntimeError,
  KeyError,  // the message is the key's repr, as Python's KeyError shows it
};

class Error : public std::exception {
 public:
  Error(ErrorKind kind, const char* message) : kind_(kind) {
    std::snprintf(message_, sizeof(message_), "%s", message);
  }
  ErrorKind kind() const noexcept { return kind_; }
  const char* what() const noexcept override { return message_; }

 private:
  ErrorKind kind_;
  char message_[256];
};

/// NumPy's wording for an out-of-range index.
[[noreturn]] inline void throw_index_error(int64_t index, int axis, int64_t size) {
  char msg[128];
  std::snprintf(msg, sizeof(msg), "index %lld is out of bounds for axis %d with size %lld",
                static_cast<long long>(index), axis, static_cast<long long>(size));
  throw Error(ErrorKind::IndexError, msg);
}

}  // namespace pydd
