// The checks follow CPython 3.11's Parser/tokenizer.c; messages are
// CPython's where it has one, so a user sees the error Python would give.

#include "frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace pydd {
namespace {

constexpr int kTabSize = 8;

bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

}  // namespace

bool isPythonKeyword(llvm::StringRef w) {
  static const char* const words[] = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                      "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                      "else",   "except", "finally", "for",      "from",     "global", "if",
                                      "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                      "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  for (const char* k : words)
    if (w == k) return true;
  return false;
}

namespace {

bool isStringPrefix(llvm::StringRef w) {
  std::string l = w.lower();
  return l == "r" || l == "u" || l == "f" || l == "b" || l == "br" || l == "rb" || l == "fr" || l == "rf";
}

class Lexer {
 public:
  Lexer(llvm::StringRef text, std::vector<StatementStart>& starts, LexError& error)
      : T(text), Starts(starts), Error(error) {}

  bool run() {
    if (!checkEncoding()) return false;
    while (true) {
      if (AtLineStart && Brackets.empty()) {
        if (!indentation()) return false;
        if (I >= T.size()) break;
        continue;
      }
      if (I >= T.size()) break;
      char c = T[I];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++I;
        continue;
      }
      if (c == '#') {
        while (I < T.size() && T[I] != '\n') ++I;
        continue;
      }
      if (c == '\n') {
        if (Brackets.empty()) {
          endLogicalLine();
          AtLineStart = true;
        }
        newline(++I);
        continue;
      }
      if (c == '\\') {
        if (I + 1 < T.size() && T[I + 1] == '\n') {
          I += 2;
          newline(I);
          continue;
        }
        if (I + 1 >= T.size()) return fail(I, "unexpected EOF while parsing");
        return fail(I, "unexpected character after line continuation character");
      }
      if (!token()) return false;
    }
    if (!Brackets.empty())
      return fail(Brackets.back().loc, llvm::Twine("'") + llvm::Twine(Brackets.back().c) + "' was never closed");
    endLogicalLine();
    if (ExpectIndent) return fail(ColonLoc, "expected an indented block after this ':'");
    return true;
  }

 private:
  struct Open {
    char c;
    SourceLoc loc;
  };

  SourceLoc here(size_t at) const { return {Line, static_cast<uint32_t>(at - LineStart + 1)}; }
  bool fail(size_t at, const llvm::Twine& msg) { return fail(here(at), msg); }
  bool fail(SourceLoc loc, const llvm::Twine& msg) {
    Error = {loc, msg.str()};
    return false;
  }
  void newline(size_t next) {
    ++Line;
    LineStart = next;
  }

  /// Python source is UTF-8 without NUL bytes.
  bool checkEncoding() {
    size_t line = 1, lineStart = 0;
    for (size_t i = 0; i < T.size();) {
      unsigned char c = static_cast<unsigned char>(T[i]);
      if (c == '\n') line++, lineStart = i + 1;
      if (c == 0) return fail(SourceLoc{uint32_t(line), uint32_t(i - lineStart + 1)}, "source code cannot contain null bytes");
      if (c < 0x80) {
        ++i;
        continue;
      }
      unsigned len = llvm::getNumBytesForUTF8(c);
      auto* p = reinterpret_cast<const llvm::UTF8*>(T.data() + i);
      if (i + len > T.size() || !llvm::isLegalUTF8Sequence(p, p + len)) {
        std::string msg;
        llvm::raw_string_ostream(msg) << "invalid UTF-8 byte 0x" << llvm::format_hex_no_prefix(c, 2);
        return fail(SourceLoc{uint32_t(line), uint32_t(i - lineStart + 1)}, msg);
      }
      i += len;
    }
    return true;
  }

  /// At the start of a physical line outside brackets: measures the
  /// indentation as CPython does (tabs to multiples of 8, and again with
  /// tabs as 1 column; the two must order the lines the same way) and
  /// compares it with the enclosing blocks'.
  bool indentation() {
    int col = 0, alt = 0;
    size_t j = I;
    for (; j < T.size(); ++j) {
      char c = T[j];
      if (c == ' ') {
        ++col, ++alt;
      } else if (c == '\t') {
        col = (col / kTabSize + 1) * kTabSize;
        ++alt;
      } else if (c == '\f') {
        col = alt = 0;
      } else {
        break;
      }
    }
    // Blank and comment-only lines do not take part in indentation. (A line
    // of blanks and a backslash does: its blanks are the indentation of the
    // statement the continuation line holds, as in CPython.)
    if (j >= T.size() || T[j] == '\n' || T[j] == '#') {
      I = j;
      if (j >= T.size()) AtLineStart = false;
      while (I < T.size() && T[I] != '\n') ++I;
      if (I < T.size()) newline(++I);
      return true;
    }
    AtLineStart = false;
    StatementStartPending = true;
    I = j;
    static const char* const tabError = "inconsistent use of tabs and spaces in indentation";
    // As in CPython, a dedent to no enclosing column is reported before a
    // missing block.
    bool indented = col > Indents.back();
    if (col == Indents.back()) {
      if (alt != AltIndents.back()) return fail(j, tabError);
    } else if (col > Indents.back()) {
      if (!ExpectIndent) return fail(j, "unexpected indent");
      if (alt <= AltIndents.back()) return fail(j, tabError);
      if (Indents.size() >= kMaxIndentLevels) return fail(j, "too many levels of indentation");
      if (col > kMaxIndentColumn) {
        fail(j, "a block indented " + llvm::Twine(col) + " columns: pydd kernels allow at most " +
                    llvm::Twine(kMaxIndentColumn));
        Error.beyondGrammar = true;
        return false;
      }
      Indents.push_back(col);
      AltIndents.push_back(alt);
    } else {
      while (Indents.size() > 1 && col < Indents.back()) {
        Indents.pop_back();
        AltIndents.pop_back();
      }
      if (col != Indents.back()) return fail(j, "unindent does not match any outer indentation level");
      if (alt != AltIndents.back()) return fail(j, tabError);
    }
    if (ExpectIndent && !indented)
      return fail(j, "expected an indented block after line " + llvm::Twine(ColonLoc.line));
    ExpectIndent = false;
    return true;
  }

  /// A NEWLINE token: a logical line that ends with ':' opens a block.
  void endLogicalLine() {
    if (LineHasTokens) ExpectIndent = LastWasColon;
    LineHasTokens = false;
    LastWasColon = false;
  }

  bool token() {
    char c = T[I];
    if (StatementStartPending && Brackets.empty()) {
      Starts.push_back({I, here(I)});
      StatementStartPending = false;
    }
    LineHasTokens = true;
    LastWasColon = false;
    size_t start = I;
    if (isIdentStart(c)) {
      while (I < T.size() && isIdentChar(T[I])) ++I;
      llvm::StringRef word = T.slice(start, I);
      if (I < T.size() && (T[I] == '\'' || T[I] == '"')) {
        if (isStringPrefix(word)) return string(start, I);
        // A name directly followed by a string is never valid Python,
        // except a keyword (`if'x'`).
        if (!isPythonKeyword(word)) return fail(start, "invalid syntax");
      }
      return true;
    }
    if (static_cast<unsigned char>(c) >= 0x80)
      return fail(I, "non-ASCII characters are only supported in strings and comments in pydd kernels");
    if (llvm::isDigit(c) || (c == '.' && I + 1 < T.size() && llvm::isDigit(T[I + 1]))) return number();
    if (c == '\'' || c == '"') return string(I, I);
    if (c == '(' || c == '[' || c == '{') {
      if (Brackets.size() >= kMaxBracketNesting) return fail(I, "too many nested parentheses");
      Brackets.push_back({c, here(I)});
      ++I;
      return true;
    }
    if (c == ')' || c == ']' || c == '}') {
      if (Brackets.empty()) return fail(I, llvm::Twine("unmatched '") + llvm::Twine(c) + "'");
      char open = Brackets.back().c;
      if ((open == '(') != (c == ')') || (open == '[') != (c == ']'))
        return fail(I, llvm::Twine("closing parenthesis '") + llvm::Twine(c) + "' does not match opening parenthesis '" + llvm::Twine(open) + "'");
      Brackets.pop_back();
      ++I;
      return true;
    }
    if (c == ':') {
      ++I;
      if (I < T.size() && T[I] == '=') ++I;  // ':='
      else LastWasColon = true;
      if (LastWasColon) ColonLoc = here(start);
      return true;
    }
    if (c == ';' && Brackets.empty()) StatementStartPending = true;
    if (c == '!' && (I + 1 >= T.size() || T[I + 1] != '=')) return fail(I, "invalid syntax");
    if (llvm::StringRef("$?`").contains(c)) return fail(I, "invalid syntax");
    if (!llvm::isPrint(c)) {
      std::string msg;
      llvm::raw_string_ostream(msg) << "invalid non-printable character U+"
                                    << llvm::format_hex_no_prefix(static_cast<unsigned char>(c), 4, true);
      return fail(I, msg);
    }
    ++I;
    return true;
  }

  /// digit ('_'? digit)*, starting at I (which must be a digit).
  bool digitPart(bool (*isDigit)(char), const char* kind) {
    for (;;) {
      while (I < T.size() && isDigit(T[I])) ++I;
      if (I >= T.size() || T[I] != '_') return true;
      ++I;
      if (I >= T.size() || !isDigit(T[I])) return fail(I, llvm::Twine("invalid ") + kind + " literal");
    }
  }

  /// After a number, a letter may only begin one of the keywords CPython
  /// tolerates there (`1if x else 2`).
  bool endOfNumber(const char* kind) {
    if (I >= T.size() || !(isIdentChar(T[I]) || static_cast<unsigned char>(T[I]) >= 0x80)) return true;
    for (const char* k : {"and", "else", "for", "if", "in", "is", "not", "or"})
      if (T.substr(I).startswith(k)) return true;
    return fail(I, llvm::Twine("invalid ") + kind + " literal");
  }

  bool number() {
    static auto dec = [](char c) { return llvm::isDigit(c); };
    static auto hex = [](char c) { return llvm::isHexDigit(c); };
    static auto oct = [](char c) { return c >= '0' && c <= '7'; };
    static auto bin = [](char c) { return c == '0' || c == '1'; };
    size_t start = I;
    if (T[I] == '0' && I + 1 < T.size() && llvm::StringRef("xXoObB").contains(T[I + 1])) {
      char k = static_cast<char>(T[I + 1] | 0x20);
      const char* kind = k == 'x' ? "hexadecimal" : k == 'o' ? "octal" : "binary";
      bool (*digit)(char) = k == 'x' ? +hex : k == 'o' ? +oct : +bin;
      I += 2;
      if (I < T.size() && T[I] == '_') ++I;
      if (I >= T.size() || !digit(T[I])) return fail(I, llvm::Twine("invalid ") + kind + " literal");
      if (!digitPart(digit, kind)) return false;
      if (I < T.size() && llvm::isDigit(T[I])) return fail(I, llvm::Twine("invalid digit '") + llvm::Twine(T[I]) + "' in " + kind + " literal");
      return endOfNumber(kind);
    }
    bool isInt = true;
    if (T[I] != '.' && !digitPart(+dec, "decimal")) return false;
    llvm::StringRef intPart = T.slice(start, I);
    if (I < T.size() && T[I] == '.') {
      isInt = false;
      ++I;
      if (I < T.size() && llvm::isDigit(T[I]) && !digitPart(+dec, "decimal")) return false;
    }
    if (I < T.size() && (T[I] == 'e' || T[I] == 'E')) {
      size_t j = I + 1;
      if (j < T.size() && (T[j] == '+' || T[j] == '-')) ++j;
      if (j < T.size() && llvm::isDigit(T[j])) {
        isInt = false;
        I = j;
        if (!digitPart(+dec, "decimal")) return false;
      } else if (j > I + 1 || !T.substr(I).startswith("else")) {
        return fail(I, "invalid decimal literal");
      }
    }
    if (I < T.size() && (T[I] == 'j' || T[I] == 'J')) {
      isInt = false;
      ++I;
    }
    if (isInt && intPart.size() > 1 && intPart[0] == '0' && intPart.find_first_not_of("0_") != llvm::StringRef::npos)
      return fail(start, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
    return endOfNumber(isInt ? "decimal" : "imaginary");
  }

  /// A string literal whose prefix starts at `start` and quote is at `quote`.
  bool string(size_t start, size_t quote) {
    SourceLoc at = here(start);
    char q = T[quote];
    bool triple = T.substr(quote).startswith(std::string(3, q));
    I = quote + (triple ? 3 : 1);
    while (I < T.size()) {
      char c = T[I];
      if (c == '\\' && I + 1 < T.size()) {
        if (T[I + 1] == '\n') newline(I + 2);
        I += 2;
        continue;
      }
      if (c == '\n') {
        if (!triple) return fail(at, "unterminated string literal");
        newline(++I);
        continue;
      }
      if (c == q && (!triple || T.substr(I).startswith(std::string(3, q)))) {
        I += triple ? 3 : 1;
        return true;
      }
      ++I;
    }
    return fail(at, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
  }

  llvm::StringRef T;
  std::vector<StatementStart>& Starts;
  LexError& Error;
  size_t I = 0;
  uint32_t Line = 1;
  size_t LineStart = 0;
  bool AtLineStart = true;
  bool StatementStartPending = true;
  bool LineHasTokens = false;
  bool LastWasColon = false;
  bool ExpectIndent = false;
  SourceLoc ColonLoc;
  std::vector<int> Indents = {0}, AltIndents = {0};
  std::vector<Open> Brackets;
};

}  // namespace

bool lexPython(llvm::StringRef text, std::vector<StatementStart>& starts, LexError& error) {
  return Lexer(text, starts, error).run();
}

}  // namespace pydd
