// cases/python/support/py_producer.cpp: what the python.* producer-side cases share.
// SPDX-License-Identifier: Apache-2.0
#include "py_producer.hpp"

#include <optional>
#include <utility>

#include <algorithm>

#include "support/helpers.hpp"

namespace dlpv::python {

// The capsule the producer gives for the newest protocol it speaks.
py::dict newest_kwargs(PythonSubject& ps) {
  return ps.facts().producer_versioned ? kw_max(1, 3) : py::dict();
}

// Exports `x` with the newest keywords the package takes and takes the tensor out of the
// capsule as a consumer would (the capsule, renamed, is dropped).
Taken export_taken(CaseContext& ctx, PythonSubject& ps, const py::object& x) {
  Call c = call_dlpack(x, newest_kwargs(ps));
  if (c.raised) refused_export(ctx, "__dlpack__", c.what());
  return take(ctx, c.value, "CAP-01");
}

// The package's own copy of `y` as the array API makes one: asarray(y, copy=True) of the
// namespace y.__array_namespace__() gives. None when the package has no namespace or its asarray
// refuses; the loop then takes off what making the arrays alone grows the heap by.
py::object own_copy(const py::object& y) {
  try {
    if (!py::hasattr(y, "__array_namespace__")) return py::none();
    return y.attr("__array_namespace__")().attr("asarray")(y, py::arg("copy") = true);
  } catch (py::error_already_set&) {
    return py::none();
  }
}

// DEL-01 on every export a case cycles: a fresh array each cycle, so that a deleter that frees
// nothing keeps a large array's whole buffer (seen within a few cycles) and its own bookkeeping of
// a small one (seen over 2,000). What the cycles do besides the export is measured over as many
// cycles and taken off: making the arrays (a library whose array making keeps memory, dpnp's SYCL
// runtime at about 50 bytes a bool offset array, is not charged with a leak of its deleter), and,
// where the export is a copy asked for (copy=True), copying them as many times the
// package's own way (own_copy): a runtime that keeps memory for every command it runs keeps it
// for a copy made without DLPack too. dpnp 0.20.0's SYCL runtime grows the heap by 30 to 90
// bytes a copy, whoever asks for it (peers/confirm/dpnp_copy_keeps_memory.py); measured against
// making alone, that growth was charged to its deleter in about half of quiet runs. The cycles run
// on the thread the case exported on; each reading is settled first (Subject::settle, the
// adapter's synchronize()). Memory a library allocates outside malloc (TensorFlow's and MLX's
// buffers) does not show in the heap, so there a leak cannot be seen.
void leak_loop(CaseContext& ctx, PythonSubject& ps, const std::function<py::object()>& make, const py::dict& kw,
               bool other_thread, long long elements, size_t element_size, const std::string& what, int held) {
  ctx.phase("deleter", "DEL-01");
  const int cycles = cases::leak_cycles_for(elements, element_size);
  const int warmup = std::clamp(cycles / 4, 1, 100);
  const int n_held = std::clamp(held, 1, 2);
  std::string left;  // the type of an exception a deleter left set (DEL-09), once
  // A copy asked for: whether the package copies on its own (one probe).
  const bool copies = kw.contains("copy") && py::bool_(kw["copy"]);
  bool copy_baseline = false;
  if (copies) on_thread(other_thread, [&] { copy_baseline = !own_copy(make()).is_none(); });
  auto growth = [&](int n, bool exported) {
    size_t before = 0;
    on_thread(other_thread, [&] {
      for (int i = 0; i < warmup + n; ++i) {
        if (i == warmup) {
          gc_collect(ctx);
          ps.settle();
          before = heap_in_use();
        }
        py::object y = make();
        if (!exported) {
          py::object kept[2];
          for (int k = 0; copy_baseline && k < n_held; ++k) kept[k] = own_copy(y);
          continue;
        }
        // `held` exports of the array alive at once (an input exported again), released in the
        // reverse order.
        Taken t[2];
        for (int k = 0; k < n_held; ++k) {
          Call c = call_dlpack(y, kw);
          if (c.raised) refused_export(ctx, "__dlpack__", c.what());
          t[k] = take(ctx, c.value, "CAP-01");
        }
        for (int k = n_held; k-- > 0;) {
          t[k].release();
          // The deleter runs here as a consumer runs it, with the GIL held: an exception it leaves
          // set is DEL-09's finding, taken off before the next call into Python (and before the
          // next case: no verdict may depend on the case before it).
          if (PyObject* pending = PyErr_Occurred()) {
            if (left.empty()) left = reinterpret_cast<PyTypeObject*>(pending)->tp_name;
            PyErr_Clear();
          }
        }
      }
    });
    gc_collect(ctx);
    ps.settle();
    return static_cast<long long>(heap_in_use()) - static_cast<long long>(before);
  };
  const std::string beyond = copy_baseline ? ", beyond what making them and copying them as often without DLPack "
                                             "(asarray(x, copy=True)) grows it by"
                                           : ", beyond what making them grows it by";
  // The first look reads the export loop alone, making included: under 4 KiB there, the loop of
  // making alone is not run. A leak the full count would see (64 KiB over all the cycles, so
  // 16 KiB over the quarter the look runs) keeps the export loop past 4 KiB unless making alone
  // shrank the heap by 12 KiB, which a loop that starts after a full collection does not do. The
  // export loop read for the bound is not run again for the judgement of the same count.
  std::optional<std::pair<int, long long>> exported;
  auto export_growth = [&](int n) {
    if (exported && exported->first == n) return std::exchange(exported, std::nullopt)->second;
    return growth(n, true);
  };
  cases::judge_growth_by(
      ctx, cycles, "DEL-01", "export/delete cycles of fresh arrays like " + what + beyond,
      [&](int n) {
        const long long e = export_growth(n);
        return e - growth(n, false);
      },
      [&](int n) {
        exported = std::make_pair(n, growth(n, true));
        return exported->second;
      });
  if (!left.empty())
    ctx.check_as(Severity::should, false, "DEL-09", "a deleter run by the validator in the leak loop left a Python "
                 "exception set", "none", left);
}

// One full round of what a heap measurement is about to do (make, export, consume, release),
// so that what a library keeps for good the first time (JIT caches, pools, interned dtypes:
// JAX keeps about 1.5 MB) is already in the baseline and not taken for a leak. Returns whether
// the deleter's release of the 4 MiB buffer shows in the C heap at all: TensorFlow and MLX keep
// their buffers in allocators of their own, where a release cannot be observed from here.
namespace {
// One round of warm_up: whether the deleter's release of the 4 MiB buffer showed in the heap.
bool release_shows(CaseContext& ctx, PythonSubject& ps) {
  size_t before = 0;
  {
    py::object x = ps.make(kBig, kF32);
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    gc_collect(ctx);
    before = heap_in_use();
    t.release();
  }
  gc_collect(ctx);
  // Some libraries free on a thread of their own (JAX): the drop is awaited, at most 100 ms.
  // The wait ends when the drop shows; only a library whose buffers never show in the C heap
  // (not malloc'd) waits it out, once per case, and its release checks then rest on the
  // counted deleter calls alone (docs/design.md §7: heap polling adds evidence, never sets the pace).
  return await_calls([&] { return heap_in_use() + kBigBytes / 2 <= before ? 1 : 0; }, 1, 100) == 1;
}
}  // namespace

bool warm_up(CaseContext& ctx, PythonSubject& ps) {
  // The heap is the process's: a library's own threads (TensorFlow's) allocate and free while
  // the case runs, and one drop of 2 MiB can coincide with the round. A release counts as
  // visible only when two rounds in a row show it.
  return release_shows(ctx, ps) && release_shows(ctx, ps);
}

const char* const kInvisible =
    "releasing the library's 4 MiB buffer does not show in the C heap (its allocator is not malloc), so whether "
    "the deleter released it cannot be observed here";

// Data pointer (element 0) of a capsule's tensor; the capsule is dropped unconsumed after.
const DLTensor* capsule_tensor(py::handle cap, uint64_t* flags) {
  const std::string name = capsule_name(cap);
  void* p = capsule_pointer(cap);
  if (!p) return nullptr;
  if (name == kVersionedName) {
    auto* v = static_cast<DLManagedTensorVersioned*>(p);
    if (flags) *flags = v->flags;
    return &v->dl_tensor;
  }
  if (name == kLegacyName) return &static_cast<DLManagedTensor*>(p)->dl_tensor;
  return nullptr;
}

std::optional<uintptr_t> capsule_address(py::handle cap, uint64_t* flags) {
  const DLTensor* t = capsule_tensor(cap, flags);
  if (!t) return std::nullopt;
  return reinterpret_cast<uintptr_t>(element0(*t));
}

}  // namespace dlpv::python
