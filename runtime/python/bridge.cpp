// pydd Python bridge (libpydd_python.so): turns a generated module's table
// (abi.h) into a Python extension module.
//
// Everything Python-facing lives here so that generated modules contain no
// Python or pybind11 code and compile in a fraction of a second: argument
// binding with Python's own error messages, strict checking of NumPy arrays
// (never a silent copy, which would lose the kernel's writes), releasing the
// GIL around the kernel, translating C++ exceptions, and handing results back
// without copying.
//
// Functions are plain METH_FASTCALL builtins rather than pybind11
// cpp_functions: a kernel call should cost about as much as calling any other
// builtin, and the binding rules here are Python's, not pybind11's overload
// resolution.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pydd/abi.h"
#include "pydd/array.h"
#include "pydd/errors.h"

namespace py = pybind11;
// Not `abi`: <cxxabi.h>, which pybind11 includes, already defines that alias.
namespace pabi = pydd::abi;

namespace {

// ------------------------------------------------------------------ helpers

const char* dtype_name(pabi::Dtype d) {
  switch (d) {
    case pabi::Dtype::Bool: return "bool";
    case pabi::Dtype::Int32: return "int32";
    case pabi::Dtype::Int64: return "int64";
    case pabi::Dtype::Float32: return "float32";
    case pabi::Dtype::Float64: return "float64";
  }
  return "?";
}

py::dtype numpy_dtype(pabi::Dtype d) {
  switch (d) {
    case pabi::Dtype::Bool: return py::dtype::of<bool>();
    case pabi::Dtype::Int32: return py::dtype::of<int32_t>();
    case pabi::Dtype::Int64: return py::dtype::of<int64_t>();
    case pabi::Dtype::Float32: return py::dtype::of<float>();
    case pabi::Dtype::Float64: return py::dtype::of<double>();
  }
  throw std::runtime_error("pydd: invalid dtype in module table");
}

// The NumPy (kind, itemsize) pair of a dtype. Checking these rather than
// the type number accepts every alias of the same machine type (int64 is
// both 'l' and 'q' on Linux).
void dtype_kind_size(pabi::Dtype d, char* kind, int* size) {
  switch (d) {
    case pabi::Dtype::Bool: *kind = 'b'; *size = 1; return;
    case pabi::Dtype::Int32: *kind = 'i'; *size = 4; return;
    case pabi::Dtype::Int64: *kind = 'i'; *size = 8; return;
    case pabi::Dtype::Float32: *kind = 'f'; *size = 4; return;
    case pabi::Dtype::Float64: *kind = 'f'; *size = 8; return;
  }
  *kind = '?';
  *size = 0;
}

int element_size(pabi::Dtype d) {
  char kind;
  int size;
  dtype_kind_size(d, &kind, &size);
  return size;
}

std::string type_name(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

std::string object_str(PyObject* obj) {
  PyObject* s = PyObject_Str(obj);
  if (!s) {
    PyErr_Clear();
    return "?";
  }
  const char* utf8 = PyUnicode_AsUTF8(s);
  std::string out = utf8 ? utf8 : "?";
  if (!utf8) PyErr_Clear();
  Py_DECREF(s);
  return out;
}

// NumPy's scalar types, looked up only once numpy has been imported by
// someone: a module with only scalar parameters must not import numpy, and
// an object cannot be a NumPy scalar before numpy is imported. Accessed with
// the GIL held; the references are kept for the life of the process.
struct NumpyScalarTypes {
  PyTypeObject* bool_ = nullptr;
  PyTypeObject* integer = nullptr;
  PyTypeObject* floating = nullptr;
};

const NumpyScalarTypes* numpy_scalar_types() {
  static NumpyScalarTypes types;
  static bool ready = false;
  if (ready) return &types;
  PyObject* numpy = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
  if (!numpy) return nullptr;
  PyObject* b = PyObject_GetAttrString(numpy, "bool_");
  PyObject* i = PyObject_GetAttrString(numpy, "integer");
  PyObject* f = PyObject_GetAttrString(numpy, "floating");
  if (!b || !i || !f || !PyType_Check(b) || !PyType_Check(i) || !PyType_Check(f)) {
    // numpy is still importing (or is not NumPy); try again next call.
    PyErr_Clear();
    Py_XDECREF(b);
    Py_XDECREF(i);
    Py_XDECREF(f);
    return nullptr;
  }
  types.bool_ = reinterpret_cast<PyTypeObject*>(b);
  types.integer = reinterpret_cast<PyTypeObject*>(i);
  types.floating = reinterpret_cast<PyTypeObject*>(f);
  ready = true;
  return &types;
}

bool is_numpy_bool(PyObject* obj) {
  const NumpyScalarTypes* t = numpy_scalar_types();
  return t && PyObject_TypeCheck(obj, t->bool_);
}

// A small array on the stack for the usual handful of parameters.
template <class T, int N>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t n) {
    if (n > static_cast<size_t>(N)) {
      heap_.reset(new T[n]());
      data_ = heap_.get();
    } else {
      data_ = local_;
    }
  }
  T& operator[](size_t i) { return data_[i]; }
  T* data() { return data_; }

 private:
  T local_[N] = {};
  std::unique_ptr<T[]> heap_;
  T* data_;
};

// Drops a kernel's reference to a returned buffer unless someone took it.
class OwnerGuard {
 public:
  explicit OwnerGuard(pydd::Buffer* b) : b_(b) {}
  OwnerGuard(const OwnerGuard&) = delete;
  OwnerGuard& operator=(const OwnerGuard&) = delete;
  ~OwnerGuard() {
    if (b_) b_->release();
  }
  void disarm() { b_ = nullptr; }

 private:
  pydd::Buffer* b_;
};

// Releases the GIL for the kernel; re-acquires it on every exit, including
// unwinding, so exception translation below runs with the GIL held.
class GilReleased {
 public:
  GilReleased() : state_(PyEval_SaveThread()) {}
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;
  ~GilReleased() { PyEval_RestoreThread(state_); }

 private:
  PyThreadState* state_;
};

// ------------------------------------------------------------ the functions

struct FunctionInfo {
  const pabi::FunctionDesc* desc;
  std::string name;                  // for messages: "f"
  std::vector<py::object> names;     // interned parameter names
  PyMethodDef def;                   // Python keeps a pointer to it
  bool has_arrays = false;
};

constexpr const char* kBufferCapsule = "pydd.Buffer";

union Value {
  bool b;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  pabi::RawArray array;
};

// What the result lookup needs to know about an array argument.
struct ArrayArg {
  PyObject* object = nullptr;
  const char* begin = nullptr;
  size_t bytes = 0;
};

[[noreturn]] void throw_type_error(const std::string& msg) { throw py::type_error(msg); }
[[noreturn]] void throw_value_error(const std::string& msg) { throw py::value_error(msg); }

std::string param_prefix(const FunctionInfo& fi, int i) {
  return fi.name + "(): parameter '" + fi.desc->params[i].name + "'";
}

// Python's wording for positional-or-keyword parameters.
[[noreturn]] void throw_missing(const FunctionInfo& fi, const std::vector<int>& missing) {
  const size_t n = missing.size();
  std::string msg = fi.name + "() missing " + std::to_string(n) + " required positional argument" +
                    (n == 1 ? "" : "s") + ": ";
  for (size_t k = 0; k < n; ++k) {
    if (k > 0) msg += (n == 2) ? " and " : (k + 1 == n ? ", and " : ", ");
    msg += std::string("'") + fi.desc->params[missing[k]].name + "'";
  }
  throw_type_error(msg);
}

int64_t convert_integer(const FunctionInfo& fi, int i, PyObject* obj, pabi::Dtype dtype) {
  long long v;
  int overflow = 0;
  py::object index;
  if (is_numpy_bool(obj)) {
    // np.bool_.__index__ is deprecated (it warns); its truth value is exact.
    const int t = PyObject_IsTrue(obj);
    if (t < 0) throw py::error_already_set();
    v = t;
  } else {
    if (PyFloat_Check(obj) || !PyIndex_Check(obj))
      throw_type_error(param_prefix(fi, i) + " expects " + dtype_name(dtype) + ", got " + type_name(obj));
    index = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!index) {
      // e.g. an array of several elements: name the parameter rather than
      // pass on NumPy's message.
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
      PyErr_Clear();
      throw_type_error(param_prefix(fi, i) + " expects " + dtype_name(dtype) + ", got " + type_name(obj));
    }
    v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  }
  const bool fits = overflow == 0 && (dtype == pabi::Dtype::Int64 || (v >= INT32_MIN && v <= INT32_MAX));
  if (!fits) {
    throw_value_error(param_prefix(fi, i) + " = " + object_str(index.ptr()) + " does not fit in " +
                      dtype_name(dtype));
  }
  return v;
}

double convert_floating(const FunctionInfo& fi, int i, PyObject* obj, pabi::Dtype dtype) {
  if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);  // includes numpy.float64
  if (PyLong_Check(obj)) {                                // includes bool
    const double v = PyLong_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
      PyErr_Clear();
      throw_value_error(param_prefix(fi, i) + " = " + object_str(obj) + " does not fit in " + dtype_name(dtype));
    }
    return v;
  }
  const NumpyScalarTypes* t = numpy_scalar_types();
  if (t && (PyObject_TypeCheck(obj, t->floating) || PyObject_TypeCheck(obj, t->integer) ||
            PyObject_TypeCheck(obj, t->bool_))) {
    py::object f = py::reinterpret_steal<py::object>(PyNumber_Float(obj));
    if (!f) throw py::error_already_set();
    return PyFloat_AS_DOUBLE(f.ptr());
  }
  throw_type_error(param_prefix(fi, i) + " expects " + dtype_name(dtype) + ", got " + type_name(obj));
}

bool convert_bool(const FunctionInfo& fi, int i, PyObject* obj) {
  if (obj == Py_True) return true;
  if (obj == Py_False) return false;
  if (is_numpy_bool(obj) || (!PyFloat_Check(obj) && PyIndex_Check(obj))) {
    py::object value = py::reinterpret_borrow<py::object>(obj);
    if (!is_numpy_bool(obj)) {
      value = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
      if (!value) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
        PyErr_Clear();
        throw_type_error(param_prefix(fi, i) + " expects bool, got " + type_name(obj));
      }
    }
    const int t = PyObject_IsTrue(value.ptr());
    if (t < 0) throw py::error_already_set();
    return t != 0;
  }
  throw_type_error(param_prefix(fi, i) + " expects bool, got " + type_name(obj));
}

void convert_array(const FunctionInfo& fi, int i, PyObject* obj, pabi::RawArray* out, ArrayArg* arg) {
  const pabi::ParamDesc& p = fi.desc->params[i];
  const int rank = p.type.rank;
  const char* dims = rank == 1 ? " dimension" : " dimensions";
  auto expected = [&] {
    return param_prefix(fi, i) + " expects a C-contiguous numpy.ndarray of " + dtype_name(p.type.dtype) +
           " with " + std::to_string(rank) + dims + ", got ";
  };
  if (!py::isinstance<py::array>(obj)) throw_type_error(expected() + type_name(obj));
  auto arr = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = arr.dtype();
  char kind;
  int size;
  dtype_kind_size(p.type.dtype, &kind, &size);
  const char order = dt.byteorder();
  // '=' is native, '|' is "not applicable" (1-byte types); NumPy normalizes
  // an explicit native order to '='.
  const bool native = order == '=' || order == '|' || order == (PY_BIG_ENDIAN ? '>' : '<');
  const bool same_dtype = dt.kind() == kind && dt.itemsize() == size && native;
  if (!same_dtype || arr.ndim() != rank) {
    const int nd = static_cast<int>(arr.ndim());
    throw_type_error(expected() + "numpy.ndarray of " + object_str(dt.ptr()) + " with " + std::to_string(nd) +
                     (nd == 1 ? " dimension" : " dimensions"));
  }
  const int flags = arr.flags();
  if (!(flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_))
    throw_type_error(expected() + "a non-contiguous array (use numpy.ascontiguousarray)");
  if (!(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    throw_type_error(expected() + "an unaligned array (use numpy.require(a, requirements='CA'))");
  if (p.written && !(flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_))
    throw_type_error(expected() + "a read-only array");
  out->data = const_cast<void*>(arr.data());
  for (int k = 0; k < rank; ++k) out->shape[k] = static_cast<int64_t>(arr.shape(k));
  for (int k = rank; k < pydd::kMaxRank; ++k) out->shape[k] = 0;
  out->owner = nullptr;
  arg->object = obj;
  arg->begin = static_cast<const char*>(out->data);
  arg->bytes = static_cast<size_t>(arr.nbytes());
}

void destroy_buffer_capsule(PyObject* capsule) {
  if (auto* b = static_cast<pydd::Buffer*>(PyCapsule_GetPointer(capsule, kBufferCapsule))) b->release();
}

py::object array_result(const pabi::TypeDesc& type, pabi::RawArray& raw, const ArrayArg* args, int nargs) {
  // Owns the kernel's reference until the capsule does; nothing may leak it.
  OwnerGuard guard(raw.owner);
  const int rank = type.rank;
  std::vector<py::ssize_t> shape(static_cast<size_t>(rank));
  int64_t count = 1;
  for (int k = 0; k < rank; ++k) {
    shape[static_cast<size_t>(k)] = static_cast<py::ssize_t>(raw.shape[k]);
    count *= raw.shape[k];
  }
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(element_size(type.dtype));
  py::dtype dt = numpy_dtype(type.dtype);

  if (raw.owner) {
    // The array's base is a capsule holding the reference: NumPy frees the
    // memory exactly once, whenever the last view of it dies.
    PyObject* capsule = PyCapsule_New(raw.owner, kBufferCapsule, destroy_buffer_capsule);
    if (!capsule) throw py::error_already_set();
    guard.disarm();
    auto base = py::reinterpret_steal<py::object>(capsule);
    return py::array(dt, shape, std::vector<py::ssize_t>{}, raw.data, base);
  }

  // Borrowed memory: a view of the argument array it lies in, which then
  // stays alive (and keeps its writability) through the view's base.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw.data);
  for (int k = 0; begin && k < nargs; ++k) {
    const ArrayArg& a = args[k];
    if (!a.object) continue;
    // Within [a.begin, a.begin + a.bytes]; equal ends admit empty results.
    const uintptr_t lo = reinterpret_cast<uintptr_t>(a.begin);
    if (begin >= lo && begin - lo <= a.bytes && bytes <= a.bytes - (begin - lo))
      return py::array(dt, shape, std::vector<py::ssize_t>{}, raw.data, py::handle(a.object));
  }
  py::array fresh(dt, shape);
  // Memory the kernel borrowed from elsewhere (a module constant): copy it,
  // since nothing would keep it alive or safe to write through a view.
  if (begin && bytes) std::memcpy(fresh.mutable_data(), raw.data, bytes);
  return std::move(fresh);
}

py::object scalar_result(pabi::Dtype dtype, const Value& v) {
  switch (dtype) {
    case pabi::Dtype::Bool: return py::bool_(v.b);
    case pabi::Dtype::Int32: return py::int_(v.i32);
    case pabi::Dtype::Int64: return py::int_(v.i64);
    case pabi::Dtype::Float32: return py::float_(static_cast<double>(v.f32));
    case pabi::Dtype::Float64: return py::float_(v.f64);
  }
  throw std::runtime_error("pydd: invalid result dtype");
}

PyObject* error_type(pydd::ErrorKind kind) {
  switch (kind) {
    case pydd::ErrorKind::TypeError: return PyExc_TypeError;
    case pydd::ErrorKind::ValueError: return PyExc_ValueError;
    case pydd::ErrorKind::IndexError: return PyExc_IndexError;
    case pydd::ErrorKind::ZeroDivisionError: return PyExc_ZeroDivisionError;
    case pydd::ErrorKind::MemoryError: return PyExc_MemoryError;
    case pydd::ErrorKind::RuntimeError: return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

py::object call(const FunctionInfo& fi, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const pabi::FunctionDesc& f = *fi.desc;
  const int n = f.num_params;

  // Bind arguments to parameters the way a Python function does.
  SmallBuffer<PyObject*, 8> bound(static_cast<size_t>(n));
  if (nargs > n) {
    throw_type_error(fi.name + "() takes " + std::to_string(n) + " positional argument" + (n == 1 ? "" : "s") +
                     " but " + std::to_string(nargs) + (nargs == 1 ? " was" : " were") + " given");
  }
  for (Py_ssize_t k = 0; k < nargs; ++k) bound[static_cast<size_t>(k)] = args[k];
  if (kwnames) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      int slot = -1;
      // Keywords written in source are interned, so identity usually hits.
      for (int j = 0; j < n && slot < 0; ++j)
        if (fi.names[static_cast<size_t>(j)].ptr() == key) slot = j;
      for (int j = 0; j < n && slot < 0; ++j) {
        const int cmp = PyObject_RichCompareBool(fi.names[static_cast<size_t>(j)].ptr(), key, Py_EQ);
        if (cmp < 0) throw py::error_already_set();
        if (cmp) slot = j;
      }
      if (slot < 0) throw_type_error(fi.name + "() got an unexpected keyword argument '" + object_str(key) + "'");
      if (bound[static_cast<size_t>(slot)])
        throw_type_error(fi.name + "() got multiple values for argument '" + f.params[slot].name + "'");
      bound[static_cast<size_t>(slot)] = args[nargs + k];
    }
  }
  std::vector<int> missing;
  for (int j = 0; j < n; ++j)
    if (!bound[static_cast<size_t>(j)]) missing.push_back(j);
  if (!missing.empty()) throw_missing(fi, missing);

  // Convert into per-call storage: concurrent calls share nothing.
  SmallBuffer<Value, 8> values(static_cast<size_t>(n));
  SmallBuffer<void*, 8> pointers(static_cast<size_t>(n));
  SmallBuffer<ArrayArg, 8> arrays(static_cast<size_t>(fi.has_arrays ? n : 0));
  for (int j = 0; j < n; ++j) {
    const pabi::ParamDesc& p = f.params[j];
    PyObject* obj = bound[static_cast<size_t>(j)];
    Value& v = values[static_cast<size_t>(j)];
    pointers[static_cast<size_t>(j)] = &v;
    if (p.type.kind == pabi::Kind::Array) {
      convert_array(fi, j, obj, &v.array, &arrays[static_cast<size_t>(j)]);
      continue;
    }
    switch (p.type.dtype) {
      case pabi::Dtype::Bool: v.b = convert_bool(fi, j, obj); break;
      case pabi::Dtype::Int32: v.i32 = static_cast<int32_t>(convert_integer(fi, j, obj, p.type.dtype)); break;
      case pabi::Dtype::Int64: v.i64 = convert_integer(fi, j, obj, p.type.dtype); break;
      case pabi::Dtype::Float32: v.f32 = static_cast<float>(convert_floating(fi, j, obj, p.type.dtype)); break;
      case pabi::Dtype::Float64: v.f64 = convert_floating(fi, j, obj, p.type.dtype); break;
    }
  }

  Value result;
  std::memset(static_cast<void*>(&result), 0, sizeof(result));
  try {
    GilReleased nogil;
    f.thunk(pointers.data(), &result);
  } catch (...) {
    // A thunk that stored a result before failing still handed us a reference.
    if (f.result.kind == pabi::Kind::Array && result.array.owner) result.array.owner->release();
    throw;
  }

  switch (f.result.kind) {
    case pabi::Kind::Void: return py::none();
    case pabi::Kind::Scalar: return scalar_result(f.result.dtype, result);
    case pabi::Kind::Array: return array_result(f.result, result.array, arrays.data(), fi.has_arrays ? n : 0);
  }
  return py::none();
}

PyObject* invoke(const FunctionInfo& fi, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    return call(fi, args, PyVectorcall_NARGS(nargsf), kwnames).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const pydd::Error& e) {
    PyErr_SetString(error_type(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in a pydd kernel");
  }
  return nullptr;
}

// Per-module table. The PyModuleDef comes first so that PyModule_GetDef(m)
// leads back to the whole table. Modules are never unloaded, so it is
// leaked on purpose (Python keeps pointers into it for the process's life).
struct ModuleTable {
  PyModuleDef def;
  FunctionInfo** functions;
};
static_assert(std::is_standard_layout_v<ModuleTable>, "PyModule_GetDef is cast back to ModuleTable");

using FastCall = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);

// A builtin's C function receives only `self`. With one entry point per
// function index and the module as `self`, each function is a genuine
// builtin of its module: repr, pickling, help() and __self__ behave like
// those of any C extension function.
template <size_t I>
PyObject* module_function(PyObject* module, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  auto* table = reinterpret_cast<ModuleTable*>(PyModule_GetDef(module));
  return invoke(*table->functions[I], args, nargsf, kwnames);
}

template <size_t... I>
constexpr std::array<FastCall, sizeof...(I)> make_entry_points(std::index_sequence<I...>) {
  return {&module_function<I>...};
}
constexpr size_t kEntryPoints = 1024;
constexpr std::array<FastCall, kEntryPoints> kModuleFunctions = make_entry_points(std::make_index_sequence<kEntryPoints>{});

// Beyond kEntryPoints functions (unlikely in practice), `self` is a capsule
// pointing at the function's description instead.
constexpr const char* kFunctionCapsule = "pydd.function";

PyObject* capsule_function(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  auto* fi = static_cast<const FunctionInfo*>(PyCapsule_GetPointer(self, kFunctionCapsule));
  if (!fi) return nullptr;
  return invoke(*fi, args, nargsf, kwnames);
}

// The print sink of every pydd module: sys.stdout.write, so kernel output
// interleaves correctly with Python's own prints and reaches Jupyter and
// pytest's capture. Kernels call it without the GIL, possibly from threads
// Python has never seen, which PyGILState handles.
void python_print(const char* text, int64_t length) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* out = PySys_GetObject("stdout");  // borrowed
  if (out && out != Py_None) {
    PyObject* str = PyUnicode_DecodeUTF8(text, static_cast<Py_ssize_t>(length), "replace");
    PyObject* r = str ? PyObject_CallMethod(out, "write", "O", str) : nullptr;
    // An exception cannot travel back through kernel code that may run on a
    // worker thread; report it the way Python reports errors in destructors.
    if (!r) PyErr_WriteUnraisable(out);
    Py_XDECREF(r);
    Py_XDECREF(str);
  }
  PyGILState_Release(gil);
}

void check_type(const pabi::TypeDesc& t, bool is_result, const std::string& where) {
  const bool dtype_ok = static_cast<int>(t.dtype) >= 0 && static_cast<int>(t.dtype) <= 4;
  bool ok = false;
  switch (t.kind) {
    case pabi::Kind::Void: ok = is_result; break;
    case pabi::Kind::Scalar: ok = dtype_ok; break;
    case pabi::Kind::Array: ok = dtype_ok && t.rank >= 1 && t.rank <= pydd::kMaxRank; break;
  }
  if (!ok) throw std::runtime_error("invalid type in the module table for " + where);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) PyObject* pydd_make_module(const pabi::ModuleDesc* desc) {
  if (!desc || !desc->name) {
    PyErr_SetString(PyExc_ImportError, "pydd: null module description");
    return nullptr;
  }
  if (desc->abi_version != pabi::kVersion) {
    PyErr_Format(PyExc_ImportError,
                 "pydd module '%s' was compiled for pydd ABI version %d, but libpydd_python provides version %d; "
                 "recompile it with this pyddc",
                 desc->name, static_cast<int>(desc->abi_version), pabi::kVersion);
    return nullptr;
  }
  try {
    bool needs_numpy = false;
    for (int32_t i = 0; i < desc->num_functions; ++i) {
      const pabi::FunctionDesc& f = desc->functions[i];
      if (!f.name || !f.thunk || f.num_params < 0 || (f.num_params > 0 && !f.params))
        throw std::runtime_error(std::string("invalid function entry in the module table of ") + desc->name);
      check_type(f.result, true, f.name);
      needs_numpy |= f.result.kind == pabi::Kind::Array;
      for (int32_t j = 0; j < f.num_params; ++j) {
        if (!f.params[j].name) throw std::runtime_error(std::string("unnamed parameter in ") + f.name);
        check_type(f.params[j].type, false, f.name);
        needs_numpy |= f.params[j].type.kind == pabi::Kind::Array;
      }
    }
    if (needs_numpy) {
      // Import NumPy now, under the import lock: pybind11's lazy first use
      // from two threads at once could deadlock on its static initializer.
      py::detail::npy_api::get();
      numpy_scalar_types();
    }

    auto* table = new ModuleTable();
    table->functions = new FunctionInfo*[static_cast<size_t>(desc->num_functions > 0 ? desc->num_functions : 1)]();
    py::module_ m = py::module_::create_extension_module(desc->name, nullptr, &table->def);
    py::str module_name(desc->name);
    for (int32_t i = 0; i < desc->num_functions; ++i) {
      const pabi::FunctionDesc& f = desc->functions[i];
      auto* info = new FunctionInfo();
      table->functions[i] = info;
      info->desc = &f;
      info->name = f.name;
      for (int32_t j = 0; j < f.num_params; ++j) {
        PyObject* s = PyUnicode_InternFromString(f.params[j].name);
        if (!s) throw py::error_already_set();
        info->names.push_back(py::reinterpret_steal<py::object>(s));
        info->has_arrays |= f.params[j].type.kind == pabi::Kind::Array;
      }
      const bool by_index = static_cast<size_t>(i) < kEntryPoints;
      py::object self = m;
      if (!by_index) {
        PyObject* capsule = PyCapsule_New(info, kFunctionCapsule, nullptr);
        if (!capsule) throw py::error_already_set();
        self = py::reinterpret_steal<py::object>(capsule);
      }
      FastCall entry = by_index ? kModuleFunctions[static_cast<size_t>(i)] : &capsule_function;
      info->def.ml_name = f.name;
      info->def.ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(entry));
      info->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
      info->def.ml_doc = f.signature;
      auto fn = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&info->def, self.ptr(), module_name.ptr()));
      if (!fn) throw py::error_already_set();
      m.attr(f.name) = fn;
    }
    if (desc->print_hook) *desc->print_hook = &python_print;
    // As in PYBIND11_MODULE: `m` holds a borrowed reference to the new one.
    return m.ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ImportError, e.what());
  }
  return nullptr;
}
