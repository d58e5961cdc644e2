// cases/python/support/py_consumer.hpp: the producer-fed imports of the python.consumer.* cases:
// the package's from_dlpack fed by the shim's scripted producers (checklist T-FAKE) that hand out
// validator-made tensors (T-CNT counting deleters, T-GUARD guard pages), and what became of
// them. Cases about the calling protocol of from_dlpack (keywords, streams, call order,
// exceptions) need consumer_protocol besides import_legacy.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "py_helpers.hpp"
#include "support/input_space.hpp"

namespace dlpv::python {

// One producer-fed import: the tensor, the scripted producer holding it, what from_dlpack did.
struct Feed {
  std::unique_ptr<MadeTensor> made;
  std::unique_ptr<MadeTensor> copy;  // what the scripted producer hands out for copy=True
  py::object producer;
  Call result;
  bool versioned = false;

  Feed() = default;
  Feed(Feed&&) = default;
  Feed& operator=(Feed&&) = default;
  ~Feed() {
    // A tensor the consumer may still hold (it never called the deleter) must outlive it:
    // leak it rather than free memory a leaked array still points at.
    if (made && made->deleter_calls() == 0) (void)made.release();
    if (copy && copy->deleter_calls() == 0) (void)copy.release();
  }
  bool handed = false;      // a capsule was handed out (set by settle)
  std::string final_name;   // its name when the consumer was done (used_* = ownership taken)
  ScriptedProducer& p() { return producer_of(producer); }
  int deletes() const { return made->deleter_calls() + (copy ? copy->deleter_calls() : 0); }
  // The tensor as built, before any consumer ran its deleter (which poisons the struct).
  DLTensor snap{};
  std::vector<int64_t> snap_shape, snap_strides;
  void snapshot() {
    if (made->spec().guard_after_prefix) return;  // dl_tensor is unreadable on purpose
    snap = versioned ? made->versioned()->dl_tensor : made->legacy()->dl_tensor;
    if (snap.shape) snap_shape.assign(snap.shape, snap.shape + snap.ndim);
    if (snap.strides) snap_strides.assign(snap.strides, snap.strides + snap.ndim);
    snap.shape = snap.shape ? snap_shape.data() : nullptr;
    snap.strides = snap.strides ? snap_strides.data() : nullptr;
  }
  const DLTensor& tensor() const { return snap; }
  uintptr_t source_address() const { return reinterpret_cast<uintptr_t>(element0(snap)); }
  /// Drop the result and the scripted producer (and with it the last capsule), then collect.
  void settle(CaseContext& ctx) {
    if (producer && !producer.is_none()) {
      handed = !p().last_capsule().is_none();
      if (handed) final_name = capsule_name(p().last_capsule());
    }
    result.value = py::none();
    producer = py::none();
    gc_collect(ctx);
  }
};

/// After settle(): whatever tensor was handed out in a capsule was deleted exactly once (by the
/// consumer if it took ownership, else by the capsule's destructor); fails `req` otherwise.
void check_deleted_once(CaseContext& ctx, const Feed& f, const char* req, const std::string& what);

/// The capsule kind a consumer can take: versioned if it asks for max_version >= 1.0.
bool speaks_versioned(PythonSubject& ps);
/// The import_versioned capability: it asks for versioned capsules, or imports one handed to it
/// unasked (both probed at load); the rules about reading a versioned tensor (VER-03/04,
/// FLAG-04) apply to it.
bool takes_versioned(PythonSubject& ps);
/// Why a consumer takes no versioned capsules, as the load check found it.
std::string legacy_reason(PythonSubject& ps);
/// A validator-made tensor on the package's home device (the first one its adapter declares).
MadeSpec home_spec(PythonSubject& ps);
/// A tensor labelled `device`: real CUDA memory where a GPU is present, the label alone otherwise.
MadeSpec labelled_spec(DLDevice device);
/// Bytes past a 256-byte boundary for an alignment axis value (support/input_space.hpp).
using input_space::misalign_named;

/// from_dlpack(producer, **kwargs) of a tensor built from `spec`; `tweak` adjusts the scripted producer.
/// `reaches`: the requirement a death during the import is charged to (a tensor on a device the
/// package does not declare reaches DEV-04 whatever is given).
Feed feed(CaseContext& ctx, PythonSubject& ps, const MadeSpec& spec, bool versioned,
          py::dict kwargs = py::dict(), const std::function<void(ProducerScript&)>& tweak = {},
          const std::string& reaches = {});
/// feed() of the home-device tensor, in the capsule kind the consumer speaks.
Feed feed_plain(CaseContext& ctx, PythonSubject& ps, py::dict kwargs = py::dict());
/// A scripted producer labelled with `device` (host memory under the label): which streams it was given.
Feed stream_feed(CaseContext& ctx, PythonSubject& ps, DLDevice device);

/// What reading an imported array back showed: `diff` ("" when its values are the tensor's
/// pattern), or `unreadable` (why the adapter cannot read it: its to_bytes raised
/// NotImplementedError, e.g. generic mode and an array type without __dlpack__).
struct Readback {
  std::string diff;
  std::string unreadable;
};
Readback read_back(PythonSubject& ps, py::handle array, const MadeTensor& made);
/// Why the validator cannot judge an array it cannot read: the skip every case gives (one rule).
std::string unreadable_reason(const std::string& why);
/// Values of the imported array, compared with the tensor's pattern ("" when equal). A
/// read-back the adapter cannot make is no finding about the library: it ends the case as a
/// skip (PythonSubject::NotImplemented, which with_python turns into one) with that reason.
std::string values_differ(PythonSubject& ps, py::handle array, const MadeTensor& made);
/// The scripted producer's recorded calls, as text.
std::string calls_text(ScriptedProducer& p);
/// from_dlpack(x, copy=...) where the adapter's from_dlpack has no such keyword: a skip.
void skip_if_no_copy_keyword(CaseContext& ctx, Feed& f);

}  // namespace dlpv::python
