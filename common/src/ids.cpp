// common/src/ids.cpp: see ids.hpp. The matcher is iterative, with single-star backtracking
// (linear-ish, no recursion, so a hostile pattern cannot blow the stack).
// SPDX-License-Identifier: Apache-2.0
#include "dlpack_validate/ids.hpp"

#include <algorithm>

#include <string>

namespace dlpv {

namespace {

// Matches one pattern element at p against c. Sets `next` to the index after the element.
// Returns false for a mismatch; an unterminated '[' is treated as a literal '['.
bool match_one(std::string_view p, std::size_t i, char c, std::size_t& next) {
  if (p[i] == '?') {
    next = i + 1;
    return true;
  }
  if (p[i] == '\\' && i + 1 < p.size()) {
    next = i + 2;
    return p[i + 1] == c;
  }
  if (p[i] == '[') {
    std::size_t j = i + 1;
    bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
    if (negate) ++j;
    bool matched = false;
    bool first = true;
    for (; j < p.size() && (p[j] != ']' || first); first = false) {
      char lo = p[j];
      if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
      char hi = lo;
      if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
        hi = p[j + 2];
        if (hi == '\\' && j + 3 < p.size()) hi = p[++j + 2];
        j += 3;
      } else {
        j += 1;
      }
      if (lo <= c && c <= hi) matched = true;
    }
    if (j < p.size()) {  // found the closing ']'
      next = j + 1;
      return matched != negate;
    }
    next = i + 1;  // no closing bracket: literal '['
    return c == '[';
  }
  next = i + 1;
  return p[i] == c;
}

}  // namespace

std::string glob_problem(std::string_view p) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      if (i + 1 == p.size()) return "a lone \\ at its end (\\ escapes the character after it)";
      ++i;
      continue;
    }
    if (p[i] != '[') continue;
    std::size_t j = i + 1;
    if (j < p.size() && (p[j] == '!' || p[j] == '^')) ++j;
    bool first = true;
    for (; j < p.size() && (p[j] != ']' || first); first = false) {
      char lo = p[j];
      if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
      if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
        char hi = p[j + 2];
        if (hi == '\\' && j + 3 < p.size()) hi = p[++j + 2];
        if (hi < lo)
          return "the range " + std::string(1, lo) + "-" + std::string(1, hi) + " in its [...] is backwards (it matches nothing)";
        j += 3;
      } else {
        j += 1;
      }
    }
    if (j >= p.size())
      return "unclosed [ at character " + std::to_string(i + 1) + " (a [...] set needs its ]; \\[ matches a [ itself)";
    i = j;
  }
  return {};
}

bool glob_match(std::string_view p, std::string_view t) {
  std::size_t pi = 0, ti = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    std::size_t next = 0;
    if (pi < p.size() && p[pi] == '*') {
      star_p = ++pi;
      star_t = ti;
    } else if (pi < p.size() && match_one(p, pi, t[ti], next)) {
      pi = next;
      ++ti;
    } else if (star_p != std::string_view::npos) {
      pi = star_p;
      ti = ++star_t;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::string glob_escape(std::string_view literal) {
  std::string out;
  for (char c : literal) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

namespace {
struct AreaRow {
  std::string_view family, area, label;
};
// The area table of spec/requirements.md (tools/gen_requirements.py).
constexpr AreaRow k_area_rows[] = {
#include "areas.inc"
};
}  // namespace

std::string area_of(std::string_view requirement_id) {
  const std::string_view family = requirement_id.substr(0, requirement_id.find('-'));
  for (const auto& row : k_area_rows)
    if (row.family == family) return std::string(row.area);
  return {};
}

const std::vector<std::string>& report_areas() {
  static const std::vector<std::string> areas = [] {
    std::vector<std::string> out;
    for (const auto& row : k_area_rows)
      if (std::find(out.begin(), out.end(), row.area) == out.end()) out.emplace_back(row.area);
    return out;
  }();
  return areas;
}

std::string area_label(std::string_view area) {
  if (area.empty()) return "other";
  for (const auto& row : k_area_rows)
    if (row.area == area) return std::string(row.label);
  return std::string(area);
}

std::size_t area_index(std::string_view area) {
  const auto& areas = report_areas();
  return static_cast<std::size_t>(std::find(areas.begin(), areas.end(), area) - areas.begin());
}

std::string shell_word(std::string_view w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                        std::string_view::npos)
    return std::string(w);
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace dlpv
