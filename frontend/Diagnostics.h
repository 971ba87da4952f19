// Error reporting in the user's own source: `file:line:col: error: msg`,
// the line and a caret, through LLVM's SourceMgr.
#pragma once

#include <memory>
#include <string>

#include "ir/IR.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"

namespace pydd {

class Diagnostics {
 public:
  /// Takes the source text; `path` is how the file is named in messages.
  Diagnostics(std::string path, std::unique_ptr<llvm::MemoryBuffer> source);

  void error(SourceLoc loc, const llvm::Twine& message);
  unsigned errorCount() const { return Errors; }

  llvm::StringRef source() const;
  const std::string& path() const { return Path; }

 private:
  void report(SourceLoc loc, llvm::SourceMgr::DiagKind kind, const llvm::Twine& message);

  std::string Path;
  llvm::SourceMgr SM;
  unsigned Buffer = 0;
  unsigned Errors = 0;
};

}  // namespace pydd
