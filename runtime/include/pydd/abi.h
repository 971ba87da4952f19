// pydd runtime: the table a generated Python module hands to the bridge.
//
// Why a table: a pybind11 module with NumPy arguments takes seconds to
// compile, mostly in template instantiation. A generated kernel module
// therefore contains no Python or pybind11 code at all. It describes each
// function (parameter names and types) and exposes one type-erased thunk per
// function; libpydd_python.so, compiled once with pybind11, builds the Python
// module from that table, checks and converts arguments, releases the GIL,
// calls the thunk and converts the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "pydd/array.h"
#include "pydd/containers.h"
#include "pydd/sparse.h"

namespace pydd::abi {

/// Bumped whenever any struct below or a raw representation changes.
inline constexpr int kVersion = 7;

/// Element types; new ones are appended (the values are part of the ABI).
enum class Dtype : int32_t {
  Bool, Int32, Int64, Float32, Float64, Complex64, Complex128, Int8, Int16, UInt8, UInt16, UInt32, UInt64
};
enum class Kind : int32_t { Void, Scalar, Array, List, Dict, Tuple, Sparse };

/// A parameter or result type, as a tree: List has one child (the element),
/// Dict two (key, value), Tuple one per member.
struct TypeDesc {
  Kind kind;
  Dtype dtype;   // element type of an Array or Sparse, the type of a Scalar
  int32_t rank;  // Array only (2 for Sparse)
  int32_t num_elems;
  const TypeDesc* elems;
};

struct ParamDesc {
  const char* name;
  TypeDesc type;
  bool written;  // the kernel may store into its array(s) (needs writable arrays);
                 // a Sparse parameter is then copied in rather than borrowed
  const char* default_value;  // a scalar's default as a Python literal ("3", "0.5",
                              // "True"), or null when the argument is required
};

// ---- raw representations: what crosses the boundary for each type
//
//   bool, int8_t ... uint64_t, float, double   themselves
//   std::complex<float>, std::complex<double> themselves (two parts)
//   Array                                   RawArray
//   Sparse                                  RawSparse
//   List                                    RawList
//   Dict                                    RawDict
//   Tuple                                   its members' raw forms in order,
//                                           each at an offset rounded up to 8
//
// Lists and dicts are copied across (Python's list and dict are not laid out
// like pydd's); arrays are shared. Item buffers are std::calloc'd by whoever
// builds them and std::free'd by the receiver, which also releases every
// array owner reference they contain.

/// An array crossing the boundary; strides in elements. `owner` is an owned
/// reference (the receiver must release it) or null when the memory is
/// borrowed.
struct RawArray {
  void* data;
  int64_t shape[kMaxRank];
  int64_t strides[kMaxRank];
  Buffer* owner;
};

/// A CSR sparse matrix crossing the boundary: three 1-D arrays (indptr of
/// nrows + 1, indices and data of nnz each), each borrowed or owned as a
/// RawArray is. indptr and indices are int64, or int32 when index_bits is
/// 32. Arguments: the bridge hands in the caller's int32 or int64 indices
/// and contiguous data as they are (copies of everything, int64, when the
/// kernel may write the matrix); the thunk validates the structure
/// (from_csr). Results are always int64.
struct RawSparse {
  int64_t nrows;
  int64_t ncols;
  RawArray indptr;
  RawArray indices;
  RawArray data;
  int32_t index_bits;  // 32 or 64
};

/// `size` raw elements back to back (each the raw size of the element type).
struct RawList {
  int64_t size;
  void* items;
};

/// Keys and values in insertion order, each laid out as a RawList's items.
struct RawDict {
  int64_t size;
  void* keys;
  void* values;
};

/// args[i] points at parameter i's raw value; arrays in arguments are
/// borrowed (owner null). `result` points at zeroed storage for the raw
/// result: returned arrays carry an owned reference or borrow argument
/// memory. pydd::Error and std::exception propagate out of a thunk; a raw
/// result it had partly built is still released by the caller.
using Thunk = void (*)(void* const* args, void* result);

/// Entries that share a name are the instances of one rank-generic function
/// (`Array(T)` parameters without a rank), one per combination of ranks:
/// Python sees one function that picks the instance by the arguments' ndim.
struct FunctionDesc {
  const char* name;
  const char* signature;  // pydd source form, shown in help() and errors
  const ParamDesc* params;
  int32_t num_params;
  TypeDesc result;
  Thunk thunk;
};

using PrintHook = void (*)(const char* text, int64_t length);

struct ModuleDesc {
  int32_t abi_version;  // kVersion
  const char* name;
  const FunctionDesc* functions;
  int32_t num_functions;
  PrintHook* print_hook;  // the module's print sink, set by the bridge
};

inline constexpr size_t align8(size_t n) { return (n + 7) / 8 * 8; }

// ---- C++ values <-> raw: used by the generated thunks (get for arguments,
// put for results). The bridge walks the same layouts from a TypeDesc.

template <class T>
struct RawTraits {  // scalars
  static constexpr size_t size = sizeof(T);
  static T get(const void* p) { return *static_cast<const T*>(p); }
  static void put(void* p, T v) { *static_cast<T*>(p) = v; }
};

template <class T>
T get(const void* p) {
  return RawTraits<T>::get(p);
}
template <class T>
void put(void* p, const T& v) {
  RawTraits<T>::put(p, v);
}

template <class T, int N>
struct RawTraits<Array<T, N>> {
  static constexpr size_t size = sizeof(RawArray);
  // Arguments borrow: the caller keeps the memory alive for the call.
  static Array<T, N> get(const void* p) {
    const auto& raw = *static_cast<const RawArray*>(p);
    return Array<T, N>::borrow(static_cast<T*>(raw.data), *reinterpret_cast<const int64_t(*)[N]>(raw.shape),
                               *reinterpret_cast<const int64_t(*)[N]>(raw.strides));
  }
  static void put(void* p, Array<T, N> a) {
    auto& raw = *static_cast<RawArray*>(p);
    raw = RawArray{};
    raw.data = a.data();
    for (int k = 0; k < N; ++k) raw.shape[k] = a.shape(k), raw.strides[k] = a.stride(k);
    raw.owner = a.release_owner();
  }
};

/// A SparseMat argument adopts the caller's CSR arrays (checked as SciPy
/// checks them); a result hands its arrays over. Not inline: the common
/// element types are compiled once into the runtime library
/// (pydd/instances.h), since inlined into each function's thunk they made
/// g++ spend 0.15 s per thunk.
template <class T>
SparseMat<T> sparse_from_raw(const RawSparse& raw) {
  if (raw.index_bits == 32)
    return SparseMat<T>::from_csr(raw.nrows, raw.ncols, abi::get<Array<int32_t, 1>>(&raw.indptr),
                                  abi::get<Array<int32_t, 1>>(&raw.indices), abi::get<Array<T, 1>>(&raw.data));
  return SparseMat<T>::from_csr(raw.nrows, raw.ncols, abi::get<Array<int64_t, 1>>(&raw.indptr),
                                abi::get<Array<int64_t, 1>>(&raw.indices), abi::get<Array<T, 1>>(&raw.data));
}
template <class T>
void sparse_to_raw(RawSparse& raw, const SparseMat<T>& s) {
  raw = RawSparse{};
  raw.nrows = s.rows();
  raw.ncols = s.cols();
  raw.index_bits = 64;
  // Each put takes its own reference; the caller releases all three.
  abi::put<Array<int64_t, 1>>(&raw.indptr, s.indptr());
  abi::put<Array<int64_t, 1>>(&raw.indices, s.indices());
  abi::put<Array<T, 1>>(&raw.data, s.data());
}

template <class T>
struct RawTraits<SparseMat<T>> {
  static constexpr size_t size = sizeof(RawSparse);
  static SparseMat<T> get(const void* p) { return sparse_from_raw<T>(*static_cast<const RawSparse*>(p)); }
  static void put(void* p, const SparseMat<T>& s) { sparse_to_raw<T>(*static_cast<RawSparse*>(p), s); }
};

/// calloc'd storage for n raw items (null for none); zeroed, so that a
/// partly filled buffer can still be released.
inline void* alloc_items(int64_t n, size_t size) {
  if (n <= 0) return nullptr;
  void* p = std::calloc(static_cast<size_t>(n), size);
  if (!p) throw std::bad_alloc();
  return p;
}

template <class T>
struct RawTraits<List<T>> {
  static constexpr size_t size = sizeof(RawList);
  static List<T> get(const void* p) {
    const auto& raw = *static_cast<const RawList*>(p);
    List<T> l;
    l.reserve(raw.size);
    for (int64_t i = 0; i < raw.size; ++i) l.append(abi::get<T>(static_cast<const char*>(raw.items) + i * RawTraits<T>::size));
    return l;
  }
  static void put(void* p, const List<T>& l) {
    auto& raw = *static_cast<RawList*>(p);
    raw = RawList{0, nullptr};
    const int64_t n = l.size();
    raw.items = alloc_items(n, RawTraits<T>::size);
    raw.size = n;
    for (int64_t i = 0; i < n; ++i) abi::put<T>(static_cast<char*>(raw.items) + i * RawTraits<T>::size, l[i]);
  }
};

template <class K, class V>
struct RawTraits<Dict<K, V>> {
  static constexpr size_t size = sizeof(RawDict);
  static Dict<K, V> get(const void* p) {
    const auto& raw = *static_cast<const RawDict*>(p);
    Dict<K, V> d;
    for (int64_t i = 0; i < raw.size; ++i)
      d.set(abi::get<K>(static_cast<const char*>(raw.keys) + i * RawTraits<K>::size),
            abi::get<V>(static_cast<const char*>(raw.values) + i * RawTraits<V>::size));
    return d;
  }
  static void put(void* p, const Dict<K, V>& d) {
    auto& raw = *static_cast<RawDict*>(p);
    raw = RawDict{0, nullptr, nullptr};
    const int64_t n = d.size();
    raw.keys = alloc_items(n, RawTraits<K>::size);
    raw.values = alloc_items(n, RawTraits<V>::size);
    raw.size = n;
    int64_t i = 0;
    for (auto kv : d.items()) {
      abi::put<K>(static_cast<char*>(raw.keys) + i * RawTraits<K>::size, kv.first);
      abi::put<V>(static_cast<char*>(raw.values) + i * RawTraits<V>::size, kv.second);
      ++i;
    }
  }
};

template <class... Ts>
struct RawTraits<std::tuple<Ts...>> {
  static constexpr size_t size = (align8(RawTraits<Ts>::size) + ... + 0);
  template <size_t I>
  static constexpr size_t offset() {
    constexpr size_t sizes[] = {align8(RawTraits<Ts>::size)..., 0};
    size_t off = 0;
    for (size_t k = 0; k < I; ++k) off += sizes[k];
    return off;
  }
  template <size_t... I>
  static std::tuple<Ts...> get(const void* p, std::index_sequence<I...>) {
    return std::tuple<Ts...>(abi::get<Ts>(static_cast<const char*>(p) + offset<I>())...);
  }
  template <size_t... I>
  static void put(void* p, const std::tuple<Ts...>& t, std::index_sequence<I...>) {
    (abi::put<Ts>(static_cast<char*>(p) + offset<I>(), std::get<I>(t)), ...);
  }
  static std::tuple<Ts...> get(const void* p) { return get(p, std::index_sequence_for<Ts...>()); }
  static void put(void* p, const std::tuple<Ts...>& t) { put(p, t, std::index_sequence_for<Ts...>()); }
};

/// The raw form of a borrowed array argument (kept for C++ callers).
template <typename T, int N>
Array<T, N> from_raw(const RawArray& raw) {
  return get<Array<T, N>>(&raw);
}

/// A raw array holding its own reference to `a`'s buffer.
template <typename T, int N>
RawArray to_raw(const Array<T, N>& a) {
  RawArray raw;
  put(&raw, a);
  return raw;
}

}  // namespace pydd::abi

extern "C" {
struct _object;
/// Defined in libpydd_python.so. Returns a new reference to the module, or
/// null with a Python exception set.
_object* pydd_make_module(const pydd::abi::ModuleDesc* desc);
}
