// harness/src/case_exchange.cpp: one conversation with one worker (case_exchange.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "case_exchange.hpp"

#include <fmt/format.h>

#include <optional>

#include "protocol.hpp"

namespace dlpv::exchange {

using nlohmann::json;

namespace {

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string event_kind(const json& ev) { return protocol::string_field(ev, "event"); }

/// Reap a worker whose event pipe closed; its death in words (fills `signal`).
std::string death(WorkerProcess& w, std::string& signal, unsigned long long memory_limit_mib) {
  const int status = w.reap();
  return death_text(status, &signal, w.max_rss_kib(), memory_limit_mib);
}

/// The events of one command, in the worker's order: each must echo the command's nonce and
/// carry the next number of its sequence (0 for the acknowledgement). A line a library writes
/// into the pipe, or a copy of one of the worker's own lines, fails one or the other.
class Sequence {
 public:
  explicit Sequence(std::string nonce) : nonce_(std::move(nonce)) {}
  /// "" when `ev` is the next event of this command; otherwise what is wrong with it.
  std::string check(const json& ev) {
    if (protocol::string_field(ev, "nonce") != nonce_) return "an event that does not carry this case's nonce: ";
    const auto s = ev.find("seq");
    if (s == ev.end() || !s->is_number_integer() || s->get<long long>() != next_)
      return fmt::format("an event out of the worker's sequence (expected seq {}): ", next_);
    ++next_;
    return {};
  }
  const std::string& nonce() const { return nonce_; }
  /// Every line the worker writes for this command names its nonce; one that does not was
  /// written by someone else (the library) into the event pipe.
  bool named_in(const std::string& line) const { return line.find('"' + nonce_ + '"') != std::string::npos; }

 private:
  std::string nonce_;
  long long next_ = 0;
};

}  // namespace

PhaseClock::PhaseClock(double load_s, double case_s, Clock::time_point start)
    : left_{seconds(case_s), seconds(load_s)}, since_(start) {}

bool PhaseClock::is_loading_phase(const std::string& phase) { return phase == "load" || phase == kCaseLoadingPhase; }

void PhaseClock::enter(const std::string& phase, Clock::time_point now) {
  Clock::duration& pot = left_[loading_ ? 1 : 0];
  pot -= std::min(pot, now - since_);
  since_ = now;
  loading_ = is_loading_phase(phase);
}

Clock::time_point PhaseClock::deadline() const { return since_ + left_[loading_ ? 1 : 0]; }

std::string step_words(const std::string& step) {
  if (step == "dlopen") return "loading the library (dlopen: its constructors)";
  if (step == "entry") return "calling the plugin's entry point";
  if (step == "import") return "importing the package";
  if (step == "load_check.export") return "checking its first export (__dlpack__)";
  if (step == "load_check.capsule_destructor") return "dropping its first capsule unconsumed (the capsule destructor)";
  if (step == "load_check.consumer") return "checking its from_dlpack with a producer that refuses";
  if (step == "load_check.consumer_versioned")
    return "checking its from_dlpack with a versioned capsule it did not ask for";
  if (step == "load_check.consumer_plain") return "checking its from_dlpack with a plain float32 CPU tensor";
  if (step == "start" || step.empty()) return "loading the subject";
  return "loading the subject (" + step + ")";
}

std::vector<std::string> step_requirements(const std::string& step) {
  if (step == "load_check.export") return {"CAP-01"};
  if (step == "load_check.capsule_destructor") return {"CAP-03"};
  if (step == "load_check.consumer") return {"ERR-03"};
  if (step == "load_check.consumer_versioned") return {"CAP-09"};
  if (step == "load_check.consumer_plain") return {"KW-10"};
  return {};
}

bool step_is_optional(const std::string& step) {
  return step == "load_check.consumer_versioned" || step == "load_check.consumer_plain";
}

std::string quote_line(const std::string& line) {
  std::string out;
  for (char c : line.substr(0, 120)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + (line.size() > 120 ? "...'" : "'");
}

CaseOutcome violation(const std::string& what, const std::string& phase, Clock::time_point t0) {
  CaseOutcome out;
  out.status = Status::error;
  out.phase = phase;
  out.message = "worker protocol violated: " + what +
                " (a line the worker did not write? the library may have written into the event pipe); "
                "the worker was killed and nothing it sent about this case is believed";
  out.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

std::string run_command(const std::string& nonce, int subject, const std::string& case_id, int peer, double case_s) {
  return fmt::format("run {} {} {} {} {}\n", nonce, subject, case_id, peer, case_s);
}

namespace {

/// A line that names this command's nonce but does not parse: the worker's own line with a
/// library's partial write (no newline) in front of it. The worker's line is the object that
/// starts at the last '{' before the nonce from which the rest parses; `prefix` gets the bytes
/// before it. Discarded JSON when there is none.
json salvage(const std::string& line, const Sequence& seq, std::string& prefix) {
  const size_t at = line.find('"' + seq.nonce() + '"');
  for (size_t p = line.rfind('{', at); p != std::string::npos && p > 0; p = line.rfind('{', p - 1)) {
    json ev = json::parse(line.substr(p), nullptr, false);
    if (ev.is_object() && protocol::string_field(ev, "nonce") == seq.nonce()) {
      prefix = line.substr(0, p);
      return ev;
    }
  }
  return json::parse("", nullptr, false);
}

/// One line read for a command (a case's or the load's): empty when it is the library's write
/// into the event pipe (it names no nonce of this command: counted in `count`, the first kept
/// in `first`, not believed, not fatal); else the worker's event, salvaged from behind a
/// library's partial write (whose bytes are counted the same way), or discarded JSON when a line
/// naming the nonce does not parse.
std::optional<json> own_line(const std::string& line, const Sequence& seq, size_t& count, std::string& first) {
  if (!seq.named_in(line)) {
    if (count++ == 0) first = line;
    return std::nullopt;
  }
  json ev = json::parse(line, nullptr, false);
  if (!ev.is_object()) {
    std::string prefix;
    ev = salvage(line, seq, prefix);
    if (!ev.is_discarded() && count++ == 0) first = prefix;
  }
  return ev;
}

/// The worker has accepted the command: its phases and result, under the phase budgets.
Reply follow(WorkerProcess& w, Sequence& seq, const std::string& case_id, Budget budget,
             unsigned long long memory_limit_mib, Clock::time_point t0) {
  Reply r;
  PhaseClock clock(budget.load_s, budget.case_s, Clock::now());
  std::string phase = "setup";
  std::string reaches;  // the requirement the current phase tests, when it names one
  json dies;            // what a death in the current phase means, when the case said (CaseContext::DeathMeaning)
  LoadStep loading;
  auto broken = [&](const std::string& what, const std::string& at) {
    w.kill_and_reap();
    r.end = End::violation;
    r.outcome = violation(what, at, t0);
    return r;
  };
  for (;;) {
    std::string line;
    const WorkerProcess::Wait wait = w.next_line(line, clock.deadline());
    if (wait == WorkerProcess::Wait::event) {
      // The library's lines are kept for the incident the pool charges to it; the case's own
      // events still decide its verdict.
      const std::optional<json> own = own_line(line, seq, r.intruded, r.first_intrusion);
      if (!own) continue;
      const json& ev = *own;
      const std::string kind = ev.is_object() ? event_kind(ev) : std::string();
      if (kind.empty()) return broken("a line that is not a protocol event: " + quote_line(line), phase);
      if (const std::string why = seq.check(ev); !why.empty()) return broken(why + quote_line(line), phase);
      if (kind == "phase") {
        phase = protocol::string_field(ev, "phase");
        reaches = protocol::string_field(ev, "reaches");
        dies = ev.contains("dies") && ev["dies"].is_object() ? ev["dies"] : json();
        if (phase.empty()) return broken("a phase event without a phase: " + quote_line(line), "setup");
        clock.enter(phase, Clock::now());
        loading = phase == "load" ? LoadStep{ev.value("subject", -1), protocol::string_field(ev, "step")} : LoadStep{};
        continue;
      }
      if (kind != "result" || protocol::string_field(ev, "case") != case_id || !ev.contains("outcome") ||
          !ev["outcome"].is_object())
        return broken("an event that is not this case's result: " + quote_line(line), phase);
      try {
        r.outcome = protocol::outcome_from_json(ev.at("outcome"));
      } catch (const json::exception& e) {
        return broken(std::string("a malformed result: ") + e.what(), phase);
      }
      // A result is believed only from the channels the supervisor made: a library that put a
      // pipe of its own over the worker's fds sees every nonce and could forge any status.
      if (std::string rewired; !w.channels_intact(rewired))
        return broken("the result came while " + rewired + " (rewired by the library?)", phase);
      r.end = End::result;
      return r;
    }
    if (wait == WorkerProcess::Wait::eof && phase == "load") {
      // Died while a fresh worker loaded a subject again, before the case itself began.
      r.end = End::load_death;
      r.kind = "died";
      const std::string why = death(w, r.signal, memory_limit_mib);
      r.message = fmt::format("the worker died while {} of subject {} again: {}", step_words(loading.step),
                              loading.subject, why);
      return r;
    }
    r.outcome.phase = phase;
    r.outcome.reached = reaches;
    r.outcome.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (wait == WorkerProcess::Wait::timeout) {
      r.end = End::timeout;
      r.outcome.status = Status::timeout;
      r.outcome.message =
          phase == "load"
              ? fmt::format("a fresh worker did not finish {} of subject {} within the load deadline of {} s "
                            "(--load-timeout), before the case began",
                            step_words(loading.step), loading.subject, budget.load_s)
          : phase == kCaseLoadingPhase
              ? fmt::format("the case's helper process did not finish loading the library within the load "
                            "deadline of {} s (--load-timeout)",
                            budget.load_s)
              : fmt::format("the case did not finish within {} s{} (hung in phase '{}'{})", budget.case_s,
                            budget.pace > 1 ? fmt::format(" ({} s, times this subject's pace {} on this busy machine)",
                                                          budget.case_s / budget.pace, budget.pace)
                                            : "",
                            phase,
                            reaches.empty() ? "" : ", testing " + reaches);
      w.kill_and_reap();
    } else {
      r.end = End::crash;
      r.outcome.status = Status::crash;
      const std::string why = death(w, r.outcome.signal, memory_limit_mib);
      r.outcome.message = why + " in phase '" + phase + "'" + (reaches.empty() ? "" : " (testing " + reaches + ")");
      if (!dies.is_null() && !protocol::string_field(dies, "why").empty()) {
        r.outcome.message += ": " + protocol::string_field(dies, "why");
        r.outcome.expected = protocol::string_field(dies, "expected");
        r.outcome.observed = protocol::string_field(dies, "observed") + " (" + why + ")";
      }
    }
    return r;
  }
}

}  // namespace

Reply run(WorkerProcess& w, int subject, const std::string& case_id, int peer, Budget budget,
          unsigned long long memory_limit_mib) {
  Reply r;
  Sequence seq(protocol::make_nonce());
  const auto t0 = Clock::now();
  if (!w.send(run_command(seq.nonce(), subject, case_id, peer, budget.case_s))) {
    r.kind = "died";
    r.message = "the worker died while no case was running (its command pipe was closed): " +
                death(w, r.signal, memory_limit_mib);
    return r;
  }
  // The acknowledgement: the worker echoes nonce and case before anything of the library runs.
  std::string line;
  const WorkerProcess::Wait wait = w.next_line(line, t0 + seconds(budget.case_s));
  if (wait == WorkerProcess::Wait::eof) {
    r.kind = "died";
    r.message = "the worker died before it accepted the next case: " + death(w, r.signal, memory_limit_mib);
    return r;
  }
  if (wait == WorkerProcess::Wait::timeout) {
    w.kill_and_reap();
    r.kind = "unresponsive";
    r.message = fmt::format("the worker did not accept the next case within {} s (stopped, or hung while idle); "
                            "it was killed and replaced",
                            budget.case_s);
    return r;
  }
  const json ev = json::parse(line, nullptr, false);
  if (!ev.is_object() || event_kind(ev) != "accepted" || protocol::string_field(ev, "case") != case_id ||
      !seq.check(ev).empty()) {
    // Nothing of the case has run before the acknowledgement: the line was written while the
    // worker was idle. Not believed, charged to no case; the case runs in a fresh worker.
    w.kill_and_reap();
    r.kind = "protocol";
    r.line = line;
    r.message = "worker protocol violated before it accepted the next case: it wrote " + quote_line(line) +
                " instead of the acknowledgement; the worker was killed and replaced";
    return r;
  }
  return follow(w, seq, case_id, budget, memory_limit_mib, t0);
}

Hello await_hello(WorkerProcess& w, double load_s, unsigned long long memory_limit_mib) {
  Hello h;
  Sequence seq(w.load_nonce());
  const auto t0 = Clock::now();
  const auto deadline = t0 + seconds(load_s);
  auto phase_of = [](const std::string& step) { return step.rfind("load_check.", 0) == 0 ? step : std::string("load"); };
  for (;;) {
    std::string line;
    const WorkerProcess::Wait wait = w.next_line(line, deadline);
    if (wait != WorkerProcess::Wait::event) {
      h.failure.phase = phase_of(h.failed.step);
      if (wait == WorkerProcess::Wait::timeout) {
        h.failure.status = Status::timeout;
        h.failure.message = fmt::format("{} did not finish within the load deadline of {} s (--load-timeout)",
                                        step_words(h.failed.step), load_s);
        w.kill_and_reap();
      } else {
        h.failure.status = Status::crash;
        h.failure.message = "while " + step_words(h.failed.step) + ": " + death(w, h.failure.signal, memory_limit_mib);
      }
      return h;
    }
    // As in a case: the library's lines are counted and charged to it (with the load step the
    // first came in); one with the nonce must be the next of the worker's events.
    const size_t before = h.intruded;
    const std::optional<json> own = own_line(line, seq, h.intruded, h.first_intrusion);
    if (!before && h.intruded) h.intruded_at = h.failed;
    if (!own) continue;
    const json& ev = *own;
    const std::string kind = ev.is_object() ? event_kind(ev) : std::string();
    if (const std::string why = ev.is_object() ? seq.check(ev) : std::string("a line that does not parse: ");
        !why.empty()) {
      w.kill_and_reap();
      h.failure = violation(why + quote_line(line), phase_of(h.failed.step), t0);
      return h;
    }
    if (kind == "phase" && protocol::string_field(ev, "phase") == "load") {
      h.failed = LoadStep{ev.value("subject", -1), protocol::string_field(ev, "step")};
      continue;
    }
    if (kind == "hello") {
      try {
        for (const auto& s : ev.at("subjects")) h.subjects.push_back(protocol::subject_from_json(s));
      } catch (const json::exception& e) {
        w.kill_and_reap();
        h.failure = violation(std::string("a malformed hello: ") + e.what(), "load", t0);
        return h;
      }
      h.ok = true;
      h.failed = LoadStep{};
      return h;
    }
    if (kind == "load_error") {
      w.kill_and_reap();
      h.load_error = true;
      h.load_error_message = protocol::string_field(ev, "message");
      return h;
    }
    w.kill_and_reap();
    h.failure = violation("a line that is not a protocol event of a loading worker: " + quote_line(line), "load", t0);
    return h;
  }
}

std::string bench(WorkerProcess& w, const std::string& settings_json, double route_timeout_s,
                  unsigned long long memory_limit_mib, bool& ok) {
  ok = false;
  auto failed = [](const std::string& message) { return json{{"error", message}}.dump(); };
  Sequence seq(protocol::make_nonce());
  if (!w.send("bench " + seq.nonce() + " " + settings_json + "\n")) {
    std::string sig;
    return failed("the bench worker died before the bench began (" + death(w, sig, memory_limit_mib) + ")");
  }
  std::string route = "calibration";
  for (;;) {
    std::string line;
    const auto deadline = Clock::now() + seconds(route_timeout_s);
    const WorkerProcess::Wait wait = w.next_line(line, deadline);
    if (wait == WorkerProcess::Wait::event) {
      const json ev = json::parse(line, nullptr, false);
      const std::string kind = ev.is_object() ? event_kind(ev) : std::string();
      if ((kind != "phase" && kind != "bench_result") || !seq.check(ev).empty()) {
        w.kill_and_reap();
        return failed(fmt::format("worker protocol violated in route {}: it wrote {} (not an event of this bench); "
                                  "the worker was killed and nothing it sent is believed",
                                  route, quote_line(line)));
      }
      if (kind == "phase") {
        route = protocol::string_field(ev, "phase");
        continue;
      }
      ok = true;
      return ev.contains("bench") ? ev["bench"].dump() : json::object().dump();
    }
    if (wait == WorkerProcess::Wait::timeout) {
      w.kill_and_reap();
      return failed(fmt::format("the bench timed out in route {} (silent for {:.0f} s)", route, route_timeout_s));
    }
    std::string sig;
    return failed("the bench worker died in route " + route + " (" + death(w, sig, memory_limit_mib) + ")");
  }
}

}  // namespace dlpv::exchange
