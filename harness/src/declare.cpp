// harness/src/declare.cpp: the case declaration builder (declare.hpp).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/tensor.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace dlpv {

std::vector<int64_t> shape_named(const std::string& name) {
  if (name == "scalar") return {};
  if (name == "empty") return {0, 3};
  if (name == "ones") return {1, 1, 3};
  if (name == "one") return {1};
  if (name == "ndim3") return {2, 3, 4};
  if (name == "ndim32") {  // 32 dimensions, 8 elements
    std::vector<int64_t> s(32, 1);
    s[3] = s[17] = s[31] = 2;
    return s;
  }
  return {3, 4};
}

const std::vector<Sample>& rule_samples() {
  static const std::vector<Sample> samples = {
      {"scalar", "float32", "scalar", true},     {"empty", "float32", "empty", false},
      {"one", "float32", "one", true},           {"ndim3", "float32", "ndim3", true},
      {"uint8", "uint8", "3x4", true},           {"bool", "bool", "3x4", true},
      {"complex128", "complex128", "3x4", true}, {"float8_e4m3fn", "float8_e4m3fn", "3x4", true},
      {"float4_e2m1fn", "float4_e2m1fn", "3x4", true}};
  return samples;
}

const char* import_need(StructKind k) { return k == StructKind::versioned ? "import_versioned" : "import_legacy"; }
const char* export_need(StructKind k) { return k == StructKind::versioned ? "export_versioned" : "export_legacy"; }

namespace {
// A declaration mistake is a bug in the validator: say which and stop before any case runs.
[[noreturn]] void bad_declaration(const std::string& id, const std::string& what) {
  std::fprintf(stderr, "dlpack-validate: case %s is declared wrong: %s\n", id.c_str(), what.c_str());
  std::abort();
}
}  // namespace

Declare::Declare(std::string id, std::string title, const char* file) {
  info_.id = std::move(id);
  info_.title = std::move(title);
  // Kept from "cases/" on, so the listing names the file the same on every machine.
  const std::string path = file ? file : "";
  const size_t at = path.rfind("/cases/");
  info_.source = at == std::string::npos ? path : path.substr(at + 1);
}

Declare& Declare::must(std::vector<std::string> requirements) {
  info_.severity = Severity::must;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::should(std::vector<std::string> requirements) {
  info_.severity = Severity::should;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::may(std::vector<std::string> requirements) {
  info_.severity = Severity::may;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::level(Severity severity, std::vector<std::string> requirements) {
  info_.severity = severity;
  info_.requirements = std::move(requirements);
  return *this;
}
Declare& Declare::role(Role role) {
  info_.role = role;
  return *this;
}
Declare& Declare::python() {
  info_.role = Role::python_protocol;
  info_.kinds = {"python"};
  return device(kCpu0);
}
Declare& Declare::kind(StructKind kind) {
  info_.values.kind = kind;
  info_.params["version"] = to_string(kind);
  return *this;
}
Declare& Declare::dtype(DLDataType dtype) {
  info_.values.dtype = dtype;
  info_.params["dtype"] = dtype_name(dtype);
  return *this;
}
Declare& Declare::dtype(const std::string& name) {
  const auto t = dtype_from_name(name);
  if (!t) bad_declaration(info_.id, "unknown dtype " + name);
  return dtype(*t);
}
Declare& Declare::layout(uint32_t layout) {
  info_.values.layout = layout;
  info_.params["layout"] = layout_name(layout);
  return *this;
}
Declare& Declare::device(CaseDevice device) {
  info_.values.device = device.device;
  info_.params["device"] = device.label;
  return *this;
}
Declare& Declare::device(DLDevice device) {
  info_.values.device = device;
  info_.params["device"] = device_name(device);
  return *this;
}
Declare& Declare::shape(std::string name) {
  info_.params["shape"] = name;
  info_.values.shape = std::move(name);
  return *this;
}
Declare& Declare::label(std::string key, std::string value) {
  info_.params[std::move(key)] = std::move(value);
  return *this;
}
Declare& Declare::needs(std::vector<std::string> capabilities) {
  info_.needs = std::move(capabilities);
  return *this;
}
Declare& Declare::only_for(std::vector<std::string> subject_kinds) {
  info_.kinds = std::move(subject_kinds);
  return *this;
}
Declare& Declare::proven_by(std::vector<std::string> fixtures) {
  info_.proofs = std::move(fixtures);
  return *this;
}
Declare& Declare::per_sample(bool about_data) {
  per_sample_ = true;
  about_data_ = about_data;
  return *this;
}

void Declare::run(CaseBody body) {
  for (CaseInfo& c : records(std::move(body))) Registry::instance().add(std::move(c));
}

std::vector<CaseInfo> Declare::records(CaseBody body) const {
  CaseInfo info = info_;
  info.body = std::move(body);
  if (info.requirements.empty()) bad_declaration(info.id, "no requirement id");
  if (!info.body) bad_declaration(info.id, "no body");
  std::vector<CaseInfo> bases;
  if (per_kind_.empty()) {
    bases.push_back(info);
  } else {
    const bool consumer = info.role == Role::consumer;
    for (StructKind k : per_kind_) {
      CaseInfo c = info;
      c.id += std::string(".") + to_string(k);
      c.values.kind = k;
      c.params["version"] = to_string(k);
      c.needs.insert(c.needs.begin(), consumer ? import_need(k) : export_need(k));
      bases.push_back(std::move(c));
    }
  }
  if (!per_sample_) return bases;
  std::vector<CaseInfo> out;
  for (CaseInfo& base : bases) {
    // The rule on float32 3x4 keeps the bare id; each sample inserts its name before the kind.
    const std::string suffix = per_kind_.empty() ? "" : "." + std::string(to_string(*base.values.kind));
    base.values.dtype = dtype_from_name("float32");
    base.params["dtype"] = "float32";
    base.values.shape = "3x4";
    base.params["shape"] = "3x4";
    for (const Sample& s : rule_samples()) {
      if (about_data_ && !s.has_data) continue;
      CaseInfo c = base;
      c.id = info.id + "." + s.name + suffix;
      const auto shape = shape_named(s.shape);
      c.title = fmt::format("{} ({} {})", info.title, s.dtype,
                            shape_text(shape.data(), static_cast<int32_t>(shape.size())));
      c.values.dtype = dtype_from_name(s.dtype);
      c.params["dtype"] = s.dtype;
      c.values.shape = s.shape;
      c.params["shape"] = s.shape;
      out.push_back(std::move(c));
    }
    out.push_back(std::move(base));
  }
  return out;
}

}  // namespace dlpv
