// Host glue around the kernel C++ (codegen/CppEmitter.h).
#pragma once

#include <string>

#include "ir/IR.h"

namespace pydd {

/// host=python: one thunk per function and the table that
/// libpydd_python.so turns into a Python module (see runtime/.../abi.h),
/// plus `PyInit_<module>`. No Python or pybind11 header is included, which
/// keeps a kernel's build well under a second.
std::string emitPythonGlue(const Module& m);

/// host=cpp: `<module>.h`, declaring the functions in namespace <module>.
std::string emitCppHeader(const Module& m);

}  // namespace pydd
