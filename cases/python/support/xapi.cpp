// cases/python/support/xapi.cpp: the python.xapi.* producer-side helpers (xapi.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "xapi.hpp"

namespace dlpv::python {

const DLPackExchangeAPI* table_of(CaseContext& ctx, py::handle x) {
  py::object type = type_of(x);
  if (!py::hasattr(type, kXapiAttr))
    ctx.skip(py::hasattr(type, kXapiAttrV12)
                 ? "only the superseded DLPack 1.2 attribute __c_dlpack_exchange_api__ is present "
                   "(python.xapi.capsule reports it)"
                 : "the array type has no __dlpack_c_exchange_api__ (optional, XAPI-01)");
  py::object a = type.attr(kXapiAttr);
  if (capsule_name(a) != kExchangeName || !capsule_pointer(a))
    ctx.skip("__dlpack_c_exchange_api__ is not a 'dlpack_exchange_api' capsule (python.xapi.capsule reports it)");
  const auto* h = &static_cast<const DLPackExchangeAPI*>(capsule_pointer(a))->header;
  for (int hops = 0; h && hops < 16; ++hops, h = h->prev_api)
    if (h->version.major == 1) return reinterpret_cast<const DLPackExchangeAPI*>(h);
  ctx.skip("the table chain offers no major-1 table (exchange_api.header.version reports it)");
}

Fields fields_of(const DLTensor& t, uint64_t flags) {
  Fields f;
  f.device = t.device;
  f.dtype = t.dtype;
  f.shape.assign(t.shape, t.shape + t.ndim);
  int64_t acc = 1;
  f.strides.resize(f.shape.size());
  for (size_t i = f.shape.size(); i-- > 0;) {  // NULL strides (legal up to 1.1) mean compact
    f.strides[i] = t.strides ? t.strides[i] : acc;
    acc *= f.shape[i];
  }
  f.flags = flags;
  f.address = reinterpret_cast<uintptr_t>(element0(t));
  return f;
}

std::string diff_fields(const Fields& a, const Fields& b, bool address) {
  if (a.device.device_type != b.device.device_type || a.device.device_id != b.device.device_id)
    return "device " + device_name(a.device) + " vs " + device_name(b.device);
  if (!dtype_equal(a.dtype, b.dtype)) return "dtype " + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype);
  if (a.shape != b.shape)
    return "shape " + shape_text(a.shape) + " vs " +
           shape_text(b.shape);
  if (a.strides != b.strides)
    return "strides " + shape_text(a.strides) + " vs " +
           shape_text(b.strides);
  if (a.flags != b.flags) return fmt::format("flags {:#x} vs {:#x}", a.flags, b.flags);
  if (address && a.address != b.address) return fmt::format("data {:#x} vs {:#x}", a.address, b.address);
  return "";
}

namespace {

// Arrays to compare the two export routes on: contiguous, strided, read-only (if makeable).
struct SampleArray {
  std::string what;
  uint32_t layout;
  py::object x;
};
std::vector<SampleArray> sample_arrays(PythonSubject& ps) {
  std::vector<SampleArray> out;
  out.push_back({"a contiguous float32 3x4 array", DLPV_LAYOUT_CONTIGUOUS, ps.make(kShape, kF32)});
  for (auto [what, layout, ro] : {std::tuple<const char*, uint32_t, bool>{"a strided float32 view", DLPV_LAYOUT_STRIDED, false},
                                  {"a read-only float32 array", DLPV_LAYOUT_CONTIGUOUS, true}}) {
    try {
      out.push_back({what, layout, ps.make(kShape, kF32, layout_name(layout), ro)});
    } catch (const PythonSubject::NotImplemented&) {
    }
  }
  return out;
}

// A tensor managed_tensor_from_py_object_no_sync handed back goes through the inspector like
// any export: fields, device, strides and the elements against the pattern.
void inspect_exchange_export(CaseContext& ctx, PythonSubject& ps, const DLManagedTensorVersioned& m,
                             const std::string& what, uint32_t layout) {
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = kF32;
  want.shape = kShape;
  want.device = ps.home_device();
  want.layout = layout;
  InspectOptions opt;
  opt.versioned = true;
  opt.version = m.version;
  std::vector<Finding> findings;
  inspect_tensor(m.dl_tensor, want, opt, findings);
  for (Finding& f : findings) f.message = "exchange export of " + what + ": " + f.message;
  record(ctx, findings);
}

}  // namespace

void compare_routes(CaseContext& ctx, PythonSubject& ps, const char* req, bool address) {
  py::object x0 = ps.make(kShape, kF32);
  const DLPackExchangeAPI* api = table_of(ctx, x0);
  if (!api->managed_tensor_from_py_object_no_sync) {
    ctx.check(false, req, "managed_tensor_from_py_object_no_sync is non-NULL (required)", "a function", "NULL");
    return;
  }
  int compared = 0;
  for (auto& [what, layout, x] : sample_arrays(ps)) {
    // *out starts as poison, not NULL: a success that never writes it shows.
    auto* const poison = static_cast<DLManagedTensorVersioned*>(guard_address());
    DLManagedTensorVersioned* m = poison;
    const int rc = api->managed_tensor_from_py_object_no_sync(x.ptr(), &m);
    if (rc == 0 && m == poison) {
      ctx.check(false, req, "managed_tensor_from_py_object_no_sync writes the tensor to *out when it returns 0",
                "a tensor", "*out left unwritten");
      continue;
    }
    if (rc != 0 || !m) {
      std::string err = "no Python exception set";
      if (PyErr_Occurred()) err = describe(py::error_already_set());
      ctx.check(false, req, "managed_tensor_from_py_object_no_sync exports " + what, "0 and a tensor",
                fmt::format("return {}: {}", rc, err));
      continue;
    }
    if (address) inspect_exchange_export(ctx, ps, *m, what, layout);
    Call c = call_dlpack(x, kw_max(1, 3));
    if (c.raised || capsule_name(c.value) != kVersionedName) {
      if (m->deleter) m->deleter(m);
      ctx.note("__dlpack__(max_version=(1, 3)) of " + what + " " + c.what() + ": nothing to compare with");
      continue;
    }
    Taken t = take(ctx, c.value, "CAP-01");
    ++compared;
    const Fields a = fields_of(m->dl_tensor, m->flags);
    const Fields b = fields_of(*t.tensor(), static_cast<DLManagedTensorVersioned*>(t.p)->flags);
    const std::string diff = diff_fields(a, b, address);
    ctx.check(diff.empty(), req,
              "the exchange-API export of " + what + " matches __dlpack__(max_version=(1, 3))",
              "identical fields", "exchange vs __dlpack__: " + diff);
    if (address)
      ctx.check(m->version.major == 1, req, "the exported tensor carries version 1.x", "1.x",
                fmt::format("{}.{}", m->version.major, m->version.minor));
    if (m->deleter) m->deleter(m);
    t.release();
  }
  if (compared == 0 && std::string(req) == "XAPI-18")
    ctx.skip("__dlpack__(max_version=(1, 3)) gave no versioned capsule to compare the exchange API with");
}

}  // namespace dlpv::python
