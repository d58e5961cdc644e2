// SPDX-License-Identifier: Apache-2.0
// common.cpp: tolerant record accessors and shared vocabularies for the writers.
#include "common.hpp"
#include "escape.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "dlpack_validate/ids.hpp"
#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"

namespace dlpv::reports::detail {

int severity_rank(std::string_view s) {
  // skip < pass < xfail < xpass < warn < fail < error < timeout < crash
  static constexpr std::array<std::string_view, 9> order = {
      "skip", "pass", "xfail", "xpass", "warn", "fail", "error", "timeout", "crash"};
  auto it = std::find(order.begin(), order.end(), s);
  return it == order.end() ? 6 : static_cast<int>(it - order.begin());
}



std::string subject_label(const json& run, const json& result) {
  const json& p = member(result, "params");
  if (text(result, "role") != "pair" || text(p, "producer").empty() || text(p, "consumer").empty()) {
    return subject_name(run, result);
  }
  auto idx = [&](const char* k) { return verdict::access::index_value(member(p, k)); };
  const std::string charge = charge_text(run, result);
  return subject_name(run, idx("producer")) + " \xE2\x86\x92 " + subject_name(run, idx("consumer")) +
         (charge.empty() ? std::string() : " (" + charge + ")");
}

std::string legacy_note(const json& subject) {
  if (!flag(subject, "legacy_only")) return {};
  bool exv = false, exl = false, imv = false, iml = false;
  if (subject.contains("capabilities") && subject["capabilities"].is_array()) {
    for (const auto& c : subject["capabilities"]) {
      std::string s = text_of(c);
      exv |= s == "export_versioned";
      exl |= s == "export_legacy";
      imv |= s == "import_versioned";
      iml |= s == "import_legacy";
    }
  }
  std::vector<std::string> parts;
  if (exl && !exv) parts.push_back("legacy-only DLPack producer (no versioned export)");
  if (iml && !imv) parts.push_back("legacy-only DLPack consumer (no versioned import)");
  if (parts.empty()) return "legacy-only DLPack (pre-1.0 ABI, no versioned tensors)";
  return parts.size() == 1 ? parts[0] : parts[0] + "; " + parts[1];
}

std::string requirement_summary(const json& run, const std::string& id) {
  if (!run.contains("requirements") || !run["requirements"].is_object()) return {};
  const json& reqs = run["requirements"];
  auto it = reqs.find(id);
  return it == reqs.end() ? std::string() : text(*it, "summary");
}

std::string shell_join(const json& argv) {
  if (!argv.is_array()) return text_of(argv);
  std::string out;
  for (const auto& a : argv) {
    std::string w = text_of(a);
    bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    if (!out.empty()) out += ' ';
    if (plain) {
      out += w;
    } else {
      out += '\'';
      for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::string seconds3(const json& v) {
  double d = v.is_number() ? v.get<double>() : 0.0;
  if (!std::isfinite(d) || d < 0) d = 0;
  return fmt::format(FMT_STRING("{:.3f}"), d);
}

std::string utf8_prefix(const std::string& s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  // Step back over continuation bytes so a multi-byte sequence is not split.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string bounded_tail(const std::string& s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
  return fmt::format(FMT_STRING("[... {} earlier bytes omitted ...]\n"), start) + s.substr(start);
}

std::string one_line(const std::string& s, std::size_t max_bytes) {
  std::size_t nl = s.find_first_of("\r\n");
  std::string first = s.substr(0, nl);
  bool cut = nl != std::string::npos && s.find_first_not_of("\r\n \t", nl) != std::string::npos;
  if (first.size() > max_bytes) {
    first = utf8_prefix(first, max_bytes);
    cut = true;
  }
  return cut ? first + "…" : first;
}

const json& with_summary(const json& run, json& storage) {
  if (member(run, "summary").is_object()) return run;
  storage = run.is_object() ? run : json::object();
  finalize_summary(storage);
  return storage;
}

namespace {
/// Where in the exchange a phase is, as a sentence's end ("in its deleter").
std::string phase_words(const std::string& phase) {
  if (phase == "export") return "while exporting a tensor";
  if (phase == "import") return "while importing a tensor";
  if (phase == "read") return "while its array's data was read";
  if (phase == "release") return "while releasing an array";
  if (phase == "deleter") return "in its deleter";
  if (phase == "inspect") return "while the validator read the tensor it had exported (a bad pointer in it)";
  if (phase == "exchange_api") return "in its exchange API";
  if (phase == "setup" || phase == "make") return "while the case made its input";
  if (phase == "load" || phase == "loading" || phase.rfind("load_check", 0) == 0) return "while it was loaded or checked";
  return phase.empty() ? std::string() : "in phase '" + phase + "'";
}
}  // namespace

std::string death_statement(const json& run, const json& r) {
  const std::string st = status_of(r);
  if (st == "error") {
    const std::string msg = text(r, "message");
    return "the validator (its harness, or the package's adapter) failed here, not the library under test (no "
           "finding about it)" +
           (msg.empty() ? std::string() : ": " + msg);
  }
  if (st != "crash") return {};
  const std::string sig = text(r, "signal"), phase = text(r, "phase"), msg = text(r, "message");
  std::string who = "the library under test";
  const Charge c = charge_of(run, r);
  if (text(r, "role") == "pair" && c.subject >= 0) who += " (" + subject_name(run, c.subject) + ", the " + c.side + ")";
  std::string how;
  if (!sig.empty()) how = "crashed (" + sig + ")";
  else if (msg.find("exited with status") != std::string::npos) how = "ended the process (it called exit)";
  else how = "ended the process";
  std::string s = who + " " + how;
  const std::string where = phase_words(phase);
  if (!where.empty()) s += " " + where;
  s += "; the validator survived and went on (the case ran in a worker process of its own)";
  // The message as the harness wrote it: "killed by SIGSEGV (11) in phase 'deleter'" says no
  // more than the above; what follows it ("(testing DEL-08)"), or another wording, does.
  const std::string plain = "killed by " + sig + " in phase '" + phase + "'";
  if (!sig.empty() && msg.rfind(plain, 0) == 0) {
    if (msg.size() > plain.size()) s += msg.substr(plain.size());
  } else if (!msg.empty()) {
    s += ". The worker: " + msg;
  }
  return s;
}

std::string reason_line(const json& run, const json& r) {
  std::string st = status_of(r);
  std::string msg = text(r, "message");
  const json& b = member(r, "baseline");
  if (st == "crash") return death_statement(run, r);
  if (st == "timeout") {
    std::string limit = run.contains("options") ? text(run["options"], "timeout_s") : "";
    std::string s = limit.empty() ? "timed out" : "no result within " + limit + " s";
    if (!text(r, "phase").empty()) s += " (phase " + text(r, "phase") + ")";
    return msg.empty() ? s : s + ": " + msg;
  }
  if (st == "xfail") {
    std::string s = "expected failure";
    if (!text(b, "reason").empty()) s += ": " + text(b, "reason");
    if (!text(b, "issue").empty()) s += " (" + text(b, "issue") + ")";
    return s;
  }
  if (st == "xpass") {
    std::string s = "passed, but the baseline expects " +
                    (text(b, "expect").empty() ? std::string("a failure") : text(b, "expect"));
    if (!text(b, "reason").empty()) s += " (" + text(b, "reason") + ")";
    return s;
  }
  if (!msg.empty()) return msg;
  std::string e = text(r, "expected"), o = text(r, "observed");
  if (!e.empty() || !o.empty()) return "expected " + e + ", observed " + o;
  return st == "pass" ? std::string() : text(r, "title");
}

std::vector<IncidentGroup> incident_groups(const json& run) {
  std::vector<IncidentGroup> out;
  for (const auto& i : array_at(run, "incidents")) {
    if (!i.is_object()) continue;
    const std::string message = text(i, "message");
    auto same = std::find_if(out.begin(), out.end(), [&](const IncidentGroup& g) { return g.message == message; });
    if (same != out.end()) {
      ++same->count;
      continue;
    }
    out.push_back({1, text(i, "kind"), message, text(i, "signal"), text(i, "next_case"), text(i, "output_tail")});
  }
  return out;
}

std::vector<NotRunLine> not_run_lines(const json& run, std::size_t sample) {
  std::vector<NotRunLine> out;
  for (const auto& n : array_at(run, "not_run")) {
    if (!n.is_object()) continue;
    NotRunLine line;
    const json& cases = array_at(n, "cases");
    line.count = n.contains("count") && n["count"].is_number_unsigned() ? n["count"].get<std::size_t>() : cases.size();
    line.reason = text(n, "reason");
    for (std::size_t k = 0; k < cases.size() && k < sample; ++k)
      line.sample += (k ? ", " : "") + text_of(cases[k]);
    if (cases.size() > sample) line.sample += ", ...";
    out.push_back(std::move(line));
  }
  return out;
}

std::string requirement_link(const json& run, const std::string& id) {
  const std::string doc = text(member(run, "tool"), "requirements_doc");
  if (doc.empty() || id.empty()) return {};
  std::string anchor;
  for (char c : id) anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return doc + "#" + anchor;
}

std::string plain_text(const std::string& markdown) {
  std::string out;
  for (char c : markdown)
    if (c != '`') out += c;
  return out;
}

std::string html_text_with_code(const std::string& markdown) {
  std::string out;
  std::size_t start = 0;
  bool in_code = false;
  while (start <= markdown.size()) {
    const std::size_t tick = markdown.find('`', start);
    const std::string part = markdown.substr(start, tick == std::string::npos ? std::string::npos : tick - start);
    // An unpaired backtick at the end is shown as written.
    if (tick == std::string::npos) {
      out += in_code ? "`" + html_escape(part) : html_escape(part);
      break;
    }
    out += in_code ? "<code>" + html_escape(part) + "</code>" : html_escape(part);
    in_code = !in_code;
    start = tick + 1;
  }
  return out;
}

std::string rerun_command(const json& run, const json& result) {
  const json& argv = member(run, "command_line");
  if (!argv.is_array() || argv.empty()) return {};
  // A merged record's command line is the merge's (report merge A.json B.json): it runs no case.
  if (argv.size() > 1 && text_of(argv[1]) == "report") return {};
  // The program: the record's invocation (the shell command that runs the same tool from the
  // directory the run started in: the interpreter with -P and PYTHONPATH for python -m
  // validator), else, in records made before it, the first word as the front end wrote it.
  const std::string program = text(run, "invocation");
  // Options that take a value and are dropped (reports, baselines, selection).
  static const std::vector<std::string> valued = {"--json", "--html", "--junit", "--summary-md",
                                                  "--write-baseline", "--baseline", "--xfails-file",
                                                  "--filter", "--exclude", "--requirement", "--keyword", "-k"};
  static const std::vector<std::string> flags = {"-x", "--exitfirst", "-q", "--quiet"};
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string a = text_of(argv[i]);
    bool drop = std::find(flags.begin(), flags.end(), a) != flags.end();
    for (const std::string& v : valued) {
      if (a == v) {
        drop = true;
        ++i;  // and its value
      } else if (a.rfind(v + "=", 0) == 0) {
        drop = true;
      }
    }
    if (drop) continue;
    out += (out.empty() ? "" : " ") + (i > 0 ? shell_word(a) : program.empty() ? a : program);
  }
  return out + " --filter " + shell_word(text(result, "id"));
}

std::string explain_command(const json& run) {
  std::string program = text(run, "invocation");
  const json& argv = member(run, "command_line");
  if (program.empty() && argv.is_array() && !argv.empty()) {
    program = text_of(argv[0]);
    // "python", "-m", "validator" as three words: the program is all three.
    if (argv.size() >= 3 && text_of(argv[1]) == "-m") program += " -m " + shell_word(text_of(argv[2]));
  }
  return (program.empty() ? std::string("dlpack-validate") : program) + " explain";
}

/// The path the run's --write-baseline named (its command line), or "".
std::string written_baseline(const json& run) {
  const json& argv = member(run, "command_line");
  if (!argv.is_array()) return {};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string a = text_of(argv[i]);
    if (a == "--write-baseline" && i + 1 < argv.size()) return text_of(argv[i + 1]);
    if (a.rfind("--write-baseline=", 0) == 0) return a.substr(17);
  }
  return {};
}

std::vector<std::string> next_steps(const json& run) {
  const bool strict = is_strict(run);
  const json* first = nullptr;
  std::size_t timeouts = 0, unexpected = 0;
  std::vector<std::string> confirmations;
  for (const auto& r : array_at(run, "results")) {
    const std::string st = status_of(r);
    if (is_unexpected(st, strict)) {
      ++unexpected;
      if (!first) first = &r;
    }
    if (st == "timeout") ++timeouts;
    const std::string by = text(member(r, "baseline"), "confirmed_by");
    if (!by.empty() && std::find(confirmations.begin(), confirmations.end(), by) == confirmations.end())
      confirmations.push_back(by);
  }
  std::vector<std::string> out;
  if (first) {
    const std::string cmd = rerun_command(run, *first);
    if (!cmd.empty())
      out.push_back("run one case again (any id above in place of this one): " + cmd);
    const std::string written = written_baseline(run);
    if (!written.empty())
      out.push_back("this run wrote these findings to " + shell_word(written) + " (--write-baseline; the verdict "
                    "below is still the run's own): read it (one entry per finding, with its reason to fill in), "
                    "then run with --baseline " + shell_word(written) + "; a problem fixed later shows as xpass and "
                    "as a stale entry");
    else
      out.push_back("accept these findings as known: run once more with --write-baseline known.json, read it (one "
                    "entry per finding, with its reason to fill in), then run with --baseline known.json; a problem "
                    "fixed later shows as xpass and as a stale entry");
  }
  if (timeouts > 0)
    out.push_back(fmt::format(
        "{} timeout{}: each was already run a second time alone, in a fresh process, with twice the limit. Run it "
        "again with a much longer --timeout (e.g. --timeout 120) and --isolate=case: a case that then finishes is "
        "slow on this machine (raise --timeout in CI); one that still times out hangs in the library",
        timeouts, timeouts == 1 ? "" : "s"));
  for (std::size_t i = 0; i < confirmations.size() && i < 5; ++i)
    out.push_back("confirm outside the validator (a baseline entry's script, from the validator's repository): python " +
                  confirmations[i]);
  (void)unexpected;
  return out;
}

}  // namespace dlpv::reports::detail
