// pydd runtime: dense arrays.
//
// Two types, on purpose:
//  - Array<T, N> is the owning handle that kernels pass, return and store.
//    It holds a reference-counted Buffer, or no owner at all when it borrows
//    memory that somebody else keeps alive (a NumPy array for the duration
//    of a call, or a C++ host's own storage).
//  - View<T, N> is a trivially copyable pointer-plus-shape that generated
//    code keeps in locals for element access. Because its address never
//    escapes, the C++ optimizer knows that stores through `data` cannot
//    change `shape`, which keeps loops vectorizable even for int64 arrays.
//
// An array has a shape and strides counted in elements (not bytes), as a
// NumPy array does: slices and transposes are Arrays that share the buffer.
// New arrays are C-contiguous (row-major). Element indices are int64.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <mutex>
#include <new>
#include <type_traits>

#include <malloc.h>
#include <sys/mman.h>

#include "pydd/errors.h"
#include "pydd/parallel.h"

namespace pydd {

/// The largest rank an array may have (a pydd kernel is rejected above it).
inline constexpr int kMaxRank = 8;

namespace detail {

/// Recently freed buffers of 32 KiB and more, kept for the next array of
/// about the same size.
///
/// Why: a kernel loop like `t = u + u` allocates the new `t` before the old
/// one is released, so two blocks of the same size alternate. glibc serves
/// blocks above its mmap threshold (128 KiB at first, raised dynamically only
/// when an mmapped block is freed) with a fresh mapping and returns heap tops
/// above its trim threshold to the system: either way every iteration page-
/// faults its whole temporary again (measured: 512 KiB temporaries took 6.5x
/// NumPy's time in such a loop; 1-2 MiB ones cost both pydd and NumPy 4x what
/// a warm buffer does). NumPy itself only caches blocks under 1 KiB and asks
/// for huge pages from 4 MiB; smaller blocks are glibc's business. Keeping a
/// bounded set of freed blocks of every size class and handing back the
/// best fit removes the faults for all sizes.
///
/// Blocks stay malloc'd (the cache only delays their free), so code built
/// against an older runtime that std::free()s them directly is still right.
/// One cache per process: the variable has default visibility, so g++ emits
/// it as a unique symbol that the dynamic linker shares among every module
/// and the Python bridge, although each is loaded RTLD_LOCAL (a buffer made
/// by one kernel is often released by the bridge). Bump the name's version
/// if the layout changes. Guarded by a mutex: kernels run without the GIL
/// and a buffer may be released on any thread.
struct BufferCache {
  static constexpr int kSlots = 16;
  static constexpr size_t kMaxBytes = size_t{1} << 30;  // held at most, in all
  static constexpr size_t kMin = size_t{32} << 10;      // smaller blocks go back to malloc
  static constexpr size_t kHuge = size_t{2} << 20;      // blocks from here on are 2 MiB aligned

  std::mutex lock;
  void* block[kSlots] = {};
  size_t cap[kSlots] = {};  // usable bytes of block[i]
  uint64_t stamp[kSlots] = {};
  uint64_t clock = 0;
  size_t total = 0;

  /// The bytes actually requested for `bytes`: a multiple of 4 KiB, or of
  /// 2 MiB for huge blocks, so that arrays of nearly the same size share a
  /// size class.
  static size_t rounded(size_t bytes) {
    const size_t unit = bytes >= (size_t{4} << 20) ? kHuge : size_t{4} << 10;
    return (bytes + unit - 1) / unit * unit;
  }
  /// The smallest cached block that holds `bytes` without wasting more than
  /// half as much again, or null.
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> guard(lock);
    int best = -1;
    for (int i = 0; i < kSlots; ++i)
      if (block[i] && cap[i] >= bytes && cap[i] - bytes <= bytes / 2 &&
          (best < 0 || cap[i] < cap[best]))
        best = i;
    if (best < 0) return nullptr;
    void* m = block[best];
    block[best] = nullptr;
    total -= cap[best];
    return m;
  }
  /// Keeps `m` (`usable` bytes), evicting the oldest blocks to stay within
  /// the limits; frees what it does not keep (outside the lock).
  void put(void* m, size_t usable) {
    void* evicted[kSlots + 1];
    int n = 0;
    if (usable > kMaxBytes) {
      evicted[n++] = m;
    } else {
      std::lock_guard<std::mutex> guard(lock);
      for (;;) {
        int free_slot = -1, oldest = -1;
        for (int i = 0; i < kSlots; ++i) {
          if (!block[i]) free_slot = i;
          else if (oldest < 0 || stamp[i] < stamp[oldest]) oldest = i;
        }
        if (free_slot >= 0 && total + usable <= kMaxBytes) {
          block[free_slot] = m, cap[free_slot] = usable, stamp[free_slot] = ++clock;
          total += usable;
          break;
        }
        evicted[n++] = block[oldest];
        total -= cap[oldest];
        block[oldest] = nullptr;
      }
    }
    for (int i = 0; i < n; ++i) std::free(evicted[i]);
  }
  /// Frees every cached block (tests; a host that wants its memory back).
  void clear() {
    void* all[kSlots];
    {
      std::lock_guard<std::mutex> guard(lock);
      for (int i = 0; i < kSlots; ++i) all[i] = block[i], block[i] = nullptr;
      total = 0;
    }
    for (void* m : all) std::free(m);
  }
};
#ifdef __GLIBCXX__
static_assert(std::is_trivially_destructible_v<std::mutex>, "the cache must need no destructor");
#endif
__attribute__((visibility("default"))) inline BufferCache buffer_cache_v2;

}  // namespace detail

/// Heap storage shared by every Array that refers to it.
struct Buffer {
  std::atomic<int64_t> refs{1};
  void* memory = nullptr;  // from the malloc family, whoever allocated it

  /// Buffers up to this size come from plain malloc.
  static constexpr size_t kSmallBytes = 1024;

  static Buffer* allocate(size_t bytes) {
    // 64-byte alignment: whole cache lines and any SIMD width. Buffers from
    // 32 KiB on come from the cache of freed ones when it has one of about
    // the size; huge ones are 2 MiB aligned and ask for transparent huge
    // pages, as NumPy does.
    using detail::BufferCache;
    void* mem = nullptr;
    if (bytes >= BufferCache::kMin) {
      const size_t rounded = BufferCache::rounded(bytes);
      mem = detail::buffer_cache_v2.take(rounded);
      if (!mem) {
        const bool huge = rounded >= (size_t{4} << 20);
        mem = std::aligned_alloc(huge ? BufferCache::kHuge : 64, rounded);
#ifdef MADV_HUGEPAGE
        if (huge && mem) madvise(mem, rounded, MADV_HUGEPAGE);
#endif
      }
    } else if (bytes <= kSmallBytes) {
      // malloc's own alignment (16 bytes, NumPy's too): an aligned_alloc
      // bypasses glibc's per-thread cache and took 70 ns per allocation and
      // free of a one-element array, a fused sum's window sums included.
      mem = std::malloc(bytes == 0 ? 1 : bytes);
    } else {
      mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    }
    if (!mem) throw Error(ErrorKind::MemoryError, "unable to allocate array memory");
    Buffer* b = new (std::nothrow) Buffer;
    if (!b) {
      free_memory(mem);
      throw Error(ErrorKind::MemoryError, "unable to allocate array memory");
    }
    b->memory = mem;
    return b;
  }
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      free_memory(memory);
      delete this;
    }
  }
  /// Frees a block, or keeps it in the cache if it is 32 KiB or more. The
  /// size comes from malloc itself, so the Buffer layout is what older code
  /// expects.
  static void free_memory(void* mem) {
    const size_t usable = mem ? malloc_usable_size(mem) : 0;
    if (usable >= detail::BufferCache::kMin) detail::buffer_cache_v2.put(mem, usable);
    else std::free(mem);
  }
};

namespace detail {

/// C-order strides (in elements) of a contiguous array of this shape.
template <int N>
inline void contiguous_strides(const int64_t* shape, int64_t* strides) {
  int64_t s = 1;
  for (int k = N - 1; k >= 0; --k) {
    strides[k] = s;
    s *= shape[k];
  }
}

/// NumPy's C-contiguity test: axes of length 1 may have any stride, and an
/// empty array is contiguous.
template <int N>
inline bool is_c_contiguous(const int64_t* shape, const int64_t* strides) {
  for (int k = 0; k < N; ++k)
    if (shape[k] == 0) return true;
  int64_t expected = 1;
  for (int k = N - 1; k >= 0; --k) {
    if (shape[k] != 1) {
      if (strides[k] != expected) return false;
      expected *= shape[k];
    }
  }
  return true;
}

}  // namespace detail

template <typename T, int N>
struct View {
  static_assert(N >= 1 && N <= kMaxRank, "array rank out of range");
  T* data;
  int64_t shape[N];
  int64_t strides[N];  // in elements; may be 0 (broadcast) or negative

  int64_t size() const {
    int64_t n = 1;
    for (int k = 0; k < N; ++k) n *= shape[k];
    return n;
  }
  /// Strided element access; indices must already be in range.
  template <typename... I>
  T& operator()(I... idx) const {
    static_assert(sizeof...(I) == N, "wrong number of indices");
    const int64_t ix[N] = {static_cast<int64_t>(idx)...};
    int64_t off = 0;
    for (int k = 0; k < N; ++k) off += ix[k] * strides[k];
    return data[off];
  }
  /// The same element when the last axis is known to be contiguous
  /// (strides[N - 1] == 1): the innermost index then steps through memory
  /// one element at a time, which the C++ compiler can vectorize.
  template <typename... I>
  T& unit(I... idx) const {
    static_assert(sizeof...(I) == N, "wrong number of indices");
    const int64_t ix[N] = {static_cast<int64_t>(idx)...};
    int64_t off = ix[N - 1];
    for (int k = 0; k < N - 1; ++k) off += ix[k] * strides[k];
    return data[off];
  }
};

template <typename T, int N>
class Array {
  static_assert(N >= 1 && N <= kMaxRank, "array rank out of range");

 public:
  using value_type = T;
  static constexpr int rank = N;
  using Shape = int64_t[N];

  Array() : data_(nullptr), owner_(nullptr) {
    for (int k = 0; k < N; ++k) shape_[k] = 0, strides_[k] = 1;
  }
  Array(const Array& o) : data_(o.data_), owner_(o.owner_) {
    copy_layout(o.shape_, o.strides_);
    if (owner_) owner_->retain();
  }
  Array(Array&& o) noexcept : data_(o.data_), owner_(o.owner_) {
    copy_layout(o.shape_, o.strides_);
    o.owner_ = nullptr;
    o.data_ = nullptr;
  }
  Array& operator=(Array o) noexcept {
    swap(o);
    return *this;
  }
  ~Array() {
    if (owner_) owner_->release();
  }

  /// Wraps C-contiguous memory the caller keeps alive for as long as the
  /// Array is used.
  static Array borrow(T* data, const Shape& shape) { return wrap(data, shape, nullptr, nullptr); }
  /// Wraps strided memory (strides in elements) the caller keeps alive.
  static Array borrow(T* data, const Shape& shape, const Shape& strides) {
    return wrap(data, shape, strides, nullptr);
  }
  /// Wraps C-contiguous memory owned by `owner`; takes over the caller's
  /// reference. (Pointers, not arrays: the bridge passes kMaxRank buffers.)
  static Array adopt(T* data, const int64_t* shape, Buffer* owner) {
    return wrap(data, shape, nullptr, owner);
  }
  /// Wraps strided memory owned by `owner`; takes over the caller's reference.
  static Array adopt(T* data, const int64_t* shape, const int64_t* strides, Buffer* owner) {
    return wrap(data, shape, strides, owner);
  }
  /// Uninitialized C-contiguous storage of the given shape (NumPy's `empty`).
  static Array empty(const Shape& shape) { return empty_from(shape); }
  static Array empty(const std::array<int64_t, N>& shape) { return empty_from(shape.data()); }
  static Array filled(const Shape& shape, T value) { return fill_new(empty(shape), value); }
  static Array filled(const std::array<int64_t, N>& shape, T value) { return fill_new(empty(shape), value); }
  static Array zeros(const Shape& shape) { return zero_new(empty(shape)); }
  static Array zeros(const std::array<int64_t, N>& shape) { return zero_new(empty(shape)); }
  static Array ones(const Shape& shape) { return filled(shape, T(1)); }
  static Array ones(const std::array<int64_t, N>& shape) { return filled(shape, T(1)); }

  T* data() const { return data_; }
  int64_t shape(int k) const { return shape_[k]; }
  const int64_t* shape() const { return shape_; }
  /// Stride of axis k in elements.
  int64_t stride(int k) const { return strides_[k]; }
  const int64_t* strides() const { return strides_; }
  int64_t size() const {
    int64_t n = 1;
    for (int k = 0; k < N; ++k) n *= shape_[k];
    return n;
  }
  /// C order (row-major, no gaps); axes of length <= 1 are ignored.
  bool is_contiguous() const { return detail::is_c_contiguous<N>(shape_, strides_); }
  /// The owning buffer, or null when the memory is borrowed.
  Buffer* owner() const { return owner_; }
  /// Gives up this handle's reference without releasing it.
  Buffer* release_owner() {
    Buffer* b = owner_;
    owner_ = nullptr;
    return b;
  }

  View<T, N> view() const {
    View<T, N> v;
    v.data = data_;
    std::memcpy(v.shape, shape_, sizeof(v.shape));
    std::memcpy(v.strides, strides_, sizeof(v.strides));
    return v;
  }
  template <typename... I>
  T& operator()(I... idx) const {
    return view()(idx...);
  }

  /// Another handle on the same buffer with a different layout (a slice, a
  /// transpose): keeps the buffer alive like a copy of this Array does.
  template <int M>
  Array<T, M> alias(T* data, const int64_t* shape, const int64_t* strides) const {
    if (owner_) owner_->retain();
    return Array<T, M>::adopt(data, shape, strides, owner_);
  }

  void swap(Array& o) noexcept {
    T* d = data_;
    data_ = o.data_;
    o.data_ = d;
    Buffer* b = owner_;
    owner_ = o.owner_;
    o.owner_ = b;
    for (int k = 0; k < N; ++k) {
      int64_t s = shape_[k];
      shape_[k] = o.shape_[k];
      o.shape_[k] = s;
      s = strides_[k];
      strides_[k] = o.strides_[k];
      o.strides_[k] = s;
    }
  }

 private:
  void copy_layout(const int64_t* shape, const int64_t* strides) {
    std::memcpy(shape_, shape, sizeof(shape_));
    if (strides)
      std::memcpy(strides_, strides, sizeof(strides_));
    else
      detail::contiguous_strides<N>(shape_, strides_);
  }
  static Array wrap(T* data, const int64_t* shape, const int64_t* strides, Buffer* owner) {
    Array a;
    a.data_ = data;
    a.copy_layout(shape, strides);
    a.owner_ = owner;
    return a;
  }
  static Array empty_from(const int64_t* shape) {
    int64_t count = 1;
    for (int k = 0; k < N; ++k) {
      if (shape[k] < 0) throw Error(ErrorKind::ValueError, "negative dimensions are not allowed");
      if (shape[k] != 0 && count > INT64_MAX / 16 / shape[k])
        throw Error(ErrorKind::MemoryError, "array is too big");
      count *= shape[k];
    }
    Buffer* b = Buffer::allocate(static_cast<size_t>(count) * sizeof(T));
    return wrap(static_cast<T*>(b->memory), shape, nullptr, b);
  }
  // A new array's first pass over its memory. Large ones are written by every
  // thread, each its own contiguous part: the pass is bound by memory
  // bandwidth (and, for fresh blocks, page faults), which one core does not
  // saturate, and it is often the only serial step before a parallel loop
  // (`R = zeros((n, n))` then `pfor i ...: R[i, :] = ...`).
  static Array fill_new(Array a, T value) {
    T* p = a.data_;
    fill_range(a.size(), [p, value](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) p[i] = value;
    });
    return a;
  }
  static Array zero_new(Array a) {
    char* p = reinterpret_cast<char*>(a.data_);
    fill_range(a.size(), [p](int64_t lo, int64_t hi) {
      std::memset(p + lo * sizeof(T), 0, static_cast<size_t>(hi - lo) * sizeof(T));
    });
    return a;
  }
  template <class F>
  static void fill_range(int64_t n, const F& f) {
    if (static_cast<uint64_t>(n) * sizeof(T) >= kParallelFillBytes) parallel_range(0, n, f);
    else f(0, n);
  }

  T* data_;
  int64_t shape_[N];
  int64_t strides_[N];
  Buffer* owner_;
};

/// Python's negative-index rule for an index known to be in [-n, n).
inline int64_t wrap_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

/// Negative-index rule plus a range check (bounds-checked builds).
inline int64_t checked_index(int64_t i, int64_t n, int axis) {
  int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n) throw_index_error(i, axis, n);
  return j;
}

}  // namespace pydd
