// cases/python/support/py_helpers.hpp: the vocabulary of the Python-protocol cases.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include <dlpack_validate/declare.hpp>

#include <dlpack_validate/scripted_producer.hpp>
#include <dlpack_validate/python_subject.hpp>

namespace dlpv::python {

inline const DLDataType kF32{kDLFloat, 32, 1};

/// Raised by attempt() for an exception that answers no request: SystemExit, KeyboardInterrupt
/// (BaseExceptions that end programs), MemoryError, SystemError and RecursionError (ERR-02
/// names running out of memory among the failures that are not BufferError refusals). A case
/// never reads one as a refusal: with_python records it against the case's first requirement.
struct NotARefusal {
  std::string text;
};
/// True for the exceptions NotARefusal stands for.
bool is_no_refusal(const py::error_already_set& e);

/// Run `body` with the GIL held. A Python exception nobody expected is a harness error (the
/// message names it); an adapter's NotImplementedError is a skip; a NotARefusal is the library's
/// failure, at the case's severity.
template <class F>
void with_python(CaseContext& ctx, F&& body) {
  PythonSubject& ps = python_subject(ctx);
  py::gil_scoped_acquire gil;
  std::string problem;
  // An exception left pending by a deleter that ran outside any call (DEL-09 judges that)
  // must not be blamed on this case's first Python call.
  if (PyErr_Occurred()) PyErr_Clear();
  try {
    body(ps);
    if (PyErr_Occurred()) PyErr_Clear();
    return;
  } catch (py::error_already_set& e) {
    problem = "unexpected Python exception: " + describe(e);
  } catch (const PythonSubject::NotImplemented& n) {
    ctx.skip(n.reason);
  } catch (const NotARefusal& f) {
    ctx.check(false, ctx.info().requirements.front(),
              "the library raised an exception that is no answer to the request (a refusal is an Exception such as "
              "BufferError, TypeError or ValueError; SystemExit, KeyboardInterrupt and MemoryError are failures)",
              "an answer or a refusal", f.text);
    ctx.stop();
  }
  ctx.harness_error(problem);
}

/// The export a case needs before it can judge anything was refused: the library's answer, not
/// a failure of the validator (a skip that quotes it; a refusal the rules judge is judged by the
/// case that asks for it). `what` names the call ("__dlpack__(max_version=(1, 3))").
[[noreturn]] void refused_export(CaseContext& ctx, const std::string& what, const std::string& answer);

/// Outcome of calling something that may raise.
struct Call {
  py::object value;         ///< result, or None
  bool raised = false;
  std::string type;         ///< exception type name
  std::string text;         ///< "Type: message"
  bool buffer_error = false;  ///< raised BufferError or a subclass of it
  bool is(const char* t) const { return raised && type == t; }
  std::string what() const;
};
Call call_dlpack(py::handle x, py::dict kwargs = py::dict());
template <class F>
Call attempt(F&& f) {
  Call c;
  if (PyErr_Occurred()) PyErr_Clear();  // left behind by a misbehaving deleter (DEL-09)
  try {
    c.value = f();
  } catch (py::error_already_set& e) {
    if (is_no_refusal(e)) throw NotARefusal{"raised " + describe(e)};
    c.raised = true;
    c.type = exception_type(e);
    c.buffer_error = e.matches(PyExc_BufferError);
    c.text = describe(e);
    c.value = py::none();
  }
  return c;
}

py::dict kw_max(uint32_t major, uint32_t minor);
/// gc.collect(); a Python exception left pending by a deleter that ran meanwhile (from a
/// capsule destructor) is recorded against DEL-09 and cleared.
void gc_collect(CaseContext& ctx);

/// A capsule the case consumes: renamed to used_*, deleter run by release().
struct Taken {
  void* p = nullptr;
  bool versioned = false;
  DLTensor* tensor() const;
  void release();  ///< calls the deleter (caller decides about the GIL)
};
/// Take ownership of a capsule like a consumer (rename to used_*). Fails the check of
/// `req` and stops the case if it is not an unconsumed DLPack capsule.
Taken take(CaseContext& ctx, py::handle cap, const char* req);

/// Whether `t` looks like the (3, 4) float32 tensor asked for (fields read defensively).
bool plausible(const void* dl_tensor_addr, const std::vector<int64_t>& shape, DLDataType dtype,
               std::string* why);
/// Elements of a CPU tensor compared with the pattern of `layout` (a broadcast array repeats its
/// first row; `values` DLPV_VALUES_EDGE: the edge pattern): "" when equal, else the difference.
std::string data_mismatch(const DLTensor& t, const std::vector<int64_t>& shape, DLDataType dtype,
                          uint32_t layout = DLPV_LAYOUT_CONTIGUOUS, int values = DLPV_VALUES_PLAIN);

/// An array's __dlpack_device__() as (device_type, device_id); nullopt when it has none or
/// answers something else.
std::optional<std::pair<int, int>> device_of(py::handle array);

/// The CUDA stream (device 0) the package computes on, from the adapter's optional
/// current_stream(); skips the case when the adapter or the machine cannot name one.
long long current_cuda_stream(CaseContext& ctx, PythonSubject& ps);

}  // namespace dlpv::python
