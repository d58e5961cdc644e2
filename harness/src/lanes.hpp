// harness/src/lanes.hpp: running the planned cases in lanes (docs/design.md §7, "-j"): each
// lane a thread with a worker pool of its own taking short stretches of one queue, crash-prone
// cases forecast into side workers, timeouts confirmed beside the lanes (confirmer.hpp), and
// the lanes' records gathered in the plan's order. supervisor.cpp plans the run and loads the
// subjects; the lanes run what it planned.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "worker_pool.hpp"

namespace dlpv::lanes {

/// The names a run gives its cases: in not_run lists ("id@0->1") and in progress lines
/// ("pair.float32.contiguous.legacy numpy -> torch": the library's first word when no other
/// subject shares it, else its whole name, else the name with its index).
struct Labels {
  const std::vector<SubjectInfo>& subjects;

  std::string not_run(const CaseResult& r) const {
    if (subjects.size() <= 1) return r.info->id;
    return r.peer >= 0 ? fmt::format("{}@{}->{}", r.info->id, r.subject, r.peer)
                       : fmt::format("{}@{}", r.info->id, r.subject);
  }
  std::string progress(const CaseResult& r) const {
    if (subjects.size() <= 1) return r.info->id;
    return r.peer >= 0 ? fmt::format("{} {} -> {}", r.info->id, short_name(r.subject), short_name(r.peer))
                       : fmt::format("{} {}", r.info->id, short_name(r.subject));
  }
  std::string short_name(int i) const {
    if (i < 0 || static_cast<size_t>(i) >= subjects.size()) return fmt::format("#{}", i);
    auto first_word = [](const std::string& n) { return n.substr(0, n.find(' ')); };
    const std::string& full = subjects[static_cast<size_t>(i)].name;
    int same_word = 0, same_name = 0;
    for (const SubjectInfo& s : subjects) {
      same_word += first_word(s.name) == first_word(full);
      same_name += s.name == full;
    }
    if (!full.empty() && same_word == 1) return first_word(full);
    return !full.empty() && same_name == 1 ? full : fmt::format("#{} {}", i, full);
  }
};

/// The not_run reason -x gives after result `r`.
std::string stopped_reason(const CaseResult& r);

/// The lanes --jobs asks for: its number, or the cores for 0.
int jobs_asked(const RunOptions& options);

/// Every planned case through the lanes: skips decided here (no worker), crash-prone cases in
/// side workers, timeouts confirmed alongside, -x and a subject that keeps killing its workers
/// ending the run early (the rest reported once as not run). The report's order is the plan's,
/// whatever the lanes did.
void run_planned(WorkerPool& first, const RunOptions& options, const std::vector<CaseResult>& planned,
                 const Labels& labels, RunResult& run, std::vector<std::unique_ptr<WorkerProcess>>& ahead);

}  // namespace dlpv::lanes
