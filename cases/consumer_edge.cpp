// cases/consumer_edge.cpp: tensors at the edges of the rules a consumer must still take:
// NULL strides (LAYOUT-03), NULL deleter (DEL-03), a newer minor version (VER-04), and
// major versions it cannot know (2.0 and, in a versioned struct, 0.8: VER-03, DEL-08).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void null_strides(CaseContext& ctx) {
  MadeSpec spec;
  spec.null_strides = true;
  spec.version = DLPackVersion{1, 1};  // NULL strides are legal up to 1.1 (LAYOUT-02)
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-03", Refusal::fails,
                     "a 3x4 tensor with NULL strides (compact row-major)");
}

void null_deleter(CaseContext& ctx) {
  MadeSpec spec;
  spec.deleter = DeleterKind::null;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "DEL-03", Refusal::fails,
                     "a tensor whose deleter is NULL");
}

void minor_ahead(CaseContext& ctx) {
  MadeSpec spec;
  spec.version = DLPackVersion{1, 99};
  consumer_roundtrip(ctx, spec, true, "VER-04", Refusal::fails,
                     "a float32 tensor stamped version 1.99 (minor bumps only add enum values)");
}

// A major version the consumer cannot know (2.0, or 0.8 in a versioned struct): dl_tensor
// lies on a guard page, so reading anything past the fixed prefix kills the worker (reported
// as a crash in phase import). dlpack.h (DLPackVersion): "If an obtained DLPack tensor has a
// major version that disagrees with the version number specified in this header file (i.e.
// major != DLPACK_MAJOR_VERSION), the consumer must call the deleter (and it is safe to do
// so). It is not safe to access any other fields as the memory layout will have changed."
// The deleter may be called by the importer or left to the caller (judge_refusal_ownership).
void other_major(CaseContext& ctx) {
  MadeSpec spec;
  spec.version = ctx.param("major") == "0" ? DLPackVersion{0, 8} : DLPackVersion{2, 0};
  spec.guard_after_prefix = true;
  const std::string what = fmt::format("a versioned tensor stamped {}.{}", spec.version.major, spec.version.minor);
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  if (!made) ctx.harness_error("could not build the guarded tensor");
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (array || rc == DLPV_OK) {
    ctx.check(false, "VER-03", "a consumer must refuse a tensor whose major version is not 1 (it cannot know the layout)",
              "refusal", fmt::format("DLPV_OK (imported {})", what));
    if (array) release_expecting_one_delete(ctx, array, *made);
    return;
  }
  const std::string error = ctx.subject().last_error();
  judge_refusal_ownership(ctx, *made, what);
  ctx.check(true, "VER-03", fmt::format("refused {} without reading past the version prefix (return {}: {})", what,
                                        rc, error));
}

void scalar_null_shape(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape = {};
  spec.null_shape = true;
  spec.null_strides = true;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-06", Refusal::fails,
                     "a 0-d tensor whose shape and strides are NULL (one element at data + byte_offset)");
}

// LAYOUT-09: the header's "aligned to 256 bytes" is disclaimed in the same comment (libraries
// do not honour it; byte_offset is not to be used for it), so a consumer may rely on no
// alignment beyond the element's: data anywhere must be read right or refused, never misread
// and never a crash (the reads of the Python adapters go through the library's own kernels).
void misaligned(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = *dtype_from_name(ctx.param("dtype"));
  spec.misalign = static_cast<size_t>(std::stoul(ctx.param("misalign")));
  const std::string where = spec.misalign == 1 ? "at an odd address"
                                               : fmt::format("{} bytes past a 64-byte boundary", spec.misalign);
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-09", Refusal::allowed,
                     "a " + ctx.param("dtype") + " tensor whose data sits " + where);
}

void zero_size_null_data(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape = {0, 3};
  spec.null_data = true;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-10", Refusal::fails,
                     "a (0, 3) tensor whose data is NULL");
}

void read_only_flag(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = *dtype_from_name(ctx.param("dtype"));
  spec.shape = shape_named(ctx.param("shape"));
  spec.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (!array) {
    const std::string error = ctx.subject().last_error();
    judge_refusal_ownership(ctx, *made, "a READ_ONLY tensor");
    // Refusing the flag is the warning; refusing an optional element type is the consumer's right.
    if (ctx.param("dtype") != "float32")
      ctx.skip(fmt::format("the consumer refused a READ_ONLY {} tensor ({}): {}", ctx.param("dtype"), rc, error));
    ctx.check(false, "FLAG-04", "a READ_ONLY tensor is imported (not refused)", "DLPV_OK",
              fmt::format("refused ({}): {}", rc, error));
    return;
  }
  const int early = released_at_import(ctx, *made);
  read_back_matches(ctx, array, made->expected(), spec.dtype, "LAYOUT-01",
                    "the imported array of a READ_ONLY tensor holds its elements", early > 0);
  const int writable = ctx.subject().is_writable(array);
  if (early > 0)  // a copy: the consumer's own, writable or not
    ctx.check_as(Severity::may, true, "FLAG-04", fmt::format("the consumer copied the tensor (is_writable = {})", writable));
  else if (writable < 0)
    ctx.check_as(Severity::may, true, "FLAG-04", "the library has no read-only notion (is_writable = -1)");
  else
    ctx.check(writable == 0, "FLAG-04", "the imported array of a READ_ONLY tensor is read-only",
              "is_writable = 0", fmt::format("is_writable = {}", writable));
  release_expecting_one_delete(ctx, array, *made);
}

// Padded sub-byte data read as packed is silent corruption (FLAG-08: a fail, not a warning).
void padded_subbyte(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = DLDataType{DLPV_CODE_FLOAT4_E2M1FN, 4, 1};
  spec.shape = {3, 4};
  spec.padded_subbyte = true;
  spec.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (!array) {
    ctx.check(true, "FLAG-08", fmt::format("refused padded float4 data ({})", rc));
    judge_refusal_ownership(ctx, *made, "padded float4 data");
    return;
  }
  ctx.phase("read");
  std::vector<uint8_t> got(made->expected().size(), 0xEE);
  if (ctx.subject().read_array(array, got.data(), got.size()) != DLPV_OK)
    ctx.harness_error("read_array failed: " + ctx.subject().last_error());
  const std::string diff = describe_mismatch(spec.dtype, made->expected(), got);
  ctx.check_as(Severity::must, diff.empty(), "FLAG-08",
               "padded float4 data (flag 4) is decoded as padded, never as packed", "the pattern (packed read-back)",
               diff);
  release_expecting_one_delete(ctx, array, *made);
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(consumer_edge) {
  using namespace dlpv;
  auto add = [&](std::string id, std::string title, std::vector<std::string> reqs, Severity sev,
                 std::string kind, void (*fn)(CaseContext&)) {
    CaseInfo c;
    c.id = std::move(id);
    c.title = std::move(title);
    c.requirements = std::move(reqs);
    c.severity = sev;
    c.role = Role::consumer;
    c.params = {{"dtype", "float32"}, {"layout", "contiguous"}, {"version", kind}, {"device", "cpu:0"}};
    c.needs = {kind == "versioned" ? "import_versioned" : "import_legacy", "read_array", "release_array"};
    c.body = fn;
    reg.add(std::move(c));
  };
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    add("consumer.null_strides." + kind,
        kind + " import of a tensor with NULL strides reads it as compact row-major" +
            (versioned ? " (version 1.1)" : ""),
        {"LAYOUT-03", "DEL-02"}, Severity::must, kind, cases::null_strides);
    add("consumer.deleter.null." + kind, kind + " import accepts a NULL deleter and never calls it",
        {"DEL-03"}, Severity::must, kind, cases::null_deleter);
  }
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    add("consumer.scalar.null_shape." + kind, "a 0-d tensor with NULL shape and strides imports as a scalar",
        {"LAYOUT-06", "DEL-02"}, Severity::must, kind, cases::scalar_null_shape);
    add("consumer.zero_size.null_data." + kind, "a zero-size tensor with NULL data imports as an empty array",
        {"LAYOUT-10", "DEL-02"}, Severity::must, kind, cases::zero_size_null_data);
    // Odd addresses (1-byte and 2-byte elements), and float32 data 16 bytes past a 64-byte
    // boundary: where glibc's malloc puts NumPy's data.
    const struct {
      const char* name;
      const char* dtype;
      const char* misalign;
      const char* where;
    } placements[] = {{"odd", "uint8", "1", "at an odd address"},
                      {"odd", "int16", "1", "at an odd address"},
                      {"malloc16", "float32", "16", "16 bytes past a 64-byte boundary"}};
    for (const auto& p : placements) {
      CaseInfo c;
      c.id = fmt::format("consumer.alignment.{}.{}.{}", p.name, p.dtype, kind);
      c.title = fmt::format("{} data {} is read right or refused, never misread", p.dtype, p.where);
      c.requirements = {"LAYOUT-09", "DEL-02"};
      c.role = Role::consumer;
      c.params = {{"dtype", p.dtype}, {"layout", "contiguous"}, {"version", kind}, {"device", "cpu:0"},
                  {"misalign", p.misalign}};
      c.needs = {versioned ? "import_versioned" : "import_legacy", "read_array", "release_array"};
      c.body = cases::misaligned;
      reg.add(std::move(c));
    }
  }
  {
    CaseInfo c;
    c.id = "consumer.flags.read_only";
    c.title = "a READ_ONLY tensor imports as a read-only array";
    c.requirements = {"FLAG-04", "DEL-02"};
    c.severity = Severity::should;
    c.role = Role::consumer;
    c.params = {{"layout", "contiguous"}, {"device", "cpu:0"}};
    c.needs = {"read_array", "release_array"};
    c.body = cases::read_only_flag;
    cases::add_rule_cases(reg, c, {true});
  }
  add("consumer.flags.padded_subbyte.versioned",
      "padded float4 data is decoded as padded or refused, never read as packed",
      {"FLAG-08", "DEL-08"}, Severity::should, "versioned", cases::padded_subbyte);
  add("consumer.version.minor_ahead", "a versioned tensor stamped 1.99 is accepted",
      {"VER-04", "DEL-02"}, Severity::should, "versioned", cases::minor_ahead);
  for (const char* major : {"2", "0"}) {
    CaseInfo c;
    c.id = fmt::format("consumer.version.major{}_refused", major);
    c.title = fmt::format("a versioned tensor stamped {} is refused without reading past the version prefix, "
                          "and released exactly once", major[0] == '2' ? "2.0" : "0.8");
    c.requirements = {"VER-03", "DEL-08"};
    c.role = Role::consumer;
    c.params = {{"version", "versioned"}, {"dtype", "float32"}, {"major", major}};
    c.needs = {"import_versioned", "release_array"};
    c.body = cases::other_major;
    reg.add(std::move(c));
  }
}
