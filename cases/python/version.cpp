// cases/python/version.cpp: python.version.*: version negotiation of __dlpack__:
// max_version=None gives a legacy capsule (VER-06), versions the producer speaks give major 1
// (VER-07), an old major gives a legacy capsule or BufferError (VER-08, ERR-06).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void max_version_none(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call c = call_dlpack(x);
    if (c.is("BufferError")) {
      ctx.check_as(Severity::may, true, "VER-06",
                   "max_version=None refused with BufferError (tolerated from March 2025)");
      return;
    }
    if (c.raised) refused_export(ctx, "__dlpack__()", c.what());
    ctx.check(capsule_name(c.value) == kLegacyName, "VER-06",
              "__dlpack__() (max_version=None) returns a legacy 'dltensor' capsule (a versioned "
              "one breaks consumers that predate DLPack 1.0)",
              "'dltensor'", c.what());
  });
}

DLPV_CASES {
  Declare("python.version.max_version_none", "max_version=None gives a legacy capsule")
      .should({"VER-06"}).python().also_needs(need::producer_protocol)
      .proven_by({"none_gives_versioned"})
      .run(max_version_none);
}

void max_version_own(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (auto [ma, mi] : {std::pair<uint32_t, uint32_t>{1, 0}, {1, 99}, {2, 0}}) {
      Call c = call_dlpack(x, kw_max(ma, mi));
      const std::string name = capsule_name(c.value);
      auto* v = name == kVersionedName ? static_cast<DLManagedTensorVersioned*>(capsule_pointer(c.value)) : nullptr;
      ctx.check(v && v->version.major == 1, "VER-07",
                fmt::format("max_version=({}, {}) gives a versioned tensor of major 1", ma, mi),
                "'dltensor_versioned', version 1.x",
                v ? fmt::format("version {}.{}", v->version.major, v->version.minor) : c.what());
    }
  });
}

DLPV_CASES {
  Declare("python.version.max_version_own", "max_version (1,0), (1,99), (2,0) give a versioned tensor of major 1")
      .should({"VER-07"}).python()
      .needs({need::export_versioned}).proven_by({"major2_type_error"})
      .run(max_version_own);
}

void max_version_old_major(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call c = call_dlpack(x, kw_max(0, 8));
    const std::string name = capsule_name(c.value);
    if (c.is("BufferError")) {
      ctx.check(true, "VER-08", "max_version=(0, 8) refused with BufferError (no legacy export)");
      const bool names = c.text.find('0') != std::string::npos && c.text.find('1') != std::string::npos;
      ctx.check_as(Severity::may, names, "ERR-06", "the BufferError message names both versions", "0.8 and 1.x",
                   c.text);
      return;
    }
    ctx.check(name == kLegacyName, "VER-08",
              "max_version=(0, 8) gives a legacy 'dltensor' capsule (or BufferError)",
              "'dltensor' or BufferError", c.what());
  });
}

DLPV_CASES {
  Declare("python.version.max_version_old_major", "max_version=(0, 8) gives a legacy capsule or BufferError")
      .should({"VER-08", "ERR-06"}).python()
      .needs({need::export_versioned}).proven_by({"old_major_versioned"})
      .run(max_version_old_major);
}

}  // namespace
}  // namespace dlpv::python
