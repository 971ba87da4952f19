// pydd runtime: errors raised by kernels.
//
// A kernel reports a failure by throwing pydd::Error. Its kind names the
// Python exception the Python bridge raises for it (host=python); a C++ host
// catches pydd::Error itself. The message lives in a fixed buffer so that
// this header does not pull <string> into every kernel's compile.
#pragma once

#include <csignal>
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
  KeyboardInterrupt,  // Interrupt::requested was set while the kernel ran
  AssertionError,     // a failed `assert`
  LinAlgError,        // numpy.linalg.LinAlgError: a singular or non-square matrix
  OverflowError,      // a float too large for an integer result (round(inf))
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

/// Ctrl-C for a running kernel. The Python bridge's SIGINT handler sets
/// `requested` while a kernel runs (a C++ host may set it from its own
/// handler); the kernel checks it at the back edge of every loop that holds
/// another loop and of every while loop, and throws KeyboardInterrupt.
/// Innermost counted loops are not checked: they always end, and a check
/// there would stop them from being vectorized. Nor are while loops that
/// step an index through an array (opt/ScanLoops.h), bounded the same way. Default visibility makes
/// `requested` one object shared by every module and libpydd_python (a
/// unique symbol), whatever -fvisibility they are built with.
///
/// A volatile sig_atomic_t rather than an atomic: g++ treats every atomic
/// load, even a relaxed one, as a barrier that keeps other memory accesses
/// from moving across it, which slowed outer loops measurably; a volatile
/// load is only itself kept. Its writers are a signal handler and the
/// bridge, its readers poll it: no ordering is needed.
struct __attribute__((visibility("default"))) Interrupt {
  static inline volatile std::sig_atomic_t requested = 0;
};

[[noreturn]] __attribute__((noinline, cold)) inline void throw_interrupt() {
  throw Error(ErrorKind::KeyboardInterrupt, "interrupted");
}

inline void check_interrupt() {
  if (__builtin_expect(Interrupt::requested != 0, 0)) throw_interrupt();
}

/// A loop whose iterations are short (only short innermost loops and scalar
/// work in them) checks every kInterruptPeriod-th iteration, and an innermost
/// loop in it of kInterruptLongLoop iterations or more checks before it runs;
/// so Ctrl-C waits at most about kInterruptPeriod * kInterruptLongLoop
/// innermost iterations more than it did.
inline constexpr int64_t kInterruptPeriod = 16;
inline constexpr int64_t kInterruptLongLoop = 4096;
/// A loop over rows whose every iteration runs a loop over S.row(i) counts
/// its work instead: each row's entries plus kInterruptRowWork for the row
/// itself, in strips of rows (interrupt_strip_end).
inline constexpr int64_t kInterruptRowWork = 16;

/// The work a strip of rows (below) may count: each row's entries plus
/// kInterruptRowWork. A strip's rows run with no test, so Ctrl-C waits at
/// most about this many entries' work (tens of microseconds). Larger than
/// kInterruptLongLoop because a strip's end is a binary search whose steps
/// mispredict: with strips 16x shorter, on rows of 10 entries, finding
/// them cost bench/sparse.py's row loop 2-5%.
inline constexpr int64_t kInterruptStripWork = int64_t{1} << 16;

/// The end of a strip of rows [at, end) for a loop over a matrix's rows whose
/// every iteration walks its own row (row r's entries are indptr[r] to
/// indptr[r + 1]): the most rows from `at` on, before `stop`, whose work
/// counted as above is at most kInterruptStripWork, and always at least one.
/// Such a loop checks Ctrl-C once per strip and its rows run with no test:
/// without the test per row, bench/sparse.py's row-by-row product ran up to
/// 17% faster in one process (0-17% over runs, the most on jhu's matrix).
template <class I>
inline int64_t interrupt_strip_end(const I* indptr, int64_t at, int64_t stop) {
  constexpr int64_t most_rows = kInterruptStripWork / kInterruptRowWork;
  const int64_t first = indptr[at];
  // The end is in [lo, hi]: the last one whose strip fits, else at + 1.
  int64_t lo = at + 1, hi = stop - at > most_rows ? at + most_rows : stop;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (int64_t(indptr[mid]) - first + kInterruptRowWork * (mid - at) <= kInterruptStripWork) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/// NumPy's wording for an out-of-range index.
[[noreturn]] inline void throw_index_error(int64_t index, int axis, int64_t size) {
  char msg[128];
  std::snprintf(msg, sizeof(msg), "index %lld is out of bounds for axis %d with size %lld",
                static_cast<long long>(index), axis, static_cast<long long>(size));
  throw Error(ErrorKind::IndexError, msg);
}

/// A failed `assert cond, message` (the message may be empty).
[[noreturn]] __attribute__((noinline, cold)) inline void assertion_error(const char* message) {
  throw Error(ErrorKind::AssertionError, message);
}

}  // namespace pydd
