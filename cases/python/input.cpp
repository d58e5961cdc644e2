// cases/python/input.cpp: python.input.*: the inputs libraries really meet, not float32 3x4 on
// the loading thread. One declared input space per side, covered pairwise (every pair of values
// of two axes meets in at least one case; the ids name the values):
//   dtype   float32, int16, uint8, float64, bool, complex64, bfloat16
//   layout  contiguous, fortran, strided, offset (byte_offset), reversed (a negative stride),
//           broadcast (a zero stride)
//   size    scalar (0-d), small (2x3x4), k (32x64: 2,048 elements), m (16x16x64x64: 1 Mi, rank 4);
//           (producer, added by Declare::widen after the ids were published) row (24: rank 1)
//   align   (consumer) the data 256, 64 or 16 bytes past a 256-byte boundary, or 1 (odd)
//   thread  the loading thread, or another thread (holding the GIL as any Python thread does)
//   repeat  once, or again (consumer: a second import of the same spec while the first lives,
//           released in the order made; producer: two exports of one array alive at once)
//   values  (an extension, Declare::extend: ids without it are the reference pattern's small
//           numbers) edge: each dtype's extremes and special values (plugin.h's edge pattern);
//           a producer's adapter makes them when its make() takes values= (else a skip that
//           names the adapter)
//   request (producer, an extension: ids without it ask as the package's newest protocol asks)
//           read_only: a read-only array, exported without a copy with READ_ONLY set (FLAG-02,
//           should) or as a copy (IS_COPIED), a legacy-only package's refusal (no flag can carry
//           it) a skip that quotes it; legacy: __dlpack__() with no keywords, a versioned
//           producer's legacy path (a refusal, which VER-06 tolerates, a skip)
// Consumer side: from_dlpack of a validator-made tensor reads its values (LAYOUT-01: "the data
// ... must be interpreted" through shape, strides and byte_offset) and deletes it once after the
// result dies (DEL-02). A refusal is the consumer's right for an optional element type or
// layout (consumer.layout.* and consumer.refuse.* judge refusals): it is a skip that quotes it.
// Producer side: __dlpack__ of the package's own array describes its values (LAYOUT-07),
// every capsule is its own (CAP-10), and export/delete cycles of fresh arrays of the same input do
// not grow the heap (DEL-01: the deleter frees what the export holds).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <dlpack_validate/sycl.hpp>

#include <algorithm>
#include <exception>
#include <optional>
#include <thread>

#include "python/support/py_consumer.hpp"
#include "python/support/py_producer.hpp"
#include "support/helpers.hpp"
#include "support/input_space.hpp"

namespace dlpv::python {
namespace {


uint32_t layout_of(const std::string& layout) {
  const std::optional<uint32_t> l = layout_from_name(layout);
  return l ? *l : static_cast<uint32_t>(DLPV_LAYOUT_CONTIGUOUS);
}

using input_space::Input;

MadeSpec spec_of(PythonSubject& ps, const Input& in) { return in.spec(home_spec(ps)); }


// The values one import of `in` shows: "" when right; nullopt when the consumer refused it.
std::optional<std::string> values_of(CaseContext& ctx, PythonSubject& ps, const Input& in) {
  Feed f;
  on_thread(in.other_thread, [&] { f = feed(ctx, ps, spec_of(ps, in), speaks_versioned(ps), {}, {}, in.rule()); });
  std::optional<std::string> diff;
  if (!f.result.raised) {
    Readback r;
    on_thread(in.other_thread, [&] { r = read_back(ps, f.result.value, *f.made); });
    if (!r.unreadable.empty()) {
      f.settle(ctx);
      ctx.skip(unreadable_reason(r.unreadable));
    }
    diff = r.diff;
  }
  f.settle(ctx);
  return diff;
}

void judge_misread(CaseContext& ctx, PythonSubject& ps, const Input& in, const std::string& diff) {
  input_space::judge_misread(ctx, in, diff, [&](const Input& x) {
    const auto d = values_of(ctx, ps, x);
    return d && !d->empty();
  });
}

// Imports of `in`, `count` of them alive at once (repeat "again": two), then released in the
// order made: each shows the tensor's values and is deleted once.
void import_alive(CaseContext& ctx, PythonSubject& ps, const Input& in, int count) {
  const bool versioned = speaks_versioned(ps);
  const std::string what = in.text();
  std::vector<Feed> feeds(static_cast<size_t>(count));
  for (Feed& f : feeds) {
    on_thread(in.other_thread, [&] { f = feed(ctx, ps, spec_of(ps, in), versioned, {}, {}, in.rule()); });
    if (f.result.raised) {
      for (Feed& g : feeds)
        if (g.producer) g.settle(ctx);
      check_deleted_once(ctx, f, "DEL-08", "a refused tensor (" + what + ") is deleted exactly once");
      // Refused as the rule names it (BufferError): the consumer's right, a skip; of another
      // kind (ERR-07; LAYOUT-11 for negative and zero strides): a warning.
      if (!f.result.is("BufferError")) {
        ctx.check_as(Severity::should, false, in.rule() == "LAYOUT-11" ? "LAYOUT-11" : "ERR-07",
                     "a consumer turning down " + what + " refuses with BufferError", "BufferError", f.result.text);
        return;
      }
      ctx.skip("the consumer refused " + what + ": " + f.result.text);
    }
  }
  ctx.phase("read", in.rule());
  std::vector<std::string> diffs(feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    Readback r;
    on_thread(in.other_thread, [&] { r = read_back(ps, feeds[i].result.value, *feeds[i].made); });
    // The adapter's reader, not the import, cannot go on (NumPy has no bfloat16 to read
    // tvm_ffi's tensors with): our limit, said as such.
    if (!r.unreadable.empty()) {
      for (Feed& f : feeds) f.settle(ctx);
      ctx.skip(unreadable_reason(r.unreadable));
    }
    diffs[i] = r.diff;
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    feeds[i].settle(ctx);
    check_deleted_once(ctx, feeds[i], "DEL-02", fmt::format("the tensor ({}{}) is deleted exactly once after its array "
                                                            "dies", what, i ? ", the second import" : ""));
  }
  for (size_t i = 0; i < diffs.size(); ++i)
    if (!diffs[i].empty()) return judge_misread(ctx, ps, in, diffs[i]);
  ctx.check(true, "LAYOUT-01", "the imported array" + std::string(count > 1 ? "s hold" : " holds") +
                                   " the tensor's elements: " + what);
}

void consumer_input(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const auto& p = ctx.info().params;
    // Host memory is what these inputs are. A package whose own device's memory the validator
    // makes (CUDA) is fed there by device.consumer.*; one whose device memory it cannot make (a
    // SYCL device's USM) is fed host memory everywhere (home_spec), and so here too.
    if (home_spec(ps).device.device_type != kDLCPU)
      ctx.skip("the package's home device is " + device_name(ps.home_device()) +
               ": these inputs are host memory (the device.consumer.* cases feed its own device)");
    const Input in{p.at("dtype"), p.at("layout"), input_space::dims_of(p.at("size")), misalign_named(p.at("align")),
                   p.at("thread") == "other", input_space::edge_values(p)};
    import_alive(ctx, ps, in, p.at("repeat") == "again" ? 2 : 1);
  });
}

DLPV_CASES {
  Declare("python.input.consumer", "from_dlpack reads a {dtype} {layout} {size} tensor ({align} data, {thread} "
          "thread, {repeat}) right and deletes it once")
      .must({"LAYOUT-01", "LAYOUT-08", "LAYOUT-09", "LAYOUT-11", "DEL-02", "DEL-08"}).python()
      .combine("dtype", input_space::kDtypes).combine("layout", input_space::kLayouts)
      .combine("size", input_space::kSizes).combine("align", input_space::kAligns)
      .combine("thread", input_space::kThreads).combine("repeat", input_space::kRepeats)
      .pairwise()
      .extend("values", input_space::kValues)
      .needs({need::import_legacy})
      .proven_by({"consumer_large_strides_ignored", "consumer_thread_affine", "consumer_shared_release",
                  "consumer_deleter_early", "import_narrow_values"})
      .run(consumer_input);
}

// "(16, 16, 64, 64)", "()" for 0-d.
std::string dims_text(const std::vector<int64_t>& d) {
  std::string out = "(";
  for (size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + std::to_string(d[i]);
  return out + (d.size() == 1 ? ",)" : ")");
}

// An array asked to hold the edge pattern may not hold it: a package whose constructor flushes
// subnormals or converts through another type makes other values, and an export that describes
// them is right (LAYOUT-07 asks that it describe the array's values). Where the adapter reads
// arrays back by a way of its own (to_bytes: NumPy's conversion, the package's own copy), the
// array is read before it is exported; one that does not hold the edge values is a skip that
// says what it holds. A NaN read as another NaN holds its value (same_element). With no such
// reading (generic mode reads through the export itself, and checks what it made before a case
// gets it) the export is judged as it is.
void require_edge_values(CaseContext& ctx, PythonSubject& ps, const py::object& x, DLDataType dtype,
                         const std::vector<int64_t>& dims, uint32_t layout, const std::string& what) {
  if (!py::hasattr(ps.adapter(), "to_bytes") || py::hasattr(ps.adapter(), "reads_through_export")) return;
  std::string held;
  try {
    held = py::bytes(ps.adapter().attr("to_bytes")(x)).cast<std::string>();
  } catch (py::error_already_set&) {
    return;  // no reading of its own here: the export is judged
  }
  const std::string diff = describe_mismatch(dtype, expected_bytes(dtype, dims, layout, DLPV_VALUES_EDGE),
                                             std::vector<uint8_t>(held.begin(), held.end()));
  if (!diff.empty())
    ctx.skip("the array as made does not hold the edge values (the adapter's own reading of it, before any "
             "export: " + diff + "): " + what);
}

// The copy and no_copy twins: whether the export aliases the array (`source`: its element 0)
// as copy= asked, and says so. The array API (__dlpack__, copy): "If True, the function must
// always copy ... If False, the function must never copy" (KW-03, KW-04); a copy carries
// IS_COPIED (FLAG-05), a view leaves it clear (FLAG-06, should). A tensor without elements has no
// memory to alias: not judged.
void judge_copy(CaseContext& ctx, const Call& a, const DLTensor* t, const std::optional<uintptr_t>& source,
                bool copy_req, const std::string& what) {
  const bool versioned = capsule_name(a.value) == "dltensor_versioned";
  const uint64_t flags = versioned ? static_cast<const DLManagedTensorVersioned*>(capsule_pointer(a.value))->flags : 0;
  const bool copied_flag = (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (!t->data) return;  // (a tensor without elements: LAYOUT-10 lets it carry no data)
  const uintptr_t got = reinterpret_cast<uintptr_t>(element0(*t));
  if (!source)
    ctx.note("the array's own data address is unknown (no __array_interface__, __cuda_array_interface__, "
             "__sycl_usm_array_interface__ or data_ptr(), and the package copies on every export), so whether this "
             "export aliases it is not checked: " + what);
  const bool aliases = source && got == *source;
  if (source && copy_req)
    ctx.check(!aliases, "KW-03", "copy=True always copies: the tensor does not alias the array: " + what,
              "a different data address", fmt::format("the array's own address {:#x}", got));
  if (source && !copy_req)
    ctx.check(aliases, "KW-04", "copy=False never copies: the tensor aliases the array: " + what,
              fmt::format("{:#x}", *source), fmt::format("{:#x}", got));
  if (versioned && copy_req)
    ctx.check(copied_flag, "FLAG-05", "copy=True: the copy is flagged IS_COPIED: " + what, "bit 1 set",
              fmt::format("flags = {:#x}", flags));
  if (versioned && !copy_req && aliases)
    ctx.check_as(Severity::should, !copied_flag, "FLAG-06", "IS_COPIED is clear for a zero-copy export: " + what,
                 "bit 1 clear", fmt::format("flags = {:#x}", flags));
}

// One export of `x` asked as the package's newest protocol asks: the capsule's tensor must read
// the array's values.
void producer_input(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const auto& p = ctx.info().params;
    const DLDataType dtype = *dtype_from_name(p.at("dtype"));
    const std::vector<int64_t> dims = input_space::dims_of(p.at("size"));
    const std::string layout = p.at("layout");
    const bool other_thread = p.at("thread") == "other", again = p.at("repeat") == "again";
    const int values = input_space::edge_values(p) ? DLPV_VALUES_EDGE : DLPV_VALUES_PLAIN;
    const std::string request = p.count("request") ? p.at("request") : "";
    const bool read_only = request == "read_only", legacy = request == "legacy";
    const bool copy_req = request == "copy", no_copy_req = request == "no_copy";
    // The values are read where they are: host memory, or a device's through its runtime (CUDA's
    // driver, a SYCL runtime's USM copies) when the validator can reach it.
    const int home = static_cast<int>(ps.home_device().device_type);
    std::string unreachable;
    const bool readable = home == kDLCPU || home == kDLCUDAHost ||
                          ((home == kDLCUDA || home == kDLCUDAManaged) && cuda::available(&unreachable)) ||
                          (home == DLPV_DEV_ONEAPI && sycl::available(&unreachable));
    if (!readable)
      ctx.skip("the package's home device is " + device_name(ps.home_device()) +
               ": the values of its exports cannot be read here" + (unreachable.empty() ? "" : " (" + unreachable + ")"));
    py::object x;
    try {
      x = ps.make(dims, dtype, layout, read_only, std::nullopt, values);
    } catch (const PythonSubject::NotImplemented& n) {
      ctx.skip("the package cannot make " + with_article((read_only ? "read-only " : "") + p.at("dtype")) + " " +
               layout + " array here: " + n.reason);
    }
    const std::string what = with_article(fmt::format("{}{} {} array of {} element{}{}{}{}", read_only ? "read-only " : "",
                                                      p.at("dtype"), layout, element_count(dims),
                                                      element_count(dims) == 1 ? "" : "s",
                                                      values ? " holding edge values" : "",
                                                      other_thread ? ", exported on another thread" : "",
                                                      legacy ? ", asked with no keywords (legacy)"
                                                      : copy_req ? ", asked with copy=True"
                                                      : no_copy_req ? ", asked with copy=False" : ""));
    if (values == DLPV_VALUES_EDGE) require_edge_values(ctx, ps, x, dtype, dims, layout_of(layout), what);
    py::dict kw = legacy ? py::dict() : newest_kwargs(ps);
    if (copy_req || no_copy_req) kw["copy"] = py::bool_(copy_req);
    // Where the array's own memory is: its address as the package states it (NumPy's and
    // CUDA's array interfaces, data_ptr()), else, for a package that lends its storage, that of
    // an export asked without copy= (a view of the array).
    std::optional<uintptr_t> source;
    if ((copy_req || no_copy_req) && element_count(dims) > 0) {
      source = library_address(x);
      if (!source && ps.never_lends().empty()) source = capsule_address(call_dlpack(x, newest_kwargs(ps)).value);
    }
    ctx.phase("export");
    Call a, b;
    on_thread(other_thread, [&] {
      a = call_dlpack(x, kw);
      if (again) b = call_dlpack(x, kw);
    });
    // The array API (__dlpack__, Raises): "BufferError: when the data cannot be exported as
    // DLPack (e.g., incompatible dtype, strides, or device)". A refusal is the package's to make
    // (a skip here); another exception type is ERR-01's warning (failures that are no refusal,
    // running out of memory among them, end the case before this: is_no_refusal). A refusal of
    // copy= is python.kw.copy_true's and python.kw.copy_false's to judge (KW-03, KW-04): a skip.
    if (a.raised && !a.buffer_error && !copy_req && !no_copy_req) {
      ctx.check_as(Severity::should, false, "ERR-01",
                   "__dlpack__ refuses with BufferError what it does not export (the array API, __dlpack__ Raises): " +
                       what, "a capsule, or BufferError", a.text);
      return;
    }
    if (a.raised) ctx.skip("__dlpack__ refused " + what + ": " + a.text + " (python.request.* and "
                           "producer.tensor.* judge refusals)");
    ctx.phase("inspect");
    const DLTensor* t = capsule_tensor(a.value);
    if (!ctx.check(t != nullptr, "CAP-01", "__dlpack__ returns a DLPack capsule", "a DLPack capsule", a.what())) return;
    // The shape as the tensor states it, read with care: a capsule whose struct is not what its
    // name says (a legacy struct named versioned) holds garbage here, which must end as a finding,
    // not as the validator's own fault.
    std::vector<int64_t> got_dims(static_cast<size_t>(std::clamp(t->ndim, 0, 64)), -1);
    if (t->ndim < 0 || t->ndim > 64 || (t->shape && !safe_read(t->shape, got_dims.data(), got_dims.size() * sizeof(int64_t))))
      got_dims.assign(1, -1);
    if (!ctx.check(got_dims == dims, "LAYOUT-05", "ndim and shape are the array's: " + what, dims_text(dims),
                   dims_text(got_dims)))
      return;
    const char* dtype_req = dtype.code == DLPV_CODE_BOOL      ? "DTYPE-11"
                            : dtype.code == DLPV_CODE_COMPLEX ? "DTYPE-10"
                                                              : "DTYPE-02";
    if (!ctx.check(t->dtype.code == dtype.code && t->dtype.bits == dtype.bits && t->dtype.lanes == dtype.lanes, dtype_req,
                   "dtype is the DLPack encoding of the array's element type: " + what, dtype_name(dtype),
                   fmt::format("({}, {}, {})", t->dtype.code, t->dtype.bits, t->dtype.lanes)))
      return;
    // A versioned export's flags: only the bits its version defines (FLAG-01, as
    // producer.flags.defined_bits judges float32 3x4), on every input.
    if (capsule_name(a.value) == "dltensor_versioned") {
      const auto* m = static_cast<const DLManagedTensorVersioned*>(capsule_pointer(a.value));
      cases::check_defined_flags(ctx, m->version, m->flags, what);
      // A read-only array lent without a copy: READ_ONLY (a copy is the consumer's to write, FLAG-09).
      if (read_only && !(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED))
        ctx.check_as(Severity::should, (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
                     "an export of a read-only array without a copy carries READ_ONLY: " + what, "bit 0 set",
                     fmt::format("flags = {:#x}", m->flags));
    }
    const std::string diff = data_mismatch(*t, dims, dtype, layout_of(layout), values);
    ctx.check_as(Severity::must, diff.empty(), "LAYOUT-07",
              "the tensor's data, byte_offset, shape and strides read the array's values: " + what, "the pattern", diff);
    if (copy_req || no_copy_req) judge_copy(ctx, a, t, source, copy_req, what);
    if (!again) {
      a = Call();
      x = py::none();
      gc_collect(ctx);
      leak_loop(ctx, ps, [&] { return ps.make(dims, dtype, layout, read_only, std::nullopt, values); }, kw, other_thread,
              element_count(dims), element_bytes(dtype), what);
      return;
    }
    if (b.raised) {
      ctx.check(false, "CAP-10", "a second export of the same array succeeds as the first did", "a capsule", b.text);
      return;
    }
    const DLTensor* u = capsule_tensor(b.value);
    ctx.check(u != nullptr && u != t && capsule_pointer(b.value) != capsule_pointer(a.value), "CAP-10",
              "two exports of one array alive at once are distinct capsules with distinct managed tensors",
              "distinct", "the same managed tensor");
    if (u) {
      // The second export is judged as the first: its dtype, its flags, then its values.
      if (!ctx.check(u->dtype.code == dtype.code && u->dtype.bits == dtype.bits && u->dtype.lanes == dtype.lanes,
                     dtype_req, "the second export's dtype is the DLPack encoding of the array's element type: " + what,
                     dtype_name(dtype), fmt::format("({}, {}, {})", u->dtype.code, u->dtype.bits, u->dtype.lanes)))
        return;
      if (capsule_name(b.value) == "dltensor_versioned") {
        const auto* m = static_cast<const DLManagedTensorVersioned*>(capsule_pointer(b.value));
        cases::check_defined_flags(ctx, m->version, m->flags, "the second export of " + what);
        if (read_only && !(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED))
          ctx.check_as(Severity::should, (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
                       "the second export of a read-only array without a copy carries READ_ONLY: " + what,
                       "bit 0 set", fmt::format("flags = {:#x}", m->flags));
      }
      const std::string diff2 = data_mismatch(*u, dims, dtype, layout_of(layout), values);
      ctx.check(diff2.empty(), "LAYOUT-07", "the second export reads the same values: " + what, "the pattern", diff2);
    }
    // The two die in the order they were made in reverse (the first last).
    b = Call();
    a = Call();
    x = py::none();
    gc_collect(ctx);
    leak_loop(ctx, ps, [&] { return ps.make(dims, dtype, layout, read_only, std::nullopt, values); }, kw, other_thread,
              element_count(dims), element_bytes(dtype), what, 2);
  });
}

DLPV_CASES {
  Declare("python.input.producer", "__dlpack__ of a {dtype} {layout} {size} array ({thread} thread, {repeat}) "
          "describes its values")
      .must({"LAYOUT-07", "LAYOUT-05", "DTYPE-02", "DTYPE-10", "DTYPE-11", "CAP-10", "CAP-01", "DEL-01", "FLAG-01",
             "FLAG-02", "KW-03", "KW-04", "FLAG-05", "FLAG-06", "ERR-01"}).python()
      .also_needs(need::producer_protocol)
      .combine("dtype", input_space::kDtypes).combine("layout", input_space::kLayouts)
      .combine("size", input_space::kSizes).combine("thread", input_space::kThreads)
      .combine("repeat", input_space::kRepeats)
      .pairwise()
      .widen("size", {"row"})
      .extend("values", input_space::kValues)
      .extend("request", {"read_only", "legacy", "copy", "no_copy"},
              [](Declare& d, const std::string& q) {
                if (q == "copy" || q == "no_copy") d.also_needs(need::copy_keyword);
              })
      .proven_by({"export_rank4_strides_swapped", "export_thread_affine", "same_capsule", "export_strides_in_bytes",
                  "export_scalar_as_1d", "export_narrow_int_signed", "export_leaks", "export_narrow_values",
                  "export_undefined_flag", "lent_export_leaks", "no_read_only_flag", "legacy_struct_named_versioned",
                  "copy_true_aliases", "copy_false_copies", "refusal_type_error", "copy_export_leaks"})
      .run(producer_input);
}

}  // namespace
}  // namespace dlpv::python
