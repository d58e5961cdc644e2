// cases/python/support/py_consumer.cpp: the producer-fed imports of the python.consumer.* cases.
// SPDX-License-Identifier: Apache-2.0
#include "py_consumer.hpp"

#include "dlpack_validate/cuda.hpp"

namespace dlpv::python {

// After settle(): whatever tensor was handed out in a capsule was deleted exactly once. Who
// deletes follows the capsule's name (the Python spec: the consumer takes ownership "by
// renaming the capsule to used_dltensor" so that the capsule's destructor will not run): a
// consumer that renamed it owns the tensor and must call the deleter itself, also when it then
// refuses (CuPy does exactly that); one that left it unconsumed leaves it to the destructor.
// Either way: one call in all. The message says which, and what from_dlpack did.
void check_deleted_once(CaseContext& ctx, const Feed& f, const char* req, const std::string& what) {
  const int want = f.handed ? 1 : 0;
  ctx.phase("release", req);  // a death from here on is evidence about the deleter rule itself
  {
    py::gil_scoped_release nogil;  // a consumer's release thread may need the GIL
    await_calls([&] { return f.deletes(); }, want);
  }
  std::string state = "no capsule was handed out";
  if (f.handed)
    state = f.final_name.rfind("used_", 0) == 0
                ? "the consumer renamed the capsule to '" + f.final_name + "' (took ownership), so it calls the deleter"
                : "the capsule was left as '" + f.final_name + "', so its destructor calls the deleter";
  const std::string outcome = f.result.raised ? "from_dlpack raised " + f.result.text : "from_dlpack returned an array";
  ctx.check_as(Severity::must, f.deletes() == want, req, what + ": " + state + "; " + outcome,
               fmt::format("{} call(s)", want), fmt::format("{} call(s)", f.deletes()));
}

// The capsule kind a consumer can take: versioned if it asks for max_version >= 1.0.
bool speaks_versioned(PythonSubject& ps) { return ps.facts().consumer_versioned; }
bool takes_versioned(PythonSubject& ps) { return ps.info().has(need::import_versioned); }

// Why a consumer takes no versioned capsules, as the load check found it.
std::string legacy_reason(PythonSubject& ps) {
  const auto& absent = ps.info().absent;
  auto it = absent.find(need::import_versioned);
  return it != absent.end() ? it->second : "legacy-only consumer: from_dlpack never offers max_version >= (1, 0)";
}

// A validator-made tensor on the package's home device (the first one its adapter declares):
// real CUDA memory for the CUDA kinds, the label alone for anything else.
MadeSpec home_spec(PythonSubject& ps) {
  MadeSpec spec;
  spec.device = ps.home_device();
  const int t = static_cast<int>(spec.device.device_type);
  spec.device_memory = t == kDLCUDA || t == kDLCUDAHost || t == kDLCUDAManaged;
  // Memory of other devices (a SYCL device's USM, kDLOneAPI) is not made here: a tensor
  // labelled with such a device over host memory would be a lie. The consumer gets host
  // memory, labelled kDLCPU, which consumers of those devices take (dpnp since 0.16; one that
  // refuses host memory altogether is skipped, saying so: feed).
  if (!spec.device_memory && t != kDLCPU && t != kDLROCMHost) spec.device = DLDevice{kDLCPU, 0};
  return spec;
}

Feed feed(CaseContext& ctx, PythonSubject& ps, const MadeSpec& spec, bool versioned,
          py::dict kwargs, const std::function<void(ProducerScript&)>& tweak, const std::string& reaches) {
  ctx.phase("setup");
  // Host memory handed to a package the load check saw refuse host memory altogether (dpnp
  // 0.15: "The DLPack tensor resides on unsupported device"): DEV-04 allows that refusal, and
  // nothing this case judges can be seen through it.
  if (const std::string refused = ps.refuses_device(spec.device); !refused.empty()) ctx.skip(refused);
  Feed f;
  f.versioned = versioned;
  f.made = MadeTensor::make(spec, versioned);
  if (!f.made) ctx.harness_error("could not build the test tensor");
  f.snapshot();
  ProducerScript cfg;
  cfg.managed = versioned ? static_cast<void*>(f.made->versioned()) : static_cast<void*>(f.made->legacy());
  cfg.versioned = versioned;
  cfg.capsule_name = versioned ? kVersionedName : kLegacyName;
  cfg.destructor_deletes = true;  // a producer's capsule: deletes if it dies unconsumed
  cfg.device = spec.device;
  if (tweak) tweak(cfg);
  f.producer = make_producer(cfg);
  // A tensor on a device the package does not declare: whatever the case judges afterwards,
  // importing it first puts DEV-04 to the test (refuse a device it cannot use), and a death
  // here is charged to that.
  bool declared = false;
  for (const DLDevice& d : ps.devices()) declared = declared || d.device_type == spec.device.device_type;
  ctx.phase("import", declared ? reaches : "DEV-04", guard_meaning(spec, versioned));
  f.result = attempt([&] { return ps.from_dlpack(f.producer, kwargs); });
  return f;
}

Feed feed_plain(CaseContext& ctx, PythonSubject& ps, py::dict kwargs) {
  MadeSpec spec = home_spec(ps);
  return feed(ctx, ps, spec, speaks_versioned(ps), std::move(kwargs));
}

// The imported array read back through the adapter, against the tensor's pattern.
Readback read_back(PythonSubject& ps, py::handle array, const MadeTensor& made) {
  Readback r;
  try {
    std::string got = py::bytes(ps.adapter().attr("to_bytes")(array)).cast<std::string>();
    const std::vector<uint8_t> g(got.begin(), got.end());
    if (g != made.expected()) r.diff = describe_mismatch(made.spec().dtype, made.expected(), g);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_NotImplementedError)) r.unreadable = describe(e);
    else r.diff = "to_bytes raised " + describe(e);
  }
  return r;
}

std::string unreadable_reason(const std::string& why) {
  return "the validator cannot read the imported array back, so the case cannot judge what it holds: " + why;
}

std::string values_differ(PythonSubject& ps, py::handle array, const MadeTensor& made) {
  Readback r = read_back(ps, array, made);
  if (!r.unreadable.empty()) throw PythonSubject::NotImplemented{unreadable_reason(r.unreadable)};
  return r.diff;
}

std::string calls_text(ScriptedProducer& p) { return py::repr(p.calls()).cast<std::string>(); }

// A tensor labelled with `device`: real device memory for the CUDA kinds where a CUDA driver
// and device are present (a consumer on a real GPU touches the memory: host memory under a
// CUDA label makes it fault, "illegal memory access", and that sticks to the process), the
// label over host memory otherwise (no consumer can use such memory without a GPU).
MadeSpec labelled_spec(DLDevice device) {
  MadeSpec spec;
  spec.device = device;
  const int t = static_cast<int>(device.device_type);
  spec.device_memory = (t == kDLCUDA || t == kDLCUDAHost || t == kDLCUDAManaged) && cuda::available();
  return spec;
}

// A scripted producer labelled with `device` (labelled_spec): which streams it was given.
Feed stream_feed(CaseContext& ctx, PythonSubject& ps, DLDevice device) {
  return feed(ctx, ps, labelled_spec(device), speaks_versioned(ps));
}

// from_dlpack(x, copy=...) where the adapter's from_dlpack has no such keyword: a skip.
void skip_if_no_copy_keyword(CaseContext& ctx, Feed& f) {
  if (f.result.is("TypeError") && f.p().dlpack_calls() == 0)
    ctx.skip("from_dlpack does not accept copy= (" + f.result.text +
             "): a pre-2023.12 from_dlpack(x, /) signature, so copy requests cannot be made");
}

}  // namespace dlpv::python
