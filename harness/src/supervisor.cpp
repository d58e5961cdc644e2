// harness/src/supervisor.cpp: the supervisor side of docs/design.md §7. It never loads a subject.
// Workers are spawned and exec'd (never a bare fork), in their own process group, with the
// library's stdout/stderr captured into a bounded tail; a crash or hang kills only the
// worker, and the next case gets a fresh one.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <memory>
#include <set>

#include "protocol.hpp"
#include "worker_process.hpp"



namespace dlpv {

const char* to_string(Isolation i) {
  switch (i) {
    case Isolation::worker: return "worker";
    case Isolation::per_case: return "case";
    case Isolation::none: return "none";
  }
  return "worker";
}

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

std::vector<const CaseInfo*> select_cases(const Selection& sel) {
  auto any = [](const std::vector<std::string>& globs, const std::string& text) {
    for (const std::string& g : globs)
      if (glob_match(g, text)) return true;
    return false;
  };
  std::vector<const CaseInfo*> out;
  for (const CaseInfo& c : Registry::instance().cases()) {
    if (!sel.filters.empty() && !any(sel.filters, c.id)) continue;
    if (any(sel.excludes, c.id)) continue;
    if (!std::all_of(sel.keywords.begin(), sel.keywords.end(),
                     [&](const std::string& k) { return keyword_match(k, c.id); }))
      continue;
    if (!sel.requirements.empty() &&
        std::none_of(c.requirements.begin(), c.requirements.end(),
                     [&](const std::string& r) { return any(sel.requirements, r); }))
      continue;
    out.push_back(&c);
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

/// After this many deaths in a row of workers that never finished a case (each followed by a
/// fresh worker and a retry), the subject is taken to kill its own process: the rest of the
/// run is reported as not run rather than retried forever.
constexpr int kMaxFruitlessWorkers = 6;
/// Output tails kept for the whole run (results and incidents); past it, 2 KiB each.
constexpr size_t kTailBudget = 16u << 20;
constexpr size_t kSmallTail = 2048;
/// Spare workers kept loading ahead: one per case to come that will want a fresh process
/// (crash-prone cases, or every case with --isolate=case), this many at most: neighbouring
/// crash-prone cases each need a fresh process, and two loading at once keep two cores busy.
constexpr size_t kSpares = 2;
/// How many crash-prone cases ahead the spares' subjects are gathered from.
constexpr size_t kProneWindow = 8;

/// What the loader was doing when a worker died while loading, and what requirement a death
/// there breaks (the probe steps exercise the library's own DLPack code).
struct LoadStep {
  int subject = -1;
  std::string step;
};

std::string step_words(const std::string& step) {
  if (step == "dlopen") return "loading the library (dlopen: its constructors)";
  if (step == "entry") return "calling the plugin's entry point";
  if (step == "import") return "importing the package";
  if (step == "probe.export") return "probing its first export (__dlpack__)";
  if (step == "probe.capsule_destructor") return "dropping its first capsule unconsumed (the capsule destructor)";
  if (step == "probe.consumer") return "probing its from_dlpack with a producer that refuses";
  if (step == "probe.consumer_versioned")
    return "probing its from_dlpack with a versioned capsule it did not ask for";
  if (step == "start" || step.empty()) return "loading the subject";
  return "loading the subject (" + step + ")";
}

std::vector<std::string> step_requirements(const std::string& step) {
  if (step == "probe.export") return {"CAP-01"};
  if (step == "probe.capsule_destructor") return {"CAP-03"};
  if (step == "probe.consumer") return {"ERR-03"};
  if (step == "probe.consumer_versioned") return {"CAP-09"};
  return {};
}

/// The one result a subject that cannot be loaded gets (not a registered case: it names the
/// load step and the requirement a death there breaks). Stable storage for the run record.
const CaseInfo* load_case(const std::string& step) {
  static std::deque<CaseInfo> infos;
  const std::vector<std::string> reqs = step_requirements(step);
  for (const CaseInfo& c : infos)
    if (c.requirements == reqs) return &c;
  CaseInfo c;
  c.id = "subject.load";
  c.title = "The subject loads, and its first capsule is made and dropped, without ending the process";
  c.requirements = reqs;
  c.severity = Severity::must;
  c.role = Role::producer;
  infos.push_back(std::move(c));
  return &infos.back();
}

std::string event_kind(const json& ev) { return protocol::string_field(ev, "event"); }

/// A line for a message: printable, at most 120 bytes.
std::string quote_line(const std::string& line) {
  std::string out;
  for (char c : line.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + (line.size() > 120 ? "...'" : "'");
}

/// The subjects one case uses (its own, and a pair case's peer), ascending: what a fresh
/// worker for it loads.
std::vector<int> case_subjects(int subject, int peer) {
  std::vector<int> need{subject};
  if (peer >= 0 && peer != subject) need.push_back(peer);
  std::sort(need.begin(), need.end());
  return need;
}

class Supervisor {
 public:
  /// A worker started ahead of the case that will need it, loading `preload` meanwhile.
  struct Spare {
    std::unique_ptr<WorkerProcess> proc;
    std::vector<int> preload;
  };

  Supervisor(const RunOptions& o, RunResult& r)
      : opt_(o), run_(r), memory_limit_mib_(memory_limit_mib()) {}

  /// Start a worker and complete its handshake. The first one loads every subject and
  /// describes them; later ones (after a crash, with --isolate=case, or for a crash-prone
  /// case) are lazy and load `preload` before their hello. False with `out` (and
  /// `failed_load_`) filled when it died, hung or broke the protocol while loading; throws
  /// SubjectLoadError on a clean load error (bad input).
  bool start(CaseOutcome& out, const std::vector<int>& preload = {}) {
    worker_ = spawn_worker(preload);
    loaded_ = run_.subjects.empty() ? all_subjects() : preload;
    return handshake(out);
  }

  /// A spare started earlier becomes the current worker: its hello (it may still be loading).
  bool adopt(Spare& spare, CaseOutcome& out) {
    worker_ = std::move(spare.proc);
    loaded_ = std::move(spare.preload);
    spare = Spare{};
    return handshake(out);
  }

  std::unique_ptr<WorkerProcess> spawn_worker(const std::vector<int>& preload) {
    auto w = std::make_unique<WorkerProcess>();
    std::string err;
    // The first worker loads every subject (its hello describes them); later ones are lazy.
    if (!w->spawn(opt_.worker_command, opt_.subject_paths, case_timeout_s_, memory_limit_mib_, err,
                  !run_.subjects.empty(), preload))
      throw std::runtime_error(err);
    ++run_.workers_started;
    return w;
  }

  /// Wait for the current worker's hello (its loading has the load deadline, not a case's).
  bool handshake(CaseOutcome& out) {
    ++fruitless_;  // until it finishes a case
    answered_ = -1;
    failed_load_ = LoadStep{};
    const auto t0 = Clock::now();
    struct Waited {  // the time the run stood still for a worker to load, whatever the exit
      RunResult& run;
      Clock::time_point t0;
      ~Waited() { run.load_wait_s += std::chrono::duration<double>(Clock::now() - t0).count(); }
    } waited{run_, t0};
    // Loading (dlopen or import, then the probes) has the load deadline, not a case's.
    auto deadline = t0 + seconds(opt_.load_timeout_s);
    std::string line;
    for (;;) {
      WorkerProcess::Wait w = worker_->next_line(line, deadline);
      if (w != WorkerProcess::Wait::event) {
        out = CaseOutcome{};
        out.phase = phase_of(failed_load_.step);
        if (w == WorkerProcess::Wait::timeout) {
          out.status = Status::timeout;
          out.message = fmt::format("{} did not finish within the load deadline of {} s (--load-timeout)",
                                    step_words(failed_load_.step), opt_.load_timeout_s);
          out.output_tail = kill_worker();
        } else {
          out.status = Status::crash;
          out.message = "while " + step_words(failed_load_.step) + ": " + reap_worker(out.signal);
          out.output_tail = take_tail();
        }
        worker_.reset();
        return false;
      }
      json ev = json::parse(line, nullptr, false);
      const std::string kind = ev.is_discarded() ? std::string() : event_kind(ev);
      if (kind == "phase" && protocol::string_field(ev, "phase") == "load" && !ev.contains("nonce")) {
        failed_load_.subject = ev.value("subject", -1);
        failed_load_.step = protocol::string_field(ev, "step");
        continue;
      }
      if (kind == "hello") {
        if (run_.subjects.empty()) {
          try {
            for (const auto& s : ev.at("subjects")) run_.subjects.push_back(protocol::subject_from_json(s));
          } catch (const json::exception& e) {
            run_.subjects.clear();
            out = violation(std::string("a malformed hello: ") + e.what(), "load", t0, false);
            return false;
          }
        }
        failed_load_ = LoadStep{};
        return true;
      }
      if (kind == "load_error") {
        const std::string msg = protocol::string_field(ev, "message");
        kill_worker();
        throw SubjectLoadError{msg.empty() ? "cannot load subject" : msg};
      }
      out = violation("a line that is not a protocol event of a loading worker: " + quote_line(line), "load", t0, false);
      return false;
    }
  }
  /// Run one case. False when it was not run (the subject's workers keep dying before any
  /// case can run: see gave_up()).
  /// Run one case: in the side worker when `side` (a case predicted to end its process, so
  /// that the main worker, with every subject loaded, survives it), else in the main worker.
  /// False when it was not run (the subject's workers keep dying before any case can run: see
  /// gave_up()).
  bool run_one(const CaseInfo& info, int subject, int peer, CaseOutcome& out, bool side = false) {
    // --isolate=case: the last case's worker exits while this case runs in the next one.
    if (opt_.isolation == Isolation::per_case && worker_ && !last_label_.empty()) {
      retire("after " + last_label_, last_subject_, last_result(), false);
      last_label_.clear();
    }
    if (side) swap_side();
    in_side_ = side;
    const bool ran = run_here(info, subject, peer, out);
    in_side_ = false;
    if (side) swap_side();
    settle_retired();
    return ran;
  }

  /// What run_cases knows about the cases ahead, for the spares: the subjects each of the next
  /// cases that will want a fresh worker needs (at most kSpares of them): the crash-prone ones,
  /// or with --isolate=case the next cases.
  void upcoming(std::vector<std::vector<int>> needs) { next_side_needs_ = std::move(needs); }

 private:
  bool run_here(const CaseInfo& info, int subject, int peer, CaseOutcome& out) {
    const std::string label = peer >= 0 ? fmt::format("{} (subject {} -> {})", info.id, subject, peer)
                                        : run_.subjects.size() > 1 ? fmt::format("{} (subject {})", info.id, subject)
                                                                   : info.id;
    for (;;) {
      if (gave_up()) return false;
      const std::vector<int> need = need_for(subject, peer);
      // A worker imports only after what it has already loaded (the first worker's order):
      // one that would have to load a subject out of that order is ended, and a fresh one
      // serves the case.
      if (worker_ && !in_order(loaded_, need))
        retire("before " + label + " (it would load subjects out of order)", subject, last_result(), false);
      if (!worker_) {
        CaseOutcome lo;
        Spare* spare = &spare_main_;
        const bool pooled = in_side_ || opt_.isolation == Isolation::per_case;
        if (pooled) {
          auto it = std::find_if(side_spares_.begin(), side_spares_.end(),
                                 [&](const Spare& sp) { return covers(sp.preload, need); });
          spare = it == side_spares_.end() ? nullptr : &*it;
        }
        const bool ready = spare && spare->proc && !confirming_ && covers(spare->preload, need);
        bool started;
        if (ready) {
          started = adopt(*spare, lo);
          if (pooled)
            side_spares_.erase(std::find_if(side_spares_.begin(), side_spares_.end(),
                                            [](const Spare& sp) { return !sp.proc; }));
        } else {
          started = start(lo, need);
        }
        if (!started) {  // a death while loading again
          incident(lo.status == Status::timeout ? "unresponsive" : lo.status == Status::error ? "protocol" : "died",
                   "a fresh worker did not start: " + lo.message, lo.signal, label, subject, lo.output_tail);
          continue;
        }
      }
      // Between cases the worker must be silent and alive.
      std::string unasked;
      switch (worker_->check_idle(unasked)) {
        case WorkerProcess::Idle::quiet: break;
        case WorkerProcess::Idle::data:
          spoke_unasked(unasked, last_result(), "; the worker was killed and replaced", label, subject);
          continue;
        case WorkerProcess::Idle::gone: {
          std::string sig;
          const std::string why = reap_worker(sig);
          incident("died", "the worker died while no case was running: " + why, sig, label, subject, take_tail());
          continue;
        }
      }
      prefetch();
      const std::string nonce = protocol::make_nonce();
      const std::string command = peer >= 0 ? fmt::format("run {} {} {} {}\n", nonce, subject, info.id, peer)
                                            : fmt::format("run {} {} {}\n", nonce, subject, info.id);
      worker_->clear_tail();
      const auto t0 = Clock::now();
      auto deadline = t0 + seconds(case_timeout_s_);
      if (!worker_->send(command)) {
        std::string sig;
        const std::string why = reap_worker(sig);
        incident("died", "the worker died while no case was running (its command pipe was closed): " + why, sig,
                 label, subject, take_tail());
        continue;
      }
      // The acknowledgement: the worker echoes nonce and case before anything of the library runs.
      std::string line;
      WorkerProcess::Wait w = worker_->next_line(line, deadline);
      if (w == WorkerProcess::Wait::eof) {
        std::string sig;
        const std::string why = reap_worker(sig);
        incident("died", "the worker died before it accepted the next case: " + why, sig, label, subject, take_tail());
        continue;
      }
      if (w == WorkerProcess::Wait::timeout) {
        incident("unresponsive", fmt::format("the worker did not accept the next case within {} s (stopped, or "
                                             "hung while idle); it was killed and replaced", case_timeout_s_),
                 "", label, subject, kill_worker());
        continue;
      }
      json ev = json::parse(line, nullptr, false);
      if (ev.is_discarded() || event_kind(ev) != "accepted" || protocol::string_field(ev, "nonce") != nonce ||
          protocol::string_field(ev, "case") != info.id) {
        // Nothing of the case has run before the acknowledgement: the line was written while the
        // worker was idle. Not believed, charged to no case; the case runs in a fresh worker.
        incident("protocol", "worker protocol violated before it accepted the next case: it wrote " +
                     quote_line(line) + " instead of the acknowledgement; the worker was killed and replaced",
                 "", label, subject, kill_worker());
        continue;
      }
      // In flight: phases, then the result, all echoing the nonce.
      std::string phase = "setup";
      std::string reaches;  // the requirement the current phase tests, when it names one
      LoadStep loading;
      for (;;) {
        w = worker_->next_line(line, deadline);
        if (w == WorkerProcess::Wait::event) {
          ev = json::parse(line, nullptr, false);
          const std::string kind = ev.is_discarded() ? std::string() : event_kind(ev);
          if (kind.empty() || protocol::string_field(ev, "nonce") != nonce) {
            out = violation((kind.empty() ? "a line that is not a protocol event: "
                                          : "an event that does not carry this case's nonce: ") + quote_line(line),
                            phase, t0);
            return true;
          }
          if (kind == "phase") {
            const bool was_loading = phase == "load";
            const bool was_case_loading = phase == kCaseLoadingPhase;
            phase = protocol::string_field(ev, "phase");
            reaches = protocol::string_field(ev, "reaches");
            // A case waiting for a library to load in a helper process of its own: loading is
            // not case time, so the load deadline applies, and the case's time starts again
            // after it.
            if (phase == kCaseLoadingPhase && !was_case_loading) deadline = Clock::now() + seconds(opt_.load_timeout_s);
            else if (was_case_loading && phase != kCaseLoadingPhase) deadline = Clock::now() + seconds(case_timeout_s_);
            if (phase == "load") {
              // A fresh worker loads the subject again before the case: the load deadline,
              // not case time.
              if (!was_loading) deadline = Clock::now() + seconds(opt_.load_timeout_s);
              loading.subject = ev.value("subject", -1);
              loading.step = protocol::string_field(ev, "step");
            } else {
              if (was_loading) deadline = Clock::now() + seconds(case_timeout_s_);  // the case begins now
              loading = LoadStep{};
            }
            if (phase.empty()) {
              out = violation("a phase event without a phase: " + quote_line(line), "setup", t0);
              return true;
            }
            continue;
          }
          if (kind != "result" || protocol::string_field(ev, "case") != info.id || !ev.contains("outcome") || !ev["outcome"].is_object()) {
            out = violation("an event that is not this case's result: " + quote_line(line), phase, t0);
            return true;
          }
          try {
            out = protocol::outcome_from_json(ev.at("outcome"));
          } catch (const json::exception& e) {
            out = violation(std::string("a malformed result: ") + e.what(), phase, t0);
            return true;
          }
          // A result is believed only from the channels the supervisor made: a library that put a
          // pipe of its own over the worker's fds sees every nonce and could forge any status.
          if (std::string rewired; !worker_->channels_intact(rewired)) {
            out = violation("the result came while " + rewired + " (rewired by the library?)", phase, t0);
            return true;
          }
          if (out.status != Status::pass) out.output_tail = take_tail();
          fruitless_ = 0;
          break;
        }
        if (w == WorkerProcess::Wait::eof && phase == "load") {
          // Died while a fresh worker loaded a subject again, before the case itself began.
          std::string sig;
          const std::string why = reap_worker(sig);
          incident("died", fmt::format("the worker died while {} of subject {} again: {}", step_words(loading.step),
                                       loading.subject, why),
                   sig, label, subject, take_tail());
          break;
        }
        out = CaseOutcome{};
        out.phase = phase;
        out.reached = reaches;
        out.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (w == WorkerProcess::Wait::timeout) {
          out.status = Status::timeout;
          out.message = phase == "load"
                            ? fmt::format("a fresh worker did not finish {} of subject {} within the load deadline of "
                                          "{} s (--load-timeout), before the case began",
                                          step_words(loading.step), loading.subject, opt_.load_timeout_s)
                        : phase == kCaseLoadingPhase
                            ? fmt::format("the case's helper process did not finish loading the library within the "
                                          "load deadline of {} s (--load-timeout)",
                                          opt_.load_timeout_s)
                            : fmt::format("the case did not finish within {} s (hung in phase '{}'{})", case_timeout_s_,
                                          phase, reaches.empty() ? "" : ", testing " + reaches);
          out.output_tail = kill_worker();
        } else {
          out.status = Status::crash;
          const std::string why = reap_worker(out.signal);
          out.message = why + " in phase '" + phase + "'" + (reaches.empty() ? "" : " (testing " + reaches + ")");
          out.output_tail = take_tail();
        }
        worker_.reset();
        if (!in_side_) main_died_ = true;  // from now on a spare main is kept warm
        fruitless_ = 0;  // the worker died in a case it had accepted: it did run cases
        return true;
      }
      if (!worker_) continue;  // the load incident above: run the case again
      for (int i : {subject, peer})
        if (i >= 0 && std::find(loaded_.begin(), loaded_.end(), i) == loaded_.end()) loaded_.push_back(i);
      std::sort(loaded_.begin(), loaded_.end());
      answered_ = static_cast<long>(run_.results.size());  // its last words: this case's result (kept next)
      last_label_ = label;  // --isolate=case: retired when the next case begins (run_one)
      last_subject_ = subject;
      return true;
    }
  }

 public:
  /// A case that timed out, run once more alone in a fresh worker with twice the time
  /// (docs/design.md §7: a timeout is confirmed before it is reported). `out` holds the first try and
  /// becomes the result: the second try's, with the first try noted. The worker of the second
  /// try is ended afterwards, so the cases after it run under the usual limit.
  void confirm_timeout(const CaseInfo& info, int subject, int peer, CaseOutcome& out, bool side = false) {
    const std::string first = out.message;
    if (side) swap_side();
    in_side_ = side;
    kill_worker();  // no-op when the timeout already ended it
    worker_.reset();
    case_timeout_s_ = 2 * opt_.timeout_s;
    confirming_ = true;  // a spare was told the usual case time: the second try starts its own
    CaseOutcome second;
    const bool ran = run_here(info, subject, peer, second);
    confirming_ = false;
    case_timeout_s_ = opt_.timeout_s;
    kill_worker();
    worker_.reset();
    in_side_ = false;
    if (side) swap_side();
    if (!ran) return;  // the subject's workers stopped starting: the first try stands
    out = second;
    if (second.status == Status::timeout) {
      out.message += fmt::format(" (reproduced: run again alone in a fresh worker with twice the time, after "
                                 "the first try had timed out at {} s)", opt_.timeout_s);
      out.first_try = first;
    } else {
      out.first_try = fmt::format("the first try timed out ({}); run again alone in a fresh worker with {} s, it "
                                  "ended {}", first, 2 * opt_.timeout_s, to_string(second.status));
    }
  }

  /// The bench (docs/design.md §11), served like a case: `bench NONCE SETTINGS`; phase events name the
  /// route being timed and one bench_result ends it, all echoing the nonce. The worker's bench
  /// section as JSON text, or {"error": ...} when it died, fell silent for `route_timeout_s`
  /// or wrote a line that is not this bench's event (then nothing it sent is believed).
  std::string bench(const std::string& settings_json, double route_timeout_s) {
    auto failed = [](const std::string& message) { return json{{"error", message}}.dump(); };
    CaseOutcome lo;
    if (!worker_ && !start(lo)) return failed("the bench worker could not load the subjects: " + lo.message);
    const std::string nonce = protocol::make_nonce();
    worker_->clear_tail();
    if (!worker_->send("bench " + nonce + " " + settings_json + "\n")) {
      std::string sig;
      const std::string why = reap_worker(sig);
      worker_.reset();
      return failed("the bench worker died before the bench began (" + why + ")");
    }
    std::string route = "calibration";
    for (;;) {
      std::string line;
      const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(route_timeout_s * 1000));
      const WorkerProcess::Wait w = worker_->next_line(line, deadline);
      if (w == WorkerProcess::Wait::event) {
        json ev = json::parse(line, nullptr, false);
        const std::string kind = ev.is_object() ? event_kind(ev) : std::string();
        if ((kind != "phase" && kind != "bench_result") || protocol::string_field(ev, "nonce") != nonce) {
          std::fputs(kill_worker().c_str(), stderr);
          worker_.reset();
          return failed(fmt::format("worker protocol violated in route {}: it wrote {} (not an event of this bench); "
                                    "the worker was killed and nothing it sent is believed",
                                    route, quote_line(line)));
        }
        if (kind == "phase") {
          route = protocol::string_field(ev, "phase");
          continue;
        }
        std::fputs(worker_->tail().c_str(), stderr);  // what the library printed while timed
        worker_->clear_tail();
        retire("after the bench", -1, nullptr);
        return ev.contains("bench") ? ev["bench"].dump() : json::object().dump();
      }
      std::string why;
      if (w == WorkerProcess::Wait::timeout) {
        why = fmt::format("the bench timed out in route {} (silent for {:.0f} s)", route, route_timeout_s);
        std::fputs(kill_worker().c_str(), stderr);
      } else {
        std::string sig;
        why = "the bench worker died in route " + route + " (" + reap_worker(sig) + ")";
        std::fputs(take_tail().c_str(), stderr);
      }
      worker_.reset();
      return failed(why);
    }
  }

  bool gave_up() const { return fruitless_ >= kMaxFruitlessWorkers; }
  const std::string& gave_up_reason() const { return gave_up_reason_; }
  const LoadStep& failed_load() const { return failed_load_; }

  void finish() {
    // Spares never served a case: ended without a verdict on their exit.
    if (spare_main_.proc) ++run_.spares_unused;
    for (Spare& sp : side_spares_)
      if (sp.proc) ++run_.spares_unused;
    spare_main_ = Spare{};
    side_spares_.clear();
    if (side_) {
      swap_side();
      retire("at the end of the run", -1, last_result());
      swap_side();
    }
    if (worker_)
      retire(opt_.isolation == Isolation::per_case ? "after " + last_label_ : "at the end of the run",
             opt_.isolation == Isolation::per_case ? last_subject_ : -1, last_result());
    settle_retired();
  }

 private:
  std::vector<int> all_subjects() const {
    std::vector<int> all;
    for (size_t i = 0; i < std::max(run_.subjects.size(), opt_.subject_paths.size()); ++i)
      all.push_back(static_cast<int>(i));
    return all;
  }

  /// The subjects a fresh worker for this case loads: the case's own (and its peer's) in a side
  /// worker or with --isolate=case; every subject for the main worker, which serves all the
  /// cases to come.
  std::vector<int> need_for(int subject, int peer) const {
    if (!in_side_ && opt_.isolation != Isolation::per_case) return all_subjects();
    return case_subjects(subject, peer);
  }

  /// True when a worker that has loaded `loaded` can serve a case needing `need` by loading
  /// the rest after what it has (never a subject before one loaded later on the command line).
  static bool in_order(const std::vector<int>& loaded, const std::vector<int>& need) {
    const int last = loaded.empty() ? -1 : loaded.back();
    for (int i : need)
      if (i < last && std::find(loaded.begin(), loaded.end(), i) == loaded.end()) return false;
    return true;
  }

  /// Every subject of `need` is among `loaded`.
  static bool covers(const std::vector<int>& loaded, const std::vector<int>& need) {
    return std::all_of(need.begin(), need.end(),
                       [&](int i) { return std::find(loaded.begin(), loaded.end(), i) != loaded.end(); });
  }

  void swap_side() {
    std::swap(worker_, side_);
    std::swap(loaded_, side_loaded_);
    std::swap(answered_, side_answered_);
  }

  /// Start the workers the next cases will want while this one runs, so that a crash costs a
  /// process swap rather than an import: with --isolate=case the next case's worker; else a
  /// spare main worker (every subject loaded) once one has died, and a side worker for the
  /// next crash-prone case unless the side worker there can serve it and is not about to be
  /// tested by a predicted crash itself.
  void prefetch() {
    auto want = [&](Spare& spare, const std::vector<int>& need) {
      if (need.empty() || (spare.proc && spare.preload == need)) return;
      if (spare.proc) ++run_.spares_unused;
      spare = Spare{};  // a spare for other subjects: ended unused
      spare.proc = spawn_worker(need);
      spare.preload = need;
    };
    // Pooled spares: one per case ahead that wants a fresh worker (with --isolate=case every
    // case; else the crash-prone ones, except one the idle side worker can take).
    std::vector<std::vector<int>> wanted;
    const bool per_case = opt_.isolation == Isolation::per_case;
    if (!per_case && main_died_) want(spare_main_, all_subjects());
    for (size_t i = 0; i < next_side_needs_.size(); ++i) {
      if (!per_case && i == 0 && !in_side_ && side_ && in_order(side_loaded_, next_side_needs_[0])) continue;
      wanted.push_back(next_side_needs_[i]);
    }
    // Keep every spare a case ahead can use (also one the idle side worker may make needless:
    // if it dies, the spare is next); start only the missing ones; end the rest unused.
    std::deque<Spare> keep;
    std::vector<std::vector<int>> missing;
    for (size_t i = 0; i < next_side_needs_.size(); ++i) {
      const std::vector<int>& need = next_side_needs_[i];
      auto it = std::find_if(side_spares_.begin(), side_spares_.end(),
                             [&](const Spare& sp) { return sp.proc && covers(sp.preload, need); });
      if (it != side_spares_.end()) {
        keep.push_back(std::move(*it));
      } else if (std::find(wanted.begin(), wanted.end(), need) != wanted.end()) {
        missing.push_back(need);
      }
    }
    for (Spare& sp : side_spares_)
      if (sp.proc) ++run_.spares_unused;
    side_spares_ = std::move(keep);
    for (const std::vector<int>& need : missing) {
      side_spares_.emplace_back();
      want(side_spares_.back(), need);
    }
  }

  /// End a worker that is done (end of run, or --isolate=case): its commands closed, it must
  /// exit 0. Dying on the way out (a library's exit handler or destructor) is an incident.
  /// With `wait` false the worker is told to stop and left to exit while the next case runs;
  /// settle_retired() collects its exit status after that case (a fixed point, so the
  /// incidents' order does not depend on timing).
  void retire(const std::string& when, int subject, CaseOutcome* last, bool wait = true) {
    std::string unasked;
    if (worker_->check_idle(unasked) == WorkerProcess::Idle::data) {
      spoke_unasked(unasked, last, " (" + when + ")", "", subject);
      return;
    }
    worker_->close_commands();
    if (!wait) {
      retiring_.push_back({std::move(worker_), when, subject});
      return;
    }
    const int status = worker_->reap(static_cast<int>(opt_.timeout_s * 1000));
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      std::string sig;
      const std::string why = death_text(status, &sig, worker_->max_rss_kib(), memory_limit_mib_);
      incident("died", "the worker did not exit cleanly when told to stop (" + when + "): " + why, sig, "", subject,
               take_tail());
    }
    worker_.reset();
  }

  void settle_retired() {
    for (Retiring& r : retiring_) {
      const int status = r.proc->reap(static_cast<int>(opt_.timeout_s * 1000));
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      std::string sig;
      const std::string why = death_text(status, &sig, r.proc->max_rss_kib(), memory_limit_mib_);
      run_.incidents.push_back(Incident{"died", "the worker did not exit cleanly when told to stop (" + r.when +
                                                    "): " + why,
                                        sig, "", r.subject, budget_tail(r.proc->tail())});
    }
    retiring_.clear();
  }

  /// The worker wrote while no case was running. A second result, or any line after its last
  /// one, withdraws the result it last gave (taint); otherwise it is an incident. Either way
  /// the worker is killed and nothing it sent is believed.
  void spoke_unasked(const std::string& unasked, CaseOutcome* last, const std::string& suffix,
                     const std::string& next_case, int subject) {
    const std::string tail = kill_worker();
    if (!taint(last, unasked))
      incident("protocol", "worker protocol violated while no case was running: it wrote " + quote_line(unasked) +
                   " unasked" + suffix, "", next_case, subject, tail);
    worker_.reset();
  }

  /// The result the current worker gave last, when its result was the last thing it did.
  CaseOutcome* last_result() {
    return answered_ >= 0 && worker_ && answered_ < static_cast<long>(run_.results.size())
               ? &run_.results[static_cast<size_t>(answered_)].outcome
               : nullptr;
  }

  /// A worker that writes after its result: that result is not believed (it may have been a
  /// forgery that came first). True when there was such a result to withdraw.
  bool taint(CaseOutcome* last, const std::string& unasked) {
    if (!last) return false;
    const std::string believed = to_string(last->status);
    *last = CaseOutcome{};
    last->status = Status::error;
    last->phase = "result";
    last->message = "worker protocol violated: after this case's result the worker wrote " + quote_line(unasked) +
                    " (a second result, or a line the library wrote into the event pipe); the result (" + believed +
                    ") is not believed and the worker was killed";
    answered_ = -1;
    return true;
  }

  static std::string phase_of(const std::string& step) {
    return step.rfind("probe.", 0) == 0 ? step : "load";
  }

  /// The worker broke the protocol: it is killed, nothing it sent is believed, and the case
  /// (or load) it was serving becomes an error.
  CaseOutcome violation(const std::string& what, const std::string& phase, Clock::time_point t0,
                        bool case_result = true) {
    if (case_result) fruitless_ = 0;  // the case has its result (an error)
    CaseOutcome out;
    out.status = Status::error;
    out.phase = phase;
    out.message = "worker protocol violated: " + what +
                  " (a line the worker did not write? the library may have written into the event pipe); "
                  "the worker was killed and nothing it sent about this case is believed";
    out.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
    out.output_tail = kill_worker();
    worker_.reset();
    return out;
  }

  void incident(const std::string& kind, const std::string& message, const std::string& signal,
                const std::string& next_case, int subject, const std::string& tail) {
    worker_.reset();
    Incident i{kind, message, signal, next_case, subject, tail};
    run_.incidents.push_back(std::move(i));
    if (gave_up() && gave_up_reason_.empty())
      gave_up_reason_ = fmt::format("{} fresh workers in a row died before finishing a case (last: {})",
                                    kMaxFruitlessWorkers, message);
  }

  /// Kill the worker now (hung, stopped or untrusted) and return its output tail.
  std::string kill_worker() {
    if (!worker_) return {};
    worker_->kill_and_reap();
    return take_tail();
  }

  /// Reap a worker whose event pipe closed; the death in words (fills `signal`).
  std::string reap_worker(std::string& signal) {
    const int status = worker_->reap();
    return death_text(status, &signal, worker_->max_rss_kib(), memory_limit_mib_);
  }

  /// The worker's output tail, within the run's budget so that thousands of crashes cannot
  /// grow the supervisor without bound.
  std::string take_tail() {
    if (!worker_) return {};
    std::string t = worker_->tail();
    worker_->clear_tail();
    return budget_tail(std::move(t));
  }
  std::string budget_tail(std::string t) {
    if (tail_bytes_ + t.size() > kTailBudget && t.size() > kSmallTail) t.erase(0, t.size() - kSmallTail);
    tail_bytes_ += t.size();
    return t;
  }

  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  const RunOptions& opt_;
  RunResult& run_;
  double case_timeout_s_ = opt_.timeout_s;  ///< the time a case gets now (twice as much to confirm a timeout)
  const unsigned long long memory_limit_mib_;
  std::unique_ptr<WorkerProcess> worker_;
  std::vector<int> loaded_;  ///< the subjects worker_ has loaded, ascending
  /// The side worker (crash-prone cases), and its state while the main worker is current.
  std::unique_ptr<WorkerProcess> side_;
  std::vector<int> side_loaded_;
  long side_answered_ = -1;
  Spare spare_main_;
  std::deque<Spare> side_spares_;
  /// Workers told to stop and not yet reaped (settle_retired).
  struct Retiring {
    std::unique_ptr<WorkerProcess> proc;
    std::string when;
    int subject = -1;
  };
  std::vector<Retiring> retiring_;
  std::string last_label_;  ///< the case the current worker served last (--isolate=case)
  int last_subject_ = -1;
  std::vector<std::vector<int>> next_side_needs_;
  bool in_side_ = false;     ///< the current case runs in the side worker
  bool main_died_ = false;   ///< a main worker died in a case: keep a spare main warm
  bool confirming_ = false;  ///< a timeout's second try: a fresh worker with twice the time
  int fruitless_ = 0;
  std::string gave_up_reason_;
  LoadStep failed_load_;
  size_t tail_bytes_ = 0;
  /// The index in run_.results of the result the current worker gave last, when that result
  /// was its last event (-1: none).
  long answered_ = -1;
};

}  // namespace

namespace {
/// This process's peak resident memory (KiB): VmHWM belongs to the address space, so unlike
/// getrusage's ru_maxrss it does not carry over the peak of whatever process exec'd us.
long own_peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmHWM:" && status >> value) return value;
    status.ignore(4096, '\n');
  }
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

/// Deterministic order: per subject, cases by id; a pair case once per consumer subject.
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
}  // namespace

namespace {
std::string stopped_reason(const CaseResult& r) {
  return fmt::format("-x/--exitfirst: the run stopped after the first unexpected result ({} {})", r.info->id,
                     to_string(r.outcome.status));
}
}  // namespace

RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases) {
  RunResult run;
  run.started_at = protocol::iso_now();
  const auto t0 = Clock::now();

  if (options.isolation == Isolation::none) {
    std::vector<std::unique_ptr<Subject>> subjects;
    for (size_t i = 0; i < options.subject_paths.size(); ++i) {
      subjects.push_back(options.loader(options.subject_paths[i], static_cast<int>(i)));
      run.subjects.push_back(subjects.back()->info());
    }
    const std::vector<CaseResult> planned = plan(cases, run.subjects);
    NotRun rest;  // -x: what the run did not reach
    for (const CaseResult& r : planned) {
      if (!rest.reason.empty()) {
        rest.cases.push_back(r.info->id);
        continue;
      }
      if (options.progress) options.progress(run.results.size(), planned.size(), r.info->id);
      CaseResult done = r;
      done.outcome = run_case_in_process(*r.info, *subjects[static_cast<size_t>(r.subject)], {},
                                         r.peer >= 0 ? subjects[static_cast<size_t>(r.peer)].get() : nullptr);
      run.results.push_back(std::move(done));
      if (options.stop_after && options.stop_after(run.subjects, run.results.back()))
        rest.reason = stopped_reason(run.results.back());
    }
    if (!rest.cases.empty()) run.not_run.push_back(std::move(rest));
  } else {
    Supervisor sup(options, run);
    CaseOutcome load_failure;
    // Load once up front so a clean load error is bad input before any case runs.
    bool loaded = sup.start(load_failure);
    if (!loaded && load_failure.status != Status::error) {
      // Once more before concluding that the subject crashes (or hangs) at load: a single death
      // while loading (a signal from outside, the OOM killer) is an incident, not a verdict.
      Incident first{load_failure.status == Status::timeout ? "unresponsive" : "died",
                     "the first worker could not load the subjects (" + load_failure.message +
                         "); a second worker loaded them",
                     load_failure.signal, "", sup.failed_load().subject, load_failure.output_tail};
      loaded = sup.start(load_failure);
      if (loaded) run.incidents.push_back(std::move(first));
    }
    if (!loaded && run.subjects.empty()) {
      for (size_t i = 0; i < options.subject_paths.size(); ++i) {
        SubjectInfo info;
        info.index = static_cast<int>(i);
        info.kind = options.subject_kind;
        info.path = options.subject_paths[i];
        info.name = "(not loaded)";
        info.notes.push_back(load_failure.message);
        run.subjects.push_back(info);
      }
    }
    const std::vector<CaseResult> planned = plan(cases, run.subjects);
    auto label = [&](const CaseResult& r) {
      if (run.subjects.size() <= 1) return r.info->id;
      return r.peer >= 0 ? fmt::format("{}@{}->{}", r.info->id, r.subject, r.peer)
                         : fmt::format("{}@{}", r.info->id, r.subject);
    };
    // Progress names the libraries ("pair.float32.contiguous.legacy numpy -> torch"): the
    // library's first word ("numpy" of "numpy 2.4.6") when no other subject shares it, else
    // its whole name, else the name with its index.
    auto short_name = [&](int i) {
      if (i < 0 || static_cast<size_t>(i) >= run.subjects.size()) return fmt::format("#{}", i);
      auto first_word = [](const std::string& n) { return n.substr(0, n.find(' ')); };
      const std::string& full = run.subjects[static_cast<size_t>(i)].name;
      int same_word = 0, same_name = 0;
      for (const SubjectInfo& s : run.subjects) {
        same_word += first_word(s.name) == first_word(full);
        same_name += s.name == full;
      }
      if (!full.empty() && same_word == 1) return first_word(full);
      return !full.empty() && same_name == 1 ? full : fmt::format("#{} {}", i, full);
    };
    auto progress_label = [&](const CaseResult& r) {
      if (run.subjects.size() <= 1) return r.info->id;
      return r.peer >= 0 ? fmt::format("{} {} -> {}", r.info->id, short_name(r.subject), short_name(r.peer))
                         : fmt::format("{} {}", r.info->id, short_name(r.subject));
    };
    if (!loaded) {
      // One result for the load, naming its step and the requirement a death there breaks;
      // the cases, never run, once.
      const int failed = std::max(sup.failed_load().subject, 0);
      run.results.push_back({load_case(sup.failed_load().step), failed, -1, load_failure});
      NotRun nr;
      nr.reason = fmt::format("the subject{} {} at load ({})",
                              run.subjects.size() > 1 ? fmt::format(" {}", failed) : "",
                              load_failure.status == Status::timeout ? "hangs" :
                              load_failure.status == Status::error ? "breaks the worker protocol" : "crashes",
                              load_failure.message);
      for (const CaseResult& r : planned) nr.cases.push_back(label(r));
      if (!nr.cases.empty()) run.not_run.push_back(std::move(nr));
    } else {
      NotRun rest;
      std::string stopped;  // -x: the result that ended the run
      // The supervisor decides skips itself: a case whose needs the subject's probed
      // capabilities rule out gets its skip here, under every isolation mode, with no worker.
      std::vector<std::string> skip_reason(planned.size());
      for (size_t k = 0; k < planned.size(); ++k)
        skip_reason[k] = missing_need(*planned[k].info, run.subjects[static_cast<size_t>(planned[k].subject)]);
      // Crash-prone cases run in a side worker: the baseline expects a crash or timeout, or
      // this run saw the same case end a worker (for a pair case: the same case with the same
      // consumer, or any case of the same producer and consumer).
      std::set<std::pair<std::string, int>> died_ids;  // (case id, peer; -1 for one-subject cases)
      std::set<std::pair<int, int>> died_pairs;
      std::vector<signed char> baseline_death(planned.size(), -1);
      auto prone = [&](size_t k) {
        const CaseResult& r = planned[k];
        if (options.isolation != Isolation::worker || !skip_reason[k].empty()) return false;
        if (died_ids.count({r.info->id, r.peer}) || (r.peer >= 0 && died_pairs.count({r.subject, r.peer})))
          return true;
        if (baseline_death[k] < 0) baseline_death[k] = options.expect_death && options.expect_death(run.subjects, r);
        return baseline_death[k] == 1;
      };
      auto need_of = [&](size_t k) { return case_subjects(planned[k].subject, planned[k].peer); };
      std::vector<size_t> prone_ahead;
      size_t prone_history = 0;
      for (size_t k = 0; k < planned.size(); ++k) {
        const CaseResult& r = planned[k];
        CaseResult done = r;
        if (!stopped.empty() || !rest.cases.empty()) {
          rest.cases.push_back(label(r));
          continue;
        }
        if (options.progress) options.progress(run.results.size(), planned.size(), progress_label(r));
        if (!skip_reason[k].empty()) {
          done.outcome = skipped_outcome(skip_reason[k]);
        } else {
          std::vector<std::vector<int>> side_needs;
          if (options.isolation == Isolation::per_case) {
            for (size_t j = k + 1; j < planned.size() && side_needs.size() < kSpares; ++j)
              if (skip_reason[j].empty()) side_needs.push_back(need_of(j));
          } else {
            // The next crash-prone cases after this one (kept until passed, or until a death
            // changes what is predicted).
            if (prone_ahead.empty() || prone_ahead.front() <= k ||
                prone_history != died_ids.size() + died_pairs.size()) {
              prone_history = died_ids.size() + died_pairs.size();
              prone_ahead.clear();
              for (size_t j = k + 1; j < planned.size() && prone_ahead.size() < kProneWindow; ++j)
                if (prone(j)) prone_ahead.push_back(j);
              if (prone_ahead.empty()) prone_ahead.push_back(planned.size());  // none ahead
            }
            // A spare for each of the next crash-prone cases loads what the crash-prone cases
            // near it of the same subject need too (the pair cases with the consumers that crash
            // there), so one side worker serves them all until one ends it.
            for (size_t i = 0; i < prone_ahead.size() && side_needs.size() < kSpares; ++i) {
              if (prone_ahead[i] >= planned.size()) break;
              std::vector<int> need;
              for (size_t j : prone_ahead)
                if (j < planned.size() && planned[j].subject == planned[prone_ahead[i]].subject)
                  for (int x : need_of(j))
                    if (std::find(need.begin(), need.end(), x) == need.end()) need.push_back(x);
              std::sort(need.begin(), need.end());
              side_needs.push_back(need);
            }
          }
          sup.upcoming(side_needs);
          const bool side = prone(k);
          if (!sup.run_one(*r.info, r.subject, r.peer, done.outcome, side)) {
            rest.cases.push_back(label(r));
            continue;
          }
          if (done.outcome.status == Status::timeout)
            sup.confirm_timeout(*r.info, r.subject, r.peer, done.outcome, side);
          if (done.outcome.status == Status::crash || done.outcome.status == Status::timeout) {
            died_ids.insert({r.info->id, r.peer});
            if (r.peer >= 0) died_pairs.insert({r.subject, r.peer});
          }
        }
        run.results.push_back(std::move(done));
        if (options.stop_after && options.stop_after(run.subjects, run.results.back()))
          stopped = stopped_reason(run.results.back());
      }
      if (!rest.cases.empty()) {
        rest.reason = !stopped.empty() ? stopped : "the subject ends its own process: " + sup.gave_up_reason();
        run.not_run.push_back(std::move(rest));
      }
    }
    sup.finish();
  }
  if (options.progress) options.progress(run.results.size(), run.results.size(), "");
  run.supervisor_max_rss_kib = own_peak_rss_kib();
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return run;
}

std::string bench_in_worker(const RunOptions& options, const std::string& settings_json, double route_timeout_s,
                            RunResult& run) {
  Supervisor sup(options, run);
  std::string section = sup.bench(settings_json, route_timeout_s);
  sup.finish();
  run.supervisor_max_rss_kib = own_peak_rss_kib();
  return section;
}

}  // namespace dlpv
