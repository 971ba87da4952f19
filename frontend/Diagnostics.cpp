#include "frontend/Diagnostics.h"

#include "llvm/Support/WithColor.h"

namespace pydd {
namespace {

/// CPython's universal newlines: "\r\n" and "\r" become "\n".
std::unique_ptr<llvm::MemoryBuffer> normalized(std::unique_ptr<llvm::MemoryBuffer> source) {
  llvm::StringRef text = source->getBuffer();
  bool bom = text.startswith("\xEF\xBB\xBF");
  if (!bom && text.find('\r') == llvm::StringRef::npos) return source;
  if (bom) text = text.drop_front(3);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out += text[i];
    } else if (i + 1 == text.size() || text[i + 1] != '\n') {
      out += '\n';
    }
  }
  return llvm::MemoryBuffer::getMemBufferCopy(out, source->getBufferIdentifier());
}

}  // namespace

Diagnostics::Diagnostics(std::string path, std::unique_ptr<llvm::MemoryBuffer> source)
    : Path(std::move(path)) {
  Buffer = SM.AddNewSourceBuffer(normalized(std::move(source)), llvm::SMLoc());
}

llvm::StringRef Diagnostics::source() const { return SM.getMemoryBuffer(Buffer)->getBuffer(); }

void Diagnostics::report(SourceLoc loc, llvm::SourceMgr::DiagKind kind, const llvm::Twine& message) {
  if (!Captures.empty()) {
    Captures.back().into->push_back({loc, kind, message.str()});
    return;
  }
  llvm::SMLoc at;
  if (loc.line > 0) at = SM.FindLocForLineAndColumn(Buffer, loc.line, loc.col ? loc.col : 1);
  if (at.isValid()) {
    SM.PrintMessage(*Out, SM.GetMessage(at, kind, message));
  } else {
    ++Unlocated;
    llvm::SMDiagnostic d(Path, kind, message.str());
    d.print(nullptr, *Out);
  }
}

void Diagnostics::warning(SourceLoc loc, const llvm::Twine& message) {
  if (WarningsAreErrors) return error(loc, message);
  ++Warnings;
  report(loc, llvm::SourceMgr::DK_Warning, message);
}

void Diagnostics::error(SourceLoc loc, const llvm::Twine& message) {
  ++Errors;
  report(loc, llvm::SourceMgr::DK_Error, message);
}

void Diagnostics::beginCapture(std::vector<Held>& into) { Captures.push_back({&into, Errors, Warnings}); }

void Diagnostics::endCapture() {
  Errors = Captures.back().errors;
  Warnings = Captures.back().warnings;
  Captures.pop_back();
}

void Diagnostics::replay(const std::vector<Held>& held) {
  for (const Held& h : held) {
    // Under -Werror a held warning was already turned into an error.
    if (h.kind == llvm::SourceMgr::DK_Error) ++Errors;
    else ++Warnings;
    report(h.loc, h.kind, h.message);
  }
}

}  // namespace pydd
