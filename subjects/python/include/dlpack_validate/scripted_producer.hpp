// subjects/python/include/dlpack_validate/scripted_producer.hpp: the shim's own scripted producer (checklist T-FAKE): a C++
// object with __dlpack__ / __dlpack_device__ that hands a validator-made tensor to the
// consumer under test in a capsule, and records every call with its keyword arguments.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/python_subject.hpp>

namespace dlpv::python {

struct ProducerScript {
  void* managed = nullptr;               ///< DLManagedTensor or DLManagedTensorVersioned
  bool versioned = true;                 ///< which struct `managed` is
  const char* capsule_name = kVersionedName;  ///< static string; may be wrong on purpose
  /// Capsule destructor as a producer writes it: calls the deleter if the capsule dies
  /// unconsumed (still named dltensor / dltensor_versioned). Off: ownership stays with
  /// the validator when a consumer refuses (the plugin ABI's rule for C-level cases).
  bool destructor_deletes = false;
  /// __dlpack__(*, stream=None) only: any other keyword raises TypeError, as the method of
  /// a pre-2023.12 producer would.
  bool legacy_signature = false;
  /// Refuse (BufferError) a call without max_version (a versioned-only producer).
  bool require_max_version = false;
  /// Handed out instead of `managed` when the consumer passes copy=True (a producer's copy,
  /// normally flagged IS_COPIED); NULL: copy= is ignored and `managed` is handed out.
  void* copy_managed = nullptr;
  bool copy_versioned = true;
  /// Handed out when the consumer passes dl_device=(kDLCPU, 0): a host copy of a device
  /// tensor (normally flagged IS_COPIED); NULL: dl_device is ignored.
  void* host_managed = nullptr;
  bool host_versioned = true;
  DLDevice device{kDLCPU, 0};
  std::string raise_type;                ///< "BufferError" ...: __dlpack__ raises it
  std::string raise_message = "raised by the dlpack-validate scripted producer";
};

class ScriptedProducer {
 public:
  explicit ScriptedProducer(ProducerScript cfg) : cfg_(std::move(cfg)) {}
  py::object dlpack(py::args args, py::kwargs kwargs);
  py::tuple dlpack_device();

  const ProducerScript& config() const { return cfg_; }
  ProducerScript& config() { return cfg_; }
  /// [("__dlpack_device__", {}), ("__dlpack__", {kwargs}) ...] in call order.
  py::list calls() const { return calls_; }
  /// The last capsule handed out (to look at its name after the consumer is done).
  py::object last_capsule() const { return last_capsule_; }
  int dlpack_calls() const { return dlpack_calls_; }

 private:
  ProducerScript cfg_;
  py::list calls_;
  py::object last_capsule_ = py::none();
  int dlpack_calls_ = 0;
};

/// A producer's capsule destructor: runs the deleter of a capsule that dies unconsumed (still
/// named dltensor / dltensor_versioned); the struct's real kind is in the capsule's context
/// (non-NULL = versioned), so a struct under the wrong name on purpose is still deleted right.
void deleting_capsule_destructor(PyObject* cap);

/// Register the ScriptedProducer class in the module (once, at import).
void register_scripted_producer(py::module_& m);

/// A scripted producer as a Python object (the ScriptedProducer class must be registered).
py::object make_producer(const ProducerScript& cfg);
ScriptedProducer& producer_of(py::handle obj);

/// First __dlpack__ call's keyword arguments (None if __dlpack__ was never called).
py::object first_dlpack_kwargs(const ScriptedProducer& p);

}  // namespace dlpv::python
