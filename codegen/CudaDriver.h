// The --target=cuda / cuda-sim front door of pyddc (issue 46, docs/cuda.md):
// --remarks=cuda and the CUDA toolchain checks. Which loops become kernels
// is opt/DeviceLoops.h's decision; this only reports it. The kernels
// themselves are codegen/CudaEmitter.h's.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include "opt/Privatization.h"

namespace pydd {

/// nvcc: `explicitPath` when given, else nvcc on PATH, else
/// /usr/local/cuda/bin/nvcc; empty when none is found.
std::string findNvcc(llvm::StringRef explicitPath);

/// Prints `--remarks=cuda` (one remark per loop: what it became and why) and,
/// when CUDA is requested (`--target=cuda|cuda-sim`, `--emit=cuda`), checks
/// the toolchain. Returns the exit status pyddc must stop with, or 0 to go on.
int cudaHook(const Module& m, const ParallelPlan& parallel, llvm::StringRef input,
             const std::vector<std::string>& remarks, bool cudaRequested, bool needsNvcc, llvm::StringRef nvcc,
             bool boundsCheck, llvm::raw_ostream& err);

}  // namespace pydd
