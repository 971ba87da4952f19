// The frontend's entry point: .pydd text to untyped IR.
#pragma once

#include <memory>
#include <string>

#include "frontend/Diagnostics.h"
#include "ir/IR.h"

namespace pydd {

/// Parses the source held by `diag` with tree-sitter-python (Intrepydd
/// keywords accepted) and lowers it to IR with a location on every node.
/// Constructs outside the pydd subset are reported as errors; returns null
/// if any error was reported.
std::unique_ptr<Module> parseModule(Diagnostics& diag, const std::string& moduleName);

/// Parses a type written in pydd syntax (`float64`, `Array(int32, 2)`),
/// as in a `# type:` comment. Returns an unknown type if it is not one.
Type parseTypeText(llvm::StringRef text);

}  // namespace pydd
