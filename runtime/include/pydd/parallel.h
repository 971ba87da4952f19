// pydd runtime: what the OpenMP code of `pfor`, `async`, `finish` and
// `isolated` relies on (the pragmas themselves are in the generated code).
//
// - The thread count: OMP_NUM_THREADS by default; set_num_threads(n) (from
//   Python, pydd.set_num_threads) overrides it for every kernel in the
//   process. It is one object shared by every kernel module and
//   libpydd_python (a default-visibility inline variable, as
//   Interrupt::requested), not OpenMP's per-thread ICV, which
//   omp_set_num_threads would set for the calling thread only.
// - Exceptions: none may leave an OpenMP region (the runtime would call
//   std::terminate). Each parallel iteration, task, taskgroup and critical
//   section catches what its body throws into a FirstError, and the code
//   after the region rethrows the first one.
// - OpenBLAS: a BLAS call inside a parallel loop runs on one thread
//   (BlasSerial), so that two loop threads do not each start OpenBLAS's own
//   threads on the same cores; outside parallel regions OpenBLAS keeps its
//   threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <type_traits>

#include <omp.h>

extern "C" {
// OpenBLAS's thread control (cblas.h declares them; declared here so that
// this header does not need the BLAS headers).
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
}

namespace pydd {

struct __attribute__((visibility("default"))) Threads {
  /// 0: OpenMP's default (OMP_NUM_THREADS, else one per core).
  static inline std::atomic<int> requested{0};
};

/// Sets the number of threads parallel loops and tasks use from now on, in
/// every thread of the process; n <= 0 restores the default.
inline void set_num_threads(int n) { Threads::requested.store(n > 0 ? n : 0, std::memory_order_relaxed); }

/// The number of threads a parallel loop started now would use.
inline int get_num_threads() {
  int n = Threads::requested.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

/// Elements a fused element-wise loop needs before it runs on all threads:
/// below this, starting a team (a few microseconds) costs more than the
/// threads gain.
inline constexpr uint64_t kParallelElements = uint64_t{1} << 16;

/// Bytes a new array needs before its fill (zeros, ones, full) runs on all
/// threads: a memset of 8 MiB takes about a millisecond, far above a team's
/// start, and fills that large are rare enough not to contend with
/// OpenBLAS's threads.
inline constexpr uint64_t kParallelFillBytes = uint64_t{8} << 20;

/// parallel_range's team, compiled once into the runtime library
/// (src/parallel.cpp): runs part(context, lo, hi) on each thread's part.
void run_parts(int64_t start, int64_t stop, int threads, void (*part)(const void*, int64_t, int64_t),
               const void* context);

/// Runs f(lo, hi) on parts of [start, stop), one contiguous part per thread
/// (a static schedule), or f(start, stop) alone on one thread. f must not
/// throw (an exception cannot leave an OpenMP region). The OpenMP region is
/// not instantiated per f: outlining one per fused loop nest made g++
/// spend a tenth of an array-heavy kernel's build on it; f is reached
/// through one indirect call per thread.
template <class F>
void parallel_range(int64_t start, int64_t stop, const F& f) {
  const int threads = get_num_threads();
  // Inside a pfor or a task the other threads are busy already (and a nested
  // region would get a team of one).
  if (threads <= 1 || omp_in_parallel()) return f(start, stop);
  run_parts(
      start, stop, threads, [](const void* c, int64_t lo, int64_t hi) { (*static_cast<const F*>(c))(lo, hi); }, &f);
}

/// The fold of [start, stop) on all threads: part(lo, hi) folds one part
/// from the identity, and the parts are combined as they finish. For a
/// combine exact in any order (bitwise or and and, wrapping integer
/// addition), so the result is the sequential fold's. part must not throw.
template <class R, class Part, class Combine>
R parallel_fold(int64_t start, int64_t stop, R identity, const Part& part, const Combine& combine) {
  R total = identity;
  std::mutex mutex;
  parallel_range(start, stop, [&](int64_t lo, int64_t hi) {
    const R value = part(lo, hi);
    std::lock_guard<std::mutex> lock(mutex);
    total = combine(total, value);
  });
  return total;
}

/// The first exception raised in a parallel region; later ones are dropped
/// (Python raises the first error a sequential run meets; which one is
/// "first" among parallel iterations is the first one caught).
class FirstError {
 public:
  void capture() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true, std::memory_order_relaxed);
  }
  /// Whether an iteration already failed: the others skip their work.
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

/// OpenBLAS on one thread while a parallel loop runs (from the outermost
/// one's start to its end). Counted, so that kernels running parallel loops
/// from several host threads at once restore OpenBLAS's count after the
/// last one ends.
class BlasSerial {
 public:
  BlasSerial() {
    if (omp_in_parallel()) return;  // an enclosing region already did it
    active_ = true;
    std::lock_guard<std::mutex> lock(state().mutex);
    if (state().depth++ == 0) {
      state().saved = openblas_get_num_threads();
      if (state().saved != 1) openblas_set_num_threads(1);
    }
  }
  ~BlasSerial() {
    if (!active_) return;
    std::lock_guard<std::mutex> lock(state().mutex);
    if (--state().depth == 0 && state().saved != 1) openblas_set_num_threads(state().saved);
  }
  BlasSerial(const BlasSerial&) = delete;
  BlasSerial& operator=(const BlasSerial&) = delete;

 private:
  struct State {
    std::mutex mutex;
    int depth = 0;
    int saved = 1;
  };
  // Shared by every module, as Threads.
  __attribute__((visibility("default"))) static State& state() {
    static State s;
    return s;
  }
  bool active_ = false;
};

/// The error of a parallel loop's lowest failing iteration: the one a
/// sequential run would raise, whatever order the threads meet failures
/// in. An iteration above a failed one is skipped (a sequential run never
/// reaches it); those below still run, since one of them may fail first.
class LowestError {
 public:
  void capture(uint64_t iteration) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (iteration >= lowest_.load(std::memory_order_relaxed)) return;
    error_ = std::current_exception();
    lowest_.store(iteration, std::memory_order_relaxed);
  }
  /// Whether `iteration` comes after one that failed.
  bool skip(uint64_t iteration) const noexcept { return iteration > lowest_.load(std::memory_order_relaxed); }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  std::atomic<uint64_t> lowest_{UINT64_MAX};
};

/// The state of one parallel loop: its lowest failing iteration's error
/// and OpenBLAS kept on one thread.
struct ParallelLoop {
  LowestError error;
  BlasSerial blas;
};

/// The lock of every `isolated` block of every kernel (one object in the
/// process, as Threads). Recursive: an isolated block may call a function
/// that holds one.
__attribute__((visibility("default"))) inline std::recursive_mutex& isolated_lock() {
  static std::recursive_mutex lock;
  return lock;
}

/// Runs `body` (a kernel function's body that creates tasks) as an
/// implicit `finish`: inside a parallel region when there is none yet (one
/// thread runs the body, the team runs its tasks), and returns once every
/// task it created, directly or not, has ended. The first exception of the
/// body or of any task is rethrown here.
template <typename Body>
auto run_finish(Body&& body, FirstError& errors) -> decltype(body()) {
  using R = decltype(body());
  if constexpr (std::is_void_v<R>) {
    run_finish([&]() { body(); return 0; }, errors);
  } else {
    R result{};
    auto run = [&]() {
#pragma omp taskgroup
      {
        try {
          result = body();
        } catch (...) {
          errors.capture();
        }
      }
    };
    if (omp_in_parallel()) {
      run();
    } else {
      BlasSerial blas;
#pragma omp parallel num_threads(get_num_threads())
#pragma omp single
      run();
    }
    errors.rethrow();
    return result;
  }
}

}  // namespace pydd
