// cases/python/flags.cpp: python.flags.*: a read-only array is exported with READ_ONLY
// (FLAG-02).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void read_only(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32, "contiguous", true);
    Call c = call_dlpack(x, kw_max(1, 3));
    uint64_t flags = 0;
    if (c.raised) refused_export(ctx, "__dlpack__(max_version=(1, 3)) of a read-only array", c.what());
    if (!capsule_address(c.value, &flags) || capsule_name(c.value) != kVersionedName)
      ctx.skip("__dlpack__(max_version=(1, 3)) of a read-only array " + c.what() +
               ", not a versioned capsule, which has no flags (VER-07 judges the capsule kind)");
    // FLAG-02 is about memory that "may not be written". A copy (IS_COPIED: "the consumer may
    // treat the buffer as its own alone and change it freely", FLAG-09) is not that memory; a
    // copy flag that lies is FLAG-05/FLAG-06's to catch (python.request.*).
    if (flags & DLPACK_FLAG_BITMASK_IS_COPIED) {
      ctx.check(true, "FLAG-02", fmt::format("the export of a read-only array is a copy (IS_COPIED, flags = {:#x}): the "
                                             "consumer's to write, so READ_ONLY is not needed", flags));
      return;
    }
    ctx.check((flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
              "a read-only array is exported with READ_ONLY set", "bit 0 set", fmt::format("flags = {:#x}", flags));
  });
}

DLPV_CASES {
  Declare("python.flags.read_only", "a read-only array is exported with READ_ONLY")
      .should({"FLAG-02"}).python()
      .needs({need::export_versioned}).proven_by({"no_read_only_flag"})
      .run(read_only);
}

}  // namespace
}  // namespace dlpv::python
