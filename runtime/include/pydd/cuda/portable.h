// The CUDA subset that generated kernels use, spelled once.
//
// Under nvcc (__CUDACC__) every name here is CUDA itself. Under g++ it is a
// CPU emulation of the CUDA execution model that runs the very same source:
// the blocks of a grid run on OpenMP threads, and the threads of one block
// run as ucontext fibers on the OS thread that owns the block, switching
// only at PYDD_SYNCTHREADS() (HIP-CPU's design, src/include/hip/detail/
// tile.hpp). A fiber runs until it reaches a barrier or returns; when every
// live fiber of the block waits at a barrier they all continue. The
// emulation checks that they wait at the same barrier (the same source
// line) and that no thread of the block has returned while others wait: a
// divergent __syncthreads is undefined on a GPU and an error here.
//
// This header is device-safe: it includes no pydd runtime header, so a .cu
// file that includes it compiles with nvcc's front end.
//
// What the emitter may use (and nothing else):
//   PYDD_GLOBAL, PYDD_DEVICE, PYDD_HOST_DEVICE   function qualifiers
//   PYDD_SHARED                                  a block's shared memory
//   PYDD_SYNCTHREADS()                           the block barrier
//   pydd_threadIdx / pydd_blockIdx / pydd_blockDim / pydd_gridDim (.x .y .z)
//   pydd::cuda::atomic_add / atomic_min          on int32/int64/float/double
//   pydd::cuda::launch(kernel, grid, block, args...)
//   pydd::cuda::launch_flat(...)                 the same, for a kernel without barriers
//   pydd::cuda::require_device()                 DeviceError when no device can run kernels
//   pydd::cuda::device_alloc / device_free / copy_to_device / copy_to_host
//   pydd::cuda::KernelErrors                     per-thread error recording
//   pydd::cuda::deterministic_sum                two-pass reduction
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define PYDD_GLOBAL __global__
#define PYDD_DEVICE __device__
#define PYDD_HOST_DEVICE __host__ __device__
#define PYDD_SHARED __shared__
#define PYDD_SYNCTHREADS() __syncthreads()
#define pydd_threadIdx threadIdx
#define pydd_blockIdx blockIdx
#define pydd_blockDim blockDim
#define pydd_gridDim gridDim
#else
#include <ucontext.h>

#include <cstdlib>
#include <exception>
#include <memory>
#define PYDD_GLOBAL
#define PYDD_DEVICE
#define PYDD_HOST_DEVICE
// One block at a time runs on an OS thread, so a block's shared memory is
// a thread_local that every fiber of the block sees.
#define PYDD_SHARED static thread_local
#define PYDD_SYNCTHREADS() ::pydd::cuda::sim::syncthreads(__LINE__)
#define pydd_threadIdx (::pydd::cuda::sim::current_fiber()->thread_idx)
#define pydd_blockIdx (::pydd::cuda::sim::state().block_idx)
#define pydd_blockDim (::pydd::cuda::sim::state().block_dim)
#define pydd_gridDim (::pydd::cuda::sim::state().grid_dim)
#endif

namespace pydd::cuda {

#if defined(__CUDACC__)
using dim = dim3;
#else
struct dim {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
#endif

/// Raised for a CUDA runtime failure (no device, launch failure...): the
/// Python glue turns it into RuntimeError; its text names the CUDA error.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#if !defined(__CUDACC__)
namespace sim {

struct Fiber {
  dim thread_idx;
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  bool done = false;
  int barrier_line = 0;  // the barrier this fiber waits at, 0 when running
};

struct BlockState {
  dim block_idx, block_dim, grid_dim;
  ucontext_t scheduler;
  Fiber* fiber = nullptr;
  void (*body)(void*) = nullptr;
  void* closure = nullptr;
  std::exception_ptr error;
};

inline BlockState& state() {
  static thread_local BlockState s;
  return s;
}
inline Fiber* current_fiber() { return state().fiber; }

inline void syncthreads(int line) {
  BlockState& s = state();
  s.fiber->barrier_line = line;
  swapcontext(&s.fiber->context, &s.scheduler);
}

inline void fiber_entry() {
  BlockState& s = state();
  try {
    s.body(s.closure);
  } catch (...) {
    if (!s.error) s.error = std::current_exception();
  }
  s.fiber->done = true;
  // uc_link returns to the scheduler.
}

/// Fiber stacks: kernels are straight-line numeric code with small frames.
constexpr size_t kStackBytes = 64 * 1024;

/// Runs one block: every thread as a fiber, round robin between barriers.
inline void run_block(dim block_idx, dim block_dim, dim grid_dim, void (*body)(void*), void* closure) {
  BlockState& s = state();
  s.block_idx = block_idx;
  s.block_dim = block_dim;
  s.grid_dim = grid_dim;
  s.body = body;
  s.closure = closure;
  s.error = nullptr;
  size_t n = size_t(block_dim.x) * block_dim.y * block_dim.z;
  // The fibers and their stacks are kept per OS thread and reused by the
  // next block: allocating (and zeroing) them per block costs more than
  // most kernels.
  static thread_local std::vector<Fiber> pool;
  if (pool.size() < n) pool.resize(n);
  std::vector<Fiber>& fibers = pool;
  for (size_t t = 0; t < n; ++t) {
    Fiber& f = fibers[t];
    f.thread_idx = dim(unsigned(t % block_dim.x), unsigned(t / block_dim.x % block_dim.y),
                       unsigned(t / (size_t(block_dim.x) * block_dim.y)));
    f.done = false;
    f.barrier_line = 0;
    if (!f.stack) f.stack.reset(new char[kStackBytes]);
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &s.scheduler;
    makecontext(&f.context, fiber_entry, 0);
  }
  for (;;) {
    size_t waiting = 0, done = 0;
    int line = 0;
    for (size_t t = 0; t < n; ++t) {
      Fiber& f = fibers[t];
      if (f.done) {
        ++done;
        continue;
      }
      f.barrier_line = 0;
      // state() again rather than `s`: swapcontext returns twice, and a
      // reference kept in a register across it is what -Wclobbered warns of.
      state().fiber = &f;
      swapcontext(&state().scheduler, &f.context);
      state().fiber = nullptr;
      if (f.done) {
        ++done;
        continue;
      }
      ++waiting;
      if (line == 0) line = f.barrier_line;
      else if (line != f.barrier_line)
        throw DeviceError("cuda-sim: the threads of a block wait at different __syncthreads (lines " +
                          std::to_string(line) + " and " + std::to_string(f.barrier_line) + ")");
    }
    if (state().error) std::rethrow_exception(state().error);
    if (waiting == 0) return;
    if (done != 0)
      throw DeviceError("cuda-sim: some threads of a block returned while others wait at __syncthreads (line " +
                        std::to_string(line) + ")");
  }
}

template <class F>
void trampoline(void* closure) {
  (*static_cast<F*>(closure))();
}

}  // namespace sim
#endif

// ---------------------------------------------------------------------------
// Launch and memory

#if defined(__CUDACC__)
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw DeviceError(std::string("CUDA device error in ") + what + ": " + cudaGetErrorName(e) + ": " +
                      cudaGetErrorString(e));
}
template <class... P, class... A>
void launch(void (*kernel)(P...), dim grid, dim block, A... args) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return;
  kernel<<<grid, block>>>(args...);
  check(cudaGetLastError(), "kernel launch");
  check(cudaDeviceSynchronize(), "kernel");
}
/// A kernel that never waits at a barrier: the same launch on the device.
template <class... P, class... A>
void launch_flat(void (*kernel)(P...), dim grid, dim block, A... args) {
  launch(kernel, grid, block, args...);
}
/// Throws DeviceError naming the CUDA error when no device can run kernels
/// (no GPU, no driver, a driver too old for the runtime).
inline void require_device() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    throw DeviceError(std::string("no CUDA device available: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) +
                      ": " + cudaGetErrorString(e));
  if (count == 0) throw DeviceError("no CUDA device available: cudaGetDeviceCount found no device");
}
inline void* device_alloc(size_t bytes) {
  void* p = nullptr;
  if (bytes) check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}
inline void device_free(void* p) {
  if (p) cudaFree(p);
}
inline void copy_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes) check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
}
inline void copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}
#else
/// Runs `kernel(args...)` on a grid of `grid` blocks of `block` threads:
/// blocks in parallel on OpenMP threads, each block's threads as fibers.
template <class... P, class... A>
void launch(void (*kernel)(P...), dim grid, dim block, A... args) {
  long blocks = long(grid.x) * grid.y * grid.z;
  if (blocks == 0 || size_t(block.x) * block.y * block.z == 0) return;
  auto body = [&] { kernel(args...); };
  using Body = decltype(body);
  std::exception_ptr error;
#pragma omp parallel for schedule(static)
  for (long b = 0; b < blocks; ++b) {
    try {
      dim idx(unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (long(grid.x) * grid.y)));
      sim::run_block(idx, block, grid, &sim::trampoline<Body>, &body);
    } catch (...) {
#pragma omp critical(pydd_cuda_sim_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}
/// A kernel that never waits at a barrier (no PYDD_SYNCTHREADS): its
/// threads need no fibers, so each block's threads run one after another as
/// plain calls, which costs a function call per thread instead of a context
/// switch.
template <class... P, class... A>
void launch_flat(void (*kernel)(P...), dim grid, dim block, A... args) {
  long blocks = long(grid.x) * grid.y * grid.z;
  size_t threads = size_t(block.x) * block.y * block.z;
  if (blocks == 0 || threads == 0) return;
  std::exception_ptr error;
#pragma omp parallel for schedule(static)
  for (long b = 0; b < blocks; ++b) {
    try {
      sim::BlockState& s = sim::state();
      sim::Fiber self;
      s.block_idx = dim(unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (long(grid.x) * grid.y)));
      s.block_dim = block;
      s.grid_dim = grid;
      s.fiber = &self;
      for (size_t t = 0; t < threads; ++t) {
        self.thread_idx = dim(unsigned(t % block.x), unsigned(t / block.x % block.y),
                              unsigned(t / (size_t(block.x) * block.y)));
        kernel(args...);
      }
      s.fiber = nullptr;
    } catch (...) {
      sim::state().fiber = nullptr;
#pragma omp critical(pydd_cuda_sim_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}
/// The emulation always has its device.
inline void require_device() {}
inline void* device_alloc(size_t bytes) {
  if (!bytes) return nullptr;
  void* p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return p;
}
inline void device_free(void* p) { std::free(p); }
inline void copy_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
inline void copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
#endif

// ---------------------------------------------------------------------------
// Atomics (the emulation's blocks run on several OS threads)

#if defined(__CUDACC__)
__device__ inline int32_t atomic_add(int32_t* p, int32_t v) { return atomicAdd(p, v); }
__device__ inline int64_t atomic_add(int64_t* p, int64_t v) {
  return (int64_t)atomicAdd((unsigned long long*)p, (unsigned long long)v);  // wraps as NumPy's int64
}
__device__ inline float atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ inline double atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ inline int32_t atomic_min(int32_t* p, int32_t v) { return atomicMin(p, v); }
__device__ inline int64_t atomic_min(int64_t* p, int64_t v) { return (int64_t)atomicMin((long long*)p, (long long)v); }
#else
template <class T>
T atomic_add(T* p, T v) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps, as on the device
    return T(__atomic_fetch_add(reinterpret_cast<U*>(p), U(v), __ATOMIC_RELAXED));
  } else {
    T old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
      sum = old + v;
    } while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
  }
}
template <class T>
T atomic_min(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
#endif

// ---------------------------------------------------------------------------
// Errors inside kernels

/// What a kernel records when one of its iterations fails: each failing
/// thread does atomic_min(&key, iteration * kErrorCodes + code), so after
/// the kernel `key` names the lowest failing iteration and its error: the
/// error the sequential CPU loop raises first. Iterations are in [0, 2^59).
/// Codes: 1 ZeroDivisionError, 2 IndexError, 3 ValueError (shape); those
/// from 4 on are pydd/cuda/kernel.h's (each one message of the CPU build).
struct KernelErrors {
  int64_t key;  // kNoError when no iteration failed
};
constexpr int64_t kNoError = INT64_MAX;
enum ErrorCode : int32_t { kZeroDivision = 1, kIndex = 2, kShape = 3 };
constexpr int64_t kErrorCodes = 16;

PYDD_DEVICE inline void record_error(KernelErrors* e, int64_t iteration, int32_t code) {
  atomic_min(&e->key, iteration * kErrorCodes + code);
}
inline int64_t failed_iteration(const KernelErrors& e) { return e.key == kNoError ? -1 : e.key / kErrorCodes; }
inline int32_t failed_code(const KernelErrors& e) { return e.key == kNoError ? 0 : int32_t(e.key % kErrorCodes); }

// ---------------------------------------------------------------------------
// Deterministic two-pass sum

/// Threads per block of the reduction, and at most this many blocks: the
/// grid is a function of the extent alone, so the order of additions (and
/// the rounded result) is the same on every GPU and in the emulation.
constexpr unsigned kReduceThreads = 256;
constexpr unsigned kReduceMaxBlocks = 1024;

inline unsigned reduce_blocks(int64_t n) {
  int64_t b = (n + kReduceThreads - 1) / kReduceThreads;
  return unsigned(b < 1 ? 1 : (b > kReduceMaxBlocks ? kReduceMaxBlocks : b));
}

/// Pass 1 (grid of reduce_blocks(n)) and pass 2 (one block over the
/// partials): thread t of block b adds x[b*T + t], x[b*T + t + G*T], ... in
/// order, then the block's values meet in a fixed tree.
template <class T>
PYDD_GLOBAL void reduce_sum_kernel(const T* x, int64_t n, T* out) {
  PYDD_SHARED T partial[kReduceThreads];
  unsigned t = pydd_threadIdx.x;
  int64_t stride = int64_t(pydd_gridDim.x) * kReduceThreads;
  T acc = T(0);
  for (int64_t i = int64_t(pydd_blockIdx.x) * kReduceThreads + t; i < n; i += stride) acc = acc + x[i];
  partial[t] = acc;
  PYDD_SYNCTHREADS();
  for (unsigned half = kReduceThreads / 2; half > 0; half /= 2) {
    if (t < half) partial[t] = partial[t] + partial[t + half];
    PYDD_SYNCTHREADS();
  }
  if (t == 0) out[pydd_blockIdx.x] = partial[0];
}

/// The sum of the n device elements at x, deterministically.
template <class T>
T deterministic_sum(const T* x, int64_t n) {
  unsigned blocks = reduce_blocks(n);
  T* partials = static_cast<T*>(device_alloc(sizeof(T) * (blocks + 1)));
  T result = T(0);
  try {
    launch(&reduce_sum_kernel<T>, dim(blocks), dim(kReduceThreads), x, n, partials);
    launch(&reduce_sum_kernel<T>, dim(1), dim(kReduceThreads), (const T*)partials, int64_t(blocks), partials + blocks);
    copy_to_host(&result, partials + blocks, sizeof(T));
  } catch (...) {
    device_free(partials);
    throw;
  }
  device_free(partials);
  return result;
}

/// The same order of additions as deterministic_sum, on the host (what a
/// test compares the device's result with, bit for bit).
template <class T>
T reference_tree_sum(const T* x, int64_t n) {
  auto pass = [](const T* v, int64_t m, unsigned blocks, std::vector<T>& out) {
    out.assign(blocks, T(0));
    int64_t stride = int64_t(blocks) * kReduceThreads;
    for (unsigned b = 0; b < blocks; ++b) {
      T partial[kReduceThreads];
      for (unsigned t = 0; t < kReduceThreads; ++t) {
        T acc = T(0);
        for (int64_t i = int64_t(b) * kReduceThreads + t; i < m; i += stride) acc = acc + v[i];
        partial[t] = acc;
      }
      for (unsigned half = kReduceThreads / 2; half > 0; half /= 2)
        for (unsigned t = 0; t < half; ++t) partial[t] = partial[t] + partial[t + half];
      out[b] = partial[0];
    }
  };
  std::vector<T> partials, total;
  unsigned blocks = reduce_blocks(n);
  pass(x, n, blocks, partials);
  pass(partials.data(), int64_t(blocks), 1, total);
  return total[0];
}

}  // namespace pydd::cuda
