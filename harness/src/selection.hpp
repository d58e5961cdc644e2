// harness/src/selection.hpp: which cases a run plans, in which order (internal to the harness;
// select_cases and keyword_match are declared in runner.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>

#include <vector>

namespace dlpv {

/// Deterministic order: per subject, cases by id; a pair case once per consumer subject.
std::vector<CaseResult> plan(const std::vector<const CaseInfo*>& cases, const std::vector<SubjectInfo>& subjects);

/// The subjects one case uses (its own, and a pair case's peer), ascending: what a fresh
/// worker for it loads.
std::vector<int> case_subjects(int subject, int peer);

}  // namespace dlpv
