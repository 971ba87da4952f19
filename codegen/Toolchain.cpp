#include "codegen/Toolchain.h"

#include "codegen/InstallLayout.h"

#include <algorithm>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "pydd_config/Config.h"

namespace pydd {
namespace {

std::vector<std::string> commonFlags(const ToolchainOptions& o) {
  static const char* const levels[] = {PYDD_KERNEL_FLAGS_O0, PYDD_KERNEL_FLAGS_O1, PYDD_KERNEL_FLAGS_O2,
                                       PYDD_KERNEL_FLAGS_O3};
  llvm::SmallVector<llvm::StringRef, 16> parts;
  llvm::StringRef(levels[std::min(o.optLevel, 3u)]).split(parts, ' ', -1, false);
  std::vector<std::string> flags(parts.begin(), parts.end());
  // The precompiled runtime.h comes first: g++ takes it when it was built
  // with these same flags (halving the build of a small kernel) and reads
  // the header itself otherwise.
  flags.push_back("-I" + runtimeLayout().pchDir);
  flags.push_back("-I" + runtimeLayout().includeDir);
  return flags;
}

/// A scratch directory that removes itself.
class ScratchDir {
 public:
  ScratchDir() {
    if (llvm::sys::fs::createUniqueDirectory("pyddc", Path)) Path.clear();
  }
  ~ScratchDir() {
    if (!Path.empty()) llvm::sys::fs::remove_directories(Path);
  }
  bool ok() const { return !Path.empty(); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(Path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

 private:
  llvm::SmallString<256> Path;
};

bool writeFile(const std::string& path, llvm::StringRef text, std::string& error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << text;
  return true;
}

/// Runs a command; on failure explains it, pointing at the saved output.
bool run(const std::vector<std::string>& argv, const ScratchDir& scratch, bool verbose, std::string& error) {
  if (verbose) {
    for (size_t i = 0; i < argv.size(); ++i) llvm::errs() << (i ? " " : "") << argv[i];
    llvm::errs() << "\n";
  }
  std::string log = scratch.file("compiler.log");
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(log), llvm::StringRef(log)};
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(argv[0], args, llvm::None, redirects, 0, 0, &message);
  if (rc == 0) return true;
  auto output = llvm::MemoryBuffer::getFile(log);
  // Generated code that does not compile is a pyddc bug, never the user's.
  error = "internal error: the C++ compiler failed on generated code (" +
          (message.empty() ? "exit status " + std::to_string(rc) : message) + "); please report this";
  if (output && (*output)->getBufferSize()) error += "\n" + (*output)->getBuffer().take_front(4000).str();
  return false;
}

/// Moves a finished build into place in one step.
bool publish(const std::string& from, const std::string& dir, const std::string& name, std::string& error) {
  llvm::SmallString<256> dest(dir);
  llvm::sys::path::append(dest, name);
  llvm::SmallString<256> staging(dir);
  llvm::sys::path::append(staging, "." + name + ".tmp");
  // The scratch directory may be on another file system: copy next to the
  // destination first, then rename over it.
  if (auto ec = llvm::sys::fs::copy_file(from, staging)) {
    error = "cannot write " + std::string(staging) + ": " + ec.message();
    return false;
  }
  if (auto ec = llvm::sys::fs::rename(staging, dest)) {
    error = "cannot write " + std::string(dest) + ": " + ec.message();
    return false;
  }
  return true;
}

bool ensureDir(const std::string& dir, std::string& error) {
  if (auto ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  return true;
}

std::string findProgram(llvm::StringRef name) {
  auto p = llvm::sys::findProgramByName(name);
  return p ? *p : name.str();
}

}  // namespace

BuildOutput buildPythonModule(const std::string& source, const std::string& module, const std::string& outDir,
                              const ToolchainOptions& options) {
  BuildOutput out;
  ScratchDir scratch;
  if (!scratch.ok()) return out.error = "cannot create a temporary directory", out;
  if (!ensureDir(outDir, out.error)) return out;
  std::string src = scratch.file(module + ".cpp");
  std::string so = scratch.file(module + PYDD_EXT_SUFFIX);
  if (!writeFile(src, source, out.error)) return out;
  std::vector<std::string> argv = {options.cxx};
  for (auto& f : commonFlags(options)) argv.push_back(f);
  for (const char* f : {"-shared", "-fvisibility=hidden", "-o"}) argv.push_back(f);
  argv.push_back(so);
  argv.push_back(src);
  argv.push_back(runtimeLayout().libraryDir + "/libpydd_runtime.a");
  argv.push_back("-L" + runtimeLayout().libraryDir);
  argv.push_back("-Wl,-rpath," + runtimeLayout().libraryDir);
  argv.push_back("-lpydd_python");
  // Dense products and factorizations call OpenBLAS; a kernel without them
  // does not keep the dependency.
  for (const char* f : {"-Wl,--as-needed", "-lopenblas"}) argv.push_back(f);
  if (!run(argv, scratch, options.verbose, out.error)) return out;
  out.ok = publish(so, outDir, module + PYDD_EXT_SUFFIX, out.error);
  return out;
}

BuildOutput buildCppLibrary(const std::string& source, const std::string& header, const std::string& module,
                            const std::string& outDir, const ToolchainOptions& options) {
  BuildOutput out;
  ScratchDir scratch;
  if (!scratch.ok()) return out.error = "cannot create a temporary directory", out;
  if (!ensureDir(outDir, out.error)) return out;
  std::string src = scratch.file(module + ".cpp");
  std::string obj = scratch.file(module + ".o");
  std::string archive = scratch.file("lib" + module + ".a");
  std::string shared = scratch.file("lib" + module + ".so");
  std::string hdr = scratch.file(module + ".h");
  if (!writeFile(src, source, out.error) || !writeFile(hdr, header, out.error)) return out;
  std::vector<std::string> compile = {options.cxx};
  for (auto& f : commonFlags(options)) compile.push_back(f);
  for (std::string f : {std::string("-c"), src, std::string("-o"), obj}) compile.push_back(f);
  if (!run(compile, scratch, options.verbose, out.error)) return out;
  // The archive carries the compiled part of the runtime too, so that a
  // host links just lib<module>.a (a second kernel archive's copy is never
  // pulled in: its symbols are already defined).
  std::string ar = findProgram("ar");
  std::string runtimeObjects = scratch.file("runtime");
  if (auto ec = llvm::sys::fs::create_directories(runtimeObjects)) return out.error = ec.message(), out;
  if (!run({ar, "x", "--output=" + runtimeObjects, runtimeLayout().libraryDir + "/libpydd_runtime.a"}, scratch, options.verbose, out.error))
    return out;
  std::vector<std::string> archiveCmd = {ar, "rcs", archive, obj};
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(runtimeObjects, ec), end; it != end && !ec; it.increment(ec))
    archiveCmd.push_back(it->path());
  if (!run(archiveCmd, scratch, options.verbose, out.error)) return out;
  if (!run({options.cxx, "-shared", "-o", shared, obj, runtimeLayout().libraryDir + "/libpydd_runtime.a", "-Wl,--as-needed",
            "-lopenblas"},
           scratch, options.verbose, out.error))
    return out;
  out.ok = publish(archive, outDir, "lib" + module + ".a", out.error) &&
           publish(shared, outDir, "lib" + module + ".so", out.error) &&
           publish(hdr, outDir, module + ".h", out.error);
  return out;
}

std::string hostCxxFlags() { return "-std=c++17 -fwrapv -ffp-contract=off -I" + runtimeLayout().includeDir; }
std::string hostLdFlags() { return "-lopenblas -lm"; }

}  // namespace pydd
