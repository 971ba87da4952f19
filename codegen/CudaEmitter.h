// The CUDA emitter (--target=cuda, --target=cuda-sim, --emit=cuda; issue
// 46, docs/cuda.md). It prints each loop that opt/DeviceLoops classes as a
// kernel (DeviceLoopKind::Kernel, Reduction) into one .cu translation unit:
//   - a PYDD_GLOBAL kernel, one thread per iteration (of the collapsed
//     nest), stepping by the grid's size past kMaxBlocks blocks, its body
//     the loop's own IR printed with the device formulas of
//     pydd/cuda/kernel.h; what raises in the CPU build sets an error code
//     and the thread records its iteration (KernelErrors), the lowest one
//     re-raised after the kernel;
//   - for a reduction, each thread folds its iterations into its own
//     accumulator, then a block's accumulators meet in a fixed tree and one
//     block folds the blocks' results, on reduce_blocks(extent) blocks: the
//     order depends on the extent alone;
//   - a host launch function: copies the arrays the body reads in and those
//     it writes out (pydd::cuda::Transfers), launches, copies back the
//     reductions and the last iteration's values of lastprivate variables.
// The host C++ of the function (CppEmitter, through DeviceLoopHook) calls
// the launch function in place of the loop. The .cu includes only
// pydd/cuda/kernel.h (portable.h and the device formulas): nvcc builds it
// for the device, g++ against portable.h's CPU emulation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/CppEmitter.h"
#include "ir/IR.h"
#include "opt/DeviceLoops.h"

namespace pydd {

/// What CUDA kernels can hold: DeviceLoops asks it (--remarks=cuda prints
/// its reasons).
const DeviceSupport& cudaDeviceSupport(bool boundsCheck);

class CudaEmitter : public DeviceLoopHook {
 public:
  CudaEmitter(const Module& m, const DevicePlan& plan, const ParallelPlan& parallel, bool boundsCheck);
  ~CudaEmitter() override;

  bool hostLoop(const Function& f, const For& loop, const HostPrinter& host, std::vector<std::string>& lines) override;
  std::string hostDeclarations() const override;

  /// The .cu translation unit: every kernel and launch function printed so
  /// far (call after the host C++ is emitted).
  std::string deviceSource() const;

 private:
  struct Launch;
  const Module& M;
  const DevicePlan& Plan;
  const ParallelPlan& Parallel;
  bool BoundsCheck;
  std::map<const For*, Launch*> Launches;
  std::vector<Launch*> Order;
};

}  // namespace pydd
