// app/include/dlpack_validate/explore.hpp: --explore N --seed S. A family declared over a cover
// of its axes (Declare::pairwise, Declare::triples) registers the cover's points as cases and
// keeps its whole space (Registry::families). Exploration draws N more points of the spaces of
// the selected families, runs them after the rest, and shrinks each drawn input that did not
// pass to the simplest input that still ends the same way.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace dlpv {

/// N points drawn with `seed` from the spaces of the families that `selected` has cases of
/// (the families in id order, one draw each in turn), none already selected or drawn and none
/// matching an `excludes` glob. The same selection, N and seed always draw the same ids.
std::vector<const CaseInfo*> draw_inputs(const std::vector<const CaseInfo*>& selected, long long n,
                                         unsigned long long seed, const std::vector<std::string>& excludes);

/// What shrinking a drawn input found: the simplest input that still ends as it did.
struct Shrunk {
  std::string id;            ///< the simplest failing input's case id (the drawn id when none simpler fails)
  std::map<std::string, std::string> params;  ///< its axis values
  std::string status;        ///< how it ended
  int tries = 0;             ///< simpler inputs run
  int rounds = 0;            ///< runs of the supervisor (each one worker start)
};

/// For each result of a drawn case (`drawn`) that is not pass or skip: run simpler inputs
/// (one axis at a time moved toward its first value), keep the simplest that ends with the same
/// status and a requirement in common, and repeat from there until none does. Keyed by result
/// index in run.results.
/// `quiet`: no progress lines on stderr.
std::map<size_t, Shrunk> shrink_failures(const RunOptions& options, const RunResult& run,
                                         const std::vector<std::string>& drawn, bool quiet = false);

}  // namespace dlpv
