// subjects/python/src/load_checks.cpp: the Python subject's load checks (docs/design.md §4):
// what the subject is asked once, when it is loaded, to settle the facts the cases rest on:
// its devices, what it exports and imports (versioned, legacy, the keywords it honours), how it
// refuses, whether it ever lends its storage, its exchange-API table. Each check that cannot
// tell leaves its fact unknown (the cases that need it skip, saying why). python_subject.cpp
// holds the Subject interface the cases call.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/python_subject.hpp>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

#include <dlpack_validate/scripted_producer.hpp>

#include "exceptions.hpp"

namespace dlpv::python {

void PythonSubject::run_load_checks() {
  if (check_devices()) {
    check_producer();
    check_consumer();
    declare_capabilities();
  }
  // Everything alive now (the package, its imports, the adapter) lives as long as the worker:
  // frozen out of the collector, so that each case's own collection (after_case, and the cases'
  // gc.collect()) walks only what cases made (326 ms a full collection with torch and JAX
  // loaded, a few microseconds once frozen).
  PyGC_Collect();
  gc_freeze();
}

// Where the adapter says the package allocates: the first device is home. False when nothing
// can be exercised here (every case that needs the package then skips with the reason).
bool PythonSubject::check_devices() {
  std::map<std::string, std::string>& absent = info_.absent;
  if (py::hasattr(adapter_, "devices")) {
    std::vector<DLDevice> declared;
    try {
      for (auto d : py::list(adapter_.attr("devices")())) {
        auto pair = d.cast<std::pair<int, int>>();
        declared.push_back(DLDevice{static_cast<DLDeviceType>(pair.first), pair.second});
      }
    } catch (py::error_already_set& e) {
      info_.notes.push_back("adapter.devices() raised " + describe(e) + ": the CPU is assumed");
    } catch (const py::cast_error&) {
      info_.notes.push_back("adapter.devices() is not a list of (device_type, device_id): the CPU is assumed");
    }
    if (!declared.empty()) devices_ = declared;
    if (declared.empty()) {
      unavailable_ = "the adapter declares no device it can allocate on";
      if (py::hasattr(adapter_, "unavailable")) {
        const std::string why = py::str(adapter_.attr("unavailable"));
        if (!why.empty()) unavailable_ += " (" + why + ")";
      }
    }
  }
  home_ = devices_.front();
  if (!unavailable_.empty()) {
    // Nothing can be exercised here: every case that needs the package skips with this reason.
    for (const char* c : {"export_versioned", "export_legacy", "import_versioned", "import_legacy", "read_array",
                          "release_array", "exchange_api", "copy_keyword", "producer_protocol"})
      absent[c] = unavailable_;
    info_.notes.push_back(unavailable_ + ": every case is a skip");
    // Nothing was exported or imported: which DLPack versions it speaks is unknown, not pre-1.0.
    info_.version_unknown = "no array could be made here to check them (" + unavailable_ + ")";
    return false;
  }
  if (home_.device_type != kDLCPU)
    info_.notes.push_back("arrays are made on " + device_name(home_) + ", the first device the adapter declares");
  return true;
}

// The producer side: the exports a float32 array gives (versioned, legacy, copy=), whether it
// lends its storage, and the exchange API on its type. Each first capsule dies unconsumed here,
// so its destructor runs the deleter (CAP-03) while the loader says so.
void PythonSubject::check_producer() {
  const DLDataType f32{kDLFloat, 32, 1};
  std::map<std::string, std::string>& absent = info_.absent;
  load_step("load_check.export");
  py::object x;
  // A 2x3 array, else a 1-d one: a package may export some array types and not others (PyArrow
  // before 26: its Array has __dlpack__, its Tensor does not). A package none of whose arrays
  // has __dlpack__ is no DLPack producer (a consumer-only library, or a release from before its
  // arrays spoke DLPack): the producer-side cases skip with that fact (make() says which array
  // type) instead of reading an AttributeError as a refusal.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 3}, std::vector<int64_t>{6}}) {
    try {
      x = make(shape, f32);
      break;
    } catch (const NotImplemented& n) {
      if (shape.size() == 1) {
        absent["export_versioned"] = absent["export_legacy"] = absent["producer_protocol"] = absent["copy_keyword"] =
            n.reason.rfind("the package's", 0) == 0 ? n.reason + ": it is no DLPack producer"
                                                    : "the adapter cannot make arrays: " + n.reason;
        facts_.dlpack_signature_note = absent["producer_protocol"];
      }
    }
  }
  if (x) {
    info_.capabilities.push_back("producer_protocol");
    std::string versioned_refusal;  // the BufferError __dlpack__(max_version=(1, 3)) raised, if it did
    try {
      py::object cap = x.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 3));
      const std::string name = capsule_name(cap);
      if (name == kVersionedName) {
        facts_.producer_versioned = true;
        auto* v = static_cast<DLManagedTensorVersioned*>(capsule_pointer(cap));
        if (v) facts_.producer_version = v->version;
        facts_.dlpack_signature_note = fmt::format(
            "__dlpack__(max_version=(1, 3)) returns a versioned capsule stamped {}.{}",
            facts_.producer_version.major, facts_.producer_version.minor);
      } else {
        facts_.dlpack_signature_note = fmt::format(
            "__dlpack__(max_version=(1, 3)) returns {} instead of a 'dltensor_versioned' capsule",
            name.empty() ? "a non-capsule" : "a '" + name + "' capsule");
        absent["export_versioned"] = "the package answers __dlpack__(max_version=(1, 3)) with " +
                                     (name.empty() ? std::string("a non-capsule") : "a '" + name + "' capsule") +
                                     ": no versioned (DLPack >= 1.0) export";
      }
      // The first capsule dies unconsumed here: its destructor runs the deleter (CAP-03).
      load_step("load_check.capsule_destructor");
      cap = py::object();
      load_step("load_check.export");
    } catch (py::error_already_set& e) {
      const bool type_error = is_instance_of(e, PyExc_TypeError);
      if (is_instance_of(e, PyExc_BufferError)) versioned_refusal = describe(e);
      facts_.dlpack_signature_note =
          type_error ? fmt::format("__dlpack__ does not accept max_version ({}): a legacy-only "
                                   "(pre-DLPack 1.0) producer", describe(e))
                     : fmt::format("__dlpack__(max_version=(1, 3)) raised {}", describe(e));
      const std::string failed = is_failure_not_refusal(e) ? ": a failure, not a refusal (ERR-02), so no versioned "
                                                             "export could be made to test"
                                                           : "";
      absent["export_versioned"] =
          type_error ? "legacy-only producer: __dlpack__ does not accept max_version (" + describe(e) +
                           "), so it has no versioned (DLPack >= 1.0) export"
                     : "__dlpack__(max_version=(1, 3)) raised " + describe(e) + failed;
    }
    try {
      py::object cap = x.attr("__dlpack__")();
      const std::string name = capsule_name(cap);
      if (name == kLegacyName) facts_.producer_legacy = true;
      else
        absent["export_legacy"] = "__dlpack__() (max_version=None) returns " +
                                  (name.empty() ? std::string("a non-capsule") : "a '" + name + "' capsule") +
                                  ", not a legacy 'dltensor' capsule";
      load_step("load_check.capsule_destructor");
      cap = py::object();
      load_step("load_check.export");
    } catch (py::error_already_set& e) {
      if (is_instance_of(e, PyExc_BufferError) && !versioned_refusal.empty()) {
        // Neither kind of export of a plain float32 CPU array: no DLPack export at all (ndonnx
        // 0.23: "does not support the export of array data"). One fact, which every producer
        // case skips on; python.device.matches_capsule still asks __dlpack_device__ (LAYOUT-13).
        facts_.refuses_exports = "__dlpack__ refuses a plain 2x3 float32 CPU array with BufferError, asked with and "
                                 "without max_version (" + versioned_refusal + ")";
        for (const char* c : {"export_versioned", "export_legacy", "producer_protocol", "copy_keyword", "exchange_api"})
          absent[c] = "no DLPack export: " + facts_.refuses_exports;
        facts_.dlpack_signature_note = "no DLPack export: " + facts_.refuses_exports;
        info_.capabilities.erase(std::remove(info_.capabilities.begin(), info_.capabilities.end(), "producer_protocol"),
                                 info_.capabilities.end());
        return;
      }
      absent["export_legacy"] = "__dlpack__() (max_version=None) raised " + describe(e) +
                                (is_failure_not_refusal(e) ? ": a failure, not a refusal (ERR-02), so no legacy export "
                                                             "could be made to test"
                                                           : ": no legacy export (tolerated from March 2025, VER-06)");
    }
    // copy= (array API 2023.12): can a copy request be expressed at all?
    try {
      x.attr("__dlpack__")(py::arg("copy") = false);
      info_.capabilities.push_back("copy_keyword");
    } catch (py::error_already_set& e) {
      if (is_instance_of(e, PyExc_TypeError)) {
        absent["copy_keyword"] = "__dlpack__ takes no copy= keyword (" + describe(e) +
                                 "): a pre-2023.12 signature, so copy requests cannot be made (KW-01 reports it)";
      } else {
        info_.capabilities.push_back("copy_keyword");  // it understood the keyword; the cases judge the answer
        if (is_instance_of(e, PyExc_BufferError) && home_.device_type == kDLCPU) {
          const std::string refusal = describe(e);
          check_never_lends(x);
          if (!facts_.never_lends.empty()) facts_.never_lends = refusal + "; " + facts_.never_lends;
        }
      }
    }
    if (!facts_.never_lends.empty())
      info_.notes.push_back("never lends its storage (judged by 'copy otherwise'): " + facts_.never_lends);
    // Exchange API attributes live on the type.
    py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr())));
    if (py::hasattr(type, "__dlpack_c_exchange_api__")) {
      py::object a = type.attr("__dlpack_c_exchange_api__");
      facts_.exchange_attr = capsule_name(a) == kExchangeName ? "capsule" : "other";
      if (facts_.exchange_attr == "capsule") {
        exchange_type_ = type;
      } else {
        absent["exchange_api"] = "__dlpack_c_exchange_api__ is not a capsule named 'dlpack_exchange_api'";
      }
    } else if (py::hasattr(type, "__c_dlpack_exchange_api__")) {
      facts_.exchange_attr = "int (v1.2)";
      absent["exchange_api"] = "only the superseded DLPack 1.2 attribute __c_dlpack_exchange_api__ "
                               "(an int) is present; DLPack 1.3 names it __dlpack_c_exchange_api__ (a capsule)";
    } else {
      absent["exchange_api"] = "the array type has no __dlpack_c_exchange_api__ attribute (optional, XAPI-01)";
    }
  }

}

// The consumer side: from_dlpack fed a scripted producer that records the keywords and refuses,
// so nothing is imported; then, on the CPU, whether it parses a versioned capsule unasked.
void PythonSubject::check_consumer() {
  std::map<std::string, std::string>& absent = info_.absent;
  load_step("load_check.consumer");
  if (!py::hasattr(adapter_, "from_dlpack")) {
    absent["import_versioned"] = absent["import_legacy"] = "the adapter has no from_dlpack";
  } else {
    // Labelled with the package's home device: a CUDA-only consumer (CuPy) refuses a CPU
    // producer before it calls __dlpack__, which would hide its protocol.
    py::object p = refusing_producer(home_);
    try {
      from_dlpack(p);
      facts_.consumer = true;
    } catch (py::error_already_set& e) {
      // A release without the function the adapter calls ("module 'paddle' has no attribute
      // 'from_dlpack'": Paddle 2.6, MLX before 0.32) is no consumer; an AttributeError about
      // anything else (the scripted producer, say) is the library's answer and is judged.
      bool missing_function = false;
      if (is_instance_of(e, PyExc_AttributeError)) {
        py::object obj = py::getattr(e.value(), "obj", py::none());
        missing_function = !obj.is_none() && PyModule_Check(obj.ptr());
      }
      if (is_instance_of(e, PyExc_NotImplementedError)) {
        absent["import_versioned"] = absent["import_legacy"] =
            "the adapter's from_dlpack raises NotImplementedError: " + describe(e);
      } else if (missing_function) {
        absent["import_versioned"] = absent["import_legacy"] =
            "the package has no DLPack import here (" + describe(e) + "): it is no DLPack consumer";
      } else {
        facts_.consumer = true;
      }
    }
    if (facts_.consumer) {
      py::object kw = first_dlpack_kwargs(producer_of(p));
      bool versioned = false;
      if (!kw.is_none() && py::dict(kw).contains("max_version")) {
        py::object mv = py::dict(kw)["max_version"];
        try {
          auto t = mv.cast<std::pair<uint32_t, uint32_t>>();
          versioned = t.first >= 1;
          facts_.consumer_max = DLPackVersion{t.first, t.second};
        } catch (...) {
        }
      }
      facts_.consumer_versioned = versioned;
      if (home_.device_type != kDLCPU) check_cpu_refusal();
      // It never asked the load check's producer for a tensor: does it import anything at all? A
      // plain float32 CPU tensor refused as well is no DLPack import here (ndonnx: "does not
      // (yet) support"): one fact, not a failure of every import case.
      if (kw.is_none() && home_.device_type == kDLCPU && load_step_skipped("load_check.consumer_plain")) {
        facts_.check_left_out = "load_check.consumer_plain";
      } else if (kw.is_none() && home_.device_type == kDLCPU) {
        load_step("load_check.consumer_plain");
        const std::string refused = try_plain_import(false);
        load_step("load_check.consumer");
        if (!refused.empty() && !try_plain_import(true).empty()) {
          facts_.refuses_imports = "from_dlpack refuses every tensor it is handed, before asking for it (a plain "
                                   "2-element float32 CPU tensor, legacy or versioned: " + refused + ")";
          facts_.consumer = false;
          for (const char* c : {"import_versioned", "import_legacy", "release_array", "consumer_protocol"})
            absent[c] = "no DLPack import: " + facts_.refuses_imports;
        }
      }
    }
    if (facts_.consumer) {
      py::object kw = first_dlpack_kwargs(producer_of(p));
      const bool versioned = facts_.consumer_versioned;
      if (!versioned)
        absent["import_versioned"] =
            kw.is_none() ? "from_dlpack never called __dlpack__ on a foreign producer"
                         : "legacy-only consumer: from_dlpack calls __dlpack__(" +
                               py::repr(kw).cast<std::string>() +
                               ") without max_version >= (1, 0), so it cannot take a versioned tensor";
      // Not asking is not refusing: a consumer that imports a versioned capsule handed to it
      // unasked parses versioned tensors, and VER-03 applies to what it parses.
      if (!kw.is_none() && home_.device_type == kDLCPU && load_step_skipped("load_check.consumer_versioned")) {
        facts_.check_left_out = "load_check.consumer_versioned";
        absent["import_versioned"] +=
            "; whether it parses a versioned capsule handed to it unasked is unknown: that load check killed the "
            "process (reported once as subject.load) and was left out";
      } else if (!kw.is_none() && home_.device_type == kDLCPU) {
        load_step("load_check.consumer_versioned");
        facts_.consumer_parses_versioned = check_unasked_versioned();
        load_step("load_check.consumer");
        if (facts_.consumer_parses_versioned)
          absent.erase("import_versioned");
      }
    }
  }

}

// What the subject declares: the newest protocol it actually speaks, its capabilities, and the
// notes a reader of the report needs.
void PythonSubject::declare_capabilities() {
  std::map<std::string, std::string>& absent = info_.absent;
  if (facts_.producer_versioned) info_.dlpack_version = facts_.producer_version;
  if (facts_.consumer_versioned &&
      (info_.dlpack_version.major < 1 ||
       (facts_.consumer_max.major == 1 && facts_.consumer_max.minor > info_.dlpack_version.minor && !facts_.producer_versioned)))
    info_.dlpack_version = facts_.consumer_max;
  if (facts_.producer_versioned) info_.capabilities.push_back("export_versioned");
  if (facts_.producer_legacy) info_.capabilities.push_back("export_legacy");
  if (facts_.consumer_versioned || facts_.consumer_parses_versioned) info_.capabilities.push_back("import_versioned");
  if (facts_.consumer) info_.capabilities.push_back("import_legacy");
  if (py::hasattr(adapter_, "to_bytes")) info_.capabilities.push_back("read_array");
  else absent["read_array"] = "the adapter has no to_bytes";
  if (py::hasattr(adapter_, "is_writable")) info_.capabilities.push_back("is_writable");
  if (facts_.consumer) info_.capabilities.push_back("release_array");
  if (facts_.consumer) {
    // An adapter whose library only takes capsules (TensorFlow) calls __dlpack__ itself: the
    // consumer protocol is then the adapter's, and the cases about it skip.
    if (py::hasattr(adapter_, "consumer_protocol") && !adapter_.attr("consumer_protocol").cast<bool>())
      absent["consumer_protocol"] = py::str(adapter_.attr("consumer_protocol_note")).cast<std::string>();
    else
      info_.capabilities.push_back("consumer_protocol");
  }
  if (facts_.exchange_attr == "capsule") info_.capabilities.push_back("exchange_api");

  // Notes a reader of the report needs.
  if (!facts_.dlpack_signature_note.empty()) info_.notes.push_back("producer: " + facts_.dlpack_signature_note);
  if (facts_.consumer)
    info_.notes.push_back(facts_.consumer_versioned
                              ? fmt::format("consumer: from_dlpack asks for max_version=({}, {})",
                                            facts_.consumer_max.major, facts_.consumer_max.minor)
                          : facts_.consumer_parses_versioned
                              ? "consumer: from_dlpack never asks for max_version, yet imported a 'dltensor_versioned' "
                                "capsule (stamped 1.0) handed to it unasked: it parses versioned tensors, so the "
                                "versioned consumer cases run"
                              : "consumer: " + absent["import_versioned"]);
  if (!facts_.refuses_imports.empty())
    info_.notes.push_back("consumer: no DLPack import: " + facts_.refuses_imports +
                          "; the import cases are skipped, python.consumer.kw.any_object (KW-10) reports it once");
  if (!facts_.check_left_out.empty())
    info_.notes.push_back("consumer: the load check " + facts_.check_left_out +
                          " killed the process (reported once as subject.load) and was left out; what it decides "
                          "is taken as not shown");
  if (facts_.exchange_attr == "capsule") info_.notes.push_back("exchange API: __dlpack_c_exchange_api__ capsule present");
  else if (!absent["exchange_api"].empty()) info_.notes.push_back("exchange API: " + absent["exchange_api"]);
  if (info_.legacy_only())
    info_.notes.push_back(facts_.consumer_parses_versioned
                              ? "exports only legacy (pre-1.0) capsules: the versioned export cases are skipped, not "
                                "failed; its from_dlpack parses versioned capsules, so those consumer cases run"
                              : "speaks only the legacy (pre-1.0) protocol: versioned cases are skipped, not failed");
}

// A valid versioned float32 tensor of two elements (stamped 1.0), handed to from_dlpack by a
// producer that ignores what it was asked: true when the consumer imports it.
bool PythonSubject::check_unasked_versioned() { return try_plain_import(true).empty(); }

std::string PythonSubject::try_plain_import(bool versioned) {
  static float values[2] = {1.0f, 2.0f};
  static int64_t shape[1] = {2};
  static int64_t strides[1] = {1};
  static DLManagedTensorVersioned mv;
  static DLManagedTensor ml;
  std::memset(&mv, 0, sizeof mv);
  std::memset(&ml, 0, sizeof ml);
  DLTensor& t = versioned ? mv.dl_tensor : ml.dl_tensor;
  mv.version = DLPackVersion{1, 0};
  mv.deleter = [](DLManagedTensorVersioned*) {};  // static storage: nothing to free
  ml.deleter = [](DLManagedTensor*) {};
  t.data = values;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  ProducerScript cfg;
  cfg.managed = versioned ? static_cast<void*>(&mv) : static_cast<void*>(&ml);
  cfg.versioned = versioned;
  cfg.capsule_name = versioned ? kVersionedName : kLegacyName;
  cfg.destructor_deletes = true;
  py::object p = make_producer(cfg);
  std::string refused;
  try {
    py::object out = from_dlpack(p);
    out = py::none();
  } catch (py::error_already_set& e) {
    refused = describe(e);
  }
  p = py::none();
  PyGC_Collect();
  return refused;
}

// A load check's producer on `device`: it records the keywords and raises BufferError when
// its __dlpack__ is called, so nothing is imported.
py::object PythonSubject::refusing_producer(DLDevice device) {
  ProducerScript cfg;
  cfg.raise_type = "BufferError";
  cfg.raise_message = "dlpack-validate load check (expected to be propagated)";
  cfg.device = device;
  return make_producer(cfg);
}

// A CPU array that refused copy=False with BufferError: is its default export a copy? Then the
// package never lends its storage, and the cases judge it by "copy otherwise". A package whose
// default export aliases the array (it could have lent) keeps the zero-copy rules.
void PythonSubject::check_never_lends(py::handle x) {
  const std::optional<uintptr_t> own = library_address(x);
  if (!own) return;  // where the array lives is not known: nothing can be told
  try {
    const bool versioned = facts_.producer_versioned;
    py::object cap = versioned ? x.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 3))
                               : x.attr("__dlpack__")();
    void* p = capsule_pointer(cap);
    if (!p) return;
    const DLTensor& t = versioned ? static_cast<DLManagedTensorVersioned*>(p)->dl_tensor
                                  : static_cast<DLManagedTensor*>(p)->dl_tensor;
    const uint64_t flags = versioned ? static_cast<DLManagedTensorVersioned*>(p)->flags : 0;
    const auto at = reinterpret_cast<uintptr_t>(element0(t));
    if (at == *own || (versioned && !(flags & DLPACK_FLAG_BITMASK_IS_COPIED))) return;
    facts_.never_lends = fmt::format("its default export of a plain CPU array is a copy at {:#x} (the array is at "
                                     "{:#x}){}", at, *own, versioned ? ", flagged IS_COPIED" : "");
  } catch (py::error_already_set&) {
  }
}

// For a package whose adapter declares no CPU device: does its from_dlpack take a CPU
// producer? A refusal before __dlpack__ is called (the scripted producer raises BufferError once it is
// called, which a consumer propagates) is the package's own word that it takes no host memory.
void PythonSubject::check_cpu_refusal() {
  for (const DLDevice& d : devices_)
    if (d.device_type == kDLCPU) return;
  py::object p = refusing_producer(DLDevice{kDLCPU, 0});
  try {
    from_dlpack(p);
  } catch (py::error_already_set& e) {
    if (producer_of(p).dlpack_calls() == 0)
      facts_.cpu_refusal = "from_dlpack refused a CPU producer at load before calling its __dlpack__ (" +
                           describe(e) + "), and the adapter declares no CPU device: the consumer takes no host "
                           "memory (DEV-04 allows a refusal; the device.consumer.* cases judge its own devices)";
  }
  // It asked for the tensor: does it take one that lives in host memory? A plain float32 CPU
  // tensor refused, legacy and versioned, is the same fact found later (dpnp 0.15 refuses
  // every host tensor; on its own device it imports, byte_offset included).
  if (facts_.cpu_refusal.empty() && !load_step_skipped("load_check.consumer_plain")) {
    load_step("load_check.consumer_plain");
    const std::string legacy = try_plain_import(false);
    const std::string versioned = legacy.empty() ? std::string() : try_plain_import(true);
    load_step("load_check.consumer");
    if (!legacy.empty() && !versioned.empty())
      facts_.cpu_refusal = "from_dlpack refused a plain 2-element float32 CPU tensor at load, legacy (" + legacy +
                           ") and versioned (" + versioned + "), and the adapter declares no CPU device: the "
                           "consumer takes no host memory (DEV-04 allows a refusal; the device.consumer.* cases judge "
                           "its own devices)";
  }
}

}  // namespace dlpv::python
