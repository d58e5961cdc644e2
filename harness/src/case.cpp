// harness/src/case.cpp: case records, the registry, the verdict rules inside a case.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/case.hpp>


#include <algorithm>
#include <cstdlib>

namespace dlpv {

const char* to_string(Status s) {
  switch (s) {
    case Status::pass: return "pass";
    case Status::fail: return "fail";
    case Status::warn: return "warn";
    case Status::skip: return "skip";
    case Status::xfail: return "xfail";
    case Status::xpass: return "xpass";
    case Status::crash: return "crash";
    case Status::timeout: return "timeout";
    case Status::error: return "error";
  }
  return "error";
}

bool parse_status(const std::string& text, Status& out) {
  for (Status s : {Status::pass, Status::fail, Status::warn, Status::skip, Status::xfail,
                   Status::xpass, Status::crash, Status::timeout, Status::error}) {
    if (text == to_string(s)) {
      out = s;
      return true;
    }
  }
  return false;
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::must: return "MUST";
    case Severity::should: return "SHOULD";
    case Severity::may: return "MAY";
  }
  return "MUST";
}

const char* to_string(Role r) {
  switch (r) {
    case Role::producer: return "producer";
    case Role::consumer: return "consumer";
    case Role::exchange_api: return "exchange_api";
    case Role::pair: return "pair";
    case Role::python_protocol: return "python_protocol";
  }
  return "producer";
}

const char* to_string(StructKind k) { return k == StructKind::versioned ? "versioned" : "legacy"; }

bool applies_to(const CaseInfo& info, const std::string& subject_kind) {
  if (info.kinds.empty()) return true;
  return std::find(info.kinds.begin(), info.kinds.end(), subject_kind) != info.kinds.end();
}

// ---- CaseContext -----------------------------------------------------------------------

CaseContext::CaseContext(const CaseInfo& info, Subject& subject, PhaseHook hook, Subject* peer)
    : info_(info), subject_(subject), peer_(peer), hook_(std::move(hook)) {}

Subject& CaseContext::peer() {
  if (!peer_) harness_error("a pair case ran without a consumer subject");
  return *peer_;
}

bool CaseContext::versioned() const {
  return info_.values.kind && *info_.values.kind == StructKind::versioned;
}

DLDataType CaseContext::dtype() {
  if (!info_.values.dtype) harness_error("the case reads a dtype it does not declare");
  return *info_.values.dtype;
}

uint32_t CaseContext::layout() {
  if (!info_.values.layout) harness_error("the case reads a layout it does not declare");
  return *info_.values.layout;
}

DLDevice CaseContext::device() {
  if (!info_.values.device) harness_error("the case reads a device it does not declare");
  return *info_.values.device;
}

void CaseContext::phase(const std::string& name, const std::string& reaches, const DeathMeaning& dies) {
  phase_ = name;
  if (hook_) hook_(name, reaches, dies);
}

bool CaseContext::check(bool ok, const std::string& requirement, const std::string& message,
                        const std::string& expected, const std::string& observed) {
  return check_as(info_.severity, ok, requirement, message, expected, observed);
}

bool CaseContext::check_as(Severity severity, bool ok, const std::string& requirement,
                           const std::string& message, const std::string& expected,
                           const std::string& observed) {
  Check c;
  c.requirement = requirement;
  // A MAY item never changes the verdict; it is kept as a passing check with its message.
  c.status = ok ? Status::pass
                : (severity == Severity::must     ? Status::fail
                   : severity == Severity::should ? Status::warn
                                                  : Status::pass);
  c.message = message;
  c.expected = expected;
  // Callers describe what a failure would look like ("NULL", "unreadable"), so a passing
  // check keeps no observation: the record must not say a pointer was NULL when it was not.
  c.observed = ok ? std::string() : observed;
  c.party = party_;
  if (!ok && severity == Severity::may) notes_.push_back(message);
  checks_.push_back(std::move(c));
  return ok;
}

void CaseContext::note(const std::string& text) { notes_.push_back(text); }
void CaseContext::skip(const std::string& reason) { throw CaseSkipped{reason}; }
void CaseContext::stop() { throw CaseStopped{}; }
void CaseContext::harness_error(const std::string& message) {
  throw CaseHarnessError{message};
}

namespace {
int rank(Status s) {
  switch (s) {
    case Status::pass: return 0;
    case Status::skip: return 1;
    case Status::warn: return 2;
    case Status::fail: return 3;
    default: return 4;
  }
}
}  // namespace

CaseOutcome CaseContext::finish(const std::string* skipped_reason,
                                const std::string* harness_error_text) {
  CaseOutcome out;
  out.checks = checks_;
  out.phase = phase_;
  Status worst = Status::pass;
  const Check* first_bad = nullptr;
  for (const Check& c : checks_) {
    if (rank(c.status) > rank(worst)) {
      worst = c.status;
      first_bad = &c;
    }
  }
  if (harness_error_text) {
    out.status = Status::error;
    out.message = *harness_error_text;
  } else if (worst == Status::fail || worst == Status::warn) {
    // Worst status wins: a case that failed before it skipped is still a failure.
    out.status = worst;
  } else if (skipped_reason) {
    out.status = Status::skip;
    out.message = *skipped_reason;
  } else if (checks_.empty()) {
    out.status = Status::error;
    out.message = "the case ended without observing anything (no verdict)";
  } else {
    out.status = Status::pass;
  }
  if (first_bad && out.status == first_bad->status) {
    out.message = "[" + first_bad->requirement + "] " + first_bad->message;
    out.expected = first_bad->expected;
    out.observed = first_bad->observed;
  }
  if (out.status == Status::pass && !notes_.empty()) out.message = notes_.front();
  return out;
}

// ---- Registry --------------------------------------------------------------------------

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(CaseInfo info) {
  cases_.push_back(std::move(info));
  sorted_ = false;
}

void Registry::add_lazy(std::string base, std::function<std::vector<CaseInfo>()> make) {
  pending_.push_back({std::move(base), std::move(make)});
}

const std::vector<CaseInfo>& Registry::cases() {
  if (listed_ < pending_.size()) {
    // Made again even where find() made them before: the same records (a declaration makes the
    // same ones every time), while the pointers find() gave out stay valid.
    for (; listed_ < pending_.size(); ++listed_)
      for (CaseInfo& c : pending_[listed_].make()) cases_.push_back(std::move(c));
    sorted_ = false;
  }
  if (!sorted_) {
    std::sort(cases_.begin(), cases_.end(),
              [](const CaseInfo& a, const CaseInfo& b) { return a.id < b.id; });
    for (size_t i = 1; i < cases_.size(); ++i) {
      if (cases_[i].id == cases_[i - 1].id)
        throw std::logic_error("duplicate case id: " + cases_[i].id);
    }
    sorted_ = true;
  }
  return cases_;
}

const CaseInfo* Registry::find(const std::string& id) {
  if (listed_ < pending_.size()) {
    // Before cases(): make only the declarations whose id this one extends ("a.b" for "a.b" and
    // "a.b.c"). Found there, it is the record cases() would list; else (a family's point, an id
    // no declaration's prefix names) the whole registry is made and searched below.
    for (size_t i = listed_; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      if (p.looked) continue;
      const bool extends = id.compare(0, p.base.size(), p.base) == 0 &&
                           (id.size() == p.base.size() || id[p.base.size()] == '.');
      if (!extends) continue;
      for (CaseInfo& c : p.make()) found_.push_back(std::move(c));
      p.looked = true;
    }
    for (const CaseInfo& c : found_)
      if (c.id == id) return &c;
  }
  const auto& all = cases();
  auto it = std::lower_bound(all.begin(), all.end(), id,
                             [](const CaseInfo& c, const std::string& v) { return c.id < v; });
  if (it != all.end() && it->id == id) return &*it;
  for (const CaseInfo& m : made_)
    if (m.id == id) return &m;
  std::vector<size_t> pick;
  const Family* f = family_of(id, &pick);
  if (!f) return nullptr;
  made_.push_back(f->make(pick));
  return &made_.back();
}

std::string Family::id_of(const std::vector<size_t>& pick) const {
  std::string id = base;
  for (size_t a = 0; a < axis_values.size(); ++a)
    if (!axis_values[a][pick[a]].empty()) id += "." + axis_values[a][pick[a]];  // "": an extension's first
  return id;
}

std::optional<std::vector<size_t>> Family::pick_of(const std::string& id) const {
  if (id.size() <= base.size() || id.compare(0, base.size(), base) != 0 || id[base.size()] != '.') return std::nullopt;
  std::vector<size_t> pick;
  size_t at = base.size() + 1;  // the next segment starts here (past the end: none left)
  for (size_t a = 0; a < axis_values.size(); ++a) {
    const auto& vals = axis_values[a];
    std::string value;
    size_t end = at;
    if (at <= id.size()) {
      end = id.find('.', at);
      if (end == std::string::npos) end = id.size();
      value = id.substr(at, end - at);
    }
    auto v = at <= id.size() ? std::find(vals.begin(), vals.end(), value) : vals.end();
    if (v != vals.end() && !value.empty()) {
      at = end + 1;
    } else {
      // No segment for this axis: only an extension axis's implicit "" may be left out.
      v = std::find(vals.begin(), vals.end(), std::string());
      if (v == vals.end()) return std::nullopt;
    }
    pick.push_back(static_cast<size_t>(v - vals.begin()));
  }
  if (at <= id.size()) return std::nullopt;  // segments left over
  return pick;
}

const Family* Registry::family_of(const std::string& id, std::vector<size_t>* pick) const {
  for (const Family& f : families_)
    if (auto p = f.pick_of(id)) {
      if (pick) *pick = *p;
      return &f;
    }
  return nullptr;
}

// ---- requirements ----------------------------------------------------------------------

const std::vector<Requirement>& all_requirements() {
  static const std::vector<Requirement> table = {
#include "requirements_table.inc"
  };
  return table;
}

const std::vector<RequirementTerm>& requirement_terms() {
  static const std::vector<RequirementTerm> table = {
#include "requirement_terms.inc"
  };
  return table;
}

const Requirement* find_requirement(const std::string& id) {
  for (const Requirement& r : all_requirements())
    if (id == r.id) return &r;
  return nullptr;
}

namespace {
double g_case_time_limit_s = kDefaultCaseTimeoutS;
}  // namespace

double case_time_limit_s() { return g_case_time_limit_s; }

void set_case_time_limit_s(double seconds) {
  if (seconds > 0) g_case_time_limit_s = seconds;
}

}  // namespace dlpv
