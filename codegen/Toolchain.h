// The toolchain driver: runs the C++ compiler on generated code.
#pragma once

#include <string>

namespace pydd {

struct ToolchainOptions {
  std::string cxx;       // compiler executable
  unsigned optLevel = 3; // pyddc's -O level, mapped to the C++ compiler's
  bool verbose = false;  // print each command before running it
};

struct BuildOutput {
  bool ok = false;
  std::string error;  // why it failed, for the user
};

/// Compiles `source` into `outDir/<module><EXT_SUFFIX>`, an extension
/// module linked against libpydd_python.so. The file appears atomically,
/// so a process that has the previous build loaded is not disturbed.
BuildOutput buildPythonModule(const std::string& source, const std::string& module, const std::string& outDir,
                              const ToolchainOptions& options);

/// Compiles `source` into `outDir/lib<module>.a` and `outDir/lib<module>.so`
/// and writes `header` to `outDir/<module>.h`.
BuildOutput buildCppLibrary(const std::string& source, const std::string& header, const std::string& module,
                            const std::string& outDir, const ToolchainOptions& options);

/// What a C++ host adds to its compile line / link line.
std::string hostCxxFlags();
std::string hostLdFlags();

}  // namespace pydd
