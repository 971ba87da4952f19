// Which loops of a module run as CUDA kernels (--target=cuda, cuda-sim):
// the seam between the optimizer's loop forms and the CUDA emitter. The
// decision is made here, on the optimized IR, never in an emitter;
// `--remarks=cuda` prints it.
//
// A candidate is an outermost loop (not nested in another candidate, a
// task, a function called from one, or a pfor or fused nest that stays on
// the host and may run on all threads there: its iterations would launch
// kernels at once, each copying back what it writes) of one of these forms:
//   - a `pfor` that planParallelism runs in parallel, with the pfor nests it
//     collapsed into it (one thread per point of the collapsed space); its
//     reduction clauses become a two-pass reduction: per-block trees, then
//     one block, on a grid that depends only on the extent (deterministic;
//     exact for integers in any order);
//   - a fused element-wise nest (For::independent): one thread per
//     iteration of the outer loop;
//   - a fold nest (For::foldsInto): a reduction as above;
//   - a loop over a sparse matrix's rows (rowsLoopMatrix) whose rows are
//     independent (a pfor, or For::rowsInPairs): one thread per row.
// A candidate stays on the host, with the reason, when its body
//   - mentions a list, dict or heap, or a string (containers live on the host);
//   - prints or does other I/O (the catalog's `io`);
//   - may allocate (the catalog's effects: a temporary array per iteration);
//   - calls a function of the module or a library function the catalog
//     does not mark element-wise (the device has only element formulas);
//   - holds a task, a return, or a break (the loop must run every iteration);
//   - holds what the target's emitter cannot print in a kernel
//     (DeviceSupport: a complex number, a sparse matrix, an array view...).
// Every other loop stays on the host as C++ ("sequential").
//
// The loop IR the CUDA emitter prints is the candidate's own For (its body
// unchanged); a later scheduling pass that rewrites loop forms keeps this
// seam by marking loops with the same hints (parallel, independent,
// foldsInto, rowsInPairs), or by extending classifyDeviceLoop.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "opt/Privatization.h"

namespace pydd {

enum class DeviceLoopKind {
  Host,        // stays C++ on the host (reason says why)
  Kernel,      // one thread per iteration (collapse > 1: per point of the nest)
  Reduction,   // a kernel whose iterations fold into scalars (two passes)
  Rows,        // one thread per sparse row
  Inside,      // nested in a kernel: part of its body
};

struct DeviceLoop {
  const For* loop = nullptr;
  const Function* function = nullptr;
  DeviceLoopKind kind = DeviceLoopKind::Host;
  unsigned collapse = 1;
  /// Reduction: the scalars folded, with their operator (+ * min max & | ^...),
  /// and whether the result is deterministic by a tree (floats) or atomics (integers).
  std::vector<ReductionClause> reductions;
  bool atomics = false;
  std::string reason;  // what it became and why, as --remarks=cuda prints it
};

/// What a target's emitter can print inside a kernel (codegen/CudaEmitter
/// answers for CUDA): asked for every statement and expression of a
/// candidate (its body and bounds), it says why one has no device form
/// (empty: it has one); the candidate then stays on the host with that
/// reason. The optimizer knows no target's spellings; the emitter knows no
/// loop forms.
class DeviceSupport {
 public:
  virtual ~DeviceSupport() = default;
  virtual std::string unsupported(const Stmt& s) const = 0;
  virtual std::string unsupported(const Expr& e) const = 0;
  /// Whether it prints row kernels (DeviceLoopKind::Rows).
  virtual bool rowKernels() const = 0;
};

struct DevicePlan {
  std::vector<DeviceLoop> loops;  // every For of the module, in source order
  std::map<const For*, size_t> index;
};

/// The decision for every loop of `m`, on the IR that is emitted.
/// `support`: what the emitter can print (null: everything the forms above allow).
DevicePlan planDeviceLoops(const Module& m, const ParallelPlan& parallel, bool boundsCheck,
                           const DeviceSupport* support = nullptr);

/// "kernel", "reduction kernel", "row kernel", "host", "in kernel".
const char* kindName(DeviceLoopKind k);

}  // namespace pydd
