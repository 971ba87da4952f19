// Where pyddc finds what kernels are built against: the runtime headers,
// the runtime libraries and the precompiled runtime header.
//
// A pyddc run from its build tree uses the paths CMake configured
// (pydd_config/Config.h). An installed pyddc (`cmake --install`, see
// cmake/Install.cmake) finds them next to itself, under the prefix it was
// installed to, so an installation works wherever it is put.
#pragma once

#include <string>

namespace pydd {

struct RuntimeLayout {
  std::string includeDir;  // holds pydd/runtime.h
  std::string libraryDir;  // holds libpydd_runtime.a and libpydd_python.so
  std::string pchDir;      // holds pydd/runtime.h.gch/ (may be missing)
};

/// The layout of this pyddc, worked out once.
const RuntimeLayout& runtimeLayout();

}  // namespace pydd
