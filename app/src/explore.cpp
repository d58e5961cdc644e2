// app/src/explore.cpp: draws beyond the covers, and the shrink of a drawn input that fails
// (explore.hpp).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/explore.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <set>

namespace dlpv {

namespace {

/// A small deterministic generator (the SplitMix64 mixing steps): the same seed gives the same
/// sequence on every machine and compiler, which std's distributions do not promise.
class Draws {
 public:
  explicit Draws(unsigned long long seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

size_t space_size(const Family& f) {
  size_t n = 1;
  for (const auto& v : f.axis_values) n = n > (SIZE_MAX / 64) ? SIZE_MAX / 64 : n * v.size();
  return n;
}

bool ends_badly(Status s) { return s != Status::pass && s != Status::skip; }

/// The requirements a result went wrong on: its checks that did not pass, or for a death the
/// one its phase reached.
std::set<std::string> wrong_on(const CaseOutcome& o) {
  std::set<std::string> out;
  for (const Check& c : o.checks)
    if (c.status != Status::pass && c.status != Status::skip) out.insert(c.requirement);
  if (!o.reached.empty()) out.insert(o.reached);
  return out;
}

bool ends_alike(const CaseOutcome& a, const CaseOutcome& b) {
  if (a.status != b.status) return false;
  const std::set<std::string> x = wrong_on(a), y = wrong_on(b);
  if (x.empty() || y.empty()) return x.empty() && y.empty();
  return std::any_of(x.begin(), x.end(), [&](const std::string& r) { return y.count(r) > 0; });
}

std::map<std::string, std::string> params_of(const Family& f, const std::vector<size_t>& pick) {
  std::map<std::string, std::string> out;
  for (size_t a = 0; a < f.axis_names.size(); ++a)
    if (!f.axis_values[a][pick[a]].empty()) out[f.axis_names[a]] = f.axis_values[a][pick[a]];  // "": an extension's first
  return out;
}

}  // namespace

std::vector<const CaseInfo*> draw_inputs(const std::vector<const CaseInfo*>& selected, long long n,
                                         unsigned long long seed, const std::vector<std::string>& excludes) {
  Registry& reg = Registry::instance();
  std::set<std::string> taken;
  std::vector<const Family*> families;
  for (const CaseInfo* c : selected) {
    taken.insert(c->id);
    const Family* f = reg.family_of(c->id);
    if (f && std::find(families.begin(), families.end(), f) == families.end()) families.push_back(f);
  }
  std::sort(families.begin(), families.end(), [](const Family* a, const Family* b) { return a->base < b->base; });
  std::vector<const CaseInfo*> out;
  if (families.empty() || n <= 0) return out;
  Draws draws(seed);
  std::vector<size_t> left(families.size());
  for (size_t i = 0; i < families.size(); ++i) {
    left[i] = space_size(*families[i]);
    for (const std::string& id : taken)
      if (families[i]->pick_of(id) && left[i] > 0) --left[i];
  }
  for (long long i = 0, turn = 0; i < n; ++turn) {
    const size_t k = static_cast<size_t>(turn) % families.size();
    if (std::all_of(left.begin(), left.end(), [](size_t x) { return x == 0; })) break;  // every space drawn dry
    if (left[k] == 0) continue;
    const Family& f = *families[k];
    // Values drawn one axis at a time; a point already taken is drawn again (the space has a
    // point left, and the spaces are large next to N, so this ends quickly).
    for (;;) {
      std::vector<size_t> pick;
      for (const auto& values : f.axis_values) pick.push_back(draws.below(values.size()));
      const std::string id = f.id_of(pick);
      if (taken.count(id)) continue;
      taken.insert(id);
      --left[k];
      const bool excluded = std::any_of(excludes.begin(), excludes.end(),
                                        [&](const std::string& g) { return glob_match(g, id); });
      if (!excluded) {
        out.push_back(reg.find(id));
        ++i;
      }
      break;
    }
  }
  return out;
}

std::map<size_t, Shrunk> shrink_failures(const RunOptions& options, const RunResult& run,
                                         const std::vector<std::string>& drawn, bool quiet) {
  std::map<size_t, Shrunk> out;
  Registry& reg = Registry::instance();
  RunOptions silent = options;
  silent.progress = nullptr;
  silent.stop_after = nullptr;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const CaseResult& r = run.results[i];
    if (!ends_badly(r.outcome.status) || std::find(drawn.begin(), drawn.end(), r.info->id) == drawn.end()) continue;
    std::vector<size_t> pick;
    const Family* f = reg.family_of(r.info->id, &pick);
    if (!f) continue;
    Shrunk s;
    s.status = to_string(r.outcome.status);
    std::set<std::string> tried{r.info->id};
    for (;;) {
      // Every input one axis simpler than the current one, in axis order, simplest value first.
      std::vector<const CaseInfo*> simpler;
      std::vector<std::vector<size_t>> picks;
      for (size_t a = 0; a < pick.size(); ++a)
        for (size_t v = 0; v < pick[a]; ++v) {
          std::vector<size_t> p = pick;
          p[a] = v;
          const std::string id = f->id_of(p);
          if (!tried.insert(id).second) continue;
          simpler.push_back(reg.find(id));
          picks.push_back(p);
        }
      if (simpler.empty()) break;
      if (!quiet) std::fprintf(stderr, "explore: shrinking %s: %zu simpler inputs\n", r.info->id.c_str(), simpler.size());
      RunResult tries;
      try {
        tries = run_cases(silent, simpler);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "explore: shrinking %s stopped: %s\n", r.info->id.c_str(), e.what());
        break;
      }
      s.tries += static_cast<int>(simpler.size());
      ++s.rounds;
      // The simplest that ends as the drawn input did: the least sum of value indexes, then
      // the first in axis order.
      long best = -1;
      size_t best_sum = 0;
      for (const CaseResult& t : tries.results) {
        if (t.subject != r.subject || t.peer != r.peer || !ends_alike(t.outcome, r.outcome)) continue;
        const auto at = std::find(simpler.begin(), simpler.end(), t.info) - simpler.begin();
        const size_t sum = std::accumulate(picks[at].begin(), picks[at].end(), size_t{0});
        if (best < 0 || sum < best_sum) best = at, best_sum = sum;
      }
      if (best < 0) break;
      pick = picks[static_cast<size_t>(best)];
    }
    s.id = f->id_of(pick);
    s.params = params_of(*f, pick);
    out[i] = s;
  }
  return out;
}

}  // namespace dlpv
