// python_shim/src/corpus.hpp: validator-made tensors for validator.corpus (corpus.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <pybind11/pybind11.h>

namespace dlpv::python {
namespace py = pybind11;

/// Register CorpusTensor and corpus_tensor(...) in the module.
void register_corpus(py::module_& m);

}  // namespace dlpv::python
