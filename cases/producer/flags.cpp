// cases/producer/flags.cpp: producer.flags.*: the flag bits of a versioned export: only bits
// defined for its version (FLAG-01, FLAG-06, FLAG-07), IS_COPIED on a copy (FLAG-05), READ_ONLY
// for a read-only source (FLAG-02), and a copy that is not the source where its address is known
// (KW-03); on float32 3x4 and every rule sample.
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void flags_defined(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "FLAG-01");
  ctx.phase("inspect");
  check_defined_flags(ctx, e);
  const bool sub_byte = e.v->dl_tensor.dtype.bits < 8;
  ctx.check_as(Severity::must, sub_byte || (e.v->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) == 0,
               "FLAG-07", "IS_SUBBYTE_TYPE_PADDED is only set on sub-byte dtypes",
               "bit 2 clear for " + dtype_name(r.req.dtype), fmt::format("flags = {:#x}", e.v->flags));

  // A producer that never lends its storage makes no zero-copy export: its exports are copies
  // (producer.flags.is_copied and python.kw.copy_none.zero_copy judge their flag).
  if ((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0) {
    const std::string never = never_lends(ctx, r);
    if (!never.empty()) {
      ctx.note("IS_COPIED not judged as a zero-copy flag: the producer never lends its storage (" + never + ")");
      return;
    }
  }
  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "FLAG-06",
            "IS_COPIED is clear for a plain zero-copy export", "bit 1 clear",
            fmt::format("flags = {:#x}", e.v->flags));
}

DLPV_CASES {
  Declare("producer.flags.defined_bits",
          "flags carry only bits defined for the declared version, IS_COPIED clear on zero-copy")
      .should({"FLAG-01", "FLAG-06", "FLAG-07"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .per_kind({StructKind::versioned}).per_sample()
      .proven_by({"undefined_flag"})
      .run(flags_defined);
}

void flags_is_copied(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  Exported e = export_or_skip(ctx, true, r, "FLAG-05");
  ctx.phase("inspect");
  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05",
            "an export made as a copy (copy=True) sets IS_COPIED", "bit 1 set",
            fmt::format("flags = {:#x}", e.v->flags));
  // Where the library states its source array's address (a Python package), the copy must not
  // be that array: the array API (__dlpack__, copy): "If True, the function must always copy"
  // (KW-03). A plugin makes its source inside its exporter: only the flag is seen there.
  const auto source = ctx.subject().last_source_address();
  const auto got = reinterpret_cast<uintptr_t>(e.v->dl_tensor.data) + e.v->dl_tensor.byte_offset;
  if (source && e.v->dl_tensor.data)
    ctx.check(got != *source, "KW-03", "copy=True always copies: the export does not alias the source array",
              "a data address other than the array's", fmt::format("the array's own address {:#x}", got));
}

DLPV_CASES {
  Declare("producer.flags.is_copied", "a copy=True export sets IS_COPIED")
      .must({"FLAG-05", "KW-03"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::copy_keyword}).per_kind({StructKind::versioned}).per_sample()
      .proven_by({"no_is_copied"})
      .run(flags_is_copied);
}

void flags_read_only(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_READ_ONLY);
  Exported e = export_or_skip(ctx, true, r, "FLAG-02");
  ctx.phase("inspect");
  // A copy (IS_COPIED) is the consumer's to write (FLAG-09): READ_ONLY binds memory that "may not
  // be written", not a copy of it (a lying copy flag is FLAG-05/06's to catch).
  if (e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) {
    ctx.check(true, "FLAG-02", fmt::format("the export of a read-only source is a copy (IS_COPIED, flags = {:#x}): "
                                           "READ_ONLY is not needed", e.v->flags));
    return;
  }
  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
            "a read-only source array is exported with READ_ONLY set", "bit 0 set",
            fmt::format("flags = {:#x}", e.v->flags));
}

DLPV_CASES {
  Declare("producer.flags.read_only", "a read-only source is exported with READ_ONLY")
      .should({"FLAG-02"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .per_kind({StructKind::versioned}).per_sample()
      .proven_by({"no_read_only"})
      .run(flags_read_only);
}

}  // namespace
}  // namespace dlpv::cases
