#include "frontend/Keywords.h"

#include <cctype>
#include <cstring>

#include "frontend/Lexer.h"

namespace pydd {
namespace {

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

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

std::string rewriteIntrepyddKeywords(llvm::StringRef source, const std::vector<StatementStart>& starts,
                                     std::vector<KeywordSite>& sites) {
  std::string text = source.str();
  for (const StatementStart& start : starts) {
    size_t i = start.offset;
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
      sites.push_back({k.kind, start.loc});
      break;
    }
  }
  return text;
}

std::string rewriteIntrepyddKeywords(llvm::StringRef source, std::vector<KeywordSite>& sites) {
  std::vector<StatementStart> starts;
  LexError error;
  lexPython(source, starts, error);  // the statements before an error are still found
  return rewriteIntrepyddKeywords(source, starts, sites);
}

}  // namespace pydd
