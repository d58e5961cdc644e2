// cases/python/deleter.cpp: python.deleter.*: the package's deleters: the data outlives the
// source array (DEL-05), the deleter works from a fresh thread without the GIL (DEL-06), after
// interpreter finalisation (DEL-07), and leaves no Python exception set (DEL-09).
// SPDX-License-Identifier: Apache-2.0
#include <thread>

#include <pybind11/eval.h>

#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void outlives_source(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kBig, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x, newest_kwargs(ps));
    if (c.raised) refused_export(ctx, "__dlpack__", c.what());
    Taken t = take(ctx, c.value, "CAP-01");
    x = py::none();
    gc_collect(ctx);
    // Churn the allocator so freed memory would be reused and overwritten.
    std::vector<py::object> churn;
    for (int i = 0; i < 4; ++i) churn.push_back(ps.make(kBig, DLDataType{kDLInt, 64, 1}));
    ctx.phase("read");
    const std::string diff = data_mismatch(*t.tensor(), kBig, kF32);
    ctx.check_as(Severity::must, diff.empty(), "DEL-05",
              "the data stays valid after the source array is gone, until the deleter runs",
              "the reference pattern", diff);
    if (!diff.empty()) return;  // leave a broken tensor alone
    ctx.phase("deleter");
    py::gil_scoped_release nogil;
    t.release();
  });
}

DLPV_CASES {
  Declare("python.deleter.outlives_source",
          "exported data stays valid after the source array dies, until the deleter runs")
      .must({"DEL-05"}).python().also_needs(need::producer_protocol)
      .proven_by({"buffer_not_kept"})
      .run(outlives_source);
}

void foreign_thread(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    h.visible = warm_up(ctx, ps);
    h.base = heap_in_use();
    py::object x = ps.make(kBig, kF32);
    py::object wr = py::module_::import("weakref").attr("ref");
    py::object ref = py::none();
    try {
      ref = wr(x);
    } catch (py::error_already_set&) {
    }
    ctx.phase("export");
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    gc_collect(ctx);
    ctx.phase("deleter");
    {
      // A fresh native thread, no Python thread state, and this thread does not hold the
      // GIL either: the deleter must take it itself if it needs it (a hang = timeout).
      py::gil_scoped_release nogil;
      std::thread th([&t] { t.release(); });
      th.join();
    }
    gc_collect(ctx);
    // Some libraries release on a thread of their own (JAX): the release the heap shows is
    // awaited briefly, as for the capsule destructor (the spec asks for a release, not a
    // synchronous one).
    if (h.visible) await_calls([&] { return h.released() ? 1 : 0; }, 1, 2000);
    if (!h.visible) {
      // It returned without a crash or a hang: that much is observable.
      ctx.check(true, "DEL-06", "a deleter called from a fresh thread without the GIL returned");
      ctx.note(kInvisible);
    } else {
      ctx.check(h.released(), "DEL-06", "a deleter called from a fresh thread without the GIL releases the tensor",
                "the 4 MiB buffer freed", fmt::format("{} KiB still held", h.kib_above_base()));
    }
    if (!ref.is_none() && !ref().is_none())
      ctx.note("the source array object is still alive after the deleter ran");
  });
}

DLPV_CASES {
  Declare("python.deleter.foreign_thread", "the deleter works from a fresh native thread without the GIL")
      .must({"DEL-06"}).python().also_needs(need::producer_protocol)
      .proven_by({"deleter_thread_affine", "deleter_without_gil"})
      .run(foreign_thread);
}

void no_python_error(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    ctx.phase("deleter");
    t.release();  // with the GIL held, as a Python consumer would
    PyObject* pending = PyErr_Occurred();
    std::string what;
    if (pending) {
      what = reinterpret_cast<PyTypeObject*>(pending)->tp_name;
      PyErr_Clear();
    }
    ctx.check(pending == nullptr, "DEL-09", "the deleter leaves no Python exception set",
              "PyErr_Occurred() == NULL", what);
  });
}

DLPV_CASES {
  Declare("python.deleter.no_python_error", "the deleter leaves no Python exception set")
      .should({"DEL-09"}).python().also_needs(need::producer_protocol)
      .proven_by({"deleter_sets_error"})
      .run(no_python_error);
}

void after_finalize(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    (void)ps.make(kShape, kF32);  // the helper makes the same array: a skip if the adapter cannot
    const bool versioned = ps.facts().producer_versioned;
    const std::string code =
        "from validator import _dlpack_validate as m, adapters\n"
        "a = adapters.resolve(" + py::repr(py::str(ps.spec())).cast<std::string>() + ")\n"
        "print('loaded', flush=True)\n"
        "x = a.make((3, 4), (2, 32), " + fmt::format("({}, {})", static_cast<int>(ps.home_device().device_type),
                                                     ps.home_device().device_id) + ")\n"
        "m.keep_until_exit(x.__dlpack__(" + std::string(versioned ? "max_version=(1, 3)" : "") + "))\n"
        "del x\n"
        "print('ready', flush=True)\n";
    py::dict scope;
    scope["code"] = code;
    scope["limit"] = case_time_limit_s();
    // The helper imports the package first: that is loading, with the load deadline
    // (kCaseLoadingPhase), not case time; the case's own time starts once it says "loaded".
    ctx.phase(kCaseLoadingPhase);
    py::exec(R"(
import subprocess, sys, tempfile
# stderr to a file: a library that writes much while importing cannot block on a full pipe
# while this process waits for the first line of stdout.
helper_err = tempfile.TemporaryFile()
# Unbuffered: readline must not take more than the first line from the pipe (communicate()
# reads the rest straight from the file descriptor, past any buffer).
helper = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=helper_err, bufsize=0)
first = helper.stdout.readline()
)", scope);
    ctx.phase("deleter");
    py::object r;
    try {
      // As long as the case itself may take (the supervisor's limit for it), from the end of
      // the import: a timeout is confirmed alone with twice the time before it is reported.
      py::exec(R"(
try:
    out, _ = helper.communicate(timeout=limit)
except subprocess.TimeoutExpired:
    helper.kill()
    helper.communicate()
    raise
finally:
    helper_err.seek(0)
    err = helper_err.read()
    helper_err.close()
result = subprocess.CompletedProcess(helper.args, helper.returncode, first + out, err)
)", scope);
      r = scope["result"];
    } catch (py::error_already_set& e) {
      ctx.check(false, "DEL-07", "a deleter run after interpreter finalisation returns (leaks rather than hangs)",
                "exit 0", describe(e));
      return;
    }
    const int rc = r.attr("returncode").cast<int>();
    std::string err = py::bytes(r.attr("stderr")).cast<std::string>();
    if (err.size() > 300) err = err.substr(err.size() - 300);
    const std::string out = py::bytes(r.attr("stdout")).cast<std::string>();
    if (out.find("ready") == std::string::npos)
      ctx.harness_error(fmt::format("the helper process failed before finalisation (status {}): {}", rc, err));
    ctx.check(rc == 0, "DEL-07",
              "a deleter called after Py_Finalize (from a C++ static destructor) does not crash",
              "exit status 0", rc < 0 ? fmt::format("killed by signal {}: {}", -rc, err)
                                      : fmt::format("exit status {}: {}", rc, err));
  });
}

DLPV_CASES {
  Declare("python.deleter.after_finalize", "a deleter run after interpreter finalisation does not crash")
      .should({"DEL-07"}).python().also_needs(need::producer_protocol)
      .proven_by({"deleter_needs_interpreter"})
      .run(after_finalize);
}

}  // namespace
}  // namespace dlpv::python
