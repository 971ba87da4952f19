// The toolchain driver: runs the C++ compiler on generated code.
#pragma once

#include <string>
#include <vector>

namespace pydd {

struct ToolchainOptions {
  std::string cxx;       // compiler executable
  unsigned optLevel = 3; // pyddc's -O level, mapped to the C++ compiler's
  bool verbose = false;  // print each command before running it
  /// CUDA targets (codegen/CudaEmitter.h): a .cu translation unit built
  /// beside the C++ and linked with it; empty for the CPU target.
  std::string deviceSource;
  /// The nvcc that builds deviceSource for the device (--target=cuda);
  /// empty: the C++ compiler builds it against portable.h's CPU emulation
  /// (--target=cuda-sim).
  std::string nvcc;
};

struct BuildOutput {
  bool ok = false;
  std::string error;  // why it failed, for the user
};

/// Compiles `sources`, the translation units of one module (compiled at
/// the same time when there are several), into
/// `outDir/<module><EXT_SUFFIX>`, an extension module linked against
/// libpydd_python.so. The file appears atomically, so a process that has
/// the previous build loaded is not disturbed.
BuildOutput buildPythonModule(const std::vector<std::string>& sources, const std::string& module,
                              const std::string& outDir, const ToolchainOptions& options);

/// Compiles `sources` into `outDir/lib<module>.a` and `outDir/lib<module>.so`
/// and writes `header` to `outDir/<module>.h`.
BuildOutput buildCppLibrary(const std::vector<std::string>& sources, const std::string& header,
                            const std::string& module, const std::string& outDir, const ToolchainOptions& options);

/// What a C++ host adds to its compile line / link line.
std::string hostCxxFlags();
std::string hostLdFlags();

}  // namespace pydd
