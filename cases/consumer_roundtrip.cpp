// cases/consumer_roundtrip.cpp: a consumer imports validator-made tensors of several
// dtypes and layouts, reads them back correctly and calls the deleter once, after release
// (DEL-02, LAYOUT-01, LAYOUT-08, LAYOUT-11).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void roundtrip(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = *dtype_from_name(ctx.param("dtype"));
  spec.layout = *layout_from_name(ctx.param("layout"));
  spec.shape = {3, 4};
  const bool versioned = ctx.param("version") == "versioned";
  // Every array library has float32 and int64 compact arrays: refusing one is a failure. A
  // strided layout (Fortran, every 2nd element, negative or zero strides) is one a library may
  // not be able to hold (JAX keeps compact arrays only): refusing it cleanly is lawful, misreading
  // it is not. Other dtypes are optional features: a refusal is a skip.
  const bool core = ctx.param("dtype") == "float32" || ctx.param("dtype") == "int64";
  const bool compact = spec.layout == DLPV_LAYOUT_CONTIGUOUS;
  // What the read-back judges: the case's layout rule, or LAYOUT-01 where the case is about the
  // deleter (DEL-02 first).
  const std::string& first = ctx.info().requirements.front();
  consumer_roundtrip(ctx, spec, versioned, first == "DEL-02" ? "LAYOUT-01" : first.c_str(),
                     !compact ? Refusal::allowed : core ? Refusal::fails : Refusal::skips,
                     fmt::format("a 3x4 {} {} tensor", ctx.param("layout"), ctx.param("dtype")));
}

// The per-tensor rule samples the dtype/layout combinations above do not cover already: the
// deleter accounting (DEL-02) and the read-back on 0-d, empty, size-1 and 3-d float32 tensors,
// and on complex128 and fp8 elements. A consumer must take 0-d (LAYOUT-06) and empty
// (LAYOUT-10) tensors; any float32 tensor is ordinary; other element types are optional.
void sample_roundtrip(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = *dtype_from_name(ctx.param("dtype"));
  spec.shape = shape_named(ctx.param("shape"));
  const bool versioned = ctx.param("version") == "versioned";
  const bool core = ctx.param("dtype") == "float32";
  const std::string& first = ctx.info().requirements.front();
  consumer_roundtrip(ctx, spec, versioned, first == "DEL-02" ? "LAYOUT-01" : first.c_str(),
                     core ? Refusal::fails : Refusal::skips,
                     fmt::format("a {} {} tensor", ctx.param("dtype"),
                                 spec.shape.empty() ? std::string("0-d")
                                                    : shape_text(spec.shape.data(), static_cast<int32_t>(spec.shape.size()))));
}

// LAYOUT-08: a consumer that takes the tensor must add byte_offset (misreading fails); dlpack.h
// does not oblige it to take every byte_offset, so a clean refusal is a warning (TensorFlow
// refuses any non-zero byte_offset).
void byte_offset(CaseContext& ctx) {
  MadeSpec spec;
  spec.extra_byte_offset = 64;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-08", Refusal::warns,
                     "a tensor whose elements start at data + byte_offset (64)");
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(consumer_roundtrip) {
  using namespace dlpv;
  struct Combo { const char* dtype; const char* layout; const char* req; Severity sev; };
  const Combo combos[] = {
      {"float32", "contiguous", "DEL-02", Severity::must}, {"int64", "contiguous", "DEL-02", Severity::must},
      {"float32", "fortran", "LAYOUT-01", Severity::must}, {"float32", "strided", "LAYOUT-01", Severity::must},
      {"float32", "reversed", "LAYOUT-11", Severity::should}, {"float32", "broadcast", "LAYOUT-11", Severity::should},
      {"bool", "contiguous", "DEL-02", Severity::must}, {"complex64", "contiguous", "DEL-02", Severity::must},
      {"float16", "contiguous", "DEL-02", Severity::must}, {"uint8", "contiguous", "DEL-02", Severity::must},
      {"float4_e2m1fn", "contiguous", "DTYPE-07", Severity::must}, {"float6_e3m2fn", "contiguous", "DTYPE-07", Severity::must}};
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    const std::string need = versioned ? "import_versioned" : "import_legacy";
    for (const Combo& k : combos) {
      CaseInfo c;
      c.id = fmt::format("consumer.{}.{}.{}.{}", std::string(k.layout) == "contiguous" ? "roundtrip" : "layout",
                         k.dtype, k.layout, kind);
      c.title = fmt::format("{} import of a {} {} tensor reads back right; deleter once, after release",
                            kind, k.layout, k.dtype);
      c.requirements = {k.req, "DEL-02"};
      if (std::string(k.req) == "DEL-02") c.requirements = {"DEL-02", "LAYOUT-01"};
      c.severity = k.sev;
      c.role = Role::consumer;
      c.params = {{"dtype", k.dtype}, {"layout", k.layout}, {"version", kind}, {"device", "cpu:0"}};
      c.needs = {need, "read_array", "release_array"};
      c.body = cases::roundtrip;
      reg.add(std::move(c));
    }
    for (const Sample& sm : rule_samples()) {
      const std::string name = sm.name;
      if (name == "uint8" || name == "bool" || name == "float4_e2m1fn") continue;  // in the table above
      CaseInfo c;
      c.id = fmt::format("consumer.roundtrip.{}.{}", name, kind);
      c.title = fmt::format("{} import of a {} {} tensor reads back right; deleter once, after release", kind,
                            sm.dtype, sm.shape);
      c.requirements = {"DEL-02", "LAYOUT-01"};
      if (name == "scalar") c.requirements = {"LAYOUT-06", "DEL-02"};
      if (name == "empty") c.requirements = {"LAYOUT-10", "DEL-02"};
      c.role = Role::consumer;
      c.params = {{"dtype", sm.dtype}, {"shape", sm.shape}, {"layout", "contiguous"}, {"version", kind},
                  {"device", "cpu:0"}};
      c.needs = {need, "read_array", "release_array"};
      c.body = cases::sample_roundtrip;
      reg.add(std::move(c));
    }
    CaseInfo b;
    b.id = "consumer.byte_offset." + kind;
    b.title = kind + " import honours byte_offset (elements start at data + 64)";
    b.requirements = {"LAYOUT-08", "DEL-02"};
    b.role = Role::consumer;
    b.params = {{"dtype", "float32"}, {"layout", "offset"}, {"version", kind}, {"device", "cpu:0"}};
    b.needs = {need, "read_array", "release_array"};
    b.body = cases::byte_offset;
    reg.add(std::move(b));
  }
}
