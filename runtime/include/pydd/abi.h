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

#include <cstdint>

#include "pydd/array.h"

namespace pydd::abi {

/// Bumped whenever any struct below changes layout.
inline constexpr int kVersion = 1;

enum class Dtype : int32_t { Bool, Int32, Int64, Float32, Float64 };
enum class Kind : int32_t { Void, Scalar, Array };

struct TypeDesc {
  Kind kind;
  Dtype dtype;   // element type of an Array, the type of a Scalar
  int32_t rank;  // Array only
};

struct ParamDesc {
  const char* name;
  TypeDesc type;
  bool written;  // Array only: the kernel may store into it (needs a writable array)
};

/// An array crossing the boundary. `owner` is an owned reference (the
/// receiver must release it) or null when the memory is borrowed.
struct RawArray {
  void* data;
  int64_t shape[kMaxRank];
  Buffer* owner;
};

/// args[i] points at parameter i's value: bool, int32_t, int64_t, float or
/// double for scalars, a RawArray (borrowed, owner null) for arrays. `result`
/// points at storage for the return value of the same representation; a
/// returned RawArray carries an owned reference or borrows argument memory.
/// pydd::Error and std::exception propagate out of a thunk.
using Thunk = void (*)(void* const* args, void* result);

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

template <typename T, int N>
Array<T, N> from_raw(const RawArray& raw) {
  return Array<T, N>::borrow(static_cast<T*>(raw.data), *reinterpret_cast<const int64_t(*)[N]>(raw.shape));
}

template <typename T, int N>
RawArray to_raw(Array<T, N> a) {
  RawArray raw{};
  raw.data = a.data();
  for (int k = 0; k < N; ++k) raw.shape[k] = a.shape(k);
  raw.owner = a.release_owner();
  return raw;
}

}  // namespace pydd::abi

extern "C" {
struct _object;
/// Defined in libpydd_python.so. Returns a new reference to the module, or
/// null with a Python exception set.
_object* pydd_make_module(const pydd::abi::ModuleDesc* desc);
}
