#include "codegen/Toolchain.h"

#include "codegen/InstallLayout.h"
#include "codegen/ScratchDir.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "pydd_config/Config.h"

namespace pydd {
namespace {

/// $PYDD_KERNEL_CXXFLAGS, split at blanks: added to every compile and link
/// of a kernel (the sanitizer test label builds kernels with
/// -fsanitize=address,undefined this way).
std::vector<std::string> extraFlags() {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  if (const char* env = std::getenv("PYDD_KERNEL_CXXFLAGS")) llvm::StringRef(env).split(parts, ' ', -1, false);
  return std::vector<std::string>(parts.begin(), parts.end());
}

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
  for (auto& f : extraFlags()) flags.push_back(f);
  return flags;
}

/// "cannot write PATH: why", or "disk full: ..." when that is why.
std::string cannotWrite(llvm::StringRef path, std::error_code ec) {
  std::string what = "cannot write " + path.str() + ": " + ec.message();
  return ec == std::errc::no_space_on_device ? "disk full: " + what : what;
}

bool writeFile(const std::string& path, llvm::StringRef text, std::string& error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = cannotWrite(path, ec);
    return false;
  }
  os << text;
  os.close();  // a full disk shows up when the buffer is flushed
  if (os.has_error()) {
    error = cannotWrite(path, os.error());
    os.clear_error();
    return false;
  }
  return true;
}

/// The program a compiler driver could not start, from its output (gcc:
/// "cannot execute 'as'", collect2: "cannot find 'ld'"; the quotes are ASCII
/// or typographic by locale), as "the assembler 'as'"; empty when none.
std::string missingTool(llvm::StringRef log) {
  for (llvm::StringRef marker : {"cannot execute ", "cannot find "}) {
    size_t at = log.find(marker);
    if (at == llvm::StringRef::npos) continue;
    llvm::StringRef rest = log.substr(at + marker.size());
    rest = rest.ltrim("'\"\xe2\x80\x98");  // ' " or U+2018
    llvm::StringRef name = rest.take_until([](char c) { return c == '\'' || c == '"' || c == '\xe2' || c == ':' || c == '\n'; });
    if (name.empty() || name.startswith("-") || name.contains(' ') || name.contains('/')) continue;
    if (name == "as") return "the assembler 'as'";
    if (name == "ld" || name.startswith("ld.")) return "the linker '" + name.str() + "'";
    return "'" + name.str() + "'";
  }
  return "";
}

/// Explains why command `argv0` failed with status `rc` (-1: it could not
/// start, `message` says why), from its saved output `log`.
std::string failure(const std::string& argv0, int rc, const std::string& message, const std::string& log,
                    const ScratchDir& scratch) {
  if (rc == -1) return "cannot run " + argv0 + ": " + message;
  auto output = llvm::MemoryBuffer::getFile(log);
  // The machine, not the code: a full disk (the scratch directory is under
  // $TMPDIR; the compiler's own temporaries too).
  auto space = llvm::sys::fs::disk_space(scratch.path());
  bool full = space && space->available < (1u << 20);
  if (full || (output && (*output)->getBuffer().contains("No space left on device")))
    return "disk full: the C++ compiler could not write its output in " + scratch.path().str() +
           " (No space left on device); free some space or set TMPDIR";
  // The machine, not the code: a part of the host toolchain the compiler
  // driver runs (the assembler, the linker) is missing.
  if (output) {
    std::string tool = missingTool((*output)->getBuffer());
    if (!tool.empty())
      return "the C++ compiler " + argv0 + " cannot run " + tool + ", which is not installed or not on PATH: " +
             "install binutils or fix PATH";
  }
  // Generated code that does not compile is a pyddc bug, never the user's.
  std::string error = "internal error: the C++ compiler failed on generated code (" +
                      (rc > 128 ? "killed by signal " + std::to_string(rc - 128) : "exit status " + std::to_string(rc)) +
                      "); please report this";
  if (output && (*output)->getBufferSize()) error += "\n" + (*output)->getBuffer().take_front(4000).str();
  return error;
}

/// Runs the commands at the same time; on a failure explains the first
/// that failed, pointing at its saved output.
bool runAll(const std::vector<std::vector<std::string>>& commands, const ScratchDir& scratch, bool verbose,
            std::string& error) {
  std::vector<std::string> logs;
  for (size_t k = 0; k < commands.size(); ++k) {
    if (verbose) {
      for (size_t i = 0; i < commands[k].size(); ++i) llvm::errs() << (i ? " " : "") << commands[k][i];
      llvm::errs() << "\n";
    }
    logs.push_back(scratch.file(k ? "compiler-" + std::to_string(k) + ".log" : "compiler.log"));
  }
  std::vector<std::string> messages;
  std::vector<int> statuses = scratch.executeAll(commands, logs, messages);
  for (size_t k = 0; k < commands.size(); ++k)
    if (statuses[k] != 0) {
      error = failure(commands[k][0], statuses[k], messages[k], logs[k], scratch);
      return false;
    }
  return true;
}

bool run(const std::vector<std::string>& argv, const ScratchDir& scratch, bool verbose, std::string& error) {
  return runAll({argv}, scratch, verbose, error);
}

/// Writes the translation units `sources` into the scratch directory and
/// compiles each into an object file, all at once; returns the objects.
bool compileParts(const std::string& cxx, const std::vector<std::string>& sources, const std::string& module,
                  const ScratchDir& scratch, const ToolchainOptions& options, std::vector<std::string>& objects,
                  std::string& error) {
  std::vector<std::vector<std::string>> commands;
  for (size_t k = 0; k < sources.size(); ++k) {
    std::string stem = module + (k ? "_" + std::to_string(k) : "");
    std::string src = scratch.file(stem + ".cpp");
    objects.push_back(scratch.file(stem + ".o"));
    if (!writeFile(src, sources[k], error)) return false;
    std::vector<std::string> compile = {cxx};
    for (auto& f : commonFlags(options)) compile.push_back(f);
    for (std::string f : {std::string("-c"), src, std::string("-o"), objects.back()}) compile.push_back(f);
    commands.push_back(std::move(compile));
  }
  return runAll(commands, scratch, options.verbose, error);
}

/// The flags nvcc builds a kernel .cu with: the CPU build's semantics
/// (no fused multiply-add, C++17), position-independent for a shared
/// object, for sm_90.
std::vector<std::string> nvccFlags() {
  return {"-std=c++17", "-arch=sm_90", "--fmad=false", "-O3", "-Xcompiler", "-fPIC,-fvisibility=hidden,-fwrapv",
          "-I" + runtimeLayout().includeDir, "-DNDEBUG"};
}

/// The folders next to an nvcc where toolkits keep the CUDA runtime: the
/// classic lib64, the lib a lib64 link may point to, and the per-target
/// folder nvcc itself links from. `nvcc` is taken both as given and with
/// its links resolved (/usr/local/cuda/bin/nvcc is often a link).
std::vector<std::string> cudaLibraryDirs(const std::string& nvcc) {
  std::vector<std::string> roots{llvm::sys::path::parent_path(llvm::sys::path::parent_path(nvcc)).str()};
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(nvcc, real))
    roots.push_back(llvm::sys::path::parent_path(llvm::sys::path::parent_path(real)).str());
  std::vector<std::string> dirs;
  for (auto& root : roots)
    for (const char* sub : {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"}) {
      llvm::SmallString<256> dir(root);
      llvm::sys::path::append(dir, sub);
      dirs.push_back(std::string(dir));
    }
  return dirs;
}

/// Adds the CUDA runtime to `libraries`. The static runtime comes first: a
/// module linked with it imports on a machine without the toolkit (and
/// then says there is no device). A toolkit that ships only the shared
/// runtime links that, found at load time through an rpath. A toolkit with
/// neither gets a plain message naming the library and where it looked.
bool addCudaRuntime(const std::string& nvcc, std::vector<std::string>& libraries, std::string& error) {
  auto dirs = cudaLibraryDirs(nvcc);
  auto has = [](const std::string& dir, const char* file) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    return llvm::sys::fs::exists(path);
  };
  for (auto& dir : dirs)
    if (has(dir, "libcudart_static.a")) {
      for (std::string f : {"-L" + dir, std::string("-lcudart_static"), std::string("-ldl"), std::string("-lrt"),
                            std::string("-lpthread")})
        libraries.push_back(f);
      return true;
    }
  for (auto& dir : dirs)
    if (has(dir, "libcudart.so")) {
      for (std::string f : {"-L" + dir, "-Wl,-rpath," + dir, std::string("-lcudart")}) libraries.push_back(f);
      return true;
    }
  error = "the CUDA runtime library (libcudart_static.a or libcudart.so) is not installed next to " + nvcc +
          " (looked in";
  for (auto& dir : dirs) error += " " + dir;
  error += "); install the CUDA toolkit's runtime (cuda-cudart-dev) or pass --nvcc= of a complete toolkit";
  return false;
}

/// Builds options.deviceSource into an object (with nvcc, or with the C++
/// compiler against the emulation) and adds it and what it links to `objects`
/// / `libraries`.
bool compileDevice(const std::string& cxx, const std::string& module, const ScratchDir& scratch,
                   const ToolchainOptions& options, std::vector<std::string>& objects,
                   std::vector<std::string>& libraries, std::string& error) {
  if (options.deviceSource.empty()) return true;
  std::string src = scratch.file(module + "_cuda.cu"), obj = scratch.file(module + "_cuda.o");
  if (!writeFile(src, options.deviceSource, error)) return false;
  std::vector<std::string> cmd;
  if (options.nvcc.empty()) {
    cmd = {cxx};
    for (auto& f : commonFlags(options)) cmd.push_back(f);
    for (std::string f : {std::string("-x"), std::string("c++"), std::string("-c"), src, std::string("-o"), obj}) cmd.push_back(f);
  } else {
    cmd = {options.nvcc};
    for (auto& f : nvccFlags()) cmd.push_back(f);
    for (std::string f : {std::string("-x"), std::string("cu"), std::string("-c"), src, std::string("-o"), obj}) cmd.push_back(f);
    if (!addCudaRuntime(options.nvcc, libraries, error)) return false;
  }
  objects.push_back(obj);
  return run(cmd, scratch, options.verbose, error);
}

/// Moves a finished build into place in one step. The scratch directory
/// may be on another file system, so the file is copied next to the
/// destination first, under a name no other pyddc process uses (two builds
/// of the same module may run at once), then renamed over it: a reader
/// sees the old file or the new one, never half of one.
bool publish(const std::string& from, const std::string& dir, const std::string& name, std::string& error) {
  llvm::SmallString<256> dest(dir);
  llvm::sys::path::append(dest, name);
  llvm::SmallString<256> model(dir);
  llvm::sys::path::append(model, "." + name + ".%%%%%%%%.tmp");
  llvm::SmallString<256> staging;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createUniqueFile(model, fd, staging)) {
    error = cannotWrite(dir, ec);
    return false;
  }
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  auto fail = [&](llvm::StringRef path, std::error_code ec) {
    llvm::sys::fs::remove(staging);
    error = cannotWrite(path, ec);
    return false;
  };
  if (auto ec = llvm::sys::fs::copy_file(from, staging)) return fail(staging, ec);
  if (auto ec = llvm::sys::fs::rename(staging, dest)) return fail(dest, ec);
  return true;
}

std::string scratchError() {
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  return "cannot create a scratch directory in " + std::string(tmp) + " (set TMPDIR to a writable directory)";
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

/// The C++ compiler as an executable path: a name without '/' is looked up
/// on PATH (as a shell would), a path must exist.
bool findCompiler(const std::string& cxx, std::string& path, std::string& error) {
  if (cxx.find('/') == std::string::npos) {
    if (auto found = llvm::sys::findProgramByName(cxx)) {
      path = *found;
      return true;
    }
    error = "no C++ compiler found: '" + cxx + "' is not on PATH; install g++ or pass --cxx";
    return false;
  }
  if (!llvm::sys::fs::can_execute(cxx)) {
    error = "no C++ compiler found: " + cxx + " does not exist or is not executable; install g++ or pass --cxx";
    return false;
  }
  path = cxx;
  return true;
}

}  // namespace

BuildOutput buildPythonModule(const std::vector<std::string>& sources, const std::string& module,
                              const std::string& outDir, const ToolchainOptions& options) {
  BuildOutput out;
  std::string cxx;
  if (!findCompiler(options.cxx, cxx, out.error)) return out;
  ScratchDir scratch;
  if (!scratch.ok()) return out.error = scratchError(), out;
  if (!ensureDir(outDir, out.error)) return out;
  std::string so = scratch.file(module + PYDD_EXT_SUFFIX);
  std::vector<std::string> argv = {cxx};
  for (auto& f : commonFlags(options)) argv.push_back(f);
  for (const char* f : {"-shared", "-fvisibility=hidden", "-o"}) argv.push_back(f);
  argv.push_back(so);
  std::vector<std::string> deviceObjects, deviceLibraries;
  if (!compileDevice(cxx, module, scratch, options, deviceObjects, deviceLibraries, out.error)) return out;
  for (auto& o : deviceObjects) argv.push_back(o);
  if (sources.size() == 1) {
    // One part: compiled and linked in one command.
    std::string src = scratch.file(module + ".cpp");
    if (!writeFile(src, sources[0], out.error)) return out;
    argv.push_back(src);
  } else {
    std::vector<std::string> objects;
    if (!compileParts(cxx, sources, module, scratch, options, objects, out.error)) return out;
    for (auto& o : objects) argv.push_back(o);
  }
  argv.push_back(runtimeLayout().libraryDir + "/libpydd_runtime.a");
  argv.push_back("-L" + runtimeLayout().libraryDir);
  argv.push_back("-Wl,-rpath," + runtimeLayout().libraryDir);
  argv.push_back("-lpydd_python");
  for (auto& l : deviceLibraries) argv.push_back(l);
  // Dense products and factorizations call OpenBLAS; a kernel without them
  // does not keep the dependency.
  for (const char* f : {"-Wl,--as-needed", "-lopenblas"}) argv.push_back(f);
  if (!run(argv, scratch, options.verbose, out.error)) return out;
  out.ok = publish(so, outDir, module + PYDD_EXT_SUFFIX, out.error);
  return out;
}

BuildOutput buildCppLibrary(const std::vector<std::string>& sources, const std::string& header,
                            const std::string& module, const std::string& outDir, const ToolchainOptions& options) {
  BuildOutput out;
  std::string cxx;
  if (!findCompiler(options.cxx, cxx, out.error)) return out;
  ScratchDir scratch;
  if (!scratch.ok()) return out.error = scratchError(), out;
  if (!ensureDir(outDir, out.error)) return out;
  std::string archive = scratch.file("lib" + module + ".a");
  std::string shared = scratch.file("lib" + module + ".so");
  std::string hdr = scratch.file(module + ".h");
  if (!writeFile(hdr, header, out.error)) return out;
  std::vector<std::string> objects, deviceLibraries;
  if (!compileParts(cxx, sources, module, scratch, options, objects, out.error)) return out;
  if (!compileDevice(cxx, module, scratch, options, objects, deviceLibraries, out.error)) return out;
  // The archive carries the compiled part of the runtime too, so that a
  // host links just lib<module>.a (a second kernel archive's copy is never
  // pulled in: its symbols are already defined).
  std::string ar = findProgram("ar");
  std::string runtimeObjects = scratch.file("runtime");
  if (auto ec = llvm::sys::fs::create_directories(runtimeObjects)) return out.error = cannotWrite(runtimeObjects, ec), out;
  if (!run({ar, "x", "--output=" + runtimeObjects, runtimeLayout().libraryDir + "/libpydd_runtime.a"}, scratch, options.verbose, out.error))
    return out;
  std::vector<std::string> archiveCmd = {ar, "rcs", archive};
  for (auto& o : objects) archiveCmd.push_back(o);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(runtimeObjects, ec), end; it != end && !ec; it.increment(ec))
    archiveCmd.push_back(it->path());
  if (!run(archiveCmd, scratch, options.verbose, out.error)) return out;
  std::vector<std::string> link = {cxx, "-shared", "-fopenmp", "-o", shared};
  for (auto& o : objects) link.push_back(o);
  for (std::string f : {runtimeLayout().libraryDir + "/libpydd_runtime.a", std::string("-Wl,--as-needed"),
                        std::string("-lopenblas")})
    link.push_back(f);
  for (auto& l : deviceLibraries) link.push_back(l);
  for (auto& f : extraFlags()) link.push_back(f);
  if (!run(link, scratch, options.verbose, out.error))
    return out;
  out.ok = publish(archive, outDir, "lib" + module + ".a", out.error) &&
           publish(shared, outDir, "lib" + module + ".so", out.error) &&
           publish(hdr, outDir, module + ".h", out.error);
  return out;
}

// -fopenmp: the kernels' pfor loops and tasks are OpenMP, and the runtime
// header's parallel helpers call it.
std::string hostCxxFlags() { return "-std=c++17 -fwrapv -ffp-contract=off -fopenmp -I" + runtimeLayout().includeDir; }
std::string hostLdFlags() { return "-fopenmp -lopenblas -lm"; }

}  // namespace pydd
