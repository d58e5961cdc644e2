// python_shim/src/module.cpp: the private extension module `validator._dlpack_validate`.
// It runs the same harness as the CLI (dlpv::run_app_guarded, dlpv::worker_main); the
// Python package only parses options and resolves adapters.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <complex>
#include <cstdio>
#include <mutex>

#include "probe.hpp"
#include "python_subject.hpp"

#ifndef DLPV_CASE_UNITS
#error "DLPV_CASE_UNITS (number of C-level case files) must be defined by the build"
#endif
#ifndef DLPV_PY_CASE_UNITS
#error "DLPV_PY_CASE_UNITS (number of Python-protocol case files) must be defined by the build"
#endif

namespace py = pybind11;
using namespace dlpv;
using namespace dlpv::py_shim;

namespace {

DLDataType dtype_of(py::handle key) {
  auto k = key.cast<std::pair<int, int>>();
  if (k.first < 0 || k.first > 255 || k.second <= 0 || k.second > 255)
    throw py::value_error(fmt::format("dtype key ({}, {}) is not a (code, bits) pair", k.first, k.second));
  return DLDataType{static_cast<uint8_t>(k.first), static_cast<uint8_t>(k.second), 1};
}

// validator.pattern: the reference values as Python numbers (the header's functions).
py::list pattern(py::handle key, int64_t n) {
  const DLDataType t = dtype_of(key);
  if (n < 0) throw py::value_error("n must be >= 0");
  py::list out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double re = dlpv_pattern_value(t, i);
    py::object v;
    switch (t.code) {
      case DLPV_CODE_BOOL: v = py::bool_(re != 0.0); break;
      case DLPV_CODE_INT:
      case DLPV_CODE_UINT: v = py::int_(static_cast<long long>(re)); break;
      case DLPV_CODE_COMPLEX: v = py::cast(std::complex<double>(re, dlpv_pattern_value_imag(t, i))); break;
      default: v = py::float_(re);
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

// validator.pattern_bytes: the same values, encoded row-major compact (what to_bytes returns).
py::bytes pattern_bytes(py::handle key, int64_t n) {
  const DLDataType t = dtype_of(key);
  if (n < 0) throw py::value_error("n must be >= 0");
  std::string buf(dlpv_pattern_nbytes(t, n), '\0');
  if (n > 0) dlpv_pattern_fill(t, n, buf.data());
  return py::bytes(buf);
}

void check_units() {
  const size_t want = DLPV_CASE_UNITS + DLPV_PY_CASE_UNITS;
  if (Registry::instance().unit_count() != want)
    throw std::runtime_error(fmt::format("{} case files registered, {} built",
                                         Registry::instance().unit_count(), want));
}

std::vector<std::string> strings(const py::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return {};
  return d[key].cast<std::vector<std::string>>();
}

// The whole run: select -> preflight -> supervise workers -> record -> summary -> exit code.
int run(const py::dict& opts) {
  AppConfig cfg;
  cfg.subjects = strings(opts, "subjects");
  cfg.filters = strings(opts, "filters");
  if (opts.contains("excludes")) cfg.excludes = strings(opts, "excludes");
  if (opts.contains("requirements")) cfg.requirements = strings(opts, "requirements");
  if (opts.contains("exitfirst")) cfg.exitfirst = opts["exitfirst"].cast<bool>();
  auto path = [&](const char* key) {
    return opts.contains(key) && !opts[key].is_none() ? opts[key].cast<std::string>() : std::string();
  };
  cfg.json_path = path("json");
  cfg.html_path = path("html");
  cfg.junit_path = path("junit");
  cfg.summary_md_path = path("summary_md");
  cfg.baseline_path = path("baseline");
  cfg.write_baseline_path = path("write_baseline");
  const std::string report_from = path("report");
  cfg.timeout_s = opts["timeout"].cast<double>();
  if (opts.contains("load_timeout")) cfg.load_timeout_s = opts["load_timeout"].cast<double>();
  cfg.isolate = opts["isolate"].cast<std::string>();
  cfg.strict = opts["strict"].cast<bool>();
  cfg.deterministic = opts["deterministic"].cast<bool>();
  cfg.quiet = opts["quiet"].cast<bool>();
  cfg.list = opts["list"].cast<bool>();
  cfg.command_line = strings(opts, "command_line");
  cfg.worker_command = strings(opts, "worker_command");
  cfg.kind = "python";
  cfg.loader = load_python_subject;
  if (opts.contains("bench") && !opts["bench"].is_none()) {  // `python -m validator bench PKG...`
    py::dict b = opts["bench"];
    cfg.bench = true;
    cfg.bench_iterations = b["iterations"].cast<long long>();
    cfg.bench_batches = b["batches"].cast<int>();
    cfg.bench_batch_ms = b["batch_ms"].cast<double>();
    cfg.bench_baseline_path = b["baseline"].is_none() ? "" : b["baseline"].cast<std::string>();
    cfg.bench_threshold = b["threshold"].cast<double>();
  }
  py::object preflight = opts["preflight"];
  cfg.preflight = [preflight](const std::string& spec) -> std::string {
    py::gil_scoped_acquire gil;
    try {
      return preflight(spec).cast<std::string>();
    } catch (py::error_already_set& e) {
      return "cannot check '" + spec + "': " + describe(e);
    }
  };
  try {
    check_units();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "python -m validator: internal error: %s\n", e.what());
    return kExitInternal;
  }
  int rc;
  {
    py::gil_scoped_release nogil;
    if (report_from.empty()) {
      rc = run_app_guarded(cfg, "python -m validator");
    } else {  // `python -m validator report RUN.json ...`: re-render a saved record
      try {
        rc = run_report(cfg, report_from);
      } catch (const BadInput& e) {
        std::fprintf(stderr, "python -m validator: error: %s\n", e.message.c_str());
        rc = kExitBadInput;
      }
    }
  }
  // The callback holds a Python object: drop it with the GIL held.
  cfg.preflight = nullptr;
  return rc;
}

// A worker: `python -m validator --internal-worker SPEC...` (fd 3 commands, fd 4 events).
int worker(const std::vector<std::string>& specs) {
  check_units();
  py::gil_scoped_release nogil;
  return worker_main(specs, load_python_subject);
}

// DEL-07: keep a consumed tensor in a C++ static that is destroyed after Py_Finalize; its
// deleter then runs in a process whose interpreter is gone.
struct AfterFinalize {
  std::mutex m;
  std::vector<std::pair<void*, bool>> held;
  ~AfterFinalize() {
    for (auto& [p, versioned] : held) {
      call_deleter(p, versioned);
    }
    if (!held.empty()) std::fputs("dlpack-validate: deleters ran after interpreter finalisation\n", stderr);
  }
};
AfterFinalize g_after_finalize;

void keep_until_exit(py::handle cap) {
  const std::string name = capsule_name(cap);
  const bool versioned = name == kVersionedName;
  if (!versioned && name != kLegacyName) throw py::value_error("not an unconsumed DLPack capsule: '" + name + "'");
  void* p = capsule_pointer(cap);
  if (!p) throw py::value_error("capsule holds NULL");
  if (PyCapsule_SetName(cap.ptr(), versioned ? kUsedVersionedName : kUsedLegacyName) != 0)
    throw py::error_already_set();
  std::lock_guard<std::mutex> lock(g_after_finalize.m);
  g_after_finalize.held.emplace_back(p, versioned);
}

}  // namespace

PYBIND11_MODULE(_dlpack_validate, m) {
  m.doc() = "dlpack-validate harness (private; use `python -m validator`)";
  m.attr("tool_version") = kToolVersion;
  m.def("pattern", &pattern, py::arg("dtype_key"), py::arg("n"),
        "the n reference pattern values for dtype_key = (code, bits), as Python numbers");
  m.def("pattern_bytes", &pattern_bytes, py::arg("dtype_key"), py::arg("n"),
        "the n reference pattern values encoded row-major compact (native byte order)");
  m.def("run", &run, py::arg("options"), "run (or list) the validation; returns the exit code");
  m.def("worker", &worker, py::arg("specs"), "worker process main loop (internal)");
  m.def("keep_until_exit", &keep_until_exit, py::arg("capsule"),
        "consume a DLPack capsule and run its deleter after interpreter finalisation (DEL-07)");
  m.def("case_ids", [] {
    std::vector<std::string> ids;
    for (const CaseInfo& c : Registry::instance().cases())
      if (applies_to(c, "python")) ids.push_back(c.id);
    return ids;
  });
  register_probe(m);
}
