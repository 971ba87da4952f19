// libFuzzer target: one .pydd text through everything pyddc does before the
// C++ compiler runs: lexing and parsing, lowering, sema, the -O3 pass
// pipeline, the IR printer and the C++ / Python-glue / header emitters.
//
// A crash, a sanitizer report, a hang (-timeout) or a diagnostic without a
// line and column (abort below) is a finding. Built with clang-14 and
// -fsanitize=fuzzer,address,undefined by CMakeLists.txt here; run.py runs it.

#include <pthread.h>

#include <cstdint>
#include <cstdlib>

#include "codegen/CppEmitter.h"
#include "codegen/HostEmitters.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "ir/Printer.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "opt/PassManager.h"

namespace {

void compile(llvm::StringRef text) {
  pydd::Diagnostics diag("fuzz.pydd", llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.pydd"));
  diag.setOutput(llvm::nulls());
  auto m = pydd::parseModule(diag, "fuzz");
  bool ok = m && pydd::analyzeModule(*m, diag);
  if (diag.unlocatedCount()) {
    llvm::errs() << "a diagnostic has no location\n";
    std::abort();
  }
  if (!ok) return;
  pydd::PassOptions passes;
  passes.optLevel = 3;
  if (!pydd::runPasses(*m, passes, llvm::nulls(), llvm::nulls())) std::abort();
  pydd::CppOptions cpp;
  std::string out = pydd::emitKernelCpp(*m, cpp) + pydd::emitPythonGlue(*m) + pydd::emitCppHeader(*m) +
                    pydd::printModule(*m);
  if (out.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  // Nesting up to pydd::kMaxNestingDepth must compile; a release build
  // needs under 1 MB of stack for it, an ASan build about 8 MB (ASan's
  // frames are several times larger), so the input runs on a thread with
  // a stack like a release build's main thread has relative to its needs.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64u << 20);
  pthread_t worker;
  auto run = [](void* t) -> void* {
    compile(*static_cast<llvm::StringRef*>(t));
    return nullptr;
  };
  if (pthread_create(&worker, &attr, run, &text) != 0) std::abort();
  pthread_join(worker, nullptr);
  pthread_attr_destroy(&attr);
  return 0;
}
