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
// Arrays are C-contiguous (row-major). Element indices are int64.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

#include "pydd/errors.h"

namespace pydd {

/// The largest rank an array may have (a pydd kernel is rejected above it).
inline constexpr int kMaxRank = 8;

/// Heap storage shared by every Array that refers to it.
struct Buffer {
  std::atomic<int64_t> refs{1};
  void* memory = nullptr;

  static Buffer* allocate(size_t bytes) {
    // 64-byte alignment: whole cache lines and any SIMD width.
    size_t rounded = (bytes + 63) / 64 * 64;
    void* mem = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!mem) throw Error(ErrorKind::MemoryError, "unable to allocate array memory");
    Buffer* b = new (std::nothrow) Buffer;
    if (!b) {
      std::free(mem);
      throw Error(ErrorKind::MemoryError, "unable to allocate array memory");
    }
    b->memory = mem;
    return b;
  }
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::free(memory);
      delete this;
    }
  }
};

template <typename T, int N>
struct View {
  static_assert(N >= 1 && N <= kMaxRank, "array rank out of range");
  T* data;
  int64_t shape[N];

  int64_t size() const {
    int64_t n = 1;
    for (int k = 0; k < N; ++k) n *= shape[k];
    return n;
  }
  /// Row-major element access; indices must already be in range.
  template <typename... I>
  T& operator()(I... idx) const {
    static_assert(sizeof...(I) == N, "wrong number of indices");
    const int64_t ix[N] = {static_cast<int64_t>(idx)...};
    int64_t off = ix[0];
    for (int k = 1; k < N; ++k) off = off * shape[k] + ix[k];
    return data[off];
  }
};

template <typename T, int N>
class Array {
  static_assert(N >= 1 && N <= kMaxRank, "array rank out of range");

 public:
  Array() : data_(nullptr), owner_(nullptr) {
    for (int k = 0; k < N; ++k) shape_[k] = 0;
  }
  Array(const Array& o) : data_(o.data_), owner_(o.owner_) {
    std::memcpy(shape_, o.shape_, sizeof(shape_));
    if (owner_) owner_->retain();
  }
  Array(Array&& o) noexcept : data_(o.data_), owner_(o.owner_) {
    std::memcpy(shape_, o.shape_, sizeof(shape_));
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

  /// Wraps memory the caller keeps alive for as long as the Array is used.
  static Array borrow(T* data, const int64_t (&shape)[N]) {
    Array a;
    a.data_ = data;
    std::memcpy(a.shape_, shape, sizeof(a.shape_));
    return a;
  }
  /// Wraps memory owned by `owner`; takes over the caller's reference.
  static Array adopt(T* data, const int64_t* shape, Buffer* owner) {
    Array a;
    a.data_ = data;
    std::memcpy(a.shape_, shape, sizeof(a.shape_));
    a.owner_ = owner;
    return a;
  }
  /// Uninitialized storage of the given shape (NumPy's `empty`).
  static Array empty(const int64_t (&shape)[N]) {
    int64_t count = 1;
    for (int k = 0; k < N; ++k) {
      if (shape[k] < 0) throw Error(ErrorKind::ValueError, "negative dimensions are not allowed");
      if (shape[k] != 0 && count > INT64_MAX / 16 / shape[k])
        throw Error(ErrorKind::MemoryError, "array is too big");
      count *= shape[k];
    }
    Buffer* b = Buffer::allocate(static_cast<size_t>(count) * sizeof(T));
    return adopt(static_cast<T*>(b->memory), shape, b);
  }
  static Array filled(const int64_t (&shape)[N], T value) {
    Array a = empty(shape);
    T* p = a.data_;
    const int64_t n = a.size();
    for (int64_t i = 0; i < n; ++i) p[i] = value;
    return a;
  }
  static Array zeros(const int64_t (&shape)[N]) {
    Array a = empty(shape);
    std::memset(static_cast<void*>(a.data_), 0, static_cast<size_t>(a.size()) * sizeof(T));
    return a;
  }
  static Array ones(const int64_t (&shape)[N]) { return filled(shape, T(1)); }

  T* data() const { return data_; }
  int64_t shape(int k) const { return shape_[k]; }
  const int64_t* shape() const { return shape_; }
  int64_t size() const {
    int64_t n = 1;
    for (int k = 0; k < N; ++k) n *= shape_[k];
    return n;
  }
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
    return v;
  }
  template <typename... I>
  T& operator()(I... idx) const {
    return view()(idx...);
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
    }
  }

 private:
  T* data_;
  int64_t shape_[N];
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
