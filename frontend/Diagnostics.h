// Error reporting in the user's own source: `file:line:col: error: msg`,
// the line and a caret, through LLVM's SourceMgr.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace pydd {

class Diagnostics {
 public:
  /// Takes the source text; `path` is how the file is named in messages.
  /// Line endings are read as Python reads them: "\r\n" and a lone "\r"
  /// both end a line, and a UTF-8 byte-order mark is dropped. Columns do not
  /// move ("\r\n" loses its "\r" at the end of the line), so every later
  /// stage sees "\n" only.
  Diagnostics(std::string path, std::unique_ptr<llvm::MemoryBuffer> source);

  void error(SourceLoc loc, const llvm::Twine& message);
  /// `file:line:col: warning:`, or an error under -Werror.
  void warning(SourceLoc loc, const llvm::Twine& message);
  void setWarningsAreErrors(bool on) { WarningsAreErrors = on; }
  unsigned errorCount() const { return Errors; }
  unsigned warningCount() const { return Warnings; }
  /// Errors reported without a line and column (every error should have
  /// one; the fuzzers check that).
  unsigned unlocatedCount() const { return Unlocated; }

  /// A diagnostic held back while a capture is open.
  struct Held {
    SourceLoc loc;
    llvm::SourceMgr::DiagKind kind;
    std::string message;
  };
  /// Until endCapture(), diagnostics are held in `into` instead of being
  /// shown (errorCount() still counts them): sema types each instance of a
  /// rank-generic function this way and shows one instance's messages.
  /// Captures nest; a replay inside one is held by it.
  void beginCapture(std::vector<Held>& into);
  /// Closes the innermost capture; the errors it held no longer count.
  void endCapture();
  /// Shows held diagnostics (and counts them) as if reported now.
  void replay(const std::vector<Held>& held);

  /// Where messages go (default: stderr).
  void setOutput(llvm::raw_ostream& os) { Out = &os; }

  llvm::StringRef source() const;
  const std::string& path() const { return Path; }

 private:
  void report(SourceLoc loc, llvm::SourceMgr::DiagKind kind, const llvm::Twine& message);

  std::string Path;
  llvm::SourceMgr SM;
  unsigned Buffer = 0;
  unsigned Errors = 0;
  unsigned Warnings = 0;
  bool WarningsAreErrors = false;
  unsigned Unlocated = 0;
  llvm::raw_ostream* Out = &llvm::errs();
  struct Capture {
    std::vector<Held>* into;
    unsigned errors, warnings;  // the counts when it began
  };
  std::vector<Capture> Captures;
};

}  // namespace pydd
