// app/src/run_record.cpp: RunResult -> canonical JSON (docs/run-record.md).
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <dlfcn.h>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/verdict.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <map>
#include <set>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <string_view>

namespace dlpv {

using nlohmann::ordered_json;

ordered_json probe_cuda() {
  // Presence only: the supervisor does not initialise CUDA (workers would, per case).
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return {{"found", false}, {"emulated", false}, {"detail", e ? e : "libcuda.so.1 not found"}};
  }
  // Which file answered, and whether it is the emulated driver of the test tree: a report
  // made with it must not read as a GPU run.
  std::string path = "libcuda.so.1";
  Dl_info info{};
  if (void* sym = dlsym(h, "cuInit"); sym && dladdr(sym, &info) && info.dli_fname) path = info.dli_fname;
  const auto* mark = static_cast<const char*>(dlsym(h, "dlpv_emulated_cuda_driver"));
  ordered_json out{{"found", true}, {"emulated", mark != nullptr},
                   {"detail", mark ? std::string(mark) + " at " + path : "libcuda.so.1 loadable (" + path + ")"}};
  dlclose(h);
  return out;
}

namespace {
/// A result's report area: its first requirement's, "protocol" when it has none or no known one.
// The requirements a result is charged to: the case's own, or, for a death in a phase that
// tests another one (CaseContext::phase's `reaches`), that one alone. A derived requirement
// (one whose strength says "derived", such as DEL-08: a refused tensor is released exactly
// once) fails only on its own evidence: a death elsewhere in the case (a consumer that reads a
// major-0 tensor and faults during import) is charged to the case's other requirements, and
// the phase that puts the derived one to the test names it itself (phase("release", "DEL-08")).
bool is_derived(const std::string& id) {
  const Requirement* q = find_requirement(id);
  return q && std::string(q->level).find("derived") != std::string::npos;
}
// A death while the consumer imports (phase "import") is the import's: a deleter rule the case
// also cites (DEL-02: called once, after the array dies) is put to the test only once the
// imported array lives and is released, so it is charged only when the case names nothing
// else (a MindSpore release dying on NULL strides breaks LAYOUT-03, not DEL-02).
bool is_deleter_rule(const std::string& id) { return id.rfind("DEL-", 0) == 0; }
std::vector<std::string> charged(const CaseResult& r) {
  const Status s = r.outcome.status;
  if (s != Status::crash && s != Status::timeout) return r.info->requirements;
  if (!r.outcome.reached.empty()) return {r.outcome.reached};
  std::vector<std::string> own;
  for (const std::string& id : r.info->requirements)
    if (!is_derived(id)) own.push_back(id);
  if (r.outcome.phase == "import") {
    std::vector<std::string> import_rules;
    for (const std::string& id : own)
      if (!is_deleter_rule(id)) import_rules.push_back(id);
    if (!import_rules.empty()) return import_rules;
  }
  return own.empty() ? r.info->requirements : own;
}

// Library text is capped where it is recorded, the same for every format read from the record:
// a message (and expected, observed, a note, a reason) keeps its first kMaxText bytes, an output
// tail its last kMaxTail (the end is where a crash says why), each with the full length noted.
// A few 5 MB exception messages made a 64 MB record and a 63 MB JUnit file.
constexpr size_t kMaxText = 4096;
constexpr size_t kMaxTail = 8192;
size_t char_start(const std::string& s, size_t at) {
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}
std::string capped(const std::string& s) {
  if (s.size() <= kMaxText) return s;
  return s.substr(0, char_start(s, kMaxText)) +
         fmt::format(" [... cut here: {} bytes in all, the record keeps the first {}]", s.size(), kMaxText);
}
std::string capped_tail(const std::string& s) {
  if (s.size() <= kMaxTail) return s;
  size_t from = s.size() - kMaxTail;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return fmt::format("[... {} bytes in all, the record keeps the last {}]\n", s.size(), kMaxTail) + s.substr(from);
}
std::vector<std::string> capped(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const std::string& s : v) out.push_back(capped(s));
  return out;
}

std::string area_or_protocol(const std::vector<std::string>& requirements) {
  const std::string area = requirements.empty() ? std::string() : area_of(requirements.front());
  return area.empty() ? "protocol" : area;
}

ordered_json environment(bool deterministic) {
  utsname u{};
  uname(&u);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ordered_json env;
  env["os"] = u.sysname;
  env["kernel"] = deterministic ? ordered_json() : ordered_json(u.release);
  env["machine"] = u.machine;
#if defined(__clang__)
  env["compiler"] = std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = std::string("GCC ") + __VERSION__;
#else
  env["compiler"] = "unknown";
#endif
  env["hostname"] = deterministic ? ordered_json() : ordered_json(host);
  env["cuda"] = deterministic ? ordered_json{{"found", false}, {"emulated", false}, {"detail", "not probed (deterministic mode)"}}
                              : probe_cuda();
  return env;
}
}  // namespace

namespace {
std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}
/// A path as a file:// URL (the characters a URL cannot hold as they are, percent-encoded).
std::string file_url(const std::string& path) {
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}
}  // namespace

std::string requirements_doc() {
  // This code's own file (the CLI, or the Python module) lies in the build tree: link to the
  // source tree's document, which a checkout has. An installed copy has no such tree.
  Dl_info self{};
  const std::string build = real(DLPV_BUILD_DIR), doc = real(DLPV_SOURCE_REQUIREMENTS_DOC);
  if (dladdr(reinterpret_cast<void*>(&requirements_doc), &self) && self.dli_fname && !build.empty() &&
      !doc.empty()) {
    const std::string here = real(self.dli_fname);
    if (here.rfind(build + "/", 0) == 0) return file_url(doc);
  }
  const std::string published = DLPV_REQUIREMENTS_DOC;
  // Only a URL: a relative path would resolve against wherever the report is opened.
  return published.find("://") != std::string::npos ? published : std::string();
}

ordered_json make_run_record(const RunResult& run, const RecordOptions& opt) {
  ordered_json rec;
  rec["schema"] = "dlpack-validate/run";
  rec["schema_version"] = 1;
  rec["complete"] = true;
  rec["deterministic"] = opt.deterministic;
  rec["tool"] = {{"name", "dlpack-validate"}, {"version", kToolVersion}, {"requirements_doc", requirements_doc()}};
  rec["command_line"] = opt.command_line;
  if (!opt.invocation.empty()) rec["invocation"] = opt.invocation;
  rec["started_at"] = opt.deterministic ? ordered_json() : ordered_json(run.started_at);
  rec["duration_s"] = opt.deterministic ? 0.0 : run.duration_s;
  rec["environment"] = environment(opt.deterministic);
  rec["options"] = {{"filters", opt.filters.empty() ? std::vector<std::string>{"*"} : opt.filters},
                    {"timeout_s", opt.timeout_s},
                    {"load_timeout_s", opt.load_timeout_s},
                    {"isolate", to_string(opt.isolation)},
                    {"strict", opt.strict},
                    {"baseline", nullptr}};
  if (!opt.excludes.empty()) rec["options"]["exclude"] = opt.excludes;
  if (!opt.keywords.empty()) rec["options"]["keyword"] = opt.keywords;
  if (!opt.requirements.empty()) rec["options"]["requirements"] = opt.requirements;
  if (opt.exitfirst) rec["options"]["exitfirst"] = true;
  if (!opt.shard.empty()) rec["options"]["shard"] = opt.shard;
  if (opt.isolation == Isolation::none)
    rec["options"]["warning"] =
        "--isolate=none: cases ran inside the validator process; a crash in the library "
        "would have ended the whole run";

  ordered_json subjects = ordered_json::array();
  for (const SubjectInfo& s : run.subjects) {
    subjects.push_back({{"index", s.index},
                        {"kind", s.kind},
                        {"path", s.path},
                        {"name", s.name},
                        {"dlpack_version", s.version_text()},
                        {"legacy_only", s.legacy_only()},
                        {"speaks", s.speaks()},
                        {"capabilities", s.capabilities},
                        {"notes", capped(s.notes)}});
  }
  rec["subjects"] = subjects;

  std::set<std::string> used;
  for (const CaseResult& r : run.results)
    for (const std::string& id : charged(r)) used.insert(id);
  ordered_json reqs = ordered_json::object();
  for (const std::string& id : used) {
    const Requirement* q = find_requirement(id);
    const std::string area = area_of(id);
    reqs[id] = {{"area", area.empty() ? "protocol" : area},
                {"binding", q ? q->binding : ""},
                {"level", q ? q->level : ""},
                {"summary", q ? q->summary : "(not in the checklist)"}};
  }
  rec["requirements"] = reqs;

  ordered_json results = ordered_json::array();
  for (const CaseResult& r : run.results) {
    const CaseOutcome& o = r.outcome;
    ordered_json checks = ordered_json::array();
    for (const Check& c : o.checks) {
      checks.push_back({{"requirement", c.requirement}, {"status", to_string(c.status)},
                        {"message", capped(c.message)}, {"expected", capped(c.expected)},
                        {"observed", capped(c.observed)}});
      if (!c.party.empty()) checks.back()["party"] = c.party;
    }
    ordered_json params = ordered_json::object();
    for (const auto& [k, v] : r.info->params) params[k] = v;
    if (r.peer >= 0) {
      params["producer"] = std::to_string(r.subject);
      params["consumer"] = std::to_string(r.peer);
    }
    results.push_back({{"id", r.info->id},
                       {"subject", r.subject},
                       {"peer", r.peer >= 0 ? ordered_json(r.peer) : ordered_json()},
                       {"title", r.info->title},
                       {"area", area_or_protocol(charged(r))},
                       {"role", to_string(r.info->role)},
                       {"requirements", charged(r)},
                       {"severity", to_string(r.info->severity)},
                       {"params", params},
                       {"status", to_string(o.status)},
                       {"message", capped(o.message)},
                       {"expected", capped(o.expected)},
                       {"observed", capped(o.observed)},
                       {"checks", checks},
                       {"phase", o.phase},
                       {"signal", o.signal.empty() ? ordered_json() : ordered_json(o.signal)},
                       {"duration_s", opt.deterministic ? 0.0 : o.duration_s},
                       {"output_tail", capped_tail(o.output_tail)},
                       {"baseline", nullptr}});
    if (!o.first_try.empty()) results.back()["first_try"] = capped(o.first_try);
    // The library the result is charged to (verdict::charge_of, the rule every report uses).
    const verdict::Charge charge = verdict::charge_of(rec, results.back());
    results.back()["charged_to"] = charge.subject < 0 ? ordered_json()
                                                      : ordered_json{{"subject", charge.subject}, {"as", charge.side}};
  }
  rec["results"] = results;

  // What happened with no case in flight, and cases never run (docs/run-record.md).
  ordered_json incidents = ordered_json::array();
  for (const Incident& i : run.incidents)
    incidents.push_back({{"kind", i.kind},
                         {"message", capped(i.message)},
                         {"signal", i.signal.empty() ? ordered_json() : ordered_json(i.signal)},
                         {"next_case", i.next_case},
                         {"subject", i.subject >= 0 ? ordered_json(i.subject) : ordered_json()},
                         {"output_tail", capped_tail(i.output_tail)}});
  rec["incidents"] = incidents;
  ordered_json not_run = ordered_json::array();
  for (const NotRun& n : run.not_run)
    not_run.push_back({{"subject", n.subject >= 0 ? ordered_json(n.subject) : ordered_json()},
                       {"count", n.cases.size()},
                       {"reason", capped(n.reason)},
                       {"cases", n.cases}});
  rec["not_run"] = not_run;
  rec["supervisor"] = {{"workers_started", opt.deterministic ? ordered_json() : ordered_json(run.workers_started)},
                       {"spares_unused", opt.deterministic ? ordered_json() : ordered_json(run.spares_unused)},
                       {"load_wait_s", opt.deterministic ? ordered_json()
                                                         : ordered_json(std::round(run.load_wait_s * 1000) / 1000)},
                       {"max_rss_kib", opt.deterministic ? ordered_json() : ordered_json(run.supervisor_max_rss_kib)},
                       {"jobs", opt.deterministic ? ordered_json() : ordered_json(run.jobs)},
                       {"lanes", opt.deterministic ? ordered_json() : ordered_json(run.lanes)},
                       {"lanes_why", run.lanes_why},
                       {"confirmations", opt.deterministic ? ordered_json() : ordered_json(run.confirmations)},
                       {"hangs_known", opt.deterministic ? ordered_json() : ordered_json(run.hangs_known)}};

  rec["pair_matrix"] = ordered_json::array();  // producer x consumer counts: finalize_summary
  rec["summary"] = ordered_json::object();
  rec["baseline_report"] = nullptr;
  verdict::finalize_summary(rec);
  return rec;
}

}  // namespace dlpv
