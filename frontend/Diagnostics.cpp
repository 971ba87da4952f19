#include "frontend/Diagnostics.h"

#include "llvm/Support/WithColor.h"

namespace pydd {

Diagnostics::Diagnostics(std::string path, std::unique_ptr<llvm::MemoryBuffer> source)
    : Path(std::move(path)) {
  Buffer = SM.AddNewSourceBuffer(std::move(source), llvm::SMLoc());
}

llvm::StringRef Diagnostics::source() const { return SM.getMemoryBuffer(Buffer)->getBuffer(); }

void Diagnostics::report(SourceLoc loc, llvm::SourceMgr::DiagKind kind, const llvm::Twine& message) {
  llvm::SMLoc at;
  if (loc.line > 0) at = SM.FindLocForLineAndColumn(Buffer, loc.line, loc.col ? loc.col : 1);
  if (at.isValid()) {
    SM.PrintMessage(llvm::errs(), SM.GetMessage(at, kind, message));
  } else {
    llvm::SMDiagnostic d(Path, kind, message.str());
    d.print(nullptr, llvm::errs());
  }
}

void Diagnostics::error(SourceLoc loc, const llvm::Twine& message) {
  ++Errors;
  report(loc, llvm::SourceMgr::DK_Error, message);
}

}  // namespace pydd
