// pyddc: compiles an Intrepydd (.pydd) file to a Python extension module or
// a C++ library. This file only wires the stages together.

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "codegen/BuildCache.h"
#include "codegen/CppEmitter.h"
#include "codegen/CudaDriver.h"
#include "codegen/CudaEmitter.h"
#include "codegen/HostEmitters.h"
#include "codegen/Toolchain.h"
#include "frontend/Diagnostics.h"
#include "frontend/Gradient.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/Printer.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/ADT/Statistic.h"
#include "opt/DeviceLoops.h"
#include "opt/PassManager.h"
#include "opt/Privatization.h"
#include "pydd_config/Config.h"
#include "stdlib/Catalog.h"

using namespace llvm;

namespace {

enum class Host { Python, Cpp };
enum class Emit { Module, IR, Cpp, Cuda };
enum class Target { Cpu, Cuda, CudaSim };

cl::OptionCategory Category("pyddc options");

cl::opt<std::string> Input(cl::Positional, cl::desc("<kernel.pydd>"), cl::cat(Category));
cl::opt<std::string> OutDir("o", cl::desc("Output directory (default: the current directory)"), cl::value_desc("dir"),
                            cl::init("."), cl::cat(Category));
cl::opt<unsigned> OptLevel("O", cl::desc("Optimization level 0-3 (default 3)"), cl::Prefix, cl::init(3),
                           cl::cat(Category));
cl::opt<Host> HostKind("host", cl::desc("What the kernel is built for"), cl::init(Host::Python),
                       cl::values(clEnumValN(Host::Python, "python", "a Python extension module (default)"),
                                  clEnumValN(Host::Cpp, "cpp", "lib<name>.a, lib<name>.so and <name>.h")),
                       cl::cat(Category));
cl::opt<Emit> EmitKind("emit", cl::desc("Print an intermediate form instead of building"), cl::init(Emit::Module),
                       cl::values(clEnumValN(Emit::IR, "ir", "the typed IR, as pydd source"),
                                  clEnumValN(Emit::Cpp, "cpp", "the generated C++"),
                                  clEnumValN(Emit::Cuda, "cuda", "the generated CUDA (--target=cuda)")),
                       cl::cat(Category));
// CUDA (issue 46; docs/cuda.md): which loops become kernels is decided by
// opt/DeviceLoops.h.
cl::opt<Target> TargetKind("target", cl::desc("Where parallel loops run"), cl::init(Target::Cpu),
                           cl::values(clEnumValN(Target::Cpu, "cpu", "C++/OpenMP (default)"),
                                      clEnumValN(Target::Cuda, "cuda", "CUDA kernels, built with nvcc"),
                                      clEnumValN(Target::CudaSim, "cuda-sim",
                                                 "the same CUDA source on a CPU emulation, built with g++")),
                           cl::cat(Category));
cl::list<std::string> Remarks("remarks", cl::desc("Say what each loop became and why (cuda)"), cl::value_desc("kind"),
                              cl::CommaSeparated, cl::cat(Category));
cl::opt<std::string> Nvcc("nvcc", cl::desc("The CUDA compiler (default: nvcc on PATH, then /usr/local/cuda/bin/nvcc)"),
                          cl::cat(Category));
cl::list<std::string> DumpAfter("dump-after", cl::desc("Print the IR after this pass (or 'sema')"),
                                cl::value_desc("pass"), cl::CommaSeparated, cl::cat(Category));
cl::list<std::string> DisablePass("disable-pass", cl::desc("Do not run this pass"), cl::value_desc("pass"),
                                  cl::CommaSeparated, cl::cat(Category));
cl::opt<bool> TimePasses("time-passes", cl::desc("Report the time each pass takes"), cl::cat(Category));
cl::opt<bool> VerifyEach("verify-each", cl::desc("Check the IR after sema and after every pass"), cl::cat(Category));
cl::opt<bool> BoundsCheck("bounds-check", cl::desc("Check element indices (IndexError when out of range)"),
                          cl::cat(Category));
cl::opt<bool> InterruptChecks("interrupt-checks",
                              cl::desc("Let Ctrl-C interrupt kernels (checks at outer-loop back edges; default on)"),
                              cl::init(true), cl::Hidden, cl::cat(Category));
cl::opt<bool> ParallelFused("parallel-fused",
                            cl::desc("Run large fused element-wise loops on all threads (default on)"),
                            cl::init(true), cl::cat(Category));
cl::opt<bool> Werror("Werror", cl::desc("Make warnings (a pfor that runs sequentially...) errors"), cl::cat(Category));
cl::opt<bool> Verbose("v", cl::desc("Show the C++ compiler commands and cache use"), cl::cat(Category));
cl::opt<unsigned> Jobs("j",
                       cl::desc("C++ compiler processes for one module (default: the cores, at most 4; "
                                "a module too small to split gets one)"),
                       cl::Prefix, cl::init(0), cl::cat(Category));
cl::opt<bool> NoCache("no-cache", cl::desc("Build even when the compile cache holds this build, and do not store it"),
                      cl::cat(Category));
cl::opt<bool> InCache("in-cache",
                      cl::desc("Leave the result in the compile cache and print its directory instead of writing to -o"),
                      cl::cat(Category));
cl::opt<std::string> Cxx("cxx", cl::desc("C++ compiler for kernels"), cl::init(PYDD_KERNEL_CXX), cl::cat(Category));
cl::opt<bool> PrintCxxFlags("cxxflags", cl::desc("Print the compile flags a C++ host needs, then exit"),
                            cl::cat(Category));
cl::opt<bool> PrintLdFlags("ldflags", cl::desc("Print the link flags a C++ host needs, then exit"), cl::cat(Category));
cl::list<std::string> Grad("grad", cl::desc("Add f's derivative with respect to these arguments (default 0) as f__grad0"),
                           cl::value_desc("f[:n,...]"), cl::cat(Category));
cl::list<std::string> ValueAndGrad("value-and-grad", cl::desc("Add f's value and derivative as f__value_and_grad0"),
                                   cl::value_desc("f[:n,...]"), cl::cat(Category));
cl::opt<bool> ListLibrary("list-library",
                          cl::desc("Print the library's functions with their parameters and NumPy equivalents, then exit"),
                          cl::cat(Category));

/// One line per catalog function: `name(a, axis=None, keepdims=...)  numpy.sum`.
/// A parameter with a default shows it (None for NumPy's every axis), an
/// optional one without a default shows `...`, a variadic tail `*args`,
/// and `/` ends the parameters that take no keyword.
void listLibrary(raw_ostream& os) {
  for (const pydd::LibraryFunction& f : pydd::libraryFunctions()) {
    os << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      StringRef p = f.params[i];
      os << (i ? ", " : "") << (p == "*" ? "*args" : p);
      if (i < f.required || p == "*") continue;
      StringRef value = "...";
      for (auto& [param, text] : f.defaults)
        if (p == param) value = StringRef(text) == "all_axes()" ? "None" : text;
      os << "=" << value;
    }
    if (f.positionalOnly) os << ", /";
    os << ")  " << f.numpy << "\n";
  }
}

bool isIdentifier(StringRef s) {
  if (s.empty() || !(isAlpha(s[0]) || s[0] == '_')) return false;
  return llvm::all_of(s, [](char c) { return isAlnum(c) || c == '_'; });
}

int fail(const Twine& message) {
  WithColor::error(errs(), "pyddc") << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  InitLLVM init(argc, argv);
  if (auto* stats = cl::getRegisteredOptions().lookup("stats")) {
    stats->setDescription("Report what each pass did");
    stats->addCategory(Category);
  }
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter([](raw_ostream& os) { os << "pyddc " PYDD_VERSION "\n"; });
  // PYDDC_OPTIONS adds options to every run (the test suite sets --verify-each).
  cl::ParseCommandLineOptions(argc, argv, "pyddc: the Intrepydd ahead-of-time compiler\n", nullptr, "PYDDC_OPTIONS");

  if (PrintCxxFlags || PrintLdFlags) {
    if (PrintCxxFlags) outs() << pydd::hostCxxFlags() << "\n";
    if (PrintLdFlags) outs() << pydd::hostLdFlags() << "\n";
    return 0;
  }
  if (ListLibrary) {
    listLibrary(outs());
    return 0;
  }
  if (Input.empty()) return fail("no input file (usage: pyddc kernel.pydd [-o dir])");
  if (OptLevel > 3) return fail("optimization level must be 0 to 3");

  auto buffer = MemoryBuffer::getFile(Input, /*IsText=*/true);
  if (!buffer) return fail("cannot read '" + Input + "': " + buffer.getError().message());
  std::string module = sys::path::stem(Input).str();
  if (!isIdentifier(module))
    return fail("'" + module + "' is not a valid module name: the file name must be a Python identifier");

  pydd::Diagnostics diag(Input, std::move(*buffer));
  diag.setWarningsAreErrors(Werror);
  auto m = pydd::parseModule(diag, module);
  std::vector<pydd::GradRequest> gradients;
  for (auto* list : {&Grad, &ValueAndGrad})
    for (const std::string& g : *list) {
      gradients.emplace_back();
      if (!pydd::parseGradRequest(g, list == &ValueAndGrad, gradients.back()))
        return fail("--grad expects f or f:0 or f:0,2, got '" + g + "'");
    }
  if (m && !pydd::addGradients(*m, diag, gradients)) return 1;
  if (!m || !pydd::analyzeModule(*m, diag)) return 1;

  pydd::PassOptions passes;
  passes.optLevel = OptLevel;
  passes.disabled = DisablePass;
  passes.dumpAfter = DumpAfter;
  passes.timePasses = TimePasses;
  passes.verifyEach = VerifyEach;
  // --stats is LLVM Support's own option (it registers it); pyddc's passes
  // keep their own counters.
  passes.printStats = llvm::AreStatisticsEnabled();
  passes.boundsCheck = BoundsCheck;
  if (!pydd::runPasses(*m, passes, outs(), errs())) return 1;

  // How pfor loops and tasks run in parallel, on the optimized IR (the code
  // that is emitted); its warnings and errors are the user's.
  pydd::ParallelPlan parallel = pydd::planParallelism(*m, BoundsCheck);
  // The instances of a rank-generic function share their source: each
  // finding is shown once.
  std::set<std::tuple<uint32_t, uint32_t, std::string>> shown;
  for (auto& finding : parallel.findings) {
    if (!shown.insert({finding.loc.line, finding.loc.col, finding.message}).second) continue;
    if (finding.error) diag.error(finding.loc, finding.message);
    else diag.warning(finding.loc, finding.message);
  }
  if (diag.errorCount()) return 1;

  if (int rc = pydd::cudaHook(*m, parallel, Input, Remarks, TargetKind != Target::Cpu || EmitKind == Emit::Cuda,
                               TargetKind == Target::Cuda, Nvcc, BoundsCheck, errs()))
    return rc;

  // CUDA: the loops DeviceLoops classes as kernels go to the .cu the CUDA
  // emitter prints while the host C++ is emitted; the host calls them.
  const bool cuda = TargetKind != Target::Cpu || EmitKind == Emit::Cuda;
  pydd::DevicePlan devicePlan;
  std::unique_ptr<pydd::CudaEmitter> cudaEmitter;
  if (cuda) {
    devicePlan = pydd::planDeviceLoops(*m, parallel, BoundsCheck, &pydd::cudaDeviceSupport(BoundsCheck));
    cudaEmitter = std::make_unique<pydd::CudaEmitter>(*m, devicePlan, parallel, BoundsCheck);
  }

  pydd::CppOptions cpp;
  cpp.device = cudaEmitter.get();
  cpp.parallel = &parallel;
  cpp.boundsCheck = BoundsCheck;
  cpp.interruptChecks = InterruptChecks;
  cpp.parallelFused = ParallelFused;
  // --emit=cpp prints one translation unit; a build compiles the module
  // in parts at the same time.
  unsigned jobs = Jobs ? Jobs : std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> sources = pydd::emitKernelCppParts(*m, cpp, EmitKind == Emit::Cpp ? 1 : jobs);
  if (HostKind == Host::Python) sources[0] += pydd::emitPythonGlue(*m);
  const std::string& source = sources[0];

  if (EmitKind == Emit::IR) {
    outs() << pydd::printModule(*m);
    return 0;
  }
  if (EmitKind == Emit::Cpp) {
    outs() << source;
    return 0;
  }
  if (EmitKind == Emit::Cuda) {
    outs() << cudaEmitter->deviceSource();
    return 0;
  }

  pydd::ToolchainOptions tc;
  tc.cxx = Cxx;
  tc.optLevel = OptLevel;
  tc.verbose = Verbose;
  if (cuda) tc.deviceSource = cudaEmitter->deviceSource();
  if (TargetKind == Target::Cuda) tc.nvcc = pydd::findNvcc(Nvcc);
  std::string header = HostKind == Host::Cpp ? pydd::emitCppHeader(*m) : "";
  auto build = [&](const std::string& dir) {
    return HostKind == Host::Python ? pydd::buildPythonModule(sources, module, dir, tc)
                                    : pydd::buildCppLibrary(sources, header, module, dir, tc);
  };
  if (NoCache) {
    if (InCache) return fail("--in-cache and --no-cache exclude each other");
    pydd::BuildOutput built = build(OutDir);
    return built.ok ? 0 : fail(built.error);
  }

  // The cache key: what was compiled and everything the build depends on.
  pydd::BuildKey key;
  key.add("host", HostKind == Host::Python ? "python" : "cpp");
  key.add("module", module);
  key.add("source", diag.source());
  for (auto& part : sources) key.add("cpp", part);
  key.add("header", header);
  key.add("cuda", tc.deviceSource);
  key.add("nvcc", tc.nvcc);
  key.addToolchain(tc, sys::fs::getMainExecutable(argv[0], reinterpret_cast<void*>(&fail)));
  pydd::BuildCache cache(pydd::BuildCache::defaultRoot(), pydd::BuildCache::defaultLimit(), Verbose);
  std::string entry;
  bool hit = false;
  pydd::BuildOutput built = cache.lookupOrBuild(module, key.hex(), build, entry, hit);
  if (!built.ok) return fail(built.error);
  if (Verbose) errs() << "pyddc: " << (hit ? "cache hit: " : "cached: ") << entry << "\n";
  if (InCache) {
    outs() << entry << "\n";
    return 0;
  }
  std::string error;
  if (!pydd::BuildCache::copyEntry(entry, OutDir, error)) return fail(error);
  return 0;
}
