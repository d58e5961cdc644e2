// harness/src/worker.cpp: the worker side of DESIGN §7. Loads every subject once, then
// runs the cases the supervisor names, one at a time, streaming a result per case.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "protocol.hpp"

namespace dlpv {

namespace {
void write_event(const nlohmann::json& j) {
  const std::string line = protocol::to_line(j);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t w = write(protocol::kEventFd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(120);  // supervisor gone
    p += w;
    left -= static_cast<size_t>(w);
  }
}
}  // namespace

int worker_main(const std::vector<std::string>& specs, const SubjectLoader& loader) {
  // Die with the supervisor; never leave core files on CI disks.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(SIGPIPE, SIG_IGN);

  std::vector<std::unique_ptr<Subject>> subjects;
  nlohmann::json infos = nlohmann::json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    try {
      subjects.push_back(loader(specs[i], static_cast<int>(i)));
    } catch (const SubjectLoadError& e) {
      write_event({{"event", "load_error"}, {"subject", i}, {"message", e.message}});
      return 0;
    }
    infos.push_back(protocol::subject_to_json(subjects.back()->info()));
  }
  write_event({{"event", "hello"}, {"subjects", infos}});

  FILE* commands = fdopen(protocol::kCommandFd, "r");
  if (!commands) return 121;
  char line[4096];
  while (fgets(line, sizeof line, commands)) {
    int subject = -1;
    char id[3000] = {};
    if (std::strncmp(line, "quit", 4) == 0) break;
    if (std::sscanf(line, "run %d %2999s", &subject, id) != 2 || subject < 0 ||
        subject >= static_cast<int>(subjects.size())) {
      write_event({{"event", "result"}, {"outcome", protocol::outcome_to_json(CaseOutcome{
          Status::error, std::string("malformed worker command: ") + line, {}, {}, {}, "setup", {}, 0.0, {}})}});
      continue;
    }
    const CaseInfo* info = Registry::instance().find(id);
    CaseOutcome out;
    if (!info) {
      out.status = Status::error;
      out.message = std::string("unknown case id ") + id;
    } else {
      auto hook = [](const std::string& phase) {
        write_event({{"event", "phase"}, {"phase", phase}});
      };
      out = run_case_in_process(*info, *subjects[static_cast<size_t>(subject)], hook);
    }
    // What the library printed belongs to this case: push it out before the result.
    std::fflush(stdout);
    std::fflush(stderr);
    write_event({{"event", "result"}, {"outcome", protocol::outcome_to_json(out)}});
  }
  return 0;
}

}  // namespace dlpv
