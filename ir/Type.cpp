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
    case ScalarKind::Int8: return "int8";
    case ScalarKind::Int16: return "int16";
    case ScalarKind::UInt8: return "uint8";
    case ScalarKind::UInt16: return "uint16";
    case ScalarKind::UInt32: return "uint32";
    case ScalarKind::UInt64: return "uint64";
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
  else if (name == "int8") out = ScalarKind::Int8;
  else if (name == "int16") out = ScalarKind::Int16;
  else if (name == "uint8") out = ScalarKind::UInt8;
  else if (name == "uint16") out = ScalarKind::UInt16;
  else if (name == "uint32") out = ScalarKind::UInt32;
  else if (name == "uint64") out = ScalarKind::UInt64;
  else return false;
  return true;
}

bool isIntegerKind(ScalarKind s) {
  // Listed rather than "not bool, not float", so that kinds added later
  // (complex) are not integers by default.
  return s == ScalarKind::Int8 || s == ScalarKind::Int16 || s == ScalarKind::Int32 || s == ScalarKind::Int64 ||
         isUnsignedKind(s);
}
bool isUnsignedKind(ScalarKind s) {
  return s == ScalarKind::UInt8 || s == ScalarKind::UInt16 || s == ScalarKind::UInt32 || s == ScalarKind::UInt64;
}
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

int bitWidth(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool:
    case ScalarKind::Int8:
    case ScalarKind::UInt8: return 8;
    case ScalarKind::Int16:
    case ScalarKind::UInt16: return 16;
    case ScalarKind::Int32:
    case ScalarKind::UInt32:
    case ScalarKind::Float32: return 32;
    case ScalarKind::Int64:
    case ScalarKind::UInt64:
    case ScalarKind::Float64:
    case ScalarKind::Complex64: return 64;
    case ScalarKind::Complex128: return 128;
  }
  return 64;
}

ScalarKind integerKind(int bits, bool isSigned) {
  switch (bits) {
    case 8: return isSigned ? ScalarKind::Int8 : ScalarKind::UInt8;
    case 16: return isSigned ? ScalarKind::Int16 : ScalarKind::UInt16;
    case 32: return isSigned ? ScalarKind::Int32 : ScalarKind::UInt32;
    default: return isSigned ? ScalarKind::Int64 : ScalarKind::UInt64;
  }
}

bool integerFits(int64_t v, ScalarKind k) {
  const int bits = bitWidth(k);
  if (isUnsignedKind(k)) return v >= 0 && (bits == 64 || v < (int64_t(1) << bits));
  if (bits == 64) return true;
  return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
}

ScalarKind promote(ScalarKind a, ScalarKind b) {
  if (a == b) return a;
  if (a == ScalarKind::Bool) return b;
  if (b == ScalarKind::Bool) return a;
  // A complex result has the parts the real promotion of the parts
  // would give: complex64 with what float32 holds, else complex128.
  if (isComplexKind(a) || isComplexKind(b)) return complexKindOf(promote(complexPartKind(a), complexPartKind(b)));
  bool fa = isFloatKind(a), fb = isFloatKind(b);
  if (fa && fb) return ScalarKind::Float64;
  if (fa || fb) {
    // float32 holds every integer of at most 16 bits exactly; wider ones
    // need float64 (NumPy's int32 + float32 is float64).
    ScalarKind f = fa ? a : b, i = fa ? b : a;
    return f == ScalarKind::Float32 && bitWidth(i) <= 16 ? ScalarKind::Float32 : ScalarKind::Float64;
  }
  const bool ua = isUnsignedKind(a), ub = isUnsignedKind(b);
  const int wa = bitWidth(a), wb = bitWidth(b);
  if (ua == ub) return wa >= wb ? a : b;
  // Mixed signedness: the smallest signed kind that holds both ranges; no
  // integer holds int64 and uint64 together, so NumPy gives float64.
  const int wu = ua ? wa : wb, ws = ua ? wb : wa;
  if (ws > wu) return ua ? b : a;
  return wu == 64 ? ScalarKind::Float64 : integerKind(2 * wu, true);
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

bool Type::isInteger() const { return isScalar() && isIntegerKind(Elem); }
bool Type::isFloat() const { return isScalar() && isFloatKind(Elem); }
bool Type::isComplex() const { return isScalar() && isComplexKind(Elem); }

// Any integer kind may be stored into any integer kind (signed and unsigned
// count as one category here); never downward in category, so complex never
// goes implicitly into a real kind.
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
