// cases/python/support/py_producer.hpp: what the python.* producer-side cases share: the
// arrays they export, the newest keywords the package takes, and heap measurements of a
// library's 4 MiB buffer.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "py_helpers.hpp"
#include "support/input_space.hpp"

namespace dlpv::python {

inline const std::vector<int64_t> kShape{3, 4};
inline const std::vector<int64_t> kBig{1024, 1024};  // 4 MiB of float32: big enough to see freed
inline constexpr size_t kBigBytes = 1024 * 1024 * 4;

/// The capsule the producer gives for the newest protocol it speaks.
py::dict newest_kwargs(PythonSubject& ps);

/// Exports `x` with the newest keywords the package takes and takes the tensor out of the
/// capsule as a consumer would (the capsule, renamed, is dropped).
Taken export_taken(CaseContext& ctx, PythonSubject& ps, const py::object& x);

/// Run `f` on the loading thread or on a thread of its own (which takes the GIL, as any Python
/// thread does), and wait for it.
template <class F>
void on_thread(bool other, F&& f) {
  if (!other) {
    f();
    return;
  }
  py::gil_scoped_release nogil;
  input_space::run_elsewhere([&] {
    py::gil_scoped_acquire gil;
    f();
  });
}

/// DEL-01 on one kind of export: fresh arrays from `make`, each exported with `kw` as the case
/// exported its own, taken as a consumer takes it and released by its deleter, must not grow the
/// heap with the cycles (cases::judge_growth_by, the plugin route's judgement), beyond what making
/// them grows it by (and, for copy=True, copying them as often by the package's own asarray(x,
/// copy=True)). `elements` and `element_size` size the loop (cases::leak_cycles_for);
/// `what` names the arrays in the verdict. A deleter that leaves a Python exception set is DEL-09's.
/// `held` (1 or 2): exports of each array alive at once, as an input exported again holds them.
void leak_loop(CaseContext& ctx, PythonSubject& ps, const std::function<py::object()>& make, const py::dict& kw,
               bool other_thread, long long elements, size_t element_size, const std::string& what, int held = 1);

/// One full round of what a heap measurement is about to do (make, export, consume, release);
/// returns whether the deleter's release of the 4 MiB buffer shows in the C heap at all.
bool warm_up(CaseContext& ctx, PythonSubject& ps);

// Heap measurements see a library's buffer only if it comes from malloc: TensorFlow and MLX
// allocate their buffers elsewhere, where freeing one changes nothing the validator can see.
// `visible` (from warm_up): a deleter's release showed in the heap; when it did not, a release
// cannot be observed here and the verdict says so instead of guessing.
struct HeapWatch {
  size_t base = 0;
  bool visible = false;
  long long kib_above_base() const { return (static_cast<long long>(heap_in_use()) - static_cast<long long>(base)) / 1024; }
  bool released() const { return heap_in_use() < base + kBigBytes / 4; }
};
/// What a check says when a release cannot be seen in the C heap.
extern const char* const kInvisible;

/// The DLTensor inside an unconsumed DLPack capsule (by its name; `flags` gets a versioned
/// tensor's flags), or nullptr for anything else. Valid while the capsule lives.
const DLTensor* capsule_tensor(py::handle cap, uint64_t* flags = nullptr);

/// Data pointer (element 0) of a capsule's tensor; the capsule is dropped unconsumed after.
std::optional<uintptr_t> capsule_address(py::handle cap, uint64_t* flags = nullptr);

}  // namespace dlpv::python
