#include "codegen/InstallLayout.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "pydd_config/Config.h"

namespace pydd {
namespace {

/// `<prefix>/<parts...>` for the prefix holding this executable's bin/.
RuntimeLayout layout() {
  namespace path = llvm::sys::path;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, reinterpret_cast<void*>(&runtimeLayout));
  llvm::SmallString<256> prefix(path::parent_path(path::parent_path(exe)));
  auto under = [&](std::initializer_list<llvm::StringRef> parts) {
    llvm::SmallString<256> p(prefix);
    for (auto part : parts) path::append(p, part);
    return std::string(p);
  };
  // The installed layout (cmake/Install.cmake) has the headers beside bin/;
  // a build tree does not.
  if (!exe.empty() && llvm::sys::fs::exists(under({"include", "pydd", "runtime.h"})))
    return {under({"include"}), under({"lib"}), under({"lib", "pydd", "pch"})};
  return {PYDD_RUNTIME_INCLUDE_DIR, PYDD_LIBRARY_DIR, PYDD_PCH_DIR};
}

}  // namespace

const RuntimeLayout& runtimeLayout() {
  static const RuntimeLayout value = layout();
  return value;
}

}  // namespace pydd
