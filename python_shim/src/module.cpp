// python_shim/src/module.cpp: the private extension module `validator._dlpack_validate`.
// It runs the same application as the CLI (dlpv::run_app_guarded, dlpv::worker_main) with
// options checked by the same table (options::config_from); the Python package builds its
// argparse parsers and validator.run's keywords from options() and resolves adapters.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/explain.hpp>
#include <dlpack_validate/options.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include <dlpack_validate/scripted_producer.hpp>
#include <dlpack_validate/python_subject.hpp>

#include "corpus.hpp"
#include "export_reader.hpp"

#ifndef DLPV_CASE_UNITS
#error "DLPV_CASE_UNITS (number of C-level case files) must be defined by the build"
#endif
#ifndef DLPV_PY_CASE_UNITS
#error "DLPV_PY_CASE_UNITS (number of Python-protocol case files) must be defined by the build"
#endif

namespace py = pybind11;
using namespace dlpv;
using namespace dlpv::python;

namespace {

DLDataType dtype_of(py::handle key) {
  auto k = key.cast<std::pair<int, int>>();
  if (k.first < 0 || k.first > 255 || k.second <= 0 || k.second > 255)
    throw py::value_error(fmt::format("dtype key ({}, {}) is not a (code, bits) pair", k.first, k.second));
  return DLDataType{static_cast<uint8_t>(k.first), static_cast<uint8_t>(k.second), 1};
}

// "plain" or "edge" (the values= keyword of pattern, pattern_bytes and an adapter's make).
int values_named(const std::string& values) {
  if (values == "plain") return DLPV_VALUES_PLAIN;
  if (values == "edge") return DLPV_VALUES_EDGE;
  throw py::value_error("values must be 'plain' or 'edge', not '" + values + "'");
}

// One part of an edge-pattern element as a double: its bits decoded by the dtype's format.
double edge_part(DLDataType t, const unsigned char* p) {
  const unsigned bytes = t.code == DLPV_CODE_COMPLEX ? t.bits / 16u : t.bits / 8u;
  uint64_t u = 0;
  for (unsigned k = 0; k < bytes; ++k) u |= static_cast<uint64_t>(p[k]) << (8u * k);
  if (bytes == 8) {
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }
  if (bytes == 4 || t.code == DLPV_CODE_BFLOAT) {  // bfloat16: the top half of a float32
    const uint32_t w = static_cast<uint32_t>(bytes == 4 ? u : u << 16);
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  // float16: sign, 5 exponent bits, 10 mantissa bits
  const int e = static_cast<int>((u >> 10) & 0x1f);
  const double m = static_cast<double>(u & 0x3ff), s = (u & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  return s * (e ? std::ldexp(1.0 + m / 1024.0, e - 15) : std::ldexp(m / 1024.0, -14));
}

// Element i of the edge pattern as a Python number (a dtype without an edge table: nullptr).
py::object edge_value(DLDataType t, int64_t i) {
  if (!dlpv_pattern_has_edge(t) || t.lanes != 1) return py::object();
  unsigned char buf[16] = {0};
  dlpv_pattern_store_values(t, i, buf, DLPV_VALUES_EDGE);
  switch (t.code) {
    case DLPV_CODE_BOOL: return py::bool_(buf[0] != 0);
    case DLPV_CODE_INT:
    case DLPV_CODE_UINT: {
      uint64_t u = 0;
      for (unsigned k = 0; k < t.bits / 8u; ++k) u |= static_cast<uint64_t>(buf[k]) << (8u * k);
      if (t.code == DLPV_CODE_UINT) return py::int_(static_cast<unsigned long long>(u));
      if (t.bits < 64 && (u >> (t.bits - 1u)) & 1u) u |= ~((uint64_t{1} << t.bits) - 1u);  // sign-extend
      return py::int_(static_cast<long long>(u));
    }
    case DLPV_CODE_COMPLEX: {
      py::object v = py::reinterpret_steal<py::object>(
          PyComplex_FromDoubles(edge_part(t, buf), edge_part(t, buf + t.bits / 16u)));
      if (!v) throw py::error_already_set();
      return v;
    }
    default: return py::float_(edge_part(t, buf));
  }
}

// validator.pattern: the reference values as Python numbers (the header's functions); values
// "edge": the edge pattern's (a dtype without an edge table keeps the small numbers).
py::list pattern(py::handle key, int64_t n, const std::string& values) {
  const DLDataType t = dtype_of(key);
  if (n < 0) throw py::value_error("n must be >= 0");
  const bool edge = values_named(values) == DLPV_VALUES_EDGE && dlpv_pattern_has_edge(t);
  py::list out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (edge) {
      out[static_cast<size_t>(i)] = edge_value(t, i);
      continue;
    }
    const double re = dlpv_pattern_value(t, i);
    py::object v;
    switch (t.code) {
      case DLPV_CODE_BOOL: v = py::bool_(re != 0.0); break;
      case DLPV_CODE_INT:
      case DLPV_CODE_UINT: v = py::int_(static_cast<long long>(re)); break;
      case DLPV_CODE_COMPLEX:  // a Python complex made directly (pybind11 casts std::complex only with complex.h)
        v = py::reinterpret_steal<py::object>(PyComplex_FromDoubles(re, dlpv_pattern_value_imag(t, i)));
        if (!v) throw py::error_already_set();
        break;
      default: v = py::float_(re);
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

// validator.pattern_bytes: the same values, encoded row-major compact (what to_bytes returns).
py::bytes pattern_bytes(py::handle key, int64_t n, const std::string& values) {
  const DLDataType t = dtype_of(key);
  if (n < 0) throw py::value_error("n must be >= 0");
  const int v = values_named(values);
  std::string buf(dlpv_pattern_nbytes(t, n), '\0');
  if (n > 0) pattern_fill(t, n, buf.data(), v);
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

// The options table for the Python package (cli.py builds its parsers from it, api.py its
// keywords): one dict per row.
py::list option_table() {
  namespace o = options;
  py::list out;
  for (const o::Spec& s : o::table()) {
    static const char* const types[] = {"flag", "seconds", "number", "whole", "choice", "path", "globs", "shard"};
    py::list commands;
    for (auto [bit, name] :
         {std::pair{o::kRun, "run"}, {o::kBench, "bench"}, {o::kReport, "report"}, {o::kPytest, "pytest"}})
      if (s.commands & bit) commands.append(name);
    py::dict row;
    row["name"] = s.name;
    row["flag"] = o::flag_of(s);
    row["short"] = s.short_flag;
    row["keyword"] = s.keyword;
    row["type"] = types[static_cast<int>(s.type)];
    row["default"] = s.fallback;
    row["choices"] = s.choices;
    row["metavar"] = s.metavar;
    row["commands"] = commands;
    row["help"] = o::help_of(s);
    out.append(row);
  }
  return out;
}

// The report formats (options::report_formats(), from reports::formats()), in order: one dict each, "option" (the options
// table's name) and "extension" (".html").
py::list format_table() {
  py::list out;
  for (const options::FormatName& f : options::report_formats()) {
    py::dict row;
    row["option"] = f.option;
    row["extension"] = f.extension;
    out.append(row);
  }
  return out;
}

// The whole run: options -> select -> preflight -> supervise workers -> record -> summary ->
// exit code. `opts`: "values" (option name -> list of texts, checked here against the table),
// "naming" ("flags" or "keywords": how a bad value's message names it), "command" ("run",
// "bench", "report"), "record" (report), "subjects", "command_line", "invocation" (the shell
// command that runs the tool again from here), "worker_command", "preflight".
int run(const py::dict& opts) {
  const char* prog = "python -m validator";
  options::Values values;
  for (auto item : opts["values"].cast<py::dict>())
    values[item.first.cast<std::string>()] = item.second.cast<std::vector<std::string>>();
  const bool keywords = opts.contains("naming") && opts["naming"].cast<std::string>() == "keywords";
  AppConfig cfg;
  try {
    cfg = options::config_from(values, keywords ? options::Naming::keywords : options::Naming::flags);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog, dlpv::terminal_text(e.message).c_str());
    return kExitBadInput;
  }
  const std::string command = opts.contains("command") ? opts["command"].cast<std::string>() : "run";
  cfg.subjects = strings(opts, "subjects");
  cfg.command_line = strings(opts, "command_line");
  if (opts.contains("invocation")) cfg.invocation = opts["invocation"].cast<std::string>();
  cfg.worker_command = strings(opts, "worker_command");
  cfg.kind = "python";
  cfg.loader = load_python_subject;
  cfg.bench = command == "bench";
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
    std::fprintf(stderr, "%s: internal error: %s\n", prog, e.what());
    return kExitInternal;
  }
  int rc;
  {
    py::gil_scoped_release nogil;
    if (command == "run" || command == "bench") {
      rc = run_app_guarded(cfg, prog);
    } else {  // the commands over saved records, as the C++ CLI has them (app/src/records.cpp)
      try {
        if (command == "merge")  // `report merge A.json B.json ... [-o OUT.json]`
          rc = run_merge(cfg, strings(opts, "records"));
        else if (command == "diff")  // `diff OLD.json NEW.json`
          rc = run_diff(cfg, opts["old"].cast<std::string>(), opts["new"].cast<std::string>(),
                        opts.contains("allow_different_subjects") && opts["allow_different_subjects"].cast<bool>());
        else  // `report RUN.json ...`: re-render a saved record
          rc = run_report(cfg, opts["record"].cast<std::string>());
      } catch (const BadInput& e) {
        std::fprintf(stderr, "%s: error: %s\n", prog, dlpv::terminal_text(e.message).c_str());
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
  dlpv::python::keep_stdlib_references();  // before any package under test is imported
  m.def("pattern", &pattern, py::arg("dtype_key"), py::arg("n"), py::arg("values") = "plain",
        "the n reference pattern values for dtype_key = (code, bits), as Python numbers; values='edge': "
        "the edge pattern's (each dtype's extremes and special values, include/dlpack_validate/plugin.h)");
  m.def("pattern_bytes", &pattern_bytes, py::arg("dtype_key"), py::arg("n"), py::arg("values") = "plain",
        "the n reference pattern values encoded row-major compact (native byte order); values='edge': "
        "the edge pattern's");
  m.def("run", &run, py::arg("options"), "run (or list) the validation; returns the exit code");
  m.def(
      "terminal_text",
      [](py::bytes text, bool one_line) { return dlpv::terminal_text(std::string(text), one_line); },
      py::arg("text"), py::arg("one_line") = true,
      "library text made safe for a terminal (control bytes, invalid UTF-8, C1 controls and bidirectional "
      "overrides shown escaped; with one_line, tab/LF/CR become spaces): the one rule every front end uses");
  m.def("formats", &format_table, "the report formats (reports/include/dlpack_validate/reports.hpp), one dict each");
  m.def("options", &option_table, "the options table (app/include/dlpack_validate/options.hpp), one dict per option");
  m.def("worker", &worker, py::arg("specs"), "worker process main loop (internal)");
  // The generic mode's read-back (adapters/generic.py, Export), through the harness's reader.
  m.def("read_capsule", &python::read_capsule, py::arg("capsule"),
        "an unconsumed DLPack capsule's facts (versioned, version, flags, device, dtype, shape, strides)");
  m.def("capsule_elements", &python::capsule_elements, py::arg("capsule"),
        "its elements, row-major compact bytes, read by the validator's inspector");
  m.def("consume_capsule", &python::consume_capsule, py::arg("capsule"),
        "consume it as a consumer must: renamed used_dltensor[_versioned], its deleter called once");
  m.def("keep_until_exit", &keep_until_exit, py::arg("capsule"),
        "consume a DLPack capsule and run its deleter after interpreter finalisation (DEL-07)");
  m.def("case_ids", [] {
    std::vector<std::string> ids;
    for (const CaseInfo& c : Registry::instance().cases())
      if (applies_to(c, "python")) ids.push_back(c.id);
    return ids;
  });
  m.def(
      "explain",
      [](const std::string& id, const std::string& program) {
        check_units();
        try {
          std::fflush(stdout);
          return run_explain(id, {"python", program, requirements_doc()});
        } catch (const BadInput& e) {
          std::fprintf(stderr, "python -m validator: error: %s\n", dlpv::terminal_text(e.message).c_str());
          return kExitBadInput;
        }
      },
      py::arg("id"), py::arg("program"),
      "python -m validator explain ID: print what a requirement id or case id means; returns the exit code");
  register_scripted_producer(m);
  register_corpus(m);
}
