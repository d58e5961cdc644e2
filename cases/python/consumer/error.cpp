// cases/python/consumer/error.cpp: python.consumer.error.*: exceptions: a producer's BufferError
// propagates (ERR-03), from_dlpack(object()) raises AttributeError (ERR-04), a rejection is a
// BufferError and the rejected tensor is deleted once (ERR-07, DEL-08).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void error_propagated(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    ProducerScript cfg;
    cfg.raise_type = "BufferError";
    cfg.raise_message = "scripted producer refuses: dlpack-validate ERR-03";
    cfg.device = ps.home_device();  // a device the consumer takes: a CUDA-only one refuses host memory first
    py::object producer = make_producer(cfg);
    Call c = attempt([&] { return ps.from_dlpack(producer); });
    ctx.check(c.is("BufferError"), "ERR-03", "a BufferError raised by __dlpack__ propagates out of from_dlpack",
              "BufferError", c.what());
    if (c.is("BufferError") && c.text.find("dlpack-validate ERR-03") == std::string::npos)
      ctx.note("the propagated BufferError does not carry the producer's message: " + c.text);
  });
}

DLPV_CASES {
  Declare("python.consumer.error.propagated", "BufferError from __dlpack__ propagates")
      .must({"ERR-03"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_exception_types"})
      .run(error_propagated);
}

// ERR-04. from_dlpack's Raises (array API draft): "AttributeError - If the __dlpack__ and
// __dlpack_device__ methods are not present on the input array." Graded SHOULD: another
// exception is a warning; importing object() is a failure (it is not an array of anything).
void no_methods(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object plain = py::module_::import("builtins").attr("object")();
    Call c = attempt([&] { return ps.from_dlpack(plain); });
    if (c.is("AttributeError")) {
      ctx.check(true, "ERR-04", "from_dlpack(object()) raises AttributeError");
      return;
    }
    if (!c.raised) {
      ctx.check_as(Severity::must, false, "ERR-04", "from_dlpack(object()) must not succeed (object() has no DLPack methods)",
                   "AttributeError", c.what());
      return;
    }
    // A library that also takes raw capsules may treat object() as a bad capsule: say so.
    MadeSpec spec;
    auto made = MadeTensor::make(spec, false);
    py::object cap = py::reinterpret_steal<py::object>(PyCapsule_New(made->legacy(), kLegacyName, nullptr));
    Call raw = attempt([&] { return ps.from_dlpack(cap); });
    const bool takes_capsules = !raw.raised;
    raw.value = py::none();
    cap = py::none();
    gc_collect(ctx);
    if (made->deleter_calls() == 0) (void)made.release();
    ctx.check_as(Severity::should, false, "ERR-04",
                 std::string("from_dlpack(object()) raises AttributeError") +
                     (takes_capsules ? " (this from_dlpack also accepts raw capsules, which is why object() is "
                                       "treated as one)"
                                     : ""),
                 "AttributeError", c.what());
  });
}

DLPV_CASES {
  Declare("python.consumer.error.no_methods", "from_dlpack(object()) raises AttributeError")
      .should({"ERR-04"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_accepts_anything"})
      .run(no_methods);
}

void rejection_type(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    spec.dtype = DLDataType{200, 32, 1};  // no such dtype code
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    if (!f.result.raised) {
      // DTYPE-08 is a SHOULD: a container that keeps the code as it is does not misread it.
      ctx.check_as(Severity::should, false, "DTYPE-08", "a tensor with dtype code 200 is refused", "BufferError",
                   f.result.what());
    } else {
      ctx.check(f.result.is("BufferError"), "ERR-07", "the consumer's rejection (unknown dtype) is a BufferError",
                "BufferError", f.result.text);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08",
                       "the rejected tensor is deleted exactly once (the capsule's destructor, since it stays unconsumed)");
  });
}

DLPV_CASES {
  Declare("python.consumer.error.rejection_type",
          "a tensor the consumer rejects (unknown dtype) raises BufferError and is deleted once")
      .should({"ERR-07", "DEL-08"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_exception_types", "consumer_deletes_on_refusal"})
      .run(rejection_type);
}

}  // namespace
}  // namespace dlpv::python
