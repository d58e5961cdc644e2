// harness/src/run_case.cpp: one case, in the current process. Never lets an exception
// escape: library misbehaviour becomes a check, harness trouble becomes `error`.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>

#include <chrono>

namespace dlpv {


std::string missing_need(const CaseInfo& info, const SubjectInfo& s) {
  for (const std::string& need : info.needs) {
    if (s.has(need)) continue;
    if (auto why = s.absent.find(need); why != s.absent.end()) return why->second;
    if (need == "cuda_driver") continue;  // not probed where this subject was described: the body asks
    const bool versioned = need == "export_versioned" || need == "import_versioned";
    if (versioned && s.legacy_only())
      return fmt::format("subject declares DLPack {} (legacy-only): it has no {} entry point, "
                         "which DLPack 1.0 introduced",
                         s.version_text(), need);
    return fmt::format("subject does not implement {} (its plugin table leaves it NULL)", need);
  }
  return {};
}

CaseOutcome skipped_outcome(const std::string& reason) {
  CaseOutcome out;
  out.status = Status::skip;
  out.phase = "setup";  // where CaseContext starts: the body never ran
  out.message = reason;
  return out;
}

CaseOutcome run_case_in_process(const CaseInfo& info, Subject& subject,
                                const CaseContext::PhaseHook& hook, Subject* peer) {
  const auto t0 = std::chrono::steady_clock::now();
  CaseContext ctx(info, subject, hook, peer);
  std::string skipped, harness;
  bool was_skipped = false, had_error = false;
  const std::string need = missing_need(info, subject.info());
  if (!need.empty()) {
    skipped = need;
    was_skipped = true;
  } else {
    try {
      info.body(ctx);
    } catch (const CaseSkipped& s) {
      skipped = s.reason;
      was_skipped = true;
    } catch (const CaseStopped&) {
    } catch (const CaseHarnessError& e) {
      harness = e.message;
      had_error = true;
    } catch (const std::exception& e) {
      harness = fmt::format("exception escaped the case body: {}", e.what());
      had_error = true;
    } catch (...) {
      harness = "unknown exception escaped the case body (thrown by the library?)";
      had_error = true;
    }
  }
  if (need.empty()) {
    // What the case made dies inside the case (Subject::after_case), under a phase of its own:
    // a death there is this case's, and no later case inherits its leftovers.
    if (hook) hook("cleanup", "", {});
    subject.after_case();
    if (peer && peer != &subject) peer->after_case();
  }
  CaseOutcome out = ctx.finish(was_skipped ? &skipped : nullptr, had_error ? &harness : nullptr);
  out.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace dlpv
