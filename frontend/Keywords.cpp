#include "frontend/Keywords.h"

#include <cctype>
#include <cstring>

namespace pydd {
namespace {

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Scans Python text just far enough to know where statements start:
/// strings (including triple-quoted ones spanning lines), comments,
/// brackets and backslash continuations.
class StatementStarts {
 public:
  explicit StatementStarts(std::string& text) : T(text) {}

  template <typename Fn>
  void forEach(Fn fn) {
    size_t i = 0, n = T.size();
    uint32_t line = 1;
    size_t lineStart = 0;
    bool atStatementStart = true;
    int depth = 0;
    while (i < n) {
      char c = T[i];
      if (c == '\n') {
        ++line;
        lineStart = ++i;
        if (depth == 0) atStatementStart = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
        ++i;
        continue;
      }
      if (c == '\\' && i + 1 < n && T[i + 1] == '\n') {
        i += 2;
        ++line;
        lineStart = i;
        continue;
      }
      if (c == '#') {
        while (i < n && T[i] != '\n') ++i;
        continue;
      }
      if (atStatementStart && depth == 0) {
        atStatementStart = false;
        fn(i, SourceLoc{line, static_cast<uint32_t>(i - lineStart + 1)});
      }
      if (c == '"' || c == '\'') {
        skipString(i, line, lineStart);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      if (c == ';' && depth == 0) atStatementStart = true;
      ++i;
    }
  }

 private:
  void skipString(size_t& i, uint32_t& line, size_t& lineStart) {
    char q = T[i];
    bool triple = i + 2 < T.size() && T[i + 1] == q && T[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < T.size()) {
      char c = T[i];
      if (c == '\\') {
        if (i + 1 < T.size() && T[i + 1] == '\n') ++line, lineStart = i + 2;
        i += 2;
        continue;
      }
      if (c == '\n') {
        ++line;
        lineStart = i + 1;
        if (!triple) return;  // unterminated: the parser reports it
      }
      if (c == q && (!triple || (i + 2 < T.size() && T[i + 1] == q && T[i + 2] == q))) {
        i += triple ? 3 : 1;
        return;
      }
      ++i;
    }
  }

  std::string& T;
};

bool wordAt(const std::string& t, size_t i, const char* word) {
  size_t len = std::strlen(word);
  return t.compare(i, len, word) == 0 && (i + len >= t.size() || !isIdentChar(t[i + len]));
}

/// `async` / `finish` / `isolated` followed (after blanks) by ':'.
bool blockKeywordAt(const std::string& t, size_t i, const char* word) {
  if (!wordAt(t, i, word)) return false;
  size_t j = i + std::strlen(word);
  while (j < t.size() && (t[j] == ' ' || t[j] == '\t')) ++j;
  return j < t.size() && t[j] == ':';
}

}  // namespace

std::string rewriteIntrepyddKeywords(llvm::StringRef source, std::vector<KeywordSite>& sites) {
  std::string text = source.str();
  StatementStarts(text).forEach([&](size_t i, SourceLoc loc) {
    struct {
      const char* word;
      KeywordKind kind;
      bool block;
    } const keywords[] = {
        {"pfor", KeywordKind::Pfor, false},
        {"async", KeywordKind::Async, true},
        {"finish", KeywordKind::Finish, true},
        {"isolated", KeywordKind::Isolated, true},
    };
    for (auto& k : keywords) {
      bool found = k.block ? blockKeywordAt(text, i, k.word) : wordAt(text, i, k.word);
      if (!found) continue;
      size_t len = std::strlen(k.word);
      // Same length, so nothing after it moves: "pfor" -> "for ",
      // "async" -> "if 1 ", "isolated" -> "if 1    ".
      std::string replacement = k.block ? "if 1" : "for";
      replacement.resize(len, ' ');
      text.replace(i, len, replacement);
      sites.push_back({k.kind, loc});
      return;
    }
  });
  return text;
}

}  // namespace pydd
