// The library catalog: one entry per library function a kernel can call.
//
// Every stage reads this table instead of knowing function names: sema asks
// an entry to type a call, codegen asks it for C++, the docs and the Python
// shim name its NumPy equivalent. Adding a function means adding an entry
// here (and its runtime implementation), nothing else.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace pydd {

enum class LibraryCategory { Allocation, Query, Elementwise, Reduction, IO };

/// What a type rule may report; sema turns it into a diagnostic at `argIndex`
/// (or at the call when argIndex < 0).
struct TypeRuleError {
  int argIndex = -1;
  std::string message;
};

struct LibraryFunction {
  const char* name;
  LibraryCategory category;
  /// Parameter names, for keyword arguments; "*" marks a variadic tail.
  std::vector<const char*> params;
  /// How many leading parameters are required.
  unsigned required;
  /// The NumPy/Python equivalent, as the Python shim implements it.
  const char* numpy;
  /// Whether the function writes to memory (print does; allocation and
  /// queries do not). Used by def/use analyses.
  bool hasSideEffects;
  /// Result type from the typed arguments (null for omitted optional ones);
  /// `call` gives access to literal arguments such as a shape tuple.
  Type (*resultType)(const Call& call, TypeRuleError& error);
  /// C++ for a call, given the C++ text of each argument (empty for an
  /// omitted optional argument).
  std::string (*emitCpp)(const Call& call, llvm::ArrayRef<std::string> args);
};

/// The entry named `name`, or null.
const LibraryFunction* lookupLibraryFunction(llvm::StringRef name);

/// C++ spelling of a scalar kind: bool, int32_t, int64_t, float, double.
const char* cxxScalarType(ScalarKind s);
/// C++ spelling of a value type: scalars, `pydd::Array<double, 2>`.
std::string cxxType(const Type& t);

}  // namespace pydd
