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
                     fmt::format("a {} {} tensor in {} memory", dtype_name(spec.dtype),
                                 byte_offset ? "byte_offset" : layout_name(spec.layout), d.name));
}

DLPV_CASES {
  for (StructKind k : kBothKinds)
    for (const CaseCudaDevice& d : kCudaDevices)
      for (const char* dtype : kDeviceDtypes)
        for (const char* layout : {"contiguous", "fortran", "strided", "byte_offset"}) {
          // byte_offset: a compact tensor whose elements start 64 bytes past data (the record's
          // layout parameter names it; it is not one of the plugin ABI's layouts).
          const bool byte_offset = std::string(layout) == "byte_offset";
          Declare d_(fmt::format("device.consumer.{}.{}.{}.{}", d.name, dtype, layout, to_string(k)),
                     fmt::format("{} import of a {} {} tensor in {} memory reads back right", to_string(k), layout,
                                 dtype, d.name));
          if (byte_offset) d_.label("layout", "byte_offset");
          else d_.layout(*layout_from_name(layout));
          d_.must({"DEV-02", "DEL-02", byte_offset ? "LAYOUT-08" : "LAYOUT-07"}).role(Role::consumer)
              .kind(k).dtype(dtype).device(CaseDevice{{d.type, d.id}, d.name})
              .needs({import_need(k), "read_array", "release_array"})
              .proven_by({"double_delete"})
              .run([&d, byte_offset](CaseContext& ctx) { consumer_on_device(ctx, d, byte_offset); });
        }
}

}  // namespace
}  // namespace dlpv::cases
