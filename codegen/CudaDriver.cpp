#include "codegen/CudaDriver.h"

#include <set>
#include <tuple>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "codegen/CudaEmitter.h"
#include "opt/DeviceLoops.h"

namespace pydd {

std::string findNvcc(llvm::StringRef explicitPath) {
  if (!explicitPath.empty()) {
    // findProgramByName returns a name holding a '/' unchecked.
    if (explicitPath.contains('/')) return llvm::sys::fs::can_execute(explicitPath) ? explicitPath.str() : "";
    auto found = llvm::sys::findProgramByName(explicitPath);
    return found ? *found : "";
  }
  if (auto found = llvm::sys::findProgramByName("nvcc")) return *found;
  const char* standard = "/usr/local/cuda/bin/nvcc";
  return llvm::sys::fs::can_execute(standard) ? standard : "";
}

int cudaHook(const Module& m, const ParallelPlan& parallel, llvm::StringRef input,
             const std::vector<std::string>& remarks, bool cudaRequested, bool needsNvcc, llvm::StringRef nvcc,
             bool boundsCheck, llvm::raw_ostream& err) {
  bool cudaRemarks = false;
  for (auto& r : remarks) {
    if (r == "cuda") cudaRemarks = true;
    else {
      llvm::WithColor::error(err, "pyddc") << "unknown --remarks kind '" << r << "' (known: cuda)\n";
      return 1;
    }
  }
  if (cudaRemarks) {
    DevicePlan plan = planDeviceLoops(m, parallel, boundsCheck, &cudaDeviceSupport(boundsCheck));
    // The instances of a rank-generic function share their source: each
    // remark is shown once.
    std::set<std::tuple<uint32_t, uint32_t, std::string>> shown;
    for (const DeviceLoop& d : plan.loops) {
      if (!shown.insert({d.loop->loc.line, d.loop->loc.col, d.reason}).second) continue;
      err << input << ":" << d.loop->loc.line << ":" << d.loop->loc.col << ": remark: loop over '" << d.loop->var
          << "' in '" << d.function->sourceName() << "': " << d.reason << "\n";
    }
  }
  if (!cudaRequested) return 0;
  if (needsNvcc && findNvcc(nvcc).empty()) {
    llvm::WithColor::error(err, "pyddc") << "no CUDA compiler found: install the CUDA toolkit or pass --nvcc\n";
    return 1;
  }
  return 0;
}

}  // namespace pydd
