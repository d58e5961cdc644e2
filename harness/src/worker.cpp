// harness/src/worker.cpp: the worker side of docs/design.md §7. Loads every subject once, then
// runs the cases the supervisor names, one at a time, streaming a result per case.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/cuda.hpp>
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/runner.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "protocol.hpp"


namespace dlpv {

namespace {
// The protocol pipes arrive on fds 3 and 4; they are moved out of the library's way (high,
// close-on-exec) before anything is loaded, so a library that closes, reuses or writes to the
// low fds cannot cut or forge the conversation with the supervisor.
int g_event_fd = protocol::kEventFd;
int g_command_fd = protocol::kCommandFd;
constexpr int kExitLostEvents = 120;  // the supervisor reads this status as "event pipe lost"

// To the fixed number `target` (protocol::kWorker*Fd), close-on-exec: the supervisor checks
// that the worker's fds there are still its pipes before it believes a result.
int move_to(int fd, int target) {
  if (dup3(fd, target, O_CLOEXEC) < 0) return fd;  // keep the low one rather than lose it
  close(fd);
  return target;
}

// A library may close stdin/stdout/stderr; the next descriptors anyone opens would then take
// those numbers and receive the library's printing. Keep 0-2 occupied.
void keep_stdio_open() {
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
}

// The supervisor passes the limit (MiB, 0 = none) in DLPV_MEMORY_LIMIT_MIB. RLIMIT_DATA
// bounds what the library can allocate (heap and private writable mappings) without counting
// address-space reservations (PROT_NONE guard pages, GPU runtimes), so an unbounded
// allocation ends in a failed malloc instead of the OOM killer.
void apply_memory_limit() {
#ifndef DLPV_UNDER_ASAN  // AddressSanitizer's shadow memory would count against the limit
  const char* text = std::getenv("DLPV_MEMORY_LIMIT_MIB");
  if (!text || !*text) return;
  char* end = nullptr;
  const unsigned long long mib = std::strtoull(text, &end, 10);
  if (*end || mib == 0 || mib > (1ull << 40)) return;
  rlimit lim{};
  getrlimit(RLIMIT_DATA, &lim);
  const rlim_t want = static_cast<rlim_t>(mib) << 20;
  if (lim.rlim_max != RLIM_INFINITY && want > lim.rlim_max) return;
  lim.rlim_cur = want;
  setrlimit(RLIMIT_DATA, &lim);
#endif
}

// The command in flight: its nonce is echoed on every event about it, and each of those events
// carries its place in the command's sequence (`seq`: 0 for the acknowledgement, then 1, 2 ...),
// so that the supervisor can tell our events from lines a library writes or copies into the pipe.
std::string g_nonce;
std::string g_case;
long g_seq = 0;

void write_event(nlohmann::json j) {
  if (!g_nonce.empty() && j.contains("nonce")) j["seq"] = g_seq++;
  const std::string line = protocol::to_line(j);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t w = write(g_event_fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(kExitLostEvents);  // supervisor gone, or the fd was taken
    p += w;
    left -= static_cast<size_t>(w);
  }
}

int g_loading_subject = -1;

void announce_load_step(const char* step) {
  nlohmann::json ev{{"event", "phase"}, {"phase", "load"}, {"subject", g_loading_subject}, {"step", step}};
  if (!g_nonce.empty()) ev["nonce"] = g_nonce;
  write_event(ev);
}
}  // namespace

namespace {
bool g_worker_process = false;
}  // namespace

// Declared where it is asked (subjects/python: whether the process ends with the subject).
bool in_worker_process();
bool in_worker_process() { return g_worker_process; }

namespace {

/// A worker's life (worker_main): the process set up, the supervisor's `load NONCE` read, the
/// subjects loaded (all of them, or, for a lazy worker, those a case needs as it comes, after
/// any it was asked to preload), the hello, then one command at a time (`run`, `bench`, `quit`).
struct Worker {
  Worker(const std::vector<std::string>& specs_, const SubjectLoader& loader_)
      : specs(specs_), loader(loader_), subjects(specs_.size()) {}
  const std::vector<std::string>& specs;
  const SubjectLoader& loader;
  std::vector<std::unique_ptr<Subject>> subjects;

  /// Die with the supervisor; never leave core files on CI disks; the protocol's pipes moved
  /// where the library will not write by accident.
  static void set_up_process() {
    g_worker_process = true;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGPIPE, SIG_IGN);
    g_command_fd = move_to(protocol::kCommandFd, protocol::kWorkerCommandFd);
    g_event_fd = move_to(protocol::kEventFd, protocol::kWorkerEventFd);
    cover::memo_load("");  // reads (and closes) the supervisor's covers if no case has yet
    apply_memory_limit();
  }

  /// The supervisor's first command, `load NONCE`, read before anything is loaded (byte by byte:
  /// the command loop's stdio buffer comes later): the loading events and the hello echo it.
  static void read_load_nonce() {
    std::string first;
    char c = 0;
    while (first.size() < 200) {
      const ssize_t n = read(g_command_fd, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || c == '\n') break;
      first += c;
    }
    if (first.rfind("load ", 0) == 0) {
      g_nonce = first.substr(5);
      g_seq = 0;
    }
  }

  /// Every subject loaded, in the command line's order, each described for the hello in
  /// `infos`; false after a clean load error (reported as the `load_error` event).
  bool load_all(nlohmann::json& infos) {
    for (size_t i = 0; i < specs.size(); ++i) {
      g_loading_subject = static_cast<int>(i);
      announce_load_step("start");
      try {
        subjects[i] = loader(specs[i], static_cast<int>(i));
      } catch (const SubjectLoadError& e) {
        write_event({{"event", "load_error"}, {"nonce", g_nonce}, {"subject", i}, {"message", e.message}});
        return false;
      }
      nlohmann::json info = protocol::subject_to_json(subjects[i]->info());
      // The machine's CUDA, asked once here for the supervisor: without a driver and device it
      // skips the cases that need one without starting a worker for each (the reason is the one
      // need_cuda gives in the case body).
      if (std::string why; !cuda::available(&why)) info["absent"]["cuda_driver"] = why;
      infos.push_back(std::move(info));
    }
    return true;
  }

  /// A spare worker (DLPV_WORKER_PRELOAD=I,J,...: lazy, started ahead of the case it will
  /// serve) loads the subjects that case needs before its hello, in the order given: the
  /// supervisor lists them in the first worker's order, the order known to load safely. A
  /// clean load error here is left for the case to meet again (in ensure, as a lazy worker would).
  void preload() {
    if (const char* pre = std::getenv("DLPV_WORKER_PRELOAD")) {
      for (const char* p = pre; *p;) {
        char* end = nullptr;
        const long i = std::strtol(p, &end, 10);
        if (end == p) break;
        p = *end == ',' ? end + 1 : end;
        if (i < 0 || i >= static_cast<long>(specs.size()) || subjects[static_cast<size_t>(i)]) continue;
        g_loading_subject = static_cast<int>(i);
        announce_load_step("start");
        try {
          subjects[static_cast<size_t>(i)] = loader(specs[static_cast<size_t>(i)], static_cast<int>(i));
        } catch (const SubjectLoadError&) {
        }
      }
    }
  }

  /// Makes subjects `a` and `b` (-1: none) usable in a lazy worker: loads the missing ones, the
  /// lower index first. The supervisor sends a worker only cases whose missing subjects all come
  /// after every subject it has loaded (see load_in_order), so each worker imports in the
  /// command line's order, the order the first worker loaded them safely in (libraries can
  /// depend on it: Paddle crashes when imported after TensorFlow). False with `why` if one
  /// cannot load.
  bool ensure(int a, int b, std::string& why) {
    for (int i : {std::min(a, b), std::max(a, b)}) {
      if (i < 0 || subjects[static_cast<size_t>(i)]) continue;
      g_loading_subject = i;
      announce_load_step("start");
      try {
        subjects[static_cast<size_t>(i)] = loader(specs[static_cast<size_t>(i)], i);
      } catch (const SubjectLoadError& e) {
        why = "subject " + std::to_string(i) + " did not load in a fresh worker: " + e.message;
        g_loading_subject = -1;
        return false;
      }
      g_loading_subject = -1;
      keep_stdio_open();
    }
    return true;
  }

  /// `bench NONCE SETTINGS_JSON`: time every route.
  void bench(const char* line) {
    char bench_nonce[40] = {};
    int settings_at = 0;
    if (std::sscanf(line, "bench %39s %n", bench_nonce, &settings_at) < 1 || settings_at == 0) settings_at = 6;
    g_nonce = bench_nonce;
    g_seq = 0;
    std::vector<Subject*> all;
    std::string why;
    for (int i = 0; i < static_cast<int>(subjects.size()); ++i) ensure(i, -1, why);
    for (auto& s : subjects)
      if (s) all.push_back(s.get());
    nlohmann::json section;
    try {
      section = bench::worker_bench(all, line + settings_at, [](const std::string& route) {
        write_event({{"event", "phase"}, {"nonce", g_nonce}, {"phase", route}});
      });
    } catch (const std::exception& e) {
      section = {{"error", std::string("the bench failed in the worker: ") + e.what()}};
    }
    std::fflush(stdout);
    std::fflush(stderr);
    write_event({{"event", "bench_result"}, {"nonce", g_nonce}, {"bench", section}});
    g_nonce.clear();
  }

  /// `run NONCE SUBJECT CASE PEER LIMIT_S` (PEER -1: none): acknowledged at once (before
  /// anything of the library runs), so a death before the acknowledgement is known not to
  /// belong to the case. LIMIT_S is the case's time, for the cases that wait on a helper.
  void run(const char* line) {
    int subject = -1, peer = -1;
    char id[3000] = {};
    char nonce[40] = {};
    double limit_s = 0;
    const int fields = std::sscanf(line, "run %39s %d %2999s %d %lf", nonce, &subject, id, &peer, &limit_s);
    g_nonce = fields >= 1 ? nonce : "";
    g_case = fields >= 3 ? id : "";
    g_seq = 0;
    set_case_time_limit_s(limit_s);
    write_event({{"event", "accepted"}, {"nonce", g_nonce}, {"case", g_case}});
    CaseOutcome out;
    const CaseInfo* info = fields >= 3 ? Registry::instance().find(id) : nullptr;
    std::string load_problem;
    if (fields < 5 || subject < 0 || subject >= static_cast<int>(subjects.size()) ||
        peer >= static_cast<int>(subjects.size())) {
      out.status = Status::error;
      out.phase = "setup";
      out.message = std::string("malformed worker command: ") + line;
    } else if (!ensure(subject, peer, load_problem)) {
      out.status = Status::error;
      out.phase = "load";
      out.message = load_problem;
    } else if (!info) {
      out.status = Status::error;
      out.message = std::string("unknown case id ") + id;
    } else {
      auto hook = [](const std::string& phase, const std::string& reaches, const CaseContext::DeathMeaning& dies) {
        nlohmann::json ev{{"event", "phase"}, {"nonce", g_nonce}, {"phase", phase}};
        if (!reaches.empty()) ev["reaches"] = reaches;
        if (!dies.why.empty())
          ev["dies"] = {{"expected", dies.expected}, {"observed", dies.observed}, {"why", dies.why}};
        write_event(ev);
      };
      out = run_case_in_process(*info, *subjects[static_cast<size_t>(subject)], hook,
                                peer >= 0 ? subjects[static_cast<size_t>(peer)].get() : nullptr);
    }
    // What the library printed belongs to this case: push it out before the result.
    std::fflush(stdout);
    std::fflush(stderr);
    keep_stdio_open();
    write_event({{"event", "result"}, {"nonce", g_nonce}, {"case", g_case},
                 {"outcome", protocol::outcome_to_json(out)}});
    g_nonce.clear();
    g_case.clear();
  }
};

}  // namespace

int worker_main(const std::vector<std::string>& specs, const SubjectLoader& loader) {
  Worker::set_up_process();
  Worker::read_load_nonce();
  Worker w(specs, loader);
  // A lazy worker (DLPV_WORKER_LAZY=1, not the first of a run) loads a subject when a case
  // first needs it: after a crash, only the next cases' libraries are imported again.
  const char* lazy_var = std::getenv("DLPV_WORKER_LAZY");
  const bool lazy = lazy_var && std::strcmp(lazy_var, "1") == 0;
  nlohmann::json infos = nlohmann::json::array();
  set_load_step_hook(announce_load_step);
  if (!lazy && !w.load_all(infos)) return 0;
  if (lazy) w.preload();
  g_loading_subject = -1;
  keep_stdio_open();
  write_event({{"event", "hello"}, {"nonce", g_nonce}, {"subjects", infos}, {"pid", static_cast<long>(getpid())}});
  g_nonce.clear();
  FILE* commands = fdopen(g_command_fd, "r");
  if (!commands) return 121;
  char line[4096];
  while (fgets(line, sizeof line, commands)) {
    if (std::strncmp(line, "quit", 4) == 0) break;
    if (std::strncmp(line, "bench ", 6) == 0) w.bench(line);
    else w.run(line);
  }
  return 0;
}

}  // namespace dlpv
