// harness/src/selection.cpp: case selection (-k expressions, --filter/--exclude globs,
// --requirement) and the run's plan: which case runs on which subject, in which order.
// SPDX-License-Identifier: Apache-2.0
#include "selection.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace dlpv {

namespace {
/// The -k expression grammar: or_expr := and_expr ("or" and_expr)*; and_expr := not_expr ("and"
/// not_expr)*; not_expr := "not" not_expr | "(" or_expr ")" | WORD.
class KeywordExpr {
 public:
  KeywordExpr(const std::string& text, const std::string& id) : text_(text), id_(lower(id)) {
    for (size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (c == ' ' || c == '\t') {
        ++i;
      } else if (c == '(' || c == ')') {
        tokens_.push_back(std::string(1, c));
        ++i;
      } else {
        size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '(' && text[j] != ')') ++j;
        tokens_.push_back(text.substr(i, j - i));
        i = j;
      }
    }
  }
  bool value() {
    if (tokens_.empty()) throw std::invalid_argument("-k '" + text_ + "': an empty expression");
    const bool v = or_expr();
    if (pos_ != tokens_.size())
      throw std::invalid_argument("-k '" + text_ + "': unexpected '" + tokens_[pos_] + "'");
    return v;
  }

 private:
  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  bool at(const char* word) const { return pos_ < tokens_.size() && tokens_[pos_] == word; }
  bool or_expr() {
    bool v = and_expr();
    while (at("or")) {
      ++pos_;
      const bool rhs = and_expr();
      v = v || rhs;
    }
    return v;
  }
  bool and_expr() {
    bool v = not_expr();
    while (at("and")) {
      ++pos_;
      const bool rhs = not_expr();
      v = v && rhs;
    }
    return v;
  }
  bool not_expr() {
    if (pos_ >= tokens_.size()) throw std::invalid_argument("-k '" + text_ + "': ends where a word was expected");
    if (at("not")) {
      ++pos_;
      return !not_expr();
    }
    if (at("(")) {
      ++pos_;
      const bool v = or_expr();
      if (!at(")")) throw std::invalid_argument("-k '" + text_ + "': a '(' is not closed");
      ++pos_;
      return v;
    }
    const std::string& word = tokens_[pos_];
    if (word == ")" || word == "and" || word == "or")
      throw std::invalid_argument("-k '" + text_ + "': '" + word + "' where a word was expected");
    ++pos_;
    return id_.find(lower(word)) != std::string::npos;
  }

  const std::string& text_;
  std::string id_;
  std::vector<std::string> tokens_;
  size_t pos_ = 0;
};
}  // namespace

bool keyword_match(const std::string& expression, const std::string& id) {
  return KeywordExpr(expression, id).value();
}

bool selection_keeps(const Selection& sel, const CaseInfo& c) {
  auto any = [](const std::vector<std::string>& globs, const std::string& text) {
    for (const std::string& g : globs)
      if (glob_match(g, text)) return true;
    return false;
  };
  if (!sel.filters.empty() && !any(sel.filters, c.id)) return false;
  if (any(sel.excludes, c.id)) return false;
  if (!std::all_of(sel.keywords.begin(), sel.keywords.end(),
                   [&](const std::string& k) { return keyword_match(k, c.id); }))
    return false;
  if (!sel.requirements.empty() &&
      std::none_of(c.requirements.begin(), c.requirements.end(),
                   [&](const std::string& r) { return any(sel.requirements, r); }))
    return false;
  return true;
}

std::vector<const CaseInfo*> select_cases(const Selection& sel) {
  std::vector<const CaseInfo*> out;
  for (const CaseInfo& c : Registry::instance().cases())
    if (selection_keeps(sel, c)) out.push_back(&c);
  return out;
}

std::vector<CaseResult> plan(const std::vector<const CaseInfo*>& cases,
                             const std::vector<SubjectInfo>& subjects) {
  std::vector<CaseResult> out;
  for (size_t s = 0; s < subjects.size(); ++s) {
    for (const CaseInfo* c : cases) {
      if (!applies_to(*c, subjects[s].kind)) continue;
      if (c->role != Role::pair) {
        out.push_back({c, static_cast<int>(s), -1, {}});
        continue;
      }
      for (size_t p = 0; p < subjects.size(); ++p)
        if (applies_to(*c, subjects[p].kind)) out.push_back({c, static_cast<int>(s), static_cast<int>(p), {}});
    }
  }
  return out;
}

std::vector<int> case_subjects(int subject, int peer) {
  std::vector<int> need{subject};
  if (peer >= 0 && peer != subject) need.push_back(peer);
  std::sort(need.begin(), need.end());
  return need;
}

}  // namespace dlpv
