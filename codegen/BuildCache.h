// The compile cache: content-addressed built modules and libraries, shared
// by the `pyddc` command and everything in Python that drives it
// (pydd.compile, @pydd.kernel, %%pydd).
//
// An entry is a directory `<root>/<module>-<key>` holding exactly what a
// build writes to its output directory. The key is a SHA-256 of everything
// that decides those bytes: the .pydd source and the generated code (so the
// options and the pyddc build that produced it), the host kind, the C++
// compiler and its flags, the runtime headers' contents and the identity of
// the runtime libraries and of the pyddc executable. Entries never change
// once they exist, so a hit only copies (or, from Python, imports) files.
//
// Concurrency: an entry is built in a private directory and renamed into
// place in one step, so a reader never sees half an entry; a lock file per
// key (LLVM's LockFileManager, as clang's module cache uses) makes a second
// process building the same kernel wait for the first instead of building
// it again. Eviction renames an entry away before deleting it, and a reader
// that loses the race sees a miss, never a partial entry.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/Toolchain.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

namespace pydd {

/// Accumulates the inputs of a build into a key. Each part is labelled and
/// length-prefixed so that no two different input lists hash alike.
class BuildKey {
 public:
  void add(llvm::StringRef label, llvm::StringRef data);
  /// A file's contents (or that it is missing).
  void addFileContents(llvm::StringRef path);
  /// A file's identity without reading it: resolved path, size and
  /// modification time (for large binaries such as the C++ compiler).
  void addFileIdentity(llvm::StringRef path);
  /// Every file under `dir`, by contents, in a stable order.
  void addTreeContents(llvm::StringRef dir);
  /// The toolchain a build with these options runs: compiler, flags for the
  /// -O level, runtime headers and libraries, and this pyddc executable.
  void addToolchain(const ToolchainOptions& options, llvm::StringRef pyddcExe);
  /// Lowercase hex, 32 characters (128 bits of the SHA-256).
  std::string hex();

 private:
  llvm::SHA256 Hash;
};

class BuildCache {
 public:
  /// `root` is created on first use; `maxBytes` bounds the total size of
  /// entries (least recently used first out; 0 means no limit).
  BuildCache(std::string root, uint64_t maxBytes, bool verbose);

  /// $PYDD_CACHE_DIR, else $XDG_CACHE_HOME/pydd, else ~/.cache/pydd.
  static std::string defaultRoot();
  /// $PYDD_CACHE_SIZE (bytes, or with a K/M/G suffix), else 2 GiB.
  static uint64_t defaultLimit();

  using Builder = llvm::function_ref<BuildOutput(const std::string& dir)>;

  /// The entry for (`module`, `key`): found, or made by `build` (which
  /// writes its outputs into the directory it is given). On success
  /// `entryDir` names the entry and `hit` says whether it already existed.
  BuildOutput lookupOrBuild(llvm::StringRef module, llvm::StringRef key, Builder build, std::string& entryDir,
                            bool& hit);

  /// Copies every file of an entry into `outDir`, each one appearing there
  /// atomically (a process that has the previous file loaded keeps it).
  static bool copyEntry(const std::string& entryDir, const std::string& outDir, std::string& error);

 private:
  bool isEntry(const std::string& dir) const;
  /// Removes least recently used entries until the cache fits the limit;
  /// `keep` is never removed.
  void evict(const std::string& keep);

  std::string Root;
  uint64_t MaxBytes;
  bool Verbose;
};

}  // namespace pydd
