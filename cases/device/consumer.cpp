// cases/device/consumer.cpp: device.consumer.*: a consumer imports tensors in CUDA device,
// pinned and managed memory and reads them back right (DEV-02, DEL-02, LAYOUT-07/08). Without a
// CUDA driver and device every case is a skip that says so.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/devices.hpp"
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void consumer_on_device(CaseContext& ctx, const CaseCudaDevice& d, bool byte_offset) {
  need_cuda(ctx, d.id);
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  if (byte_offset) spec.extra_byte_offset = 64;
  else spec.layout = ctx.layout();
  spec.device = ctx.device();
  spec.device_memory = true;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "DEV-02", Refusal::skips,
                     with_article(fmt::format("{} {} tensor in {} memory", dtype_name(spec.dtype),
                                              byte_offset ? "byte_offset" : layout_name(spec.layout), d.name)));
}

DLPV_CASES {
  // byte_offset: a compact tensor whose elements start 64 bytes past data (the record's layout
  // parameter names it; it is not one of the plugin ABI's layouts, so the axis shows it as a label).
  Declare("device.consumer", "{kind} import of a {layout} {dtype} tensor in {device} memory reads back right")
      .role(Role::consumer)
      .combine("device", cuda_device_names(), declare_cuda_device)
      .combine("dtype", device_dtypes())
      .combine("layout", {"contiguous", "fortran", "strided", "byte_offset"}, [](Declare& d, const std::string& l) {
        d.must({"DEV-02", "DEL-02", l == "byte_offset" ? "LAYOUT-08" : "LAYOUT-07"});
      })
      .per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"double_delete"})
      .run([](CaseContext& ctx) {
        consumer_on_device(ctx, cuda_device_of(ctx), ctx.info().params.at("layout") == "byte_offset");
      });
}

}  // namespace
}  // namespace dlpv::cases
