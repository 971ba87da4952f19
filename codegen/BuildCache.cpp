#include "codegen/BuildCache.h"

#include "codegen/InstallLayout.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/LockFileManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "pydd_config/Config.h"

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace pydd {

// ---- keys -------------------------------------------------------------------

void BuildKey::add(llvm::StringRef label, llvm::StringRef data) {
  // label \0 length \0 data: unambiguous whatever the parts contain.
  Hash.update(label);
  Hash.update(llvm::StringRef("\0", 1));
  Hash.update(std::to_string(data.size()));
  Hash.update(llvm::StringRef("\0", 1));
  Hash.update(data);
}

void BuildKey::addFileContents(llvm::StringRef file) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  add(file, buffer ? (*buffer)->getBuffer() : llvm::StringRef("<missing>"));
}

void BuildKey::addFileIdentity(llvm::StringRef file) {
  llvm::SmallString<256> real;
  fs::file_status st;
  if (fs::real_path(file, real) || fs::status(real, st)) return add(file, "<missing>");
  add(file, real.str().str() + " " + std::to_string(st.getSize()) + " " +
                std::to_string(st.getLastModificationTime().time_since_epoch().count()));
}

void BuildKey::addTreeContents(llvm::StringRef dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (it->type() == fs::file_type::regular_file) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  add("tree", dir);
  for (auto& f : files) addFileContents(f);
}

void BuildKey::addToolchain(const ToolchainOptions& options, llvm::StringRef pyddcExe) {
  static const char* const levels[] = {PYDD_KERNEL_FLAGS_O0, PYDD_KERNEL_FLAGS_O1, PYDD_KERNEL_FLAGS_O2,
                                       PYDD_KERNEL_FLAGS_O3};
  add("pyddc", PYDD_VERSION);
  addFileIdentity(pyddcExe);
  auto cxx = llvm::sys::findProgramByName(options.cxx);
  add("cxx", options.cxx);
  addFileIdentity(cxx ? *cxx : options.cxx);
  add("flags", levels[std::min(options.optLevel, 3u)]);
  // $PYDD_KERNEL_CXXFLAGS (a sanitizer build) joins every compile and link.
  const char* extra = std::getenv("PYDD_KERNEL_CXXFLAGS");
  add("extra-flags", extra ? extra : "");
  // The precompiled headers are made from these headers with these flags.
  const RuntimeLayout& runtime = runtimeLayout();
  addTreeContents(runtime.includeDir);
  addFileIdentity(runtime.libraryDir + "/libpydd_runtime.a");
  addFileIdentity(runtime.libraryDir + "/libpydd_python.so");
}

std::string BuildKey::hex() {
  llvm::StringRef digest = Hash.final();
  return llvm::toHex(digest.take_front(16), /*LowerCase=*/true);
}

// ---- the cache --------------------------------------------------------------

namespace {

constexpr size_t KeyLength = 32;

/// Whether a directory name is `<module>-<key>`.
bool isEntryName(llvm::StringRef name) {
  size_t dash = name.rfind('-');
  if (dash == llvm::StringRef::npos || dash == 0 || name.size() - dash - 1 != KeyLength) return false;
  return llvm::all_of(name.drop_front(dash + 1), [](char c) { return llvm::isHexDigit(c); });
}

std::string childPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  path::append(p, name);
  return std::string(p);
}

uint64_t treeSize(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    fs::file_status st;
    if (!fs::status(it->path(), st)) total += st.getSize();
  }
  return total;
}

/// Marks an entry as just used (the eviction order).
void touch(const std::string& dir) { ::utimensat(AT_FDCWD, dir.c_str(), nullptr, 0); }

}  // namespace

BuildCache::BuildCache(std::string root, uint64_t maxBytes, bool verbose)
    : Root(std::move(root)), MaxBytes(maxBytes), Verbose(verbose) {}

std::string BuildCache::defaultRoot() {
  if (const char* dir = std::getenv("PYDD_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return childPath(xdg, "pydd");
  llvm::SmallString<256> home;
  if (!path::home_directory(home)) return "/tmp/pydd-cache";
  return childPath(childPath(home, ".cache"), "pydd");
}

uint64_t BuildCache::defaultLimit() {
  const uint64_t fallback = uint64_t(2) << 30;
  const char* text = std::getenv("PYDD_CACHE_SIZE");
  if (!text || !*text) return fallback;
  llvm::StringRef s(text);
  uint64_t scale = 1;
  switch (llvm::toLower(s.back())) {
    case 'k': scale = uint64_t(1) << 10; break;
    case 'm': scale = uint64_t(1) << 20; break;
    case 'g': scale = uint64_t(1) << 30; break;
    default: break;
  }
  if (scale != 1) s = s.drop_back();
  uint64_t n;
  if (s.getAsInteger(10, n)) return fallback;
  return n * scale;
}

bool BuildCache::isEntry(const std::string& dir) const { return fs::is_directory(dir); }

BuildOutput BuildCache::lookupOrBuild(llvm::StringRef module, llvm::StringRef key, Builder build,
                                      std::string& entryDir, bool& hit) {
  BuildOutput out;
  entryDir = childPath(Root, (module + "-" + key).str());
  hit = true;
  if (isEntry(entryDir)) return touch(entryDir), out.ok = true, out;

  if (auto ec = fs::create_directories(Root)) return out.error = "cannot create " + Root + ": " + ec.message(), out;
  // One builder per key; the others wait and then take its entry. If the
  // lock cannot be had (or its owner died or is slow) we build anyway: the
  // rename below keeps that safe, only the work is done twice.
  llvm::LockFileManager lock(entryDir);
  if (lock.getState() == llvm::LockFileManager::LFS_Shared) {
    if (Verbose) llvm::errs() << "pyddc: waiting for another build of " << entryDir << "\n";
    lock.waitForUnlock(300);
  }
  if (isEntry(entryDir)) return touch(entryDir), out.ok = true, out;

  hit = false;
  llvm::SmallString<256> staging;
  if (auto ec = fs::createUniqueDirectory(childPath(Root, ".tmp-" + key.str()), staging))
    return out.error = "cannot create a directory in " + Root + ": " + ec.message(), out;
  out = build(std::string(staging));
  if (!out.ok) {
    fs::remove_directories(staging);
    return out;
  }
  if (fs::rename(staging, entryDir)) {
    // Someone else's identical entry won the race; theirs is as good.
    fs::remove_directories(staging);
    if (!isEntry(entryDir)) return out.ok = false, out.error = "cannot create " + entryDir, out;
  }
  evict(entryDir);
  return out;
}

void BuildCache::evict(const std::string& keep) {
  if (MaxBytes == 0) return;
  struct Entry {
    std::string dir;
    int64_t used;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = std::chrono::system_clock::now();
  for (fs::directory_iterator it(Root, ec), end; it != end && !ec; it.increment(ec)) {
    fs::file_status st;
    if (fs::status(it->path(), st) || !fs::is_directory(st)) continue;
    llvm::StringRef name = path::filename(it->path());
    // What a killed build or eviction left behind; a day is far longer than
    // any build still running in there.
    if ((name.startswith(".tmp-") || name.startswith(".evict-")) &&
        now - st.getLastModificationTime() > std::chrono::hours(24)) {
      fs::remove_directories(it->path());
      continue;
    }
    if (!isEntryName(name)) continue;
    uint64_t size = treeSize(it->path());
    total += size;
    entries.push_back({it->path(), st.getLastModificationTime().time_since_epoch().count(), size});
  }
  if (total <= MaxBytes) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= MaxBytes) break;
    if (e.dir == keep) continue;
    // Out of the way in one step first: a reader either has the whole entry
    // or finds none.
    llvm::SmallString<256> doomed;
    if (fs::createUniqueDirectory(childPath(Root, ".evict"), doomed)) continue;
    std::string target = childPath(doomed, "entry");
    if (!fs::rename(e.dir, target)) {
      total -= e.size;
      if (Verbose) llvm::errs() << "pyddc: evicted " << e.dir << "\n";
    }
    fs::remove_directories(doomed);
  }
}

bool BuildCache::copyEntry(const std::string& entryDir, const std::string& outDir, std::string& error) {
  // "disk full: ..." names the output directory when that is why.
  auto fail = [&](const std::string& what, std::error_code e) {
    error = what + ": " + e.message();
    if (e == std::errc::no_space_on_device) error = "disk full: " + error;
    return false;
  };
  if (auto ec = fs::create_directories(outDir)) return fail("cannot create " + outDir, ec);
  std::error_code ec;
  for (fs::directory_iterator it(entryDir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = path::filename(it->path());
    std::string dest = childPath(outDir, name);
    // Copy next to the destination, then rename over it.
    llvm::SmallString<256> staging;
    if (auto e = fs::createUniqueFile(childPath(outDir, "." + name.str() + ".%%%%%%.tmp"), staging))
      return fail("cannot write in " + outDir, e);
    if (auto e = fs::copy_file(it->path(), staging)) {
      fs::remove(staging);
      return fail("cannot copy " + it->path() + " to " + outDir, e);
    }
    if (auto e = fs::rename(staging, dest)) {
      fs::remove(staging);
      return fail("cannot write " + dest, e);
    }
  }
  if (ec) return error = "cannot read " + entryDir + ": " + ec.message(), false;
  return true;
}

}  // namespace pydd
