// python_shim/src/corpus.cpp: the validator-made tensors of the consumer cases (MadeTensor: pattern
// values, counting and poisoning deleter, read-only pages, a guard page after the version prefix)
// as Python objects, for validator.corpus, the edge-case corpus other test suites import.
// SPDX-License-Identifier: Apache-2.0
#include "corpus.hpp"

#include <dlpack_validate/python_subject.hpp>
#include <dlpack_validate/scripted_producer.hpp>
#include <dlpack_validate/tensor.hpp>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

namespace dlpv::python {
namespace {

// Capsule names need static storage (CAP-07): the four DLPack names and one wrong name.
constexpr const char* kWrongName = "not_a_dltensor";
const char* static_name(const std::string& name) {
  for (const char* n : {kLegacyName, kVersionedName, kUsedLegacyName, kUsedVersionedName, kWrongName})
    if (name == n) return n;
  throw py::value_error(fmt::format("capsule name '{}' is none of dltensor, dltensor_versioned, used_dltensor, "
                                    "used_dltensor_versioned, {}", name, kWrongName));
}

// One validator-made tensor. While its deleter has not run, a consumer may still hold it (an
// array alive after the producer object died): the tensor is then leaked, never freed under it.
class CorpusTensor {
 public:
  CorpusTensor(std::unique_ptr<MadeTensor> made, bool versioned) : made_(std::move(made)), versioned_(versioned) {}
  ~CorpusTensor() {
    if (made_ && made_->deleter_calls() == 0 && handed_) (void)made_.release();
  }
  py::object capsule(const std::string& name) {
    if (handed_) throw py::value_error("this tensor was already handed out in a capsule (one capsule per tensor)");
    const char* n = static_name(name);
    void* managed = versioned_ ? static_cast<void*>(made_->versioned()) : static_cast<void*>(made_->legacy());
    PyObject* cap = PyCapsule_New(managed, n, deleting_capsule_destructor);
    if (!cap) throw py::error_already_set();
    if (versioned_) PyCapsule_SetContext(cap, reinterpret_cast<void*>(1));
    handed_ = true;
    return py::reinterpret_steal<py::object>(cap);
  }
  int deleter_calls() const { return made_->deleter_calls(); }
  py::bytes expected() const {
    const auto& e = made_->expected();
    return py::bytes(reinterpret_cast<const char*>(e.data()), e.size());
  }
  bool read_only_data_written() const { return made_->read_only_data_written(); }
  bool versioned() const { return versioned_; }

 private:
  std::unique_ptr<MadeTensor> made_;
  bool versioned_;
  bool handed_ = false;
};

std::shared_ptr<CorpusTensor> make_tensor(std::tuple<int, int, int> dtype, std::vector<int64_t> shape,
                                          const std::string& layout, bool versioned,
                                          std::pair<int, int> version, uint64_t flags, uint64_t byte_offset,
                                          bool null_strides, bool null_shape, bool null_data,
                                          std::vector<int64_t> strides, size_t misalign, bool null_deleter,
                                          bool guard_after_prefix, bool padded_subbyte,
                                          std::pair<int, int> device) {
  auto [code, bits, lanes] = dtype;
  if (code < 0 || code > 255 || bits <= 0 || bits > 255 || lanes <= 0 || lanes > 65535)
    throw py::value_error(fmt::format("dtype ({}, {}, {}) does not fit DLDataType", code, bits, lanes));
  MadeSpec spec;
  spec.dtype = DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
  spec.shape = std::move(shape);
  const auto l = layout_from_name(layout);
  if (!l) throw py::value_error("unknown layout '" + layout + "'");
  spec.layout = *l;
  spec.version = DLPackVersion{static_cast<uint32_t>(version.first), static_cast<uint32_t>(version.second)};
  spec.flags = flags;
  spec.extra_byte_offset = byte_offset;
  spec.null_strides = null_strides;
  spec.null_shape = null_shape;
  spec.null_data = null_data;
  spec.strides = std::move(strides);
  spec.misalign = misalign;
  spec.deleter = null_deleter ? DeleterKind::null : DeleterKind::counting;
  spec.guard_after_prefix = guard_after_prefix && versioned;
  spec.padded_subbyte = padded_subbyte;
  spec.device = DLDevice{static_cast<DLDeviceType>(device.first), device.second};
  if (null_shape && !spec.shape.empty()) throw py::value_error("a NULL shape is only lawful for ndim 0");
  if (null_data && element_count(spec.shape) != 0) throw py::value_error("NULL data needs a zero-size shape");
  auto made = MadeTensor::make(spec, versioned);
  if (!made) throw py::value_error("the validator cannot build this tensor (explicit strides need a zero-size shape)");
  return std::make_shared<CorpusTensor>(std::move(made), versioned);
}

}  // namespace

void register_corpus(py::module_& m) {
  py::class_<CorpusTensor, std::shared_ptr<CorpusTensor>>(
      m, "CorpusTensor", "a validator-made DLPack tensor (validator.corpus): pattern values, a counting deleter")
      .def("capsule", &CorpusTensor::capsule, py::arg("name"),
           "the tensor in a new capsule named `name`; its destructor runs the deleter if it dies unconsumed")
      .def_property_readonly("deleter_calls", &CorpusTensor::deleter_calls)
      .def_property_readonly("expected", &CorpusTensor::expected,
                             "the values a correct consumer reads back, row-major compact bytes")
      .def_property_readonly("read_only_data_written", &CorpusTensor::read_only_data_written)
      .def_property_readonly("versioned", &CorpusTensor::versioned);
  m.def("corpus_tensor", &make_tensor, py::arg("dtype"), py::arg("shape"), py::arg("layout") = "contiguous",
        py::arg("versioned") = true, py::arg("version") = std::pair<int, int>{1, 3}, py::arg("flags") = 0,
        py::arg("byte_offset") = 0, py::arg("null_strides") = false, py::arg("null_shape") = false,
        py::arg("null_data") = false, py::arg("strides") = std::vector<int64_t>{}, py::arg("misalign") = 0,
        py::arg("null_deleter") = false, py::arg("guard_after_prefix") = false, py::arg("padded_subbyte") = false,
        py::arg("device") = std::pair<int, int>{1, 0},
        "a validator-made tensor (validator.corpus builds its edge cases with it)");
}

}  // namespace dlpv::python
