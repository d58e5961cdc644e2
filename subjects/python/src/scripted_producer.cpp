// subjects/python/src/scripted_producer.cpp
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/scripted_producer.hpp>
#include <dlpack_validate/tensor.hpp>

#include <cstring>

namespace dlpv::python {

// A producer's capsule destructor: delete only an unconsumed capsule (name still the
// producer's); a renamed (used_) or foreign-named capsule belongs to someone else. The
// scripted producer may put a legacy struct under a versioned name on purpose, so the real kind is in
// the capsule context (non-NULL = versioned).
void deleting_capsule_destructor(PyObject* cap) {
  const char* name = PyCapsule_GetName(cap);
  if (!name) { PyErr_Clear(); return; }
  if (std::strcmp(name, kVersionedName) != 0 && std::strcmp(name, kLegacyName) != 0) return;
  void* p = PyCapsule_GetPointer(cap, name);
  void* kind = PyCapsule_GetContext(cap);
  if (!p) { PyErr_Clear(); return; }
  call_deleter(p, kind != nullptr);
}

py::object ScriptedProducer::dlpack(py::args args, py::kwargs kwargs) {
  py::dict recorded;
  for (auto item : kwargs) recorded[item.first] = item.second;
  calls_.append(py::make_tuple("__dlpack__", recorded));
  ++dlpack_calls_;
  if (args.size() > 0)
    throw py::type_error("__dlpack__() takes 1 positional argument but " +
                         std::to_string(args.size() + 1) + " were given");
  if (cfg_.legacy_signature) {
    for (auto item : kwargs) {
      const std::string key = py::str(item.first);
      if (key != "stream")
        throw py::type_error("__dlpack__() got an unexpected keyword argument '" + key + "'");
    }
  } else {
    for (auto item : kwargs) {
      const std::string key = py::str(item.first);
      if (key != "stream" && key != "max_version" && key != "dl_device" && key != "copy")
        throw py::type_error("__dlpack__() got an unexpected keyword argument '" + key + "'");
    }
  }
  if (!cfg_.raise_type.empty()) {
    py::object exc = py::module_::import("builtins").attr(cfg_.raise_type.c_str());
    PyErr_SetString(exc.ptr(), cfg_.raise_message.c_str());
    throw py::error_already_set();
  }
  const bool has_max = kwargs.contains("max_version") && !kwargs["max_version"].is_none();
  if (cfg_.require_max_version && !has_max) {
    PyErr_SetString(PyExc_BufferError,
                    "the dlpack-validate scripted producer holds a versioned tensor and was asked without "
                    "max_version (a versioned-only producer refuses)");
    throw py::error_already_set();
  }
  void* managed = cfg_.managed;
  bool versioned = cfg_.versioned;
  const char* name = cfg_.capsule_name;
  if (cfg_.copy_managed && kwargs.contains("copy") && !kwargs["copy"].is_none() && kwargs["copy"].cast<bool>()) {
    managed = cfg_.copy_managed;
    versioned = cfg_.copy_versioned;
    name = versioned ? kVersionedName : kLegacyName;
  }
  if (cfg_.host_managed && kwargs.contains("dl_device") && !kwargs["dl_device"].is_none()) {
    py::tuple want = py::reinterpret_borrow<py::object>(kwargs["dl_device"]);
    if (want.size() == 2 && want[0].cast<int>() == kDLCPU && want[1].cast<int>() == 0) {
      managed = cfg_.host_managed;
      versioned = cfg_.host_versioned;
      name = versioned ? kVersionedName : kLegacyName;
    }
  }
  if (!managed) {
    PyErr_SetString(PyExc_BufferError, "the dlpack-validate scripted producer has no tensor to give");
    throw py::error_already_set();
  }
  PyObject* cap = PyCapsule_New(managed, name, cfg_.destructor_deletes ? deleting_capsule_destructor : nullptr);
  if (!cap) throw py::error_already_set();
  if (cfg_.destructor_deletes && versioned) PyCapsule_SetContext(cap, reinterpret_cast<void*>(1));
  py::object c = py::reinterpret_steal<py::object>(cap);
  last_capsule_ = c;
  return c;
}

py::tuple ScriptedProducer::dlpack_device() {
  calls_.append(py::make_tuple("__dlpack_device__", py::dict()));
  return py::make_tuple(static_cast<int>(cfg_.device.device_type), cfg_.device.device_id);
}

void register_scripted_producer(py::module_& m) {
  py::class_<ScriptedProducer, std::shared_ptr<ScriptedProducer>>(m, "ScriptedProducer", py::dynamic_attr(),
                                            "scripted DLPack producer (checklist T-FAKE)")
      .def("__dlpack__", &ScriptedProducer::dlpack)
      .def("__dlpack_device__", &ScriptedProducer::dlpack_device)
      .def_property_readonly("calls", &ScriptedProducer::calls)
      .def_property_readonly("last_capsule", &ScriptedProducer::last_capsule);
}

py::object make_producer(const ProducerScript& cfg) { return py::cast(std::make_shared<ScriptedProducer>(cfg)); }

ScriptedProducer& producer_of(py::handle obj) { return *obj.cast<std::shared_ptr<ScriptedProducer>>(); }

py::object first_dlpack_kwargs(const ScriptedProducer& p) {
  for (auto call : p.calls()) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(call);
    if (py::str(t[0]).cast<std::string>() == "__dlpack__") return t[1];
  }
  return py::none();
}

}  // namespace dlpv::python
