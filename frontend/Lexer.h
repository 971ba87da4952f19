// CPython's tokenizer rules, checked before tree-sitter parses.
//
// tree-sitter-python recovers from errors instead of reporting them, and
// its indentation scanner accepts layouts that Python rejects: a loop body
// that is not indented, an unexpected indent, a dedent to a column no
// enclosing block has, tabs and spaces mixed ambiguously. This lexer walks
// the text the way CPython's tokenizer does (Parser/tokenizer.c: logical
// lines, the indentation stack with its tab-size-1 twin, bracket nesting,
// string and number literals) and reports the first error CPython's would
// report, at its line and column. It also finds where statements start,
// which is what the Intrepydd keyword rewrite needs.
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"
#include "llvm/ADT/StringRef.h"

namespace pydd {

/// CPython's limits (Parser/tokenizer.h MAXINDENT and MAXLEVEL).
constexpr unsigned kMaxIndentLevels = 100;
constexpr unsigned kMaxBracketNesting = 200;
/// tree-sitter-python's scanner saves each indentation column in one byte
/// when it serializes its state, so a block indented 256 columns or more is
/// misparsed once the parser restores that state (reported at 1:1 as
/// "invalid syntax" before this limit).
constexpr int kMaxIndentColumn = 255;

/// Python's reserved words (not the soft keywords `match`, `case`, `type`).
bool isPythonKeyword(llvm::StringRef word);

struct StatementStart {
  size_t offset;  // byte offset of the statement's first token
  SourceLoc loc;
};

struct LexError {
  SourceLoc loc;
  std::string message;
  /// The text is beyond what tree-sitter's grammar parses correctly, so
  /// this is the error to report even when the tree has an earlier one.
  bool beyondGrammar = false;
};

/// Lexes `text` (newlines already "\n" only). Appends where each simple or
/// compound statement starts (the first token of a logical line, or the
/// token after a top-level ';'). Returns false and fills `error` at the
/// first token CPython's tokenizer or parser would reject on lexical
/// grounds.
bool lexPython(llvm::StringRef text, std::vector<StatementStart>& starts, LexError& error);

}  // namespace pydd
