// subjects/python/src/exceptions.hpp: what the Python subject's two halves (python_subject.cpp,
// load_checks.cpp) share about the exceptions a package raises.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <pybind11/pybind11.h>

namespace dlpv::python {

/// Whether the exception `e` holds is an instance of `type` (a subclass counts).
inline bool is_instance_of(const pybind11::error_already_set& e, PyObject* type) {
  return PyErr_GivenExceptionMatches(e.type().ptr(), type) != 0;
}

/// Exceptions that are no answer to a request but a failure to serve it: the spec's refusals
/// are BufferError (data it cannot express) and the argument errors (TypeError, ValueError);
/// ERR-02 names out-of-memory among the "other failures". A MemoryError for a 3x4 array is never
/// a clean refusal that a case may skip on. (SystemExit, KeyboardInterrupt and GeneratorExit are
/// no Exception at all: they end programs.)
inline bool is_failure_not_refusal(const pybind11::error_already_set& e) {
  return !e.matches(PyExc_Exception) || e.matches(PyExc_MemoryError) || e.matches(PyExc_SystemError) ||
         e.matches(PyExc_RecursionError);
}

}  // namespace dlpv::python
