// pydd Python bridge (libpydd_python.so): turns a generated module's table
// (abi.h) into a Python extension module.
//
// Everything Python-facing lives here so that generated modules contain no
// Python or pybind11 code and compile in a fraction of a second: argument
// binding with Python's own error messages, strict checking of NumPy arrays
// (any strides, but never a silent copy, which would lose the kernel's
// writes), copying lists and dicts in and out, releasing the GIL around the
// kernel, translating C++ exceptions, and handing array results back without
// copying (views of arguments stay views).
//
// Functions are plain METH_FASTCALL builtins rather than pybind11
// cpp_functions: a kernel call should cost about as much as calling any other
// builtin, and the binding rules here are Python's, not pybind11's overload
// resolution.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <complex>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pydd/abi.h"
#include "pydd/array.h"
#include "pydd/errors.h"
#include "pydd/parallel.h"

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
    case pabi::Dtype::Complex64: return "complex64";
    case pabi::Dtype::Complex128: return "complex128";
    case pabi::Dtype::Int8: return "int8";
    case pabi::Dtype::Int16: return "int16";
    case pabi::Dtype::UInt8: return "uint8";
    case pabi::Dtype::UInt16: return "uint16";
    case pabi::Dtype::UInt32: return "uint32";
    case pabi::Dtype::UInt64: return "uint64";
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
    case pabi::Dtype::Complex64: return py::dtype("complex64");
    case pabi::Dtype::Complex128: return py::dtype("complex128");
    case pabi::Dtype::Int8: return py::dtype::of<int8_t>();
    case pabi::Dtype::Int16: return py::dtype::of<int16_t>();
    case pabi::Dtype::UInt8: return py::dtype::of<uint8_t>();
    case pabi::Dtype::UInt16: return py::dtype::of<uint16_t>();
    case pabi::Dtype::UInt32: return py::dtype::of<uint32_t>();
    case pabi::Dtype::UInt64: return py::dtype::of<uint64_t>();
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
    case pabi::Dtype::Complex64: *kind = 'c'; *size = 8; return;
    case pabi::Dtype::Complex128: *kind = 'c'; *size = 16; return;
    case pabi::Dtype::Int8: *kind = 'i'; *size = 1; return;
    case pabi::Dtype::Int16: *kind = 'i'; *size = 2; return;
    case pabi::Dtype::UInt8: *kind = 'u'; *size = 1; return;
    case pabi::Dtype::UInt16: *kind = 'u'; *size = 2; return;
    case pabi::Dtype::UInt32: *kind = 'u'; *size = 4; return;
    case pabi::Dtype::UInt64: *kind = 'u'; *size = 8; return;
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

/// str(obj) or repr(obj) for an error message; "?" if that fails.
std::string object_text(PyObject* obj, PyObject* (*convert)(PyObject*)) {
  PyObject* s = convert(obj);
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
std::string object_str(PyObject* obj) { return object_text(obj, PyObject_Str); }
std::string object_repr(PyObject* obj) { return object_text(obj, PyObject_Repr); }

// NumPy's scalar types, looked up only once numpy has been imported by
// someone: a module with only scalar parameters must not import numpy, and
// an object cannot be a NumPy scalar before numpy is imported. Accessed with
// the GIL held; the references are kept for the life of the process.
struct NumpyScalarTypes {
  PyTypeObject* bool_ = nullptr;
  PyTypeObject* integer = nullptr;
  PyTypeObject* floating = nullptr;
  PyTypeObject* complexfloating = nullptr;
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
  PyObject* c = PyObject_GetAttrString(numpy, "complexfloating");
  if (!b || !i || !f || !c || !PyType_Check(b) || !PyType_Check(i) || !PyType_Check(f) || !PyType_Check(c)) {
    // numpy is still importing (or is not NumPy); try again next call.
    PyErr_Clear();
    Py_XDECREF(b);
    Py_XDECREF(i);
    Py_XDECREF(f);
    Py_XDECREF(c);
    return nullptr;
  }
  types.bool_ = reinterpret_cast<PyTypeObject*>(b);
  types.integer = reinterpret_cast<PyTypeObject*>(i);
  types.floating = reinterpret_cast<PyTypeObject*>(f);
  types.complexfloating = reinterpret_cast<PyTypeObject*>(c);
  ready = true;
  return &types;
}

bool is_numpy_bool(PyObject* obj) {
  const NumpyScalarTypes* t = numpy_scalar_types();
  return t && PyObject_TypeCheck(obj, t->bool_);
}

// A small array on the stack for the usual handful of parameters. Left
// uninitialized (default-initialized): callers fill what they use.
template <class T, int N>
class SmallBuffer {
 public:
  explicit SmallBuffer(size_t n) {
    if (n > static_cast<size_t>(N)) {
      heap_.reset(new T[n]);
      data_ = heap_.get();
    } else {
      data_ = local_;
    }
  }
  T& operator[](size_t i) { return data_[i]; }
  T* data() { return data_; }

 private:
  T local_[N];
  std::unique_ptr<T[]> heap_;
  T* data_;
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

// ------------------------------------------------------------ Ctrl-C

// Kernels run with the GIL released, so Python's SIGINT handler only marks
// the signal; nothing would look at it before the kernel returns. This
// handler, installed in front of Python's, also sets Interrupt::requested
// while a kernel runs; kernels check it at outer-loop back edges and throw
// KeyboardInterrupt, which set_error turns into Python's. Every kernel
// running at that moment is interrupted; the request is dropped when the
// last one returns, so a Ctrl-C at the prompt does not stop a later call.
std::atomic<int> kernels_running{0};
struct sigaction python_sigint;

void on_sigint(int sig, siginfo_t* info, void* context) {
  if (kernels_running.load(std::memory_order_relaxed) > 0)
    pydd::Interrupt::requested = 1;
  if (python_sigint.sa_flags & SA_SIGINFO)
    python_sigint.sa_sigaction(sig, info, context);
  else if (python_sigint.sa_handler != SIG_DFL && python_sigint.sa_handler != SIG_IGN)
    python_sigint.sa_handler(sig);
}

/// Once, at the first module load: only if Python handles SIGINT itself
/// (not when it is ignored or left to its default action).
void install_sigint_handler() {
  static bool done = false;
  if (done) return;
  done = true;
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  if (!(current.sa_flags & SA_SIGINFO) && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) return;
  python_sigint = current;
  struct sigaction ours = current;
  ours.sa_flags |= SA_SIGINFO;
  ours.sa_sigaction = on_sigint;
  sigaction(SIGINT, &ours, nullptr);
}

struct RunningKernel {
  RunningKernel() { kernels_running.fetch_add(1, std::memory_order_relaxed); }
  ~RunningKernel() {
    if (kernels_running.fetch_sub(1, std::memory_order_relaxed) == 1)
      pydd::Interrupt::requested = 0;
  }
};

// ------------------------------------------------------------ the functions

struct FunctionInfo {
  const pabi::FunctionDesc* desc;
  std::string name;                  // for messages: "f"
  std::vector<py::object> names;     // interned parameter names
  std::vector<py::object> defaults;  // each parameter's default value, or null
  PyMethodDef def;                   // Python keeps a pointer to it
  bool has_arrays = false;           // some parameter is an array (top level)
  std::vector<size_t> offsets;       // of each parameter's raw value in the argument storage
  std::vector<char> holds;           // parameter i's raw value holds buffers to free
  size_t arg_bytes = 0, result_bytes = 0;
  bool result_holds = false;
  /// On the entry of a rank-generic function (abi.h): every instance, this
  /// one first; empty for an ordinary function.
  std::vector<const FunctionInfo*> instances;
};

constexpr const char* kBufferCapsule = "pydd.Buffer";

// ---- raw layouts (abi.h), walked from a TypeDesc

size_t raw_size(const pabi::TypeDesc& t) {
  switch (t.kind) {
    case pabi::Kind::Void: return 0;
    case pabi::Kind::Scalar: return static_cast<size_t>(element_size(t.dtype));
    case pabi::Kind::Array: return sizeof(pabi::RawArray);
    case pabi::Kind::Sparse: return sizeof(pabi::RawSparse);
    case pabi::Kind::List: return sizeof(pabi::RawList);
    case pabi::Kind::Dict: return sizeof(pabi::RawDict);
    case pabi::Kind::Tuple: {
      size_t n = 0;
      for (int32_t k = 0; k < t.num_elems; ++k) n += pabi::align8(raw_size(t.elems[k]));
      return n;
    }
  }
  return 0;
}

/// Whether a raw value of this type can hold array references or item
/// buffers (scalars hold nothing to release).
bool holds_resources(const pabi::TypeDesc& t) {
  if (t.kind != pabi::Kind::Tuple)
    return t.kind == pabi::Kind::Array || t.kind == pabi::Kind::Sparse || t.kind == pabi::Kind::List ||
           t.kind == pabi::Kind::Dict;
  for (int32_t k = 0; k < t.num_elems; ++k)
    if (holds_resources(t.elems[k])) return true;
  return false;
}

/// Releases what a raw value holds (array references, item buffers) and
/// leaves it empty. Zeroed or partly built values are fine.
void release_array(pabi::RawArray& raw) {
  if (pydd::Buffer* b = raw.owner) {
    raw.owner = nullptr;
    b->release();
  }
}

void release_raw(const pabi::TypeDesc& t, void* p) {
  auto each = [](const pabi::TypeDesc& e, void* items, int64_t n) {
    if (!items) return;
    if (holds_resources(e))
      for (int64_t i = 0; i < n; ++i) release_raw(e, static_cast<char*>(items) + i * static_cast<int64_t>(raw_size(e)));
    std::free(items);
  };
  switch (t.kind) {
    case pabi::Kind::Array: release_array(*static_cast<pabi::RawArray*>(p)); return;
    case pabi::Kind::Sparse: {
      auto& raw = *static_cast<pabi::RawSparse*>(p);
      release_array(raw.indptr);
      release_array(raw.indices);
      release_array(raw.data);
      return;
    }
    case pabi::Kind::List: {
      auto& raw = *static_cast<pabi::RawList*>(p);
      each(t.elems[0], raw.items, raw.size);
      raw = pabi::RawList{0, nullptr};
      return;
    }
    case pabi::Kind::Dict: {
      auto& raw = *static_cast<pabi::RawDict*>(p);
      each(t.elems[0], raw.keys, raw.size);
      each(t.elems[1], raw.values, raw.size);
      raw = pabi::RawDict{0, nullptr, nullptr};
      return;
    }
    case pabi::Kind::Tuple: {
      size_t off = 0;
      for (int32_t k = 0; k < t.num_elems; ++k) {
        release_raw(t.elems[k], static_cast<char*>(p) + off);
        off += pabi::align8(raw_size(t.elems[k]));
      }
      return;
    }
    default: return;
  }
}

/// pydd's spelling of a type, for messages.
std::string type_str(const pabi::TypeDesc& t) {
  auto members = [&t](int32_t from) {
    std::string s;
    for (int32_t k = from; k < t.num_elems; ++k) s += (k > from ? ", " : "") + type_str(t.elems[k]);
    return s;
  };
  switch (t.kind) {
    case pabi::Kind::Void: return "None";
    case pabi::Kind::Scalar: return dtype_name(t.dtype);
    case pabi::Kind::Array: return std::string("Array(") + dtype_name(t.dtype) + ", " + std::to_string(t.rank) + ")";
    case pabi::Kind::Sparse: return std::string("SparseMat(") + dtype_name(t.dtype) + ")";
    case pabi::Kind::List: return "List(" + members(0) + ")";
    case pabi::Kind::Dict: return "Dict(" + members(0) + ")";
    case pabi::Kind::Tuple: return "(" + members(0) + (t.num_elems == 1 ? ",)" : ")");
  }
  return "?";
}

// ---- Python -> raw (arguments)

/// Where a value being converted sits, for error messages: a parameter, or
/// an element, key or value inside one. Formatted only on error.
struct Where {
  const FunctionInfo& fi;
  int param;
  const Where* parent = nullptr;
  const char* what = nullptr;  // "element", "key", "value for key"
  int64_t index = 0;
  PyObject* key = nullptr;  // shown with repr() instead of index when set

  std::string str() const {
    if (!parent) return fi.name + "(): parameter '" + fi.desc->params[param].name + "'";
    std::string at = key ? object_repr(key) : std::to_string(index);
    return parent->str() + " " + what + " " + at;
  }
};

[[noreturn]] void throw_type_error(const std::string& msg) { throw py::type_error(msg); }
[[noreturn]] void throw_value_error(const std::string& msg) { throw py::value_error(msg); }
[[noreturn]] void throw_overflow_error(const std::string& msg) {
  PyErr_SetString(PyExc_OverflowError, msg.c_str());
  throw py::error_already_set();
}

[[noreturn]] void throw_expects(const Where& w, const std::string& what, PyObject* obj) {
  throw_type_error(w.str() + " expects " + what + ", got " + type_name(obj));
}

/// A parameter's default value from its literal text (abi.h), or null.
py::object default_object(const char* text) {
  if (!text) return py::object();
  if (!std::strcmp(text, "True")) return py::bool_(true);
  if (!std::strcmp(text, "False")) return py::bool_(false);
  char* end = nullptr;
  if (PyObject* i = PyLong_FromString(text, &end, 10)) {
    if (*end == '\0') return py::reinterpret_steal<py::object>(i);
    Py_DECREF(i);
  }
  PyErr_Clear();
  const double d = PyOS_string_to_double(text, &end, nullptr);
  if (PyErr_Occurred() || *end != '\0') throw std::runtime_error(std::string("invalid default value ") + text);
  return py::float_(d);
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

/// Whether v (read as unsigned for uint64) is a value of integer dtype d.
bool integer_fits(long long v, pabi::Dtype d) {
  char kind;
  int size;
  dtype_kind_size(d, &kind, &size);
  if (size == 8) return kind == 'i' || v >= 0;
  const long long span = 1LL << (8 * size);
  return kind == 'u' ? v >= 0 && v < span : v >= -span / 2 && v < span / 2;
}

/// A Python integer (or NumPy integer, or bool) for an integer parameter,
/// its bits in an int64 (a uint64 above 2**63 - 1 wraps into the negative
/// range). A value out of the dtype's range is an OverflowError, as NumPy 2
/// raises for np.uint8(300).
int64_t convert_integer(const Where& w, PyObject* obj, pabi::Dtype dtype) {
  long long v;
  int overflow = 0;
  py::object index;
  if (is_numpy_bool(obj)) {
    // np.bool_.__index__ is deprecated (it warns); its truth value is exact.
    const int t = PyObject_IsTrue(obj);
    if (t < 0) throw py::error_already_set();
    v = t;
  } else {
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) throw_expects(w, dtype_name(dtype), obj);
    index = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
    if (!index) {
      // e.g. an array of several elements: name the parameter rather than
      // pass on NumPy's message.
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
      PyErr_Clear();
      throw_expects(w, dtype_name(dtype), obj);
    }
    v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow > 0 && dtype == pabi::Dtype::UInt64) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
      if (!PyErr_Occurred()) return static_cast<int64_t>(u);
      PyErr_Clear();
    }
  }
  if (overflow != 0 || !integer_fits(v, dtype))
    throw_overflow_error(w.str() + " = " + object_str(index.ptr()) + " does not fit in " + dtype_name(dtype));
  return v;
}

double convert_floating(const Where& w, PyObject* obj, pabi::Dtype dtype) {
  if (PyFloat_Check(obj)) return PyFloat_AS_DOUBLE(obj);  // includes numpy.float64
  if (PyLong_Check(obj)) {                                // includes bool
    const double v = PyLong_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw py::error_already_set();
      PyErr_Clear();
      throw_value_error(w.str() + " = " + object_str(obj) + " does not fit in " + dtype_name(dtype));
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
  throw_expects(w, dtype_name(dtype), obj);
}

/// A complex argument: a Python complex (numpy.complex128 is one), or any
/// real number the float conversion takes, or a NumPy complex scalar.
std::complex<double> convert_complex(const Where& w, PyObject* obj, pabi::Dtype dtype) {
  if (PyComplex_Check(obj)) return {PyComplex_RealAsDouble(obj), PyComplex_ImagAsDouble(obj)};
  const NumpyScalarTypes* t = numpy_scalar_types();
  if (t && PyObject_TypeCheck(obj, t->complexfloating)) {  // numpy.complex64 (__complex__)
    const Py_complex c = PyComplex_AsCComplex(obj);
    if (c.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return {c.real, c.imag};
  }
  return {convert_floating(w, obj, dtype), 0.0};
}

bool convert_bool(const Where& w, PyObject* obj) {
  if (obj == Py_True) return true;
  if (obj == Py_False) return false;
  if (is_numpy_bool(obj) || (!PyFloat_Check(obj) && PyIndex_Check(obj))) {
    py::object value = py::reinterpret_borrow<py::object>(obj);
    if (!is_numpy_bool(obj)) {
      value = py::reinterpret_steal<py::object>(PyNumber_Index(obj));
      if (!value) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
        PyErr_Clear();
        throw_expects(w, "bool", obj);
      }
    }
    const int t = PyObject_IsTrue(value.ptr());
    if (t < 0) throw py::error_already_set();
    return t != 0;
  }
  throw_expects(w, "bool", obj);
}

void convert_scalar(const Where& w, PyObject* obj, pabi::Dtype dtype, void* out) {
  switch (dtype) {
    case pabi::Dtype::Bool: *static_cast<bool*>(out) = convert_bool(w, obj); return;
    case pabi::Dtype::Int32: *static_cast<int32_t*>(out) = static_cast<int32_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::Int64: *static_cast<int64_t*>(out) = convert_integer(w, obj, dtype); return;
    case pabi::Dtype::Float32: *static_cast<float*>(out) = static_cast<float>(convert_floating(w, obj, dtype)); return;
    case pabi::Dtype::Float64: *static_cast<double*>(out) = convert_floating(w, obj, dtype); return;
    case pabi::Dtype::Complex64:
      *static_cast<std::complex<float>*>(out) = std::complex<float>(convert_complex(w, obj, dtype));
      return;
    case pabi::Dtype::Complex128: *static_cast<std::complex<double>*>(out) = convert_complex(w, obj, dtype); return;
    case pabi::Dtype::Int8: *static_cast<int8_t*>(out) = static_cast<int8_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::Int16: *static_cast<int16_t*>(out) = static_cast<int16_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::UInt8: *static_cast<uint8_t*>(out) = static_cast<uint8_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::UInt16: *static_cast<uint16_t*>(out) = static_cast<uint16_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::UInt32: *static_cast<uint32_t*>(out) = static_cast<uint32_t>(convert_integer(w, obj, dtype)); return;
    case pabi::Dtype::UInt64: *static_cast<uint64_t*>(out) = static_cast<uint64_t>(convert_integer(w, obj, dtype)); return;
  }
}

/// An array argument as the result lookup needs it: the object (kept alive
/// for the call) and the bytes its elements span.
struct ArrayArg {
  py::object object;
  uintptr_t lo = 0, hi = 0;
};

/// The byte range [lo, hi) that a strided array's elements span.
void extent(const char* data, int rank, const int64_t* shape, const int64_t* strides, int64_t itemsize,
            uintptr_t* lo, uintptr_t* hi) {
  int64_t min = 0, max = 0;
  for (int k = 0; k < rank; ++k) {
    if (shape[k] == 0) {
      *lo = *hi = reinterpret_cast<uintptr_t>(data);
      return;
    }
    const int64_t span = (shape[k] - 1) * strides[k] * itemsize;
    (span < 0 ? min : max) += span;
  }
  *lo = reinterpret_cast<uintptr_t>(data + min);
  *hi = reinterpret_cast<uintptr_t>(data + max + itemsize);
}

/// Whether a NumPy dtype is `d` in native byte order (what a kernel reads
/// without a copy).
bool is_dtype(const py::dtype& dt, pabi::Dtype d) {
  char kind;
  int size;
  dtype_kind_size(d, &kind, &size);
  const char order = dt.byteorder();
  // '=' is native, '|' is "not applicable" (1-byte types); NumPy normalizes
  // an explicit native order to '='.
  const bool native = order == '=' || order == '|' || order == (PY_BIG_ENDIAN ? '>' : '<');
  return dt.kind() == kind && dt.itemsize() == size && native;
}

// Any strided array of the right dtype and rank is taken as it is, without
// a copy (a copy would lose the kernel's writes): strides in bytes become
// strides in elements, which needs them to be multiples of the itemsize.
void convert_array(const Where& w, const pabi::TypeDesc& t, bool written, PyObject* obj, pabi::RawArray* out,
                   ArrayArg* arg) {
  const int rank = t.rank;
  auto expected = [&] {
    return w.str() + " expects a numpy.ndarray of " + dtype_name(t.dtype) + " with " + std::to_string(rank) +
           (rank == 1 ? " dimension" : " dimensions") + ", got ";
  };
  if (!py::isinstance<py::array>(obj)) throw_type_error(expected() + type_name(obj));
  auto arr = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = arr.dtype();
  if (!is_dtype(dt, t.dtype) || arr.ndim() != rank) {
    const int nd = static_cast<int>(arr.ndim());
    throw_type_error(expected() + "numpy.ndarray of " + object_str(dt.ptr()) + " with " + std::to_string(nd) +
                     (nd == 1 ? " dimension" : " dimensions"));
  }
  const int64_t size = dt.itemsize();
  const int flags = arr.flags();
  if (!(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    throw_type_error(expected() + "an unaligned array (use numpy.require(a, requirements='A'))");
  if (written && !(flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_)) throw_type_error(expected() + "a read-only array");
  out->data = const_cast<void*>(arr.data());
  for (int k = 0; k < rank; ++k) {
    const py::ssize_t stride = arr.strides(k);
    if (stride % size != 0)
      throw_type_error(expected() + "an array whose strides are not multiples of its itemsize (use numpy.ascontiguousarray)");
    out->shape[k] = static_cast<int64_t>(arr.shape(k));
    out->strides[k] = static_cast<int64_t>(stride / size);
  }
  for (int k = rank; k < pydd::kMaxRank; ++k) out->shape[k] = 0, out->strides[k] = 0;
  out->owner = nullptr;
  arg->object = py::reinterpret_borrow<py::object>(obj);
  extent(static_cast<const char*>(out->data), rank, out->shape, out->strides, size, &arg->lo, &arg->hi);
}

/// Per-call conversion state: the arrays found inside containers (kept
/// alive, and searched when a result borrows argument memory).
struct CallState {
  std::vector<ArrayArg> nested;
};

// ---- scipy.sparse matrices

// SciPy is imported only by modules with a SparseMat in some signature, when
// the module is created (under the import lock, with the GIL held); the
// references are kept for the life of the process.
struct ScipySparse {
  PyObject* issparse = nullptr;    // scipy.sparse.issparse
  PyObject* csr_matrix = nullptr;  // the class results are made of
  // The attributes a csr_matrix's __init__ sets (an empty one's __dict__):
  // results are made by filling in a copy, so that SciPy neither copies the
  // kernel's arrays nor checks them again (null: use the constructor).
  PyObject* csr_dict = nullptr;
};

const ScipySparse& scipy_sparse() {
  static ScipySparse sp;
  if (sp.csr_matrix) return sp;
  py::module_ sparse = py::module_::import("scipy.sparse");
  py::object issparse = sparse.attr("issparse"), csr = sparse.attr("csr_matrix");
  py::object dict;
  try {
    py::object empty = csr(py::make_tuple(0, 0));
    dict = py::reinterpret_steal<py::object>(PyDict_Copy(empty.attr("__dict__").ptr()));
    if (!dict) throw py::error_already_set();
    // Cached facts about the empty matrix's indices would be wrong for a result.
    for (const char* key : {"_has_sorted_indices", "_has_canonical_format", "has_sorted_indices",
                            "has_canonical_format"})
      if (PyDict_GetItemString(dict.ptr(), key) && PyDict_DelItemString(dict.ptr(), key) < 0)
        throw py::error_already_set();
    for (const char* key : {"_shape", "data", "indices", "indptr"})
      if (!PyDict_GetItemString(dict.ptr(), key)) dict = py::object();  // an unknown layout
  } catch (py::error_already_set&) {
    dict = py::object();
  }
  sp.issparse = issparse.release().ptr();
  sp.csr_dict = dict ? dict.release().ptr() : nullptr;
  sp.csr_matrix = csr.release().ptr();
  return sp;
}


/// One of a CSR matrix's arrays as a raw 1-D array the kernel borrows:
/// `arr` itself when it is a contiguous, aligned `d` array and no copy is
/// asked for, else a contiguous copy converted to `d` (kept alive in `st`).
void sparse_part(const Where& w, const char* what, py::object obj, pabi::Dtype d, bool copy, pabi::RawArray* out,
                 CallState& st) {
  if (!py::isinstance<py::array>(obj))
    throw_type_error(w.str() + ": the matrix's " + what + " is a " + type_name(obj.ptr()) + ", not a numpy.ndarray");
  auto arr = py::reinterpret_borrow<py::array>(obj);
  if (arr.ndim() != 1) throw_type_error(w.str() + ": the matrix's " + what + " array is not 1-D");
  const int flags = arr.flags();
  const bool usable = is_dtype(arr.dtype(), d) && (flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) &&
                      (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (copy || !usable) {
    // astype always copies, into a fresh C-contiguous array.
    arr = py::reinterpret_steal<py::array>(arr.attr("astype")(numpy_dtype(d)).release());
    if (!py::isinstance<py::array>(arr)) throw_type_error(w.str() + ": cannot convert the matrix's " + what);
  }
  const int64_t itemsize = element_size(d);
  *out = pabi::RawArray{};
  out->data = const_cast<void*>(arr.data());
  out->shape[0] = static_cast<int64_t>(arr.shape(0));
  out->strides[0] = 1;
  out->owner = nullptr;
  ArrayArg& a = st.nested.emplace_back();
  a.object = std::move(arr);
  extent(static_cast<const char*>(out->data), 1, out->shape, out->strides, itemsize, &a.lo, &a.hi);
}

/// A scipy.sparse matrix (any format; CSR is borrowed) as a RawSparse. The
/// kernel sees contiguous data and the matrix's int32 or int64 indices as
/// they are; indices of another integer type (or a mix) are int64 copies.
/// When the kernel may write the matrix (spm_set_item), all three arrays are
/// int64 copies: an insertion cannot resize the caller's arrays, so a
/// partial write-through would corrupt them.
void convert_sparse(const Where& w, const pabi::TypeDesc& t, bool written, PyObject* obj, pabi::RawSparse* out,
                    CallState& st) {
  const ScipySparse& sp = scipy_sparse();
  auto expected = [&] { return w.str() + " expects a scipy.sparse matrix of " + dtype_name(t.dtype) + ", got "; };
  const int is_sparse = obj == Py_None ? 0 : [&] {
    PyObject* r = PyObject_CallOneArg(sp.issparse, obj);
    if (!r) throw py::error_already_set();
    const int truth = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (truth < 0) throw py::error_already_set();
    return truth;
  }();
  if (!is_sparse) throw_type_error(expected() + type_name(obj));
  py::object m = py::reinterpret_borrow<py::object>(obj);
  py::object dt = m.attr("dtype");
  if (!py::isinstance<py::dtype>(dt) || !is_dtype(py::reinterpret_borrow<py::dtype>(dt), t.dtype))
    throw_type_error(expected() + type_name(obj) + " of " + object_str(dt.ptr()));
  py::object shape = m.attr("shape");
  if (!PyTuple_Check(shape.ptr()) || PyTuple_GET_SIZE(shape.ptr()) != 2)
    throw_type_error(expected() + type_name(obj) + " of shape " + object_str(shape.ptr()) + " (not 2-D)");
  const int64_t nrows = convert_integer(w, PyTuple_GET_ITEM(shape.ptr(), 0), pabi::Dtype::Int64);
  const int64_t ncols = convert_integer(w, PyTuple_GET_ITEM(shape.ptr(), 1), pabi::Dtype::Int64);
  py::object format = m.attr("format");
  if (!PyUnicode_Check(format.ptr()) || PyUnicode_CompareWithASCIIString(format.ptr(), "csr") != 0) {
    m = m.attr("tocsr")();  // CSC, COO, LIL, ... (COO sums duplicates, as SciPy does)
  }
  out->nrows = nrows;
  out->ncols = ncols;
  py::object indptr = m.attr("indptr"), indices = m.attr("indices");
  auto int32_array = [](const py::object& a) {
    return py::isinstance<py::array>(a) && is_dtype(py::reinterpret_borrow<py::array>(a).dtype(), pabi::Dtype::Int32);
  };
  const bool narrow = !written && int32_array(indptr) && int32_array(indices);
  const pabi::Dtype index = narrow ? pabi::Dtype::Int32 : pabi::Dtype::Int64;
  out->index_bits = narrow ? 32 : 64;
  sparse_part(w, "indptr", indptr, index, written, &out->indptr, st);
  sparse_part(w, "indices", indices, index, written, &out->indices, st);
  sparse_part(w, "data", m.attr("data"), t.dtype, written, &out->data, st);
  // SciPy allows index and data arrays longer than nnz (indptr[-1]); the
  // kernel sees exactly nnz of each. Anything inconsistent is left for the
  // kernel's structure check (SparseMat::from_csr) to report.
  if (out->indptr.shape[0] == nrows + 1 && nrows >= 0) {
    const void* last = static_cast<const char*>(out->indptr.data) + nrows * element_size(index);
    const int64_t nnz = narrow ? *static_cast<const int32_t*>(last) : *static_cast<const int64_t*>(last);
    if (nnz >= 0 && nnz <= out->indices.shape[0] && nnz <= out->data.shape[0])
      out->indices.shape[0] = out->data.shape[0] = nnz;
  }
}

/// Converts `obj` to the raw form of `t` at `out`, which is zeroed when `t`
/// holds resources (so that a failure part way can be released). Lists and
/// dicts are copied; arrays are borrowed.
void from_python(const pabi::TypeDesc& t, PyObject* obj, void* out, const Where& w, bool written, ArrayArg* arg,
                 CallState& st) {
  switch (t.kind) {
    case pabi::Kind::Void: break;
    case pabi::Kind::Scalar: convert_scalar(w, obj, t.dtype, out); return;
    case pabi::Kind::Array:
      if (!arg) arg = &st.nested.emplace_back();
      convert_array(w, t, written, obj, static_cast<pabi::RawArray*>(out), arg);
      return;
    case pabi::Kind::Sparse: convert_sparse(w, t, written, obj, static_cast<pabi::RawSparse*>(out), st); return;
    case pabi::Kind::List: {
      if (!PyList_Check(obj)) throw_expects(w, "a list for " + type_str(t), obj);
      const Py_ssize_t n = PyList_GET_SIZE(obj);
      const size_t size = raw_size(t.elems[0]);
      auto& raw = *static_cast<pabi::RawList*>(out);
      raw.items = pabi::alloc_items(n, size);
      raw.size = n;
      char* items = static_cast<char*>(raw.items);
      for (Py_ssize_t i = 0; i < n; ++i) {
        // Converting an element may run Python code (__index__) that changes the list.
        if (i >= PyList_GET_SIZE(obj)) throw py::value_error(w.str() + ": the list changed size during the call");
        PyObject* x = PyList_GET_ITEM(obj, i);
        // The common cases first, without running any Python code.
        if (t.elems[0].kind == pabi::Kind::Scalar) {
          const pabi::Dtype d = t.elems[0].dtype;
          if (d == pabi::Dtype::Float64 && PyFloat_CheckExact(x)) {
            reinterpret_cast<double*>(items)[i] = PyFloat_AS_DOUBLE(x);
            continue;
          }
          if (d == pabi::Dtype::Int64 && PyLong_CheckExact(x)) {
            int overflow;
            const long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
            if (!overflow) {
              reinterpret_cast<int64_t*>(items)[i] = v;
              continue;
            }
          }
        }
        auto item = py::reinterpret_borrow<py::object>(x);
        const Where at{w.fi, w.param, &w, "element", i};
        from_python(t.elems[0], item.ptr(), items + i * size, at, written, nullptr, st);
      }
      return;
    }
    case pabi::Kind::Dict: {
      if (!PyDict_Check(obj)) throw_expects(w, "a dict for " + type_str(t), obj);
      const Py_ssize_t n = PyDict_GET_SIZE(obj);
      const size_t ksize = raw_size(t.elems[0]), vsize = raw_size(t.elems[1]);
      auto& raw = *static_cast<pabi::RawDict*>(out);
      raw.keys = pabi::alloc_items(n, ksize);
      raw.values = pabi::alloc_items(n, vsize);
      raw.size = n;
      Py_ssize_t pos = 0, i = 0;
      PyObject *k, *v;
      while (PyDict_Next(obj, &pos, &k, &v)) {
        if (i >= n || PyDict_GET_SIZE(obj) != n)
          throw py::value_error(w.str() + ": the dict changed size during the call");
        auto key = py::reinterpret_borrow<py::object>(k), value = py::reinterpret_borrow<py::object>(v);
        const Where at_key{w.fi, w.param, &w, "key", 0, key.ptr()};
        from_python(t.elems[0], key.ptr(), static_cast<char*>(raw.keys) + i * ksize, at_key, written, nullptr, st);
        const Where at_value{w.fi, w.param, &w, "value for key", 0, key.ptr()};
        from_python(t.elems[1], value.ptr(), static_cast<char*>(raw.values) + i * vsize, at_value, written, nullptr,
                    st);
        ++i;
      }
      if (i != n) throw py::value_error(w.str() + ": the dict changed size during the call");
      return;
    }
    case pabi::Kind::Tuple: {
      if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != t.num_elems)
        throw_expects(w, "a tuple for " + type_str(t), obj);
      size_t off = 0;
      for (int32_t k = 0; k < t.num_elems; ++k) {
        const Where at{w.fi, w.param, &w, "member", k};
        from_python(t.elems[k], PyTuple_GET_ITEM(obj, k), static_cast<char*>(out) + off, at, written, nullptr, st);
        off += pabi::align8(raw_size(t.elems[k]));
      }
      return;
    }
  }
  throw std::runtime_error("pydd: invalid parameter type in module table");
}

// ---- raw -> Python (results)

void destroy_buffer_capsule(PyObject* capsule) {
  if (auto* b = static_cast<pydd::Buffer*>(PyCapsule_GetPointer(capsule, kBufferCapsule))) b->release();
}

/// Copies a strided array into contiguous memory, one element at a time.
void copy_strided(char* dst, const char* src, int rank, const int64_t* shape, const int64_t* strides, int64_t itemsize) {
  int64_t count = 1;
  for (int k = 0; k < rank; ++k) count *= shape[k];
  int64_t idx[pydd::kMaxRank] = {};
  for (int64_t n = 0; n < count; ++n) {
    int64_t off = 0;
    for (int k = 0; k < rank; ++k) off += idx[k] * strides[k];
    std::memcpy(dst + n * itemsize, src + off * itemsize, static_cast<size_t>(itemsize));
    for (int k = rank - 1; k >= 0 && ++idx[k] == shape[k]; --k) idx[k] = 0;
  }
}

/// The arguments a result may borrow memory from.
struct ArgArrays {
  const ArrayArg* top;
  int ntop;
  const std::vector<ArrayArg>& nested;

  const ArrayArg* containing(uintptr_t lo, uintptr_t hi) const {
    // Within [a.lo, a.hi]; equal ends admit empty results.
    auto within = [&](const ArrayArg& a) { return a.object && lo && a.lo <= lo && hi <= a.hi; };
    for (int k = 0; k < ntop; ++k)
      if (within(top[k])) return &top[k];
    for (const ArrayArg& a : nested)
      if (within(a)) return &a;
    return nullptr;
  }
};

py::object array_result(const pabi::TypeDesc& type, pabi::RawArray& raw, const ArgArrays& args) {
  const int rank = type.rank;
  const int64_t itemsize = element_size(type.dtype);
  std::vector<py::ssize_t> shape(static_cast<size_t>(rank)), strides(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) {
    shape[static_cast<size_t>(k)] = static_cast<py::ssize_t>(raw.shape[k]);
    strides[static_cast<size_t>(k)] = static_cast<py::ssize_t>(raw.strides[k] * itemsize);
  }
  py::dtype dt = numpy_dtype(type.dtype);

  if (raw.owner) {
    // The array's base is a capsule holding the reference: NumPy frees the
    // memory exactly once, whenever the last view of it dies.
    PyObject* capsule = PyCapsule_New(raw.owner, kBufferCapsule, destroy_buffer_capsule);
    if (!capsule) throw py::error_already_set();
    raw.owner = nullptr;  // the capsule has it now
    auto base = py::reinterpret_steal<py::object>(capsule);
    return py::array(dt, shape, strides, raw.data, base);
  }

  // Borrowed memory: a view of the argument array it lies in, which then
  // stays alive (and keeps its writability) through the view's base.
  uintptr_t lo, hi;
  extent(static_cast<const char*>(raw.data), rank, raw.shape, raw.strides, itemsize, &lo, &hi);
  if (const ArrayArg* a = args.containing(lo, hi)) return py::array(dt, shape, strides, raw.data, a->object);
  // Memory the kernel borrowed from elsewhere (a module constant): copy it,
  // since nothing would keep it alive or safe to write through a view.
  py::array fresh(dt, shape);
  if (raw.data && hi > lo)
    copy_strided(static_cast<char*>(fresh.mutable_data()), static_cast<const char*>(raw.data), rank, raw.shape,
                 raw.strides, itemsize);
  return std::move(fresh);
}

/// A scipy.sparse.csr_matrix around a kernel's CSR arrays, which it takes
/// as they are: int64 indices, no copy, no second structure check (the
/// kernel's SparseMat is valid by construction).
py::object sparse_result(const pabi::TypeDesc& t, pabi::RawSparse& raw, const ArgArrays& args) {
  const pabi::TypeDesc values{pabi::Kind::Array, t.dtype, 1, 0, nullptr};
  const pabi::TypeDesc index{pabi::Kind::Array, pabi::Dtype::Int64, 1, 0, nullptr};
  py::object data = array_result(values, raw.data, args);
  py::object indices = array_result(index, raw.indices, args);
  py::object indptr = array_result(index, raw.indptr, args);
  py::tuple shape = py::make_tuple(raw.nrows, raw.ncols);
  const ScipySparse& sp = scipy_sparse();
  if (sp.csr_dict) {
    // What csr_matrix((data, indices, indptr), shape) would build, minus
    // its index-dtype narrowing (a copy to int32) and format check.
    auto* type = reinterpret_cast<PyTypeObject*>(sp.csr_matrix);
    py::tuple no_args(0);
    auto m = py::reinterpret_steal<py::object>(type->tp_new(type, no_args.ptr(), nullptr));
    if (!m) throw py::error_already_set();
    auto dict = py::reinterpret_steal<py::object>(PyDict_Copy(sp.csr_dict));
    if (!dict) throw py::error_already_set();
    if (PyDict_SetItemString(dict.ptr(), "_shape", shape.ptr()) < 0 ||
        PyDict_SetItemString(dict.ptr(), "data", data.ptr()) < 0 ||
        PyDict_SetItemString(dict.ptr(), "indices", indices.ptr()) < 0 ||
        PyDict_SetItemString(dict.ptr(), "indptr", indptr.ptr()) < 0 ||
        PyObject_SetAttrString(m.ptr(), "__dict__", dict.ptr()) < 0)
      throw py::error_already_set();
    return m;
  }
  py::dict kwargs;
  kwargs["shape"] = shape;
  kwargs["copy"] = false;
  return py::reinterpret_borrow<py::object>(sp.csr_matrix)(py::make_tuple(data, indices, indptr), **kwargs);
}

py::object scalar_result(pabi::Dtype dtype, const void* p) {
  switch (dtype) {
    case pabi::Dtype::Bool: return py::bool_(*static_cast<const bool*>(p));
    case pabi::Dtype::Int32: return py::int_(*static_cast<const int32_t*>(p));
    case pabi::Dtype::Int64: return py::int_(*static_cast<const int64_t*>(p));
    case pabi::Dtype::Float32: return py::float_(static_cast<double>(*static_cast<const float*>(p)));
    case pabi::Dtype::Float64: return py::float_(*static_cast<const double*>(p));
    case pabi::Dtype::Complex64: {
      const auto z = *static_cast<const std::complex<float>*>(p);
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(z.real(), z.imag()));
    }
    case pabi::Dtype::Complex128: {
      const auto z = *static_cast<const std::complex<double>*>(p);
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(z.real(), z.imag()));
    }
    case pabi::Dtype::Int8: return py::int_(*static_cast<const int8_t*>(p));
    case pabi::Dtype::Int16: return py::int_(*static_cast<const int16_t*>(p));
    case pabi::Dtype::UInt8: return py::int_(*static_cast<const uint8_t*>(p));
    case pabi::Dtype::UInt16: return py::int_(*static_cast<const uint16_t*>(p));
    case pabi::Dtype::UInt32: return py::int_(*static_cast<const uint32_t*>(p));
    case pabi::Dtype::UInt64: return py::int_(*static_cast<const uint64_t*>(p));
  }
  throw std::runtime_error("pydd: invalid result dtype");
}

/// Converts a raw result to Python. Array references it takes over are
/// cleared in `p`; the caller releases whatever remains.
py::object to_python(const pabi::TypeDesc& t, void* p, const ArgArrays& args) {
  switch (t.kind) {
    case pabi::Kind::Void: return py::none();
    case pabi::Kind::Scalar: return scalar_result(t.dtype, p);
    case pabi::Kind::Array: return array_result(t, *static_cast<pabi::RawArray*>(p), args);
    case pabi::Kind::Sparse: return sparse_result(t, *static_cast<pabi::RawSparse*>(p), args);
    case pabi::Kind::List: {
      auto& raw = *static_cast<pabi::RawList*>(p);
      const size_t size = raw_size(t.elems[0]);
      auto list = py::reinterpret_steal<py::object>(PyList_New(static_cast<Py_ssize_t>(raw.size)));
      if (!list) throw py::error_already_set();
      for (int64_t i = 0; i < raw.size; ++i)
        PyList_SET_ITEM(list.ptr(), i, to_python(t.elems[0], static_cast<char*>(raw.items) + i * size, args).release().ptr());
      return list;
    }
    case pabi::Kind::Dict: {
      auto& raw = *static_cast<pabi::RawDict*>(p);
      const size_t ksize = raw_size(t.elems[0]), vsize = raw_size(t.elems[1]);
      py::dict dict;
      for (int64_t i = 0; i < raw.size; ++i) {
        py::object k = to_python(t.elems[0], static_cast<char*>(raw.keys) + i * ksize, args);
        py::object v = to_python(t.elems[1], static_cast<char*>(raw.values) + i * vsize, args);
        if (PyDict_SetItem(dict.ptr(), k.ptr(), v.ptr()) < 0) throw py::error_already_set();
      }
      return std::move(dict);
    }
    case pabi::Kind::Tuple: {
      auto tuple = py::reinterpret_steal<py::object>(PyTuple_New(t.num_elems));
      if (!tuple) throw py::error_already_set();
      size_t off = 0;
      for (int32_t k = 0; k < t.num_elems; ++k) {
        PyTuple_SET_ITEM(tuple.ptr(), k, to_python(t.elems[k], static_cast<char*>(p) + off, args).release().ptr());
        off += pabi::align8(raw_size(t.elems[k]));
      }
      return tuple;
    }
  }
  throw std::runtime_error("pydd: invalid result type in module table");
}

PyObject* error_type(pydd::ErrorKind kind) {
  switch (kind) {
    case pydd::ErrorKind::TypeError: return PyExc_TypeError;
    case pydd::ErrorKind::ValueError: return PyExc_ValueError;
    case pydd::ErrorKind::IndexError: return PyExc_IndexError;
    case pydd::ErrorKind::ZeroDivisionError: return PyExc_ZeroDivisionError;
    case pydd::ErrorKind::MemoryError: return PyExc_MemoryError;
    case pydd::ErrorKind::RuntimeError: return PyExc_RuntimeError;
    case pydd::ErrorKind::KeyError: return PyExc_KeyError;
    case pydd::ErrorKind::KeyboardInterrupt: return PyExc_KeyboardInterrupt;
    case pydd::ErrorKind::AssertionError: return PyExc_AssertionError;
    case pydd::ErrorKind::OverflowError: return PyExc_OverflowError;
    case pydd::ErrorKind::LinAlgError: {
      // numpy.linalg.LinAlgError (imported on first use; a module holds it).
      static PyObject* type = [] {
        PyObject* linalg = PyImport_ImportModule("numpy.linalg");
        PyObject* t = linalg ? PyObject_GetAttrString(linalg, "LinAlgError") : nullptr;
        Py_XDECREF(linalg);
        if (!t) PyErr_Clear();
        return t;
      }();
      return type ? type : PyExc_ValueError;
    }
  }
  return PyExc_RuntimeError;
}

/// A KeyError's message is the key's repr; Python's KeyError carries the
/// key itself (e.args == (3,), shown as `KeyError: 3`), so numbers and
/// booleans are turned back into objects. Anything else stays a string.
PyObject* key_from_repr(const char* text) {
  if (!std::strcmp(text, "True")) return Py_NewRef(Py_True);
  if (!std::strcmp(text, "False")) return Py_NewRef(Py_False);
  char* end = nullptr;
  if (PyObject* i = PyLong_FromString(text, &end, 10)) {
    if (*end == '\0') return i;
    Py_DECREF(i);
  }
  PyErr_Clear();
  const double d = PyOS_string_to_double(text, &end, nullptr);
  if (!PyErr_Occurred() && *end == '\0' && *text) return PyFloat_FromDouble(d);
  PyErr_Clear();
  return PyUnicode_FromString(text);
}

void set_error(const pydd::Error& e) {
  if (e.kind() == pydd::ErrorKind::KeyboardInterrupt) {
    // Python's own handler saw the SIGINT too: running it now raises its
    // KeyboardInterrupt (or whatever a handler the user installed does)
    // and consumes the signal. Off the main thread it does nothing.
    if (PyErr_CheckSignals() == 0 && !PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return;
  }
  // `assert c` without a message raises AssertionError() with no arguments.
  if (e.kind() == pydd::ErrorKind::AssertionError && !*e.what()) return PyErr_SetNone(PyExc_AssertionError);
  if (e.kind() != pydd::ErrorKind::KeyError) return PyErr_SetString(error_type(e.kind()), e.what());
  PyObject* key = key_from_repr(e.what());
  if (!key) return;
  // A tuple value would be taken as the exception's argument list.
  PyObject* args = PyTuple_Pack(1, key);
  Py_DECREF(key);
  if (args) PyErr_SetObject(PyExc_KeyError, args);
  Py_XDECREF(args);
}

/// Releases the raw values of the first `count` parameters (those holding
/// buffers) on every exit from a call.
struct ArgsRelease {
  const FunctionInfo& fi;
  char* storage;
  int count = 0;
  ~ArgsRelease() {
    for (int j = 0; j < count; ++j)
      if (fi.holds[static_cast<size_t>(j)]) release_raw(fi.desc->params[j].type, storage + fi.offsets[static_cast<size_t>(j)]);
  }
};

struct ResultRelease {
  const pabi::TypeDesc& type;
  void* raw;
  bool holds;
  ~ResultRelease() {
    if (holds) release_raw(type, raw);
  }
};

/// The ndim of an ndarray argument, or -1.
int ndim_of(PyObject* obj) {
  return py::isinstance<py::array>(obj) ? static_cast<int>(py::reinterpret_borrow<py::array>(obj).ndim()) : -1;
}

/// The instance of a rank-generic function whose ranks are the ndims of
/// the bound arguments, at the parameters where the instances' ranks
/// differ. Otherwise a TypeError names the first such parameter whose
/// argument no instance takes, or else the combination.
const FunctionInfo& instance_for(const FunctionInfo& entry, PyObject* const* bound) {
  const int n = entry.desc->num_params;
  std::vector<int> varying;
  for (int j = 0; j < n; ++j)
    for (const FunctionInfo* inst : entry.instances)
      if (inst->desc->params[j].type.rank != entry.desc->params[j].type.rank) {
        varying.push_back(j);
        break;
      }
  auto dimensions = [](int nd) { return std::to_string(nd) + (nd == 1 ? " dimension" : " dimensions"); };
  // The TypeError for parameter j, naming every rank an instance takes
  // (not only the rank of the one the ndims picked).
  auto wrong_argument = [&](int j) {
    std::vector<int> ranks;
    for (const FunctionInfo* inst : entry.instances) {
      const int r = inst->desc->params[j].type.rank;
      if (std::find(ranks.begin(), ranks.end(), r) == ranks.end()) ranks.push_back(r);
    }
    std::sort(ranks.begin(), ranks.end());
    std::string list;
    for (size_t k = 0; k < ranks.size(); ++k)
      list += (k == 0 ? "" : k + 1 == ranks.size() ? " or " : ", ") + std::to_string(ranks[k]);
    PyObject* obj = bound[j];
    const int nd = ndim_of(obj);
    const pabi::TypeDesc& t = entry.desc->params[j].type;
    const std::string got = nd < 0 ? type_name(obj)
                                   : "numpy.ndarray of " + object_str(py::reinterpret_borrow<py::array>(obj).dtype().ptr()) +
                                         " with " + dimensions(nd);
    throw_type_error(Where{entry, j}.str() + " expects a numpy.ndarray of " + dtype_name(t.dtype) + " with " + list +
                     " dimensions, got " + got);
  };
  for (const FunctionInfo* inst : entry.instances) {
    bool match = true;
    for (int j : varying) match = match && ndim_of(bound[j]) == inst->desc->params[j].type.rank;
    if (!match) continue;
    for (int j : varying)
      if (!is_dtype(py::reinterpret_borrow<py::array>(bound[j]).dtype(), inst->desc->params[j].type.dtype)) wrong_argument(j);
    return *inst;
  }
  std::string given, accepted;
  for (int j : varying) {
    bool taken = false;
    for (const FunctionInfo* inst : entry.instances) taken |= inst->desc->params[j].type.rank == ndim_of(bound[j]);
    if (!taken) wrong_argument(j);
    const int nd = ndim_of(bound[j]);
    given += (given.empty() ? "" : ", ") + std::string(entry.desc->params[j].name) + ": " + dimensions(nd);
  }
  for (const FunctionInfo* inst : entry.instances) {
    std::string one;
    for (int j : varying) one += (one.empty() ? "" : ", ") + std::to_string(inst->desc->params[j].type.rank);
    accepted += (accepted.empty() ? "(" : ", (") + one + ")";
  }
  throw_type_error(entry.name + "() does not take arrays of these ranks together (" + given +
                   "); it takes these numbers of dimensions: " + accepted);
}

py::object run(const FunctionInfo& fi, PyObject* const* bound);

py::object call(const FunctionInfo& fi, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const pabi::FunctionDesc& f = *fi.desc;
  const int n = f.num_params;

  // Bind arguments to parameters the way a Python function does.
  SmallBuffer<PyObject*, 8> bound(static_cast<size_t>(n));
  if (nargs > n) {
    throw_type_error(fi.name + "() takes " + std::to_string(n) + " positional argument" + (n == 1 ? "" : "s") +
                     " but " + std::to_string(nargs) + (nargs == 1 ? " was" : " were") + " given");
  }
  for (Py_ssize_t k = 0; k < n; ++k) bound[static_cast<size_t>(k)] = k < nargs ? args[k] : nullptr;
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
  for (int j = 0; j < n; ++j) {
    if (bound[static_cast<size_t>(j)]) continue;
    if (PyObject* d = fi.defaults[static_cast<size_t>(j)].ptr()) bound[static_cast<size_t>(j)] = d;
    else missing.push_back(j);
  }
  if (!missing.empty()) throw_missing(fi, missing);
  return run(fi.instances.empty() ? fi : instance_for(fi, bound.data()), bound.data());
}

/// Converts the bound arguments, calls the kernel and converts its result.
py::object run(const FunctionInfo& fi, PyObject* const* bound) {
  const pabi::FunctionDesc& f = *fi.desc;
  const int n = f.num_params;
  // Convert into per-call storage: concurrent calls share nothing.
  SmallBuffer<uint64_t, 160> storage((fi.arg_bytes + 7) / 8);
  char* bytes = reinterpret_cast<char*>(storage.data());
  SmallBuffer<void*, 8> pointers(static_cast<size_t>(n));
  SmallBuffer<ArrayArg, 8> arrays(static_cast<size_t>(fi.has_arrays ? n : 0));
  CallState state;
  ArgsRelease release_args{fi, bytes};
  for (int j = 0; j < n; ++j) {
    const pabi::ParamDesc& p = f.params[j];
    void* slot = bytes + fi.offsets[static_cast<size_t>(j)];
    pointers[static_cast<size_t>(j)] = slot;
    if (fi.holds[static_cast<size_t>(j)]) {
      std::memset(slot, 0, raw_size(p.type));
      release_args.count = j + 1;
    }
    from_python(p.type, bound[j], slot, Where{fi, j}, p.written,
                fi.has_arrays ? &arrays[static_cast<size_t>(j)] : nullptr, state);
  }

  // Zeroed: a thunk that fails part way through building a result leaves
  // nothing to release but what it did build.
  SmallBuffer<uint64_t, 64> result((fi.result_bytes + 7) / 8);
  std::memset(result.data(), 0, fi.result_bytes);
  ResultRelease release_result{f.result, result.data(), fi.result_holds};
  {
    GilReleased nogil;
    RunningKernel running;
    f.thunk(pointers.data(), result.data());
  }
  return to_python(f.result, result.data(), ArgArrays{arrays.data(), fi.has_arrays ? n : 0, state.nested});
}

PyObject* invoke(const FunctionInfo& fi, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  try {
    return call(fi, args, PyVectorcall_NARGS(nargsf), kwnames).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const pydd::Error& e) {
    set_error(e);
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

// Validates a type tree from a module table (depth-limited: the table is
// data from another library, and a cycle must not hang the import).
bool valid_type(const pabi::TypeDesc& t, int depth = 0) {
  if (depth > 32) return false;
  const bool dtype_ok = std::string(dtype_name(t.dtype)) != "?";  // a Dtype this bridge knows
  auto children = [&](int32_t count) {
    if (t.num_elems != count || (count > 0 && !t.elems)) return false;
    for (int32_t k = 0; k < count; ++k)
      if (t.elems[k].kind == pabi::Kind::Void || !valid_type(t.elems[k], depth + 1)) return false;
    return true;
  };
  switch (t.kind) {
    case pabi::Kind::Void: return false;
    case pabi::Kind::Scalar: return dtype_ok;
    case pabi::Kind::Array: return dtype_ok && t.rank >= 1 && t.rank <= pydd::kMaxRank;
    case pabi::Kind::Sparse: return dtype_ok;
    case pabi::Kind::List: return children(1);
    case pabi::Kind::Dict: return children(2);
    case pabi::Kind::Tuple: return t.num_elems >= 0 && children(t.num_elems);
  }
  return false;
}

void check_type(const pabi::TypeDesc& t, bool is_result, const std::string& where) {
  if (!(is_result && t.kind == pabi::Kind::Void) && !valid_type(t))
    throw std::runtime_error("invalid type in the module table for " + where);
}

bool contains_kind(const pabi::TypeDesc& t, pabi::Kind kind) {
  if (t.kind == kind) return true;
  for (int32_t k = 0; k < t.num_elems && t.kind != pabi::Kind::Scalar; ++k)
    if (contains_kind(t.elems[k], kind)) return true;
  return false;
}

}  // namespace

// The thread count of every kernel in the process (pydd.set_num_threads,
// through ctypes): the same pydd::Threads object the kernels read.
extern "C" __attribute__((visibility("default"))) void pydd_set_num_threads(int n) { pydd::set_num_threads(n); }
extern "C" __attribute__((visibility("default"))) int pydd_get_num_threads() { return pydd::get_num_threads(); }

extern "C" __attribute__((visibility("default"))) PyObject* pydd_make_module(const pabi::ModuleDesc* desc) {
  install_sigint_handler();
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
    bool needs_numpy = false, needs_scipy = false;
    for (int32_t i = 0; i < desc->num_functions; ++i) {
      const pabi::FunctionDesc& f = desc->functions[i];
      if (!f.name || !f.thunk || f.num_params < 0 || (f.num_params > 0 && !f.params))
        throw std::runtime_error(std::string("invalid function entry in the module table of ") + desc->name);
      check_type(f.result, true, f.name);
      needs_scipy |= contains_kind(f.result, pabi::Kind::Sparse);
      needs_numpy |= contains_kind(f.result, pabi::Kind::Array);
      for (int32_t j = 0; j < f.num_params; ++j) {
        if (!f.params[j].name) throw std::runtime_error(std::string("unnamed parameter in ") + f.name);
        check_type(f.params[j].type, false, f.name);
        needs_scipy |= contains_kind(f.params[j].type, pabi::Kind::Sparse);
        needs_numpy |= contains_kind(f.params[j].type, pabi::Kind::Array);
      }
    }
    if (needs_numpy || needs_scipy) {
      // Import NumPy now, under the import lock: pybind11's lazy first use
      // from two threads at once could deadlock on its static initializer.
      py::detail::npy_api::get();
      numpy_scalar_types();
    }
    // Likewise SciPy, which a module with a SparseMat in a signature needs.
    if (needs_scipy) scipy_sparse();

    auto* table = new ModuleTable();
    table->functions = new FunctionInfo*[static_cast<size_t>(desc->num_functions > 0 ? desc->num_functions : 1)]();
    py::module_ m = py::module_::create_extension_module(desc->name, nullptr, &table->def);
    py::str module_name(desc->name);
    std::map<std::string, FunctionInfo*> entries;
    for (int32_t i = 0; i < desc->num_functions; ++i) {
      const pabi::FunctionDesc& f = desc->functions[i];
      auto* info = new FunctionInfo();
      table->functions[i] = info;
      // A later instance of a rank-generic function joins the first, which
      // alone becomes the Python function.
      FunctionInfo*& first = entries[f.name];
      info->desc = &f;
      info->name = f.name;
      for (int32_t j = 0; j < f.num_params; ++j) {
        PyObject* s = PyUnicode_InternFromString(f.params[j].name);
        if (!s) throw py::error_already_set();
        info->names.push_back(py::reinterpret_steal<py::object>(s));
        info->defaults.push_back(default_object(f.params[j].default_value));
        const pabi::TypeDesc& t = f.params[j].type;
        info->has_arrays |= t.kind == pabi::Kind::Array;
        info->offsets.push_back(info->arg_bytes);
        info->holds.push_back(holds_resources(t));
        info->arg_bytes += pabi::align8(raw_size(t));
      }
      info->result_bytes = raw_size(f.result);
      info->result_holds = holds_resources(f.result);
      if (first) {
        if (first->desc->num_params != f.num_params)
          throw std::runtime_error(std::string("instances of ") + f.name + " differ in their parameters");
        if (first->instances.empty()) first->instances.push_back(first);
        first->instances.push_back(info);
        continue;
      }
      first = info;
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
