// app/src/explain.cpp: `explain ID`. A requirement: its entry of the requirement table (text,
// strength and the verdict a breach gets, whom it binds, source, the table's test note with
// the instrument tags it names spelled out) and the registered cases that cite it; a case: its
// declaration (title, severity, role, parameters, needs), its requirements in brief and the
// command that runs it alone. What a breach looks like is derived, not written per requirement:
// from the table's test note and the cases' titles (each states the behaviour its checks expect).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/case.hpp>
#include <dlpack_validate/explain.hpp>
#include <dlpack_validate/reports.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <regex>
#include <vector>

namespace dlpv {

namespace {

constexpr std::size_t kWidth = 100;
constexpr std::size_t kCasesShown = 12;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The table's Markdown code spans (`x`) without the backticks.
std::string plain(const std::string& markdown) {
  std::string out;
  for (char c : markdown)
    if (c != '`') out += c;
  return out;
}

/// `text` wrapped at kWidth columns, every line indented by `indent` spaces.
std::string wrap(const std::string& text, std::size_t indent) {
  std::string out, line;
  const std::string pad(indent, ' ');
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && indent + line.size() + 1 + word.size() > kWidth) {
      out += pad + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += pad + line + "\n";
  return out;
}

std::string binds_text(const std::string& binding) {
  if (binding == "P") return "the producer";
  if (binding == "C") return "the consumer";
  if (binding == "P+C" || binding == "P/C") return "the producer and the consumer";
  if (binding == "X") return "the exchange API";
  if (binding == "C/X") return "the consumer and the exchange API";
  if (binding == "P/X") return "the producer and the exchange API";
  return binding;
}

/// What the validator makes of a breach of a requirement of this strength (the table's rule:
/// MUST -> fail, SHOULD -> warn, MAY and INFO -> note; a mixed level is a warn, a fail where
/// its MUST part is broken).
enum class Grade { fail, warn, mixed, note };
Grade grade_of(const std::string& level) {
  const std::string up = upper(level);
  if (up.rfind("MUST", 0) == 0 && up.find("SHOULD") == std::string::npos && up.find("MAY") == std::string::npos)
    return Grade::fail;
  if (up.rfind("MAY", 0) == 0 || up.rfind("INFO", 0) == 0) return Grade::note;
  return up.find("MUST") != std::string::npos ? Grade::mixed : Grade::warn;
}
std::string breach_verdict(const std::string& level) {
  switch (grade_of(level)) {
    case Grade::fail: return "a breach is a fail (exit code 1)";
    case Grade::note: return "a breach is only a note (no verdict)";
    case Grade::mixed: return "a breach is a warn, a fail where its MUST part is broken";
    case Grade::warn: break;
  }
  return "a breach is a warn (a failure under --strict)";
}
/// The status a breach gives a case, in a sentence.
const char* breach_status(const std::string& level) {
  switch (grade_of(level)) {
    case Grade::fail: return "fail";
    case Grade::note: return "pass with a note";
    case Grade::mixed: return "warn or fail";
    case Grade::warn: break;
  }
  return "warn";
}

std::string severity_verdict(Severity s) {
  switch (s) {
    case Severity::must: return "a breach is a fail";
    case Severity::should: return "a breach is a warn (a failure under --strict)";
    case Severity::may: return "a breach is only a note";
  }
  return {};
}

/// The tags of the requirement table a text names: instruments (T-CNT) in a test note, sources
/// (PS, AA, H1.0+ for Hx.y) in a source.
std::vector<const RequirementTerm*> terms_in(const std::string& text, const char* kind) {
  std::vector<const RequirementTerm*> out;
  for (const RequirementTerm& t : requirement_terms()) {
    if (std::string(t.kind) != kind) continue;
    const std::string tag = t.tag;
    bool found = false;
    if (tag == "Hx.y") {
      // "H1.0+", "H0.6–H1.3", a bare "H" (the header, any version); not "H1.2dev", a tag of its own.
      found = std::regex_search(text, std::regex(R"((^|[^A-Za-z0-9])H(\d+\.\d+\+?)?(?![A-Za-z0-9]))"));
    } else {
      for (std::size_t at = text.find(tag); at != std::string::npos && !found; at = text.find(tag, at + 1)) {
        const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; };
        const bool before = at == 0 || !word(text[at - 1]);
        const std::size_t after = at + tag.size();
        found = before && (after >= text.size() || !word(text[after]) || text[after] == '-');
        // "H1.3" must not be read in "H1.3dev"; "AA" not in "AAf".
        if (found && after < text.size() && std::isalnum(static_cast<unsigned char>(text[after]))) found = false;
      }
    }
    if (found) out.push_back(&t);
  }
  return out;
}

std::size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The ids closest to an unknown one: those it begins (a case id cut short), else the nearest
/// by edit distance, requirement ids and case ids alike.
std::string close_matches(const std::string& id, const std::string& kind) {
  const std::string want = lower(id);
  std::vector<std::string> ids;
  for (const Requirement& r : all_requirements()) ids.push_back(r.id);
  for (const CaseInfo& c : Registry::instance().cases())
    if (applies_to(c, kind)) ids.push_back(c.id);
  std::vector<std::string> prefixed;
  for (const std::string& i : ids)
    if (lower(i).rfind(want, 0) == 0) prefixed.push_back(i);
  if (!prefixed.empty()) {
    std::string out;
    for (std::size_t k = 0; k < prefixed.size() && k < 3; ++k) out += (k ? ", " : "") + prefixed[k];
    if (prefixed.size() > 3) out += fmt::format(" (and {} more ids that begin so)", prefixed.size() - 3);
    return out;
  }
  std::vector<std::pair<std::size_t, std::string>> ranked;
  for (const std::string& i : ids) ranked.emplace_back(distance(want, lower(i)), i);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  const std::size_t limit = std::max<std::size_t>(2, want.size() / 3);  // farther is no slip of the keyboard
  for (std::size_t k = 0; k < ranked.size() && k < 3; ++k) {
    if (ranked[k].first > limit || (k > 0 && ranked[k].first > ranked[0].first + 2)) break;
    out += (k ? ", " : "") + ranked[k].second;
  }
  return out;
}

std::string doc_link(const ExplainContext& ctx, const std::string& id) {
  return ctx.requirements_doc.empty() ? std::string() : ctx.requirements_doc + "#" + lower(id);
}

std::string run_alone(const CaseInfo& c, const ExplainContext& ctx) {
  const bool python = ctx.kind == "python";
  const std::string subject = python ? "PKG" : "LIB.so";
  if (c.role == Role::pair)
    return fmt::format("{} {} OTHER{} --filter {}   (a pair case: name the producer and the consumer; it runs "
                       "between every two of the subjects given)",
                       ctx.program, subject, python ? "_PKG" : ".so", c.id);
  return fmt::format("{} {} --filter {}", ctx.program, subject, c.id);
}

/// The requirements no case of either front end tests, with why (spec/requirements.md's
/// *Untested:* parts, generated by tools/gen_requirements.py).
struct Untested {
  const char* id;
  const char* why;
};
constexpr Untested kUntested[] = {
#include "untested.inc"
};

const char* untested_why(const std::string& id) {
  for (const Untested& u : kUntested)
    if (id == u.id) return u.why;
  return nullptr;
}

std::string explain_requirement(const Requirement& q, const ExplainContext& ctx) {
  std::string out = fmt::format("{} · {}{}\n", q.id, q.level, *q.binding ? " · binds " + binds_text(q.binding) : "");
  out += wrap(plain(q.summary), 2);
  out += fmt::format("\nstrength: {}: {}\n", q.level, breach_verdict(q.level));
  if (*q.source) {
    out += "source (as the requirement table records it): " + plain(q.source) + "\n";
    for (const RequirementTerm* t : terms_in(q.source, "source"))
      out += wrap(fmt::format("{}: {}", t->tag, plain(t->text)), 2);
  }
  std::vector<const CaseInfo*> cases;
  for (const CaseInfo& c : Registry::instance().cases())
    if (applies_to(c, ctx.kind) && std::find(c.requirements.begin(), c.requirements.end(), q.id) != c.requirements.end())
      cases.push_back(&c);
  out += "\nwhat a breach looks like (from the table's test note";
  out += cases.empty() ? "):\n" : " and the cases' declarations):\n";
  if (*q.test) {
    out += wrap("the validator tests it so: " + plain(q.test), 2);
    for (const RequirementTerm* t : terms_in(q.test, "instrument")) out += wrap(fmt::format("{}: {}", t->tag, plain(t->text)), 4);
  }
  if (!cases.empty())
    out += wrap(fmt::format("a breach ends one of the cases below as {}, with a check citing {} that says what it "
                            "expected and what it observed (a crash or hang in a phase that tests it is charged to "
                            "it too); each case's title states the behaviour it expects.",
                            breach_status(q.level), q.id),
                2);
  const char* front = ctx.kind == "python" ? "python -m validator" : "dlpack-validate";
  if (const char* why = untested_why(q.id)) {
    out += "\n" + wrap(fmt::format("not tested by any case: {} (spec/requirements.md)", why), 0);
  } else if (cases.empty()) {
    out += fmt::format("\ncases that test it: none of {}'s{}\n", front,
                       ctx.kind == "plugin" ? " (Python-protocol cases: python -m validator explain " + std::string(q.id) + ")"
                                            : "");
  } else {
    out += fmt::format("\ncases that test it ({} of {}'s; explain a case id for its details):\n", cases.size(), front);
    if (cases.size() <= kCasesShown) {
      for (const CaseInfo* c : cases) out += fmt::format("  {}  {}\n", c->id, c->title);
    } else {
      // Many: one line per group of ids (their first two segments: consumer.tensor.*), with
      // how many and one of them, up to kCasesShown groups.
      std::vector<std::pair<std::string, std::vector<const CaseInfo*>>> groups;
      for (const CaseInfo* c : cases) {
        const std::size_t dot = c->id.find('.');
        const std::size_t dot2 = dot == std::string::npos ? dot : c->id.find('.', dot + 1);
        const std::string key = dot2 == std::string::npos ? c->id : c->id.substr(0, dot2) + ".*";
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
        if (g == groups.end()) groups.push_back({key, {c}});
        else g->second.push_back(c);
      }
      for (std::size_t k = 0; k < groups.size() && k < kCasesShown; ++k) {
        const auto& [key, members] = groups[k];
        out += fmt::format("  {} ({} case{}), e.g. {}: {}\n", key, members.size(), members.size() == 1 ? "" : "s",
                           members.front()->id, members.front()->title);
      }
      if (groups.size() > kCasesShown) out += fmt::format("  ... {} more groups\n", groups.size() - kCasesShown);
      out += fmt::format("  all {}: {} --list --requirement {}\n", cases.size(), ctx.program, q.id);
    }
    if (ctx.kind == "plugin")
      out += fmt::format("  (Python packages: python -m validator explain {} adds the Python-protocol cases)\n", q.id);
  }
  const std::string link = doc_link(ctx, q.id);
  if (!link.empty()) out += "\nfull entry: " + link + "\n";
  return out;
}

/// The fixtures that prove each case (cases/catalogue.tsv's PROOF column, written by
/// tests/proofs/catalogue.py): "TABLE:FIXTURE=CTEST ..." by case id, in id order.
struct ProofOf {
  const char* id;
  const char* proof;
};
constexpr ProofOf kProofs[] = {
#include "proofs.inc"
};

/// "proven by" lines for a case: each fixture, its table and the CTest test that runs it.
std::string proof_text(const std::string& id) {
  const auto* end = std::end(kProofs);
  const auto* it = std::lower_bound(std::begin(kProofs), end, id,
                                    [](const ProofOf& p, const std::string& k) { return p.id < k; });
  if (it == end || it->id != id)
    return "proven by: no fixture in the catalogue this build was made from (cases/catalogue.tsv)\n";
  std::string out = "proven by (a planted bug that must break it; tests/proofs/README.md):\n";
  std::istringstream items(it->proof);
  std::string item;
  while (items >> item) {
    const auto colon = item.find(':'), eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) continue;
    out += fmt::format("  {} (tests/proofs/{}.tsv), its test: ctest -R '^{}$'\n", item.substr(colon + 1, eq - colon - 1),
                       item.substr(0, colon), item.substr(eq + 1));
  }
  return out;
}

std::string explain_case(const CaseInfo& c, const ExplainContext& ctx) {
  std::string out = "case " + c.id + "\n" + wrap(c.title, 2);
  out += fmt::format("\nseverity: {} ({}); role: {}\n", to_string(c.severity), severity_verdict(c.severity),
                     to_string(c.role));
  if (!c.params.empty()) {
    std::string p;
    for (const auto& [k, v] : c.params) p += (p.empty() ? "" : ", ") + k + "=" + v;
    out += "parameters: " + p + "\n";
  }
  if (!c.needs.empty()) {
    std::string n;
    for (const std::string& x : c.needs) n += (n.empty() ? "" : ", ") + x;
    out += "needs: " + n + " (a subject without one of these gets a skip)\n";
  }
  if (!applies_to(c, ctx.kind)) {
    std::string k;
    for (const std::string& x : c.kinds) k += (k.empty() ? "" : ", ") + x;
    out += "runs only for subjects of kind: " + k + " (not for this front end's)\n";
  }
  if (!c.source.empty()) out += "declared in: " + c.source + "\n";
  out += "\nrequirements it tests:\n";
  for (const std::string& id : c.requirements) {
    const Requirement* q = find_requirement(id);
    if (!q) {
      out += "  " + id + " (not in the requirement table)\n";
      continue;
    }
    out += fmt::format("  {} · {}{}: {}\n", q->id, q->level, *q->binding ? " · " + binds_text(q->binding) : "",
                       breach_verdict(q->level));
    out += wrap(plain(q->summary), 4);
    out += fmt::format("    (all of it: {} explain {})\n", ctx.program, q->id);
  }
  out += "\n" + proof_text(c.id);
  out += "\nrun it alone: " + run_alone(c, ctx) + "\n";
  return out;
}

}  // namespace

std::string explain(const std::string& id, const ExplainContext& ctx) {
  if (const Requirement* q = find_requirement(upper(id))) return explain_requirement(*q, ctx);
  if (const CaseInfo* c = Registry::instance().find(lower(id))) return explain_case(*c, ctx);
  if (ctx.kind == "plugin" && lower(id).rfind("python.", 0) == 0)
    throw BadInput{fmt::format("explain: '{}' is not a case of dlpack-validate (plugins): Python-protocol cases are "
                               "explained by python -m validator explain {}", id, id)};
  const std::string close = close_matches(id, ctx.kind);
  throw BadInput{fmt::format("explain: '{}' is neither a requirement id (such as CAP-01) nor a case id ({})", id,
                             close.empty() ? "no id is close to it; --list shows the case ids, docs/requirements.md the requirements"
                                           : "closest: " + close)};
}

int run_explain(const std::string& id, const ExplainContext& ctx) {
  // The id is the user's and may echo anything they typed: terminal-safe, by the one rule.
  const std::string text = reports::terminal_text(explain(id, ctx), false);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace dlpv
