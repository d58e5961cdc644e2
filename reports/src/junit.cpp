// SPDX-License-Identifier: Apache-2.0
// junit.cpp: JUnit XML in the subset CI systems agree on (style reference B1).
//
// Choices that matter downstream: GitLab shows testcase/@classname as the suite and drops
// duplicate classname+name pairs, and shows element *text* rather than @message, so the
// message is repeated in the body; Jenkins wants three-decimal times and consistent counts;
// skipped cases must be present or they vanish from dashboards.
#include <map>
#include <tuple>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "bench_parts.hpp"
#include "common.hpp"
#include "dlpack_validate/reports.hpp"
#include "escape.hpp"

namespace dlpv::reports {

using detail::json;

namespace {

constexpr std::size_t k_output_limit = 16 * 1024;  // per testcase, keeps files far from CI caps
constexpr std::size_t k_message_limit = 1024;

std::string attr(const char* name, const std::string& value) {
  return fmt::format(FMT_STRING(" {}=\"{}\""), name, detail::xml_attr(value));
}

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
};

double seconds(const json& r) {
  auto it = r.find("duration_s");
  if (it == r.end() || !it->is_number()) return 0;
  double d = it->get<double>();
  return d > 0 ? d : 0;
}

// Requirements line, expected/observed, phase: what a reader needs next to the verdict.
std::string detail_body(const json& run, const json& r) {
  std::ostringstream b;
  std::string msg = detail::text(r, "message");
  if (!msg.empty()) b << msg << '\n';
  const std::string charge = detail::charge_text(run, r);
  if (!charge.empty()) b << charge << '\n';
  for (const auto& id : detail::requirements_of(r)) {
    std::string summary = detail::plain_text(detail::requirement_summary(run, id));
    b << "requirement " << id;
    if (!summary.empty()) b << ": " << summary;
    b << '\n';
  }
  for (const char* key : {"expected", "observed", "phase", "signal"}) {
    std::string v = detail::text(r, key);
    if (!v.empty()) b << key << ": " << v << '\n';
  }
  if (r.contains("baseline") && r["baseline"].is_object()) {
    const json& bl = r["baseline"];
    b << "baseline: expects " << detail::text(bl, "expect") << " for "
      << detail::text(bl, "case") << " (" << detail::text(bl, "reason") << ")";
    if (!detail::text(bl, "issue").empty()) b << ' ' << detail::text(bl, "issue");
    b << '\n';
  }
  return b.str();
}

// The child element for a status ("" for a plain pass), counting it into c.
std::string verdict_element(const json& run, const json& r, bool strict, Counts& c,
                            std::string& system_out) {
  std::string st = detail::status_of(r);
  // A pair finding names the library it is charged to first: the suite is the pair's.
  const std::string charge = detail::charge_text(run, r);
  std::string reason = detail::one_line((charge.empty() ? "" : "[" + charge + "] ") + detail::reason_line(run, r),
                                        k_message_limit);
  std::string body = detail::xml_text(detail_body(run, r));
  auto element = [&](const char* tag, const std::string& type) {
    return fmt::format(FMT_STRING("      <{}{}{}>{}</{}>\n"), tag, attr("type", type),
                       attr("message", reason), body, tag);
  };
  if (st == "fail") {
    ++c.failures;
    // The requirement that failed (its first failing check's), so dashboards group by it.
    const std::string broken = detail::failing_requirement(r);
    return element("failure", broken.empty() ? std::string("fail") : broken);
  }
  if (st == "warn" || st == "xpass") {
    if (strict) {
      ++c.failures;
      return element("failure", st);
    }
    system_out = (st == "warn" ? "warning (SHOULD not met, passes unless --strict): "
                               : "unexpected pass of a baselined case: ") +
                 reason + "\n" + detail_body(run, r);
    return {};
  }
  if (st == "skip" || st == "xfail") {
    ++c.skipped;
    return element("skipped", st);
  }
  if (st == "crash" || st == "timeout" || st == "error") {
    ++c.errors;
    return element("error", st == "error" ? std::string("harness-error") : st);
  }
  return {};
}

std::string testcase_name(const json& run, const json& r, const std::string& classname,
                          std::set<std::string>& used) {
  std::string id = detail::text(r, "id");
  std::string name = id;
  if (used.count(classname + '\n' + name) && detail::text(r, "role") == "pair" &&
      r.contains("params")) {
    const json& p = r["params"];
    auto idx = [&](const char* k) {
      try {
        return std::stoll(detail::text(p, k));
      } catch (...) {
        return -1LL;
      }
    };
    name = fmt::format(FMT_STRING("{} [{} -> {}]"), id, detail::subject_name(run, idx("producer")),
                       detail::subject_name(run, idx("consumer")));
  }
  std::string base = name;
  for (int k = 2; used.count(classname + '\n' + name); ++k) {
    name = fmt::format(FMT_STRING("{} #{}"), base, k);
  }
  used.insert(classname + '\n' + name);
  return name;
}

std::string testcase(const json& run, const json& r, const std::string& suite_id, bool strict,
                     Counts& c, std::set<std::string>& used) {
  std::string area = detail::text(r, "area");
  std::string classname =
      "dlpack-validate." + suite_id + "." + (area.empty() ? "other" : detail::sanitize_identifier(area));
  std::string name = testcase_name(run, r, classname, used);
  ++c.tests;
  c.time += seconds(r);

  std::string system_out;
  std::string verdict = verdict_element(run, r, strict, c, system_out);
  std::string out = fmt::format(FMT_STRING("    <testcase{}{}{}>\n"), attr("classname", classname),
                                attr("name", name), attr("time", detail::seconds3(detail::member(r, "duration_s"))));
  auto reqs = detail::requirements_of(r);
  if (!reqs.empty()) {
    std::string joined;
    for (const auto& id : reqs) joined += (joined.empty() ? "" : " ") + id;
    out += "      <properties>\n        <property" + attr("name", "requirements") +
           attr("value", joined) + "/>\n      </properties>\n";
  }
  out += verdict;
  if (!system_out.empty()) {
    out += "      <system-out>" + detail::xml_text(system_out) + "</system-out>\n";
  }
  std::string tail = detail::text(r, "output_tail");
  if (!tail.empty()) {
    out += "      <system-err>" + detail::xml_text(detail::bounded_tail(tail, k_output_limit)) +
           "</system-err>\n";
  }
  out += "    </testcase>\n";
  return out;
}

std::string property(const std::string& name, const std::string& value) {
  return "      <property" + attr("name", name) + attr("value", value) + "/>\n";
}

std::string properties(const json& run, const json& subject) {
  std::string p = "    <properties>\n";
  const json& tool = detail::member(run, "tool");
  p += property("dlpack-validate.version", detail::text(tool, "version"));
  p += property("command_line", detail::shell_join(detail::member(run, "command_line")));
  if (!detail::text(tool, "requirements_doc").empty())
    p += property("requirements_doc", detail::text(tool, "requirements_doc"));
  p += property("subject.path", detail::text(subject, "path"));
  p += property("subject.name", detail::text(subject, "name"));
  p += property("subject.kind", detail::text(subject, "kind"));
  p += property("subject.dlpack_version", detail::text(subject, "dlpack_version"));
  std::string legacy = detail::legacy_note(subject);
  if (!legacy.empty()) p += property("subject.legacy_only", legacy);
  const json& opts = detail::member(run, "options");
  std::string filters;
  if (opts.contains("filters") && opts["filters"].is_array()) {
    for (const auto& f : opts["filters"]) filters += (filters.empty() ? "" : " ") + detail::text_of(f);
  }
  p += property("filters", filters);
  p += property("strict", detail::flag(opts, "strict") ? "true" : "false");
  if (run.contains("baseline_report") && run["baseline_report"].is_object()) {
    const json& br = run["baseline_report"];
    p += property("baseline", detail::text(br, "path"));
    p += property("baseline.sha256", detail::text(br, "sha256"));
  }
  return p + "    </properties>\n";
}

// A pair suite's properties: both ends, and how many of its findings each end is charged
// with ("charged.producer" / "charged.consumer" / "charged.neither").
std::string pair_properties(const json& run, long long producer, long long consumer,
                            const std::vector<const json*>& results) {
  std::string p = "    <properties>\n";
  const json& tool = detail::member(run, "tool");
  p += property("dlpack-validate.version", detail::text(tool, "version"));
  p += property("command_line", detail::shell_join(detail::member(run, "command_line")));
  p += property("producer.name", detail::subject_name(run, producer));
  p += property("consumer.name", detail::subject_name(run, consumer));
  std::size_t by_side[3] = {0, 0, 0};
  for (const json* r : results) {
    const std::string charge = detail::charge_text(run, *r);
    if (charge.empty()) continue;
    const Charge c = charge_of(run, *r);
    ++by_side[c.side == "producer" ? 0 : c.side == "consumer" ? 1 : 2];
  }
  p += property("charged.producer", std::to_string(by_side[0]));
  p += property("charged.consumer", std::to_string(by_side[1]));
  p += property("charged.neither", std::to_string(by_side[2]));
  return p + "    </properties>\n";
}

std::string counts_attrs(const Counts& c) {
  return attr("tests", std::to_string(c.tests)) + attr("failures", std::to_string(c.failures)) +
         attr("errors", std::to_string(c.errors)) + attr("skipped", std::to_string(c.skipped));
}

// The bench routes as one more suite: a testcase per route with its figures as properties;
// unavailable -> skipped, error -> error, regression -> a note (strict: a failure).
std::string bench_suite(const json& run, bool strict, Counts& c) {
  const json& b = detail::bench_of(run);
  if (!b.is_object()) return {};
  std::string cases;
  std::set<std::string> used;
  const std::vector<detail::BenchRow> rows = detail::bench_rows(run);
  const json& routes = detail::array_at(b, "routes");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const detail::BenchRow& r = rows[i];
    const std::string classname = "dlpack-validate.bench." + detail::sanitize_identifier(r.subjects);
    std::string name = r.route;
    for (int k = 2; !used.insert(classname + '\n' + name).second; ++k) name = fmt::format(FMT_STRING("{} #{}"), r.route, k);
    ++c.tests;
    // Time spent measuring: raw ns/op x operations x batches.
    double spent = 0;
    try {
      spent = std::stod(r.raw_median) * std::stod(r.iterations) * std::stod(r.batches) / 1e9;
    } catch (...) {
    }
    c.time += spent;
    std::string out = fmt::format(FMT_STRING("    <testcase{}{}{}>\n"), attr("classname", classname), attr("name", name),
                                  attr("time", detail::seconds3(json(spent))));
    std::string props;
    const std::pair<const char*, const std::string*> figures[] = {
        {"net_ns.median", &r.net_median}, {"net_ns.p10", &r.net_p10}, {"net_ns.p90", &r.net_p90},
        {"raw_ns.median", &r.raw_median}, {"raw_ns.p10", &r.raw_p10}, {"raw_ns.p90", &r.raw_p90},
        {"iterations", &r.iterations},    {"batches", &r.batches},    {"baseline_net_ns.median", &r.baseline},
        {"ratio", &r.ratio}};
    for (const auto& [key, value] : figures)
      if (!value->empty()) props += "        <property" + attr("name", key) + attr("value", *value) + "/>\n";
    if (!props.empty()) out += "      <properties>\n" + props + "      </properties>\n";
    const std::string figures_line =
        r.status == "ok" ? fmt::format(FMT_STRING("{}\nnet {} ns/op [p10 {} .. p90 {}], raw {} ns/op, {} ops x {} batches{}\n"),
                                       r.title, r.net_median, r.net_p10, r.net_p90, r.raw_median, r.iterations,
                                       r.batches, r.ratio.empty() ? "" : ", " + r.ratio + " the baseline")
                         : r.title + "\n";
    const std::string reason = detail::one_line(r.regression ? detail::text(routes[i], "route") + " regressed: " + r.ratio +
                                                                   " the baseline's net median"
                                                             : r.reason, k_message_limit);
    auto element = [&](const char* tag, const char* type) {
      return fmt::format(FMT_STRING("      <{}{}{}>{}</{}>\n"), tag, attr("type", type), attr("message", reason),
                         detail::xml_text(figures_line + r.reason), tag);
    };
    if (r.status == "unavailable") {
      ++c.skipped;
      out += element("skipped", "unavailable");
    } else if (r.status != "ok") {
      ++c.errors;
      out += element("error", "bench-error");
    } else if (r.regression && strict) {
      ++c.failures;
      out += element("failure", "bench-regression");
    }
    std::string note = figures_line;
    if (r.regression && !strict) note = "warning (regression, fails only with --strict): " + reason + "\n" + note;
    if (r.status == "ok") out += "      <system-out>" + detail::xml_text(note) + "</system-out>\n";
    cases += out + "    </testcase>\n";
  }
  std::string head = "    <properties>\n" + property("dlpack-validate.version", detail::text(detail::member(run, "tool"), "version")) +
                     property("command_line", detail::shell_join(detail::member(run, "command_line"))) +
                     property("bench.calibration", detail::bench_calibration_line(run));
  if (!detail::text(b, "error").empty()) head += property("bench.error", detail::text(b, "error"));
  return head + "    </properties>\n" + cases;
}

/// Adds a suite's counts to the run's.
void add(Counts& total, const Counts& c, bool with_time) {
  total.tests += c.tests, total.failures += c.failures, total.errors += c.errors;
  total.skipped += c.skipped;
  if (with_time) total.time += c.time;
}

/// Where the suites of a record are written: the run's start and host (on every suite).
struct SuiteFrame {
  std::string timestamp, hostname;

  /// A <testsuite> with its counts, its time and the run's start and host, around `body`.
  std::string suite(const std::string& name, const Counts& c, const std::string& time, const std::string& body) const {
    std::string out = "  <testsuite" + attr("name", name) + counts_attrs(c) + attr("time", time);
    if (!timestamp.empty()) out += attr("timestamp", timestamp);
    if (!hostname.empty()) out += attr("hostname", hostname);
    return out + ">\n" + body + "  </testsuite>\n";
  }
};

// One suite per subject (its own cases), then one per ordered pair that ran pair cases (named
// "pair P -> C"; a finding's message says which end it is charged to), then results without a
// valid subject. A pair testcase keeps its suite whatever its status, so CI history follows it;
// no library's suite counts another library's findings.
using Key = std::tuple<int, long long, long long>;  // (0 subject | 1 pair | 2 none, a, b)

std::map<Key, std::vector<const json*>> buckets_of(const json& run, std::size_t n_subjects) {
  std::map<Key, std::vector<const json*>> buckets;
  for (const auto& r : detail::array_at(run, "results")) {
    const long long idx = detail::subject_index(run, r);
    const json& p = detail::member(r, "params");
    auto end = [&](const char* k) { return detail::subject_index_of(run, detail::member(p, k)); };
    if (detail::text(r, "role") == "pair" && end("producer") >= 0 && end("consumer") >= 0)
      buckets[Key{1, end("producer"), end("consumer")}].push_back(&r);
    else if (idx >= 0)
      buckets[Key{0, idx, 0}].push_back(&r);
    else
      buckets[Key{2, 0, 0}].push_back(&r);
  }
  for (std::size_t i = 0; i < n_subjects; ++i) buckets[Key{0, static_cast<long long>(i), 0}];
  return buckets;
}

/// The subjects', pairs' and subjectless results' suites.
std::string result_suites(const json& run, const json& subjects, bool strict, const SuiteFrame& frame, Counts& total) {
  std::string suites;
  std::set<std::string> used_suite_ids;
  for (const auto& [key, bucket] : buckets_of(run, subjects.size())) {
    const auto& [kind, a, b] = key;
    std::string name, suite_id, props;
    if (kind == 0) {
      name = detail::subject_name(run, a);
      suite_id = detail::sanitize_identifier(name);
      if (suite_id.empty()) suite_id = fmt::format(FMT_STRING("subject{}"), a);
      props = properties(run, subjects[static_cast<std::size_t>(a)]);
    } else if (kind == 1) {
      name = "pair " + detail::subject_name(run, a) + " -> " + detail::subject_name(run, b);
      suite_id = detail::sanitize_identifier("pair " + detail::subject_name(run, a) + " to " +
                                             detail::subject_name(run, b));
      props = pair_properties(run, a, b, bucket);
    } else {
      name = "(no subject)";
      suite_id = "no_subject";
      props = properties(run, json());
    }
    // Two subjects can share a name (same library, two builds); keep classnames distinct.
    if (!used_suite_ids.insert(suite_id).second)
      suite_id += kind == 1 ? fmt::format(FMT_STRING("_{}_{}"), a, b) : fmt::format(FMT_STRING("_{}"), a);
    Counts c;
    std::string cases;
    std::set<std::string> used_names;
    for (const json* r : bucket) cases += testcase(run, *r, suite_id, strict, c, used_names);
    suites += frame.suite(name, c, detail::seconds3(json(c.time)), props + cases);
    add(total, c, true);
  }
  return suites;
}

/// Incidents (errors outside every case's verdict) and cases never run (one skipped testcase
/// each), in a "supervisor" suite; "" when there are none.
std::string supervisor_suite(const json& run, const SuiteFrame& frame, Counts& total) {
  const auto groups = detail::incident_groups(run);
  const auto not_run = detail::not_run_lines(run);
  if (groups.empty() && not_run.empty()) return "";
  Counts c;
  std::string body;
  std::size_t k = 0;
  for (const auto& g : groups) {
    ++c.tests, ++c.errors;
    const std::string msg = fmt::format(FMT_STRING("{} x {}"), g.count, g.message);
    body += "    <testcase" + attr("classname", "dlpack_validate.supervisor") +
            attr("name", fmt::format(FMT_STRING("incident {} ({})"), ++k, g.kind)) + attr("time", "0.000") + ">\n" +
            "      <error" + attr("type", "incident") + attr("message", detail::one_line(msg, k_message_limit)) + ">" +
            detail::xml_text(msg + (g.next_case.empty() ? "" : "\nfirst before " + g.next_case)) + "</error>\n";
    if (!g.output_tail.empty())
      body += "      <system-out>" + detail::xml_text(detail::bounded_tail(g.output_tail, k_output_limit)) + "</system-out>\n";
    body += "    </testcase>\n";
  }
  k = 0;
  for (const auto& n : not_run) {
    ++c.tests, ++c.skipped;
    const std::string msg = fmt::format(FMT_STRING("{} cases not run: {}"), n.count, n.reason);
    body += "    <testcase" + attr("classname", "dlpack_validate.supervisor") +
            attr("name", fmt::format(FMT_STRING("not run {}"), ++k)) + attr("time", "0.000") + ">\n" +
            "      <skipped" + attr("type", "not-run") + attr("message", detail::one_line(msg, k_message_limit)) + ">" +
            detail::xml_text(msg + (n.sample.empty() ? "" : "\ne.g. " + n.sample)) + "</skipped>\n    </testcase>\n";
  }
  add(total, c, false);
  return frame.suite("dlpack-validate supervisor", c, "0.000", body);
}

/// Stale baseline entries (matched no result): one testcase each in a "baseline" suite, so CI
/// dashboards list them by name; "" when there are none. They fail the run only under
/// --strict: a <failure> then, else a <skipped> carrying the same text (GitLab and Jenkins show
/// a skipped case's message; a plain passing case would hide it).
std::string stale_suite(const json& run, bool strict, const SuiteFrame& frame, Counts& total) {
  const json& br = detail::member(run, "baseline_report");
  const json& stale = detail::array_at(br, "stale");
  if (stale.empty()) return "";
  Counts c;
  std::string body;
  std::set<std::string> used;
  const std::string path = detail::text(br, "path");
  for (const auto& e : stale) {
    std::string when;
    for (const auto& item : detail::member(e, "when").items())
      when += fmt::format(FMT_STRING("{}{}={}"), when.empty() ? "" : ", ", item.key(), detail::text_of(item.value()));
    std::string name = "stale: " + detail::text(e, "case") + (when.empty() ? "" : " [" + when + "]");
    const std::string base = name;
    for (int k = 2; !used.insert(name).second; ++k) name = fmt::format(FMT_STRING("{} #{}"), base, k);
    ++c.tests;
    const std::string msg = fmt::format(
        FMT_STRING("stale baseline entry: expects {} for {}{} but matched no result{}"), detail::text(e, "expect"),
        detail::text(e, "case"), when.empty() ? "" : " (" + when + ")",
        strict ? "" : " (fails the run only with --strict)");
    std::string text = msg + "\nreason: " + detail::text(e, "reason") + "\n";
    if (!detail::text(e, "issue").empty()) text += "issue: " + detail::text(e, "issue") + "\n";
    text += "baseline: " + path + "\nremove or narrow the entry: the problem it records is gone, or it never matched\n";
    const char* tag = strict ? "failure" : "skipped";
    (strict ? c.failures : c.skipped) += 1;
    body += "    <testcase" + attr("classname", "dlpack-validate.baseline.stale") + attr("name", name) +
            attr("time", "0.000") + ">\n      <" + tag + attr("type", "stale-baseline-entry") +
            attr("message", detail::one_line(msg, k_message_limit)) + ">" + detail::xml_text(text) + "</" + tag +
            ">\n    </testcase>\n";
  }
  add(total, c, false);
  return frame.suite("dlpack-validate baseline", c, "0.000",
                     "    <properties>\n" + property("baseline", path) +
                         property("baseline.sha256", detail::text(br, "sha256")) +
                         property("strict", strict ? "true" : "false") + "    </properties>\n" + body);
}

}  // namespace

void write_junit(const json& record, std::ostream& out) {
  json storage;
  const json& run = detail::with_summary(record, storage);
  const bool strict = detail::is_strict(run);
  static const json no_subjects = json::array();
  const json& subjects = run.contains("subjects") && run["subjects"].is_array() ? run["subjects"] : no_subjects;
  const SuiteFrame frame{detail::text(run, "started_at"),
                         run.contains("environment") ? detail::text(run["environment"], "hostname") : ""};
  Counts total;
  std::string suites = result_suites(run, subjects, strict, frame, total);
  suites += supervisor_suite(run, frame, total);
  suites += stale_suite(run, strict, frame, total);
  if (detail::bench_of(run).is_object()) {
    Counts c;
    const std::string body = bench_suite(run, strict, c);
    suites += frame.suite("dlpack-validate bench", c, detail::seconds3(json(c.time)), body);
    add(total, c, true);
  }
  const json duration = detail::member(run, "duration_s");
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites" << attr("name", "dlpack-validate") << counts_attrs(total)
      // Deterministic records carry duration 0; the sum of the cases is then the best figure.
      << attr("time", detail::seconds3(duration.is_number() && duration.get<double>() > 0
                                           ? duration : json(total.time)));
  if (!frame.timestamp.empty()) out << attr("timestamp", frame.timestamp);
  out << ">\n" << suites << "</testsuites>\n";
}

}  // namespace dlpv::reports
