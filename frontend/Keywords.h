// Intrepydd's keywords that Python's grammar does not know.
//
// tree-sitter-python parses Python only, so before parsing, every `pfor`,
// `async:`, `finish:` and `isolated:` that starts a statement is replaced
// by Python text of exactly the same length (`for `, `if 1 :`...). No line
// or column moves, so every location tree-sitter reports is exact; the
// sites are returned so that lowering can restore the real construct.
#pragma once

#include <string>
#include <vector>

#include "frontend/Lexer.h"
#include "ir/IR.h"
#include "llvm/ADT/StringRef.h"

namespace pydd {

enum class KeywordKind { Pfor, Async, Finish, Isolated };

struct KeywordSite {
  KeywordKind kind;
  SourceLoc loc;  // of the keyword, which is also where the statement starts
};

/// Returns `source` with the Intrepydd keywords at statement starts (as
/// found by lexPython) rewritten; appends their sites.
std::string rewriteIntrepyddKeywords(llvm::StringRef source, const std::vector<StatementStart>& starts,
                                     std::vector<KeywordSite>& sites);

/// The same, lexing `source` itself.
std::string rewriteIntrepyddKeywords(llvm::StringRef source, std::vector<KeywordSite>& sites);

}  // namespace pydd
