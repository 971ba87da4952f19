// The frontend's entry point: .pydd text to untyped IR.
#pragma once

#include <memory>
#include <string>

#include "frontend/Diagnostics.h"
#include "ir/IR.h"

namespace pydd {

/// The deepest nesting accepted, in syntax-tree levels (an operator, a call,
/// a subscript, a parenthesis, a block each add one or two; an `elif` adds
/// one). Sema, the passes and the emitters recurse over expressions and
/// blocks, so this bounds their stack use; deeper input is a located error.
/// CPython has limits of the same kind (200 nested brackets, 100 levels of
/// indentation), which the lexer enforces as CPython does.
constexpr unsigned kMaxNestingDepth = 1000;

/// The deepest type nesting accepted (`List(List(...))`): the C++ types it
/// becomes must stay within the C++ compiler's template instantiation depth.
constexpr unsigned kMaxTypeNesting = 32;

/// Parses the source held by `diag` with tree-sitter-python (Intrepydd
/// keywords accepted) and lowers it to IR with a location on every node.
/// Constructs outside the pydd subset are reported as errors; returns null
/// if any error was reported.
std::unique_ptr<Module> parseModule(Diagnostics& diag, const std::string& moduleName);

/// Parses a type written in pydd syntax (`float64`, `Array(int32, 2)`),
/// as in a `# type:` comment. Returns an unknown type if it is not one.
/// With `anyRank`, `Array(T)` has rank 0 (any rank, as in a signature).
Type parseTypeText(llvm::StringRef text, bool anyRank = false);

}  // namespace pydd
