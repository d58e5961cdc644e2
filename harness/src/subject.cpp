// harness/src/subject.cpp: what every kind of subject shares (subject.hpp): its info's
// capability questions and the load-step hook its loader announces steps through.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/subject.hpp>
#include <fmt/format.h>

namespace dlpv {

bool SubjectInfo::has(const std::string& capability) const {
  for (const auto& c : capabilities)
    if (c == capability) return true;
  return false;
}

bool SubjectInfo::speaks_none() const {
  return version_unknown.empty() && !has("export_versioned") && !has("export_legacy") && !has("import_versioned") &&
         !has("import_legacy");
}

std::string SubjectInfo::version_text() const {
  // 0.0 means "a pre-1.0 protocol of unknown minor" (a Python package without max_version).
  if (!version_unknown.empty()) return "not probed";
  if (speaks_none()) return "none";
  if (dlpack_version.major == 0 && dlpack_version.minor == 0) return "0.x";
  return fmt::format("{}.{}", dlpack_version.major, dlpack_version.minor);
}

std::string SubjectInfo::speaks() const {
  if (!version_unknown.empty()) return "DLPack versions not probed: " + version_unknown;
  if (speaks_none()) return "no DLPack import or export";
  std::string out = "DLPack " + version_text();
  if (legacy_only()) out += ", legacy-only";
  if (!has("import_versioned") && !has("import_legacy")) out += ", no DLPack import";
  if (!has("export_versioned") && !has("export_legacy")) out += ", no DLPack export";
  return out;
}

namespace {
LoadStepHook g_load_step_hook = nullptr;
}  // namespace

void set_load_step_hook(LoadStepHook hook) { g_load_step_hook = hook; }
void load_step(const char* step) {
  if (g_load_step_hook) g_load_step_hook(step);
}

bool load_step_skipped(const char* step) {
  const char* list = std::getenv(kSkipStepsVar);
  if (!list || !*list) return false;
  const std::string all = std::string(",") + list + ",";
  return all.find(std::string(",") + step + ",") != std::string::npos;
}

}  // namespace dlpv
