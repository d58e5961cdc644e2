// SPDX-License-Identifier: Apache-2.0
// export_reader.hpp: the generic mode's read-back through the harness's tensor reader
// (export_reader.cpp), as functions of the module _dlpack_validate.
#pragma once

#include <pybind11/pybind11.h>

namespace dlpv::python {

namespace py = pybind11;

/// An unconsumed DLPack capsule's facts: versioned, version ((major, minor) or None), flags,
/// device, dtype (code, bits, lanes), shape, strides (in elements; compact for NULL). Raises
/// NotImplementedError for a capsule that is not one (left unconsumed), ValueError for a shape
/// or strides array that cannot be read.
py::dict read_capsule(py::handle cap);

/// Its elements, row-major compact (sub-byte types packed), read by gather_elements. Raises
/// NotImplementedError for what the inspector does not read (another device, lanes, a packed
/// tensor with non-compact strides) and ValueError for a tensor that cannot be read.
py::bytes capsule_elements(py::handle cap);

/// Consumes it as a consumer must: renamed used_dltensor[_versioned], its deleter called once.
/// A capsule already consumed, or not a DLPack one, is left alone.
void consume_capsule(py::handle cap);

}  // namespace dlpv::python
