// harness/include/dlpack_validate/case.hpp: what a case is (record + body) and what it may
// do while it runs (CaseContext). Cases include this and subject.hpp; nothing else.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/ids.hpp>
#include <dlpack_validate/status.hpp>

#include <dlpack/dlpack.h>

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlpv {

class Subject;


/// One observation inside a case, tied to one requirement id.
struct Check {
  std::string requirement;
  Status status = Status::pass;
  std::string message;
  std::string expected;
  std::string observed;
  /// Pair cases: the side whose behaviour this check judges ("producer" or "consumer"; empty
  /// when the check cannot single one out). Reports charge a failed check to that library.
  std::string party;
};

/// How a case ended, as seen by the process that ran it (or by the supervisor that saw it
/// die).
struct CaseOutcome {
  Status status = Status::error;
  std::string message;
  std::string expected;
  std::string observed;
  std::vector<Check> checks;
  std::string phase;        ///< where the case was when it ended
  std::string signal;       ///< "SIGSEGV (11)" for crashes, else empty
  /// Crashes and timeouts: the requirement the phase it died in was testing (ctx.phase's
  /// second argument), which the death is charged to instead of the case's own checks.
  std::string reached;
  double duration_s = 0.0;
  std::string output_tail;  ///< what the library printed (non-pass results only)
  /// Set when the case timed out once and was run again alone, in a fresh worker, with twice
  /// the time: what the first try did (the result is the second try's).
  std::string first_try;
};

/// The phase of a case that waits for a library to load in a helper process of its own: the
/// supervisor gives it the load deadline (--load-timeout), not case time, and the case's time
/// starts again with the next phase. Loading is not a case. (CaseContext::phase names it.)
inline constexpr const char* kCaseLoadingPhase = "loading";

class CaseContext;
using CaseBody = std::function<void(CaseContext&)>;

/// The struct a tensor travels in: DLManagedTensorVersioned or the legacy DLManagedTensor.
enum class StructKind { legacy, versioned };
const char* to_string(StructKind kind);  ///< "legacy", "versioned" (the id segment)

/// A case's parameters as values (declared with Declare, read with CaseContext); absent when
/// the case does not have one.
struct CaseParams {
  std::optional<StructKind> kind;
  std::optional<DLDataType> dtype;
  std::optional<uint32_t> layout;  ///< DLPV_LAYOUT_*
  std::optional<DLDevice> device;
  std::string shape;               ///< catalogue name (shape_named); empty: 3x4
};

/// The static record of a case. Parameterised families register one record per combination,
/// each with its own stable dotted id.
struct CaseInfo {
  std::string id;                         ///< "consumer.byte_offset.versioned"
  std::string title;                      ///< one line
  std::vector<std::string> requirements;  ///< checklist ids, first one decides the area
  Severity severity = Severity::must;     ///< of a violation: MUST -> fail, SHOULD -> warn
  Role role = Role::producer;
  CaseParams values;                      ///< what the body reads
  std::map<std::string, std::string> params;  ///< their text, as the record shows them
  std::vector<std::string> proofs;        ///< fixtures declared to break it (tests/proofs)
  std::string source;                     ///< the file that declares it (path = id)
  int line = 0;                           ///< the line of its Declare in `source`
  std::vector<std::string> needs;         ///< subject capabilities; missing -> skip
  std::vector<std::string> kinds;         ///< subject kinds it applies to; empty = all
  CaseBody body;
};

/// Whether a case applies to a subject kind ("plugin", "python"); a case that does not
/// apply is not run at all (unlike a skip, which is a result).
bool applies_to(const CaseInfo& info, const std::string& subject_kind);

/// Thrown by CaseContext::skip / stop; caught by the runner, never by cases.
struct CaseSkipped { std::string reason; };
struct CaseStopped {};
struct CaseHarnessError { std::string message; };

/// What a running case sees. Every verdict goes through here so that the status is always
/// the worst thing observed, and a case that observed nothing ends as `error`, not `pass`.
/// The engine's time limits when nobody sets them: a case (--timeout) and loading a subject
/// (--load-timeout). The options table (app/src/options.cpp) takes its defaults from here.
inline constexpr double kDefaultCaseTimeoutS = 10.0;
inline constexpr double kDefaultLoadTimeoutS = 120.0;

/// The time the supervisor gives the case running now: the worker sets it from each `run`
/// command (docs/protocol.md), the in-process mode from --timeout; 10 s until set. A case that
/// waits on a helper process waits at most this long, never on a constant of its own.
double case_time_limit_s();
void set_case_time_limit_s(double seconds);

class CaseContext {
 public:
  /// What a death in a phase means where the case knows more than "the library crashed": the
  /// validator's own instruments (a guard page behind a struct the library must not read) make
  /// a breach fault on purpose. Shown with the crash as expected / observed and why.
  struct DeathMeaning {
    std::string expected;
    std::string observed;
    std::string why;
  };
  /// (phase, the requirement that phase puts to the test or "", what a death there means).
  using PhaseHook = std::function<void(const std::string&, const std::string&, const DeathMeaning&)>;
  CaseContext(const CaseInfo& info, Subject& subject, PhaseHook hook = {}, Subject* peer = nullptr);

  const CaseInfo& info() const { return info_; }
  Subject& subject() { return subject_; }
  /// Pair cases: the consumer side (subject() is the producer side).
  Subject& peer();
  /// The declared parameters. A body asking for one its case does not declare is a harness
  /// error (the declaration and the body disagree).
  bool versioned() const;
  DLDataType dtype();
  uint32_t layout();
  DLDevice device();
  const std::string& shape_name() const { return info_.values.shape; }
  const CaseParams& values() const { return info_.values; }

  /// Announce the phase the case enters (export, import, read, release, deleter ...). The
  /// supervisor uses the last one to say where a crash or hang happened.
  /// `reaches`: the requirement this phase puts to the test when that is not the case's own
  /// (a pair case feeding a CUDA tensor to a CPU consumer reaches DEV-04 before its own
  /// check): a crash or hang in the phase is charged to it.
  void phase(const std::string& name, const std::string& reaches = {}, const DeathMeaning& dies = {});

  /// Pair cases: the side ("producer", "consumer", or "" for neither alone) that the checks
  /// recorded from now on judge (Check::party). A crash is charged by its phase instead
  /// (reports: export -> producer, import and read -> consumer).
  void charge(const std::string& party) { party_ = party; }

  /// Record a requirement check with the case's severity. Returns `ok`.
  bool check(bool ok, const std::string& requirement, const std::string& message,
             const std::string& expected = {}, const std::string& observed = {});
  /// Record a check with an explicit severity (for cases mixing MUST and SHOULD items).
  bool check_as(Severity severity, bool ok, const std::string& requirement,
                const std::string& message, const std::string& expected = {},
                const std::string& observed = {});
  /// An informational note (shown in reports, never changes the status).
  void note(const std::string& text);

  [[noreturn]] void skip(const std::string& reason);
  /// End the case now (after a violation that makes further checks meaningless).
  [[noreturn]] void stop();
  /// A harness-side problem (not the library's fault): status `error`.
  [[noreturn]] void harness_error(const std::string& message);

  CaseOutcome finish(const std::string* skipped_reason, const std::string* harness_error);
  const std::vector<Check>& checks() const { return checks_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  const CaseInfo& info_;
  Subject& subject_;
  Subject* peer_ = nullptr;
  PhaseHook hook_;
  std::string phase_ = "setup";
  std::string party_;
  std::vector<Check> checks_;
  std::vector<std::string> notes_;
};

/// The global case registry. Case files add records from static initialisers (DLPV_CASES
/// blocks, declare.hpp); the CLI checks the number of files that did against the build's count
/// so a linker can never drop a case file silently.
/// A family declared over a cover of its axes (Declare::pairwise, Declare::triples): the cases
/// registered are the cover's points, and any other point of its input space is made on demand,
/// with the id its values give ("python.input.consumer.int16.offset.k.odd.other.again"). --explore
/// draws such points; a drawn id runs, and replays, by itself (Registry::find).
struct Family {
  std::string base;                                   ///< the id before the value segments
  std::vector<std::string> axis_names;
  std::vector<std::vector<std::string>> axis_values;  ///< in declared order: the first the simplest
  std::function<CaseInfo(const std::vector<size_t>&)> make;  ///< the case of one value index per axis
  std::string id_of(const std::vector<size_t>& pick) const;
  /// The value indexes an id names, or nullopt when it is not a point of this family.
  std::optional<std::vector<size_t>> pick_of(const std::string& id) const;
};

class Registry {
 public:
  static Registry& instance();
  void add(CaseInfo info);
  /// A declaration's records, made when first wanted rather than at start-up: all of them by
  /// cases(), only those of the declarations whose id `base` an id extends by find(). A worker that
  /// runs one case so makes one declaration's records, not the whole suite's (Declare::run).
  void add_lazy(std::string base, std::function<std::vector<CaseInfo>()> make);
  void add_family(Family family) { families_.push_back(std::move(family)); }
  const std::vector<Family>& families() const { return families_; }
  /// The family whose space holds `id` (its value indexes in *pick), or nullptr.
  const Family* family_of(const std::string& id, std::vector<size_t>* pick = nullptr) const;
  /// A file that declares cases (DLPV_CASES); counted once however many blocks it has.
  void unit_registered(const char* file) { units_.insert(file); }
  /// Sorted by id; throws std::logic_error on duplicate ids.
  const std::vector<CaseInfo>& cases();
  /// A registered case, or else a point of a family's space made now (and kept: the pointer
  /// lives as long as the process).
  const CaseInfo* find(const std::string& id);
  size_t unit_count() const { return units_.size(); }

 private:
  struct Pending {
    std::string base;
    std::function<std::vector<CaseInfo>()> make;
    bool looked = false;  ///< its records are in found_ (find before cases)
  };
  std::vector<CaseInfo> cases_;
  std::vector<Pending> pending_;
  size_t listed_ = 0;           ///< pending_[0, listed_) have their records in cases_
  std::deque<CaseInfo> found_;  ///< records find() made before cases() did (pointers stay valid)
  std::vector<Family> families_;
  std::deque<CaseInfo> made_;  ///< family points made on demand (a deque: pointers stay valid)
  std::set<std::string> units_;
  bool sorted_ = false;
};

/// Requirement metadata from the checklist (generated table, see tools/gen_requirements.py).
struct Requirement {
  const char* id;
  const char* binding;  ///< P, C or P+C
  const char* level;    ///< MUST, SHOULD, MAY, INFO ...
  const char* summary;  ///< our checklist's one-paragraph statement
  const char* source;   ///< the texts it rests on, by tag ("PS; NP"), as the table records them
  const char* test;     ///< how the validator tests it (the table's *Test:* part)
};
const Requirement* find_requirement(const std::string& id);
const std::vector<Requirement>& all_requirements();

/// A tag the requirement table's entries use: a source ("PS", "Hx.y": the document) or an instrument
/// ("T-CNT": what the validator builds to observe a requirement).
struct RequirementTerm {
  const char* tag;
  const char* kind;  ///< "source" or "instrument"
  const char* text;
};
const std::vector<RequirementTerm>& requirement_terms();
}  // namespace dlpv
