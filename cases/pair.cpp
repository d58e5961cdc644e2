// cases/pair.cpp: the exchange itself, for every ordered pair of loaded subjects (a subject
// with itself included): A exports, B imports, B reads back, B releases, and A's deleter
// runs exactly once, counted by a trampoline the validator puts in front of it
// (DEL-02, LAYOUT-01, and the producer x consumer matrix of the report).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void exchange(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  const DLDataType dtype = ctx.dtype();
  const uint32_t layout = ctx.layout();
  Subject& consumer = ctx.peer();
  for (const char* needed : {import_need(*ctx.values().kind), need::read_array, need::release_array})
    if (!consumer.info().has(needed))
      ctx.skip(fmt::format("consumer subject {} does not implement {}", consumer.info().index, needed));

  Request r(dtype, {3, 4}, layout);
  // Each check says whose behaviour it judges, so that a finding is charged to that library.
  ctx.charge("producer");
  Exported e = export_or_skip(ctx, versioned, r, "LAYOUT-01");
  // The rule the elements rest on: LAYOUT-01, or LAYOUT-11 for negative strides.
  const char* values_rule = layout == DLPV_LAYOUT_REVERSED ? "LAYOUT-11" : "LAYOUT-01";
  const std::vector<uint8_t> want = expected_bytes(dtype, r.shape, layout);
  // The producer's elements read straight from its struct, before any consumer sees it: a
  // wrong struct is the producer's finding, and the consumer is then judged against what
  // the producer really exported.
  ctx.phase("inspect");
  std::vector<uint8_t> exported;
  std::string unreadable;
  // (host memory only: the elements of a device array are not the validator's to read)
  const bool inspected = gather_export(e, exported, unreadable) && e.tensor().device.device_type == kDLCPU;
  const std::string producer_diff = inspected ? describe_mismatch(dtype, want, exported) : std::string();
  if (inspected)
    ctx.check(producer_diff.empty(), values_rule,
              "the producer's struct holds the reference elements (read from it before the consumer imports)",
              "the reference pattern", producer_diff);
  ctx.phase("export");
  // The producer's deleter, counted by a trampoline the validator puts in front of it.
  DeleterCounter counter(e.v ? static_cast<void*>(e.v) : static_cast<void*>(e.l), versioned);
  const bool has_deleter = counter.installed();
  if (!has_deleter) ctx.note("the producer's tensor has no deleter: deleter accounting not possible");
  ctx.charge("consumer");
  ctx.phase("import");
  void* array = nullptr;
  const int rc = versioned ? consumer.import_versioned(e.v, &array) : consumer.import_legacy(e.l, &array);
  if (rc != DLPV_OK || !array) {
    const std::string error = consumer.last_error();
    if (has_deleter) {
      // The refusing consumer may have called the deleter once itself; else the producer's
      // tensor is still the validator's to release (plugin ABI, DEL-08).
      const int by_consumer = counter.calls();
      if (by_consumer > 0) {
        e.v = nullptr;
        e.l = nullptr;
      }
      ctx.phase("release");
      e.release();
      ctx.check_as(Severity::must, counter.calls() == 1, "DEL-08",
                   "a tensor the consumer refused is released exactly once (by the consumer, or by the caller after)",
                   "1 call in all",
                   by_consumer == 0 ? fmt::format("0 by the consumer + 1 by the caller's cleanup = {}", counter.calls())
                                    : fmt::format("{} by the consumer", by_consumer));
    }
    ctx.skip(fmt::format("the consumer refused the producer's {} {} {} tensor cleanly ({}): {}",
                         layout_name(layout), dtype_name(dtype), kind_name(versioned), rc, error));
  }
  Exported owned_by_consumer = std::move(e);  // from here the consumer owns it
  owned_by_consumer.v = nullptr;
  owned_by_consumer.l = nullptr;
  if (has_deleter && counter.calls() > 0) {
    // A consumer that copied during import may release the producer's tensor at once (dlpack.h:
    // the deleter is called when the borrowing framework "doesn't need the tensor"). The
    // producer's memory cannot be poisoned from here, so only the count is judged.
    ctx.check_as(Severity::must, counter.calls() == 1, "DEL-02",
                 "a consumer that releases the producer's tensor during import does so once", "1 call",
                 std::to_string(counter.calls()));
    ctx.note("the consumer released the producer's tensor during import (it copied the data)");
  }
  ctx.phase("read");
  std::vector<uint8_t> got(want.size(), 0xEE);
  const int read_rc = consumer.read_array(array, got.data(), got.size());
  if (read_rc == DLPV_UNSUPPORTED) {  // the consumer's adapter cannot read this back
    ctx.phase("release");
    consumer.release_array(array);
    ctx.skip("the consumer's array cannot be read back here: " + consumer.last_error());
  }
  if (read_rc != DLPV_OK)
    ctx.check(false, values_rule, "the consumer's imported array can be read back", "its elements",
              "reading it failed: " + consumer.last_error());
  // Judged against the producer's struct as read above; when it could not be read, against
  // the reference pattern, and then neither side alone can be blamed for a difference. When
  // the producer's struct was already wrong, the consumer is not judged on the elements: what
  // it should have seen is not defined (memory the producer no longer owns can change under
  // both reads).
  if (!inspected) ctx.charge("");
  if (inspected && !producer_diff.empty()) {
    ctx.note("the consumer's elements are not judged: the producer's struct does not hold the reference elements");
  } else {
    const std::string diff = read_rc == DLPV_OK ? describe_mismatch(dtype, inspected ? exported : want, got) : std::string();
    ctx.check(diff.empty(), values_rule,
              "the consumer sees exactly the producer's elements (both read the struct the same way)",
              inspected ? "the elements of the producer's struct" : "the reference pattern", diff);
  }
  ctx.charge("consumer");
  ctx.phase("release");
  consumer.release_array(array);
  if (has_deleter) await_calls([&] { return counter.calls(); }, 1);
  if (has_deleter)
    ctx.check_as(Severity::must, counter.calls() == 1, "DEL-02",
                 "the consumer's release runs the producer's deleter exactly once", "1 call",
                 fmt::format("{} call(s)", counter.calls()));
}

DLPV_CASES {
  auto pairs = [](std::vector<std::string> dtypes, std::vector<std::string> layouts) {
    Declare("pair", "{kind} {layout} {dtype} tensor from producer to consumer: same elements, deleter once")
        .role(Role::pair)
        .each([](Declare& d) {
          // Negative strides are graded by their own rule, as on the consumer side
          // (consumer.layout.*.reversed): LAYOUT-11, a SHOULD. One rule, one grade.
          if (d.info().values.layout == DLPV_LAYOUT_REVERSED) d.should({"LAYOUT-11", "DEL-02"});
          else d.must({"DEL-02", "LAYOUT-01"});
        })
        .combine("dtype", std::move(dtypes)).combine("layout", std::move(layouts)).per_kind(kBothKinds)
        .proven_by({"double_delete"})
        .run(exchange);
  };
  // The 2-byte and 1-byte floats (bfloat16, float8) are those ml_dtypes carries between
  // libraries (DTYPE-03).
  pairs({"float32", "bool", "complex64", "bfloat16", "float8_e4m3fn", "float8_e5m2"}, {"contiguous"});
  pairs({"float32"}, {"strided", "offset"});
  pairs({"int64"}, {"fortran"});
  pairs({"float16"}, {"reversed"});
}

}  // namespace
}  // namespace dlpv::cases
