// C++ code generation for kernel functions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace pydd {

struct ParallelPlan;  // opt/Privatization.h

/// What the host C++ emitter offers a DeviceLoopHook: an expression or a
/// variable of the function being emitted as host C++, and a fresh name.
struct HostPrinter {
  std::function<std::string(const Expr&)> expr;
  std::function<std::string(const std::string&)> var;
  std::function<std::string(const std::string&)> temp;
};

/// The seam for a target that runs some loops elsewhere (codegen/CudaEmitter):
/// asked for every loop, it may print the host statements that replace it
/// (a kernel launch) instead of the loop.
class DeviceLoopHook {
 public:
  virtual ~DeviceLoopHook() = default;
  /// The statements (one per line, unindented) that replace `loop` of `f`,
  /// or false when the loop is printed as C++.
  virtual bool hostLoop(const Function& f, const For& loop, const HostPrinter& host,
                        std::vector<std::string>& lines) = 0;
  /// Declarations every host translation unit needs (in the module's namespace).
  virtual std::string hostDeclarations() const = 0;
};

struct CppOptions {
  /// Check every element index (IndexError) instead of trusting it.
  bool boundsCheck = false;
  /// Check for Ctrl-C at outer-loop back edges (pydd::Interrupt); off only
  /// to measure what the checks cost (bench/interrupt_cost.py).
  bool interruptChecks = true;
  /// How pfor loops and async tasks run in parallel (which variables are
  /// private, lastprivate, reductions, captured). Without a plan every pfor
  /// runs sequentially and every task in place.
  const ParallelPlan* parallel = nullptr;
  /// Run large fused element-wise loops (For::independent) on all threads.
  bool parallelFused = true;
  /// Loops another target runs (CUDA kernels); null: every loop is C++.
  DeviceLoopHook* device = nullptr;
};

/// The kernel functions of `m` as C++ in namespace `m.name`, with the
/// runtime includes. Host-specific glue is appended by the other emitters.
std::string emitKernelCpp(const Module& m, const CppOptions& options);

/// The same as up to `parts` translation units that the C++ compiler can
/// build at the same time: each has the includes and every declaration, and
/// the definitions are spread so that the parts' sizes are even (a short
/// function stays with a caller, which can then inline it). One part when
/// the module is too small for a split to pay. The first part is the
/// smallest; a host's glue goes there.
std::vector<std::string> emitKernelCppParts(const Module& m, const CppOptions& options, unsigned parts);

/// The C++ declaration of `f` as it appears in the generated code and in
/// the host=cpp header (without a trailing ';'); `withDefaults` adds the
/// parameters' default values, for a first declaration.
std::string cxxDeclaration(const Module& m, const Function& f, bool withDefaults);

/// The C++ identifier for a function or module name (renamed if it is a
/// C++ keyword or a name the generated code relies on).
std::string cxxIdentifier(const std::string& name);

}  // namespace pydd
