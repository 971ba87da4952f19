// Types of the pydd IR.
//
// A Type is a small value: a scalar kind, an array (element kind and rank),
// a tuple of types, a container (List(T), Dict(K, V), Heap(T) or the
// key-value Heap(K, V)), a string literal (only as a print argument), void,
// or unknown (not inferred yet). Equality is structural.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pydd {

// New kinds are appended, as in the runtime's Dtype (pydd/abi.h).
enum class ScalarKind : uint8_t {
  Bool, Int32, Int64, Float32, Float64, Complex64, Complex128, Int8, Int16, UInt8, UInt16, UInt32, UInt64
};

class Type {
 public:
  enum class Kind : uint8_t { Unknown, Void, Scalar, Array, Tuple, String, List, Dict, Heap, Sparse };

  Type() = default;
  static Type unknown() { return Type(); }
  static Type voidTy() { return Type(Kind::Void); }
  static Type string() { return Type(Kind::String); }
  static Type scalar(ScalarKind s) {
    Type t(Kind::Scalar);
    t.Elem = s;
    return t;
  }
  static Type boolTy() { return scalar(ScalarKind::Bool); }
  static Type int32() { return scalar(ScalarKind::Int32); }
  static Type int64() { return scalar(ScalarKind::Int64); }
  static Type float32() { return scalar(ScalarKind::Float32); }
  static Type float64() { return scalar(ScalarKind::Float64); }
  static Type complex128() { return scalar(ScalarKind::Complex128); }
  /// `rank` 0 is `Array(T)` written without a rank in a signature: any
  /// rank, until sema instantiates the function for the ranks its body
  /// supports (no type after sema has rank 0).
  static Type array(ScalarKind elem, int rank) {
    Type t(Kind::Array);
    t.Elem = elem;
    t.Rank = rank;
    return t;
  }
  /// A CSR sparse matrix of `elem` values (2-D).
  static Type sparse(ScalarKind elem) {
    Type t(Kind::Sparse);
    t.Elem = elem;
    t.Rank = 2;
    return t;
  }
  static Type tuple(std::vector<Type> elems) {
    Type t(Kind::Tuple);
    t.Elems = std::move(elems);
    return t;
  }
  static Type list(Type elem) {
    Type t(Kind::List);
    t.Elems = {std::move(elem)};
    return t;
  }
  static Type dict(Type key, Type value) {
    Type t(Kind::Dict);
    t.Elems = {std::move(key), std::move(value)};
    return t;
  }
  /// A min-heap of keys, or with `value` a min-heap of (key, value) pairs.
  static Type heap(Type key) { return heap(std::move(key), unknown()); }
  static Type heap(Type key, Type value) {
    Type t(Kind::Heap);
    t.Elems = {std::move(key)};
    if (!value.isUnknown()) t.Elems.push_back(std::move(value));
    return t;
  }

  Kind kind() const { return K; }
  bool isUnknown() const { return K == Kind::Unknown; }
  bool isVoid() const { return K == Kind::Void; }
  bool isScalar() const { return K == Kind::Scalar; }
  bool isArray() const { return K == Kind::Array; }
  bool isTuple() const { return K == Kind::Tuple; }
  bool isString() const { return K == Kind::String; }
  bool isList() const { return K == Kind::List; }
  bool isSparse() const { return K == Kind::Sparse; }
  bool isDict() const { return K == Kind::Dict; }
  bool isHeap() const { return K == Kind::Heap; }
  bool isKeyValueHeap() const { return K == Kind::Heap && Elems.size() == 2; }
  /// No part is Unknown (`[]` is a List of Unknown until annotated).
  bool isComplete() const {
    if (isUnknown()) return false;
    for (auto& e : Elems)
      if (!e.isComplete()) return false;
    return true;
  }
  /// A value that lives in memory shared by every copy (arrays and
  /// containers), as Python objects are shared by reference.
  bool isReference() const { return isArray() || isList() || isDict() || isHeap() || isSparse(); }
  bool isBool() const { return isScalar() && Elem == ScalarKind::Bool; }
  bool isInteger() const;
  bool isFloat() const;
  bool isComplex() const;

  /// The scalar kind of a scalar, or the element kind of an array or a
  /// sparse matrix.
  ScalarKind elem() const { return Elem; }
  int rank() const { return Rank; }
  /// `Array(T)` of a signature, before sema gives it a rank.
  bool isAnyRankArray() const { return K == Kind::Array && Rank == 0; }
  /// Tuple members; List: {element}; Dict: {key, value}; Heap: {key} or
  /// {key, value}.
  const std::vector<Type>& elems() const { return Elems; }

  bool operator==(const Type& o) const {
    return K == o.K && (K != Kind::Scalar && K != Kind::Array && K != Kind::Sparse ? true : Elem == o.Elem) &&
           Rank == o.Rank && Elems == o.Elems;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }

  /// pydd spelling: `float64`, `Array(int32, 2)`, `(int64, float64)`,
  /// `List(int64)`, `Dict(int64, float64)`, `Heap(float64, int64)`.
  std::string str() const;

 private:
  explicit Type(Kind k) : K(k) {}
  Kind K = Kind::Unknown;
  ScalarKind Elem = ScalarKind::Bool;
  int Rank = 0;
  std::vector<Type> Elems;
};

const char* scalarName(ScalarKind s);
/// Parses `int32`, `float`, `double`... (the pydd names and aliases).
bool parseScalarName(const std::string& name, ScalarKind& out);
/// Signed or unsigned integers of any width (not bool).
bool isIntegerKind(ScalarKind s);
bool isUnsignedKind(ScalarKind s);
bool isFloatKind(ScalarKind s);
bool isComplexKind(ScalarKind s);
/// The kind of a complex kind's parts (complex64 -> float32); other kinds
/// are returned unchanged.
ScalarKind complexPartKind(ScalarKind s);
/// The complex kind whose parts are `s` (float32 -> complex64, anything
/// else -> complex128), as NumPy's result of a complex operation.
ScalarKind complexKindOf(ScalarKind s);

/// The width in bits of a number kind (bool: 8, as NumPy stores it;
/// complex: both parts).
int bitWidth(ScalarKind s);
/// The signed or unsigned integer kind of `bits` bits.
ScalarKind integerKind(int bits, bool isSigned);
/// Whether the integer `v` is a value of integer kind `k`.
bool integerFits(int64_t v, ScalarKind k);

/// NumPy's promotion of two scalar kinds (numpy.promote_types), with bool
/// below every number: the wider of one signedness (int8+int32 -> int32),
/// the smallest signed kind holding both for mixed signedness (int8+uint8 ->
/// int16, int64+uint64 -> float64), and float32 absorbing integers of at
/// most 16 bits (int16+float32 -> float32, int32+float32 -> float64). A
/// complex result has the parts the real promotion of the parts gives:
/// complex64+float32 (or int16) -> complex64, complex64+float64 (or int32)
/// -> complex128.
ScalarKind promote(ScalarKind a, ScalarKind b);

/// The common kind of two operands, NEP 50 style: a weak operand (a
/// literal written in the source) takes the other operand's kind when that
/// kind can hold it; two operands of equal strength promote.
ScalarKind commonKind(ScalarKind l, bool lweak, ScalarKind r, bool rweak);

/// Whether a value of `from` may be stored into `to` implicitly (bool ->
/// int -> float -> complex, never downward in kind). Unlike NumPy's "same_kind",
/// signed and unsigned integers count as one kind, as int64 and int32 do:
/// an assignment rebinds a name in Python, so any integer may be stored
/// into any integer variable (wrapping as NumPy's astype).
bool canAssignImplicitly(ScalarKind from, ScalarKind to);

}  // namespace pydd
