// cases/python/consumer/capsule_renamed.cpp: python.consumer.capsule_renamed: taking ownership
// renames the capsule to used_* (CAP-05) and the tensor is deleted exactly once in the end
// (DEL-02); a consumer that copies without taking ownership leaves the capsule to its
// destructor.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstring>
#include <optional>

#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

// Whether the imported array views the producer's memory: the source's first element is
// overwritten for a moment and the array read back (host memory only; nullopt when it cannot
// be told, e.g. device memory or an array the adapter cannot read).
std::optional<bool> views_source(PythonSubject& ps, py::handle array, const Feed& f) {
  if (f.made->spec().device_memory || f.made->deleter_calls() > 0 || f.made->expected().empty()) return std::nullopt;
  auto* first = reinterpret_cast<uint8_t*>(f.source_address());
  const size_t n = std::min<size_t>(f.made->expected().size(), 4);
  std::vector<uint8_t> saved(first, first + n);
  std::memset(first, 0x5A, n);
  std::optional<bool> out;
  std::string unreadable;
  try {
    std::string got = py::bytes(ps.adapter().attr("to_bytes")(array)).cast<std::string>();
    out = got.size() >= n && std::memcmp(got.data(), first, n) == 0;
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_NotImplementedError)) unreadable = describe(e);
  }
  std::memcpy(first, saved.data(), n);
  // A copy or a view cannot be told apart: the rename rule cannot be judged either (one rule
  // for every read-back the adapter cannot make: a skip).
  if (!unreadable.empty()) throw PythonSubject::NotImplemented{unreadable_reason(unreadable)};
  return out;
}

void capsule_renamed(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (f.result.raised) ctx.check(false, "CAP-05", "the consumer imports a plain float32 tensor from a scripted producer", "an array", f.result.what());
    const std::string name = capsule_name(f.p().last_capsule());
    const std::string want = f.versioned ? kUsedVersionedName : kUsedLegacyName;
    if (name != want && name.rfind("used_", 0) != 0) {
      // The Python spec: the consumer "must transfer ownership ... by renaming the capsule". One
      // that copies the data and never takes ownership leaves the capsule to its destructor,
      // which releases the tensor once: lawful. One that keeps a view of memory it does not own
      // is not.
      const auto view = views_source(ps, f.result.value, f);
      if (view && !*view) {
        ctx.check_as(Severity::may, true, "CAP-05", "copied the data without taking ownership");
        ctx.note("from_dlpack copied the tensor and left the capsule unconsumed ('" + name +
                 "'): its destructor releases the tensor (lawful: no ownership was taken)");
        f.settle(ctx);
        check_deleted_once(ctx, f, "DEL-02", "the tensor is deleted exactly once in the end");
        return;
      }
    }
    ctx.check(name == want, "CAP-05", "taking ownership renames the capsule to its used_ name", "'" + want + "'",
              "'" + name + "'");
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "the tensor is deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.capsule_renamed", "from_dlpack renames the capsule it consumes to used_*")
      .must({"CAP-05", "DEL-02"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_no_rename"})
      .run(capsule_renamed);
}

}  // namespace
}  // namespace dlpv::python
