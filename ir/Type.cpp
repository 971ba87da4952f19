#include "ir/Type.h"

namespace pydd {

const char* scalarName(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int32: return "int32";
    case ScalarKind::Int64: return "int64";
    case ScalarKind::Float32: return "float32";
    case ScalarKind::Float64: return "float64";
    case ScalarKind::Complex64: return "complex64";
    case ScalarKind::Complex128: return "complex128";
  }
  return "?";
}

bool parseScalarName(const std::string& name, ScalarKind& out) {
  // `boolean` is the original Intrepydd's spelling of bool (`zeros(n, boolean())`).
  if (name == "bool" || name == "boolean") out = ScalarKind::Bool;
  else if (name == "int32") out = ScalarKind::Int32;
  else if (name == "int64" || name == "int") out = ScalarKind::Int64;
  else if (name == "float32") out = ScalarKind::Float32;
  else if (name == "float64" || name == "float" || name == "double") out = ScalarKind::Float64;
  else if (name == "complex64") out = ScalarKind::Complex64;
  else if (name == "complex128" || name == "complex") out = ScalarKind::Complex128;
  else return false;
  return true;
}

bool isIntegerKind(ScalarKind s) { return s == ScalarKind::Int32 || s == ScalarKind::Int64; }
bool isFloatKind(ScalarKind s) { return s == ScalarKind::Float32 || s == ScalarKind::Float64; }
bool isComplexKind(ScalarKind s) { return s == ScalarKind::Complex64 || s == ScalarKind::Complex128; }

ScalarKind complexPartKind(ScalarKind s) {
  if (s == ScalarKind::Complex64) return ScalarKind::Float32;
  if (s == ScalarKind::Complex128) return ScalarKind::Float64;
  return s;
}

ScalarKind complexKindOf(ScalarKind s) {
  return s == ScalarKind::Float32 || s == ScalarKind::Complex64 ? ScalarKind::Complex64 : ScalarKind::Complex128;
}

namespace {
/// NumPy's kind order: bool < integer < float < complex.
int category(ScalarKind k) {
  return k == ScalarKind::Bool ? 0 : isIntegerKind(k) ? 1 : isFloatKind(k) ? 2 : 3;
}
}  // namespace

ScalarKind promote(ScalarKind a, ScalarKind b) {
  if (a == b) return a;
  if (a == ScalarKind::Bool) return b;
  if (b == ScalarKind::Bool) return a;
  // A complex result has the parts the real promotion of the parts
  // would give: complex64 with what float32 holds, else complex128.
  if (isComplexKind(a) || isComplexKind(b)) return complexKindOf(promote(complexPartKind(a), complexPartKind(b)));
  bool fa = isFloatKind(a), fb = isFloatKind(b);
  if (fa && fb) return ScalarKind::Float64;
  if (!fa && !fb) return ScalarKind::Int64;
  // One float, one integer: float32 only absorbs integers narrower than
  // 32 bits, and pydd has none, so the result is float64 (as in NumPy).
  return ScalarKind::Float64;
}

ScalarKind commonKind(ScalarKind l, bool lweak, ScalarKind r, bool rweak) {
  if (lweak == rweak) return promote(l, r);
  ScalarKind weak = lweak ? l : r, strong = lweak ? r : l;
  if (category(weak) <= category(strong)) return strong;
  // A complex literal keeps a float32 operand's precision (float32 * 1j
  // is complex64 under NEP 50); otherwise the weak kind's default.
  if (category(weak) == 3) return complexKindOf(strong);
  return category(weak) == 2 ? ScalarKind::Float64 : ScalarKind::Int64;
}

bool canAssignImplicitly(ScalarKind from, ScalarKind to) { return category(from) <= category(to); }

std::string Type::str() const {
  switch (K) {
    case Kind::Unknown: return "<unknown>";
    case Kind::Void: return "None";
    case Kind::String: return "str";
    case Kind::Scalar: return scalarName(Elem);
    case Kind::Array:
      return std::string("Array(") + scalarName(Elem) + (Rank ? ", " + std::to_string(Rank) : "") + ")";
    case Kind::Sparse: return std::string("SparseMat(") + scalarName(Elem) + ")";
    case Kind::List:
    case Kind::Dict:
    case Kind::Heap: {
      std::string s = K == Kind::List ? "List(" : K == Kind::Dict ? "Dict(" : "Heap(";
      for (size_t i = 0; i < Elems.size(); ++i) s += (i ? ", " : "") + Elems[i].str();
      return s + ")";
    }
    case Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < Elems.size(); ++i) s += (i ? ", " : "") + Elems[i].str();
      return s + (Elems.size() == 1 ? ",)" : ")");
    }
  }
  return "?";
}

}  // namespace pydd
