// tests/python/fakearray/_fakearray.cpp: a tiny array library that speaks the DLPack Python
// protocol (DLPack 1.3 producer), written to prove the Python-protocol cases. By default it
// is correct; set_bugs([...]) plants one named bug (a "variant"), each breaking one
// requirement family. Process-global on purpose: every variant runs in its own worker.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <dlpack_validate/plugin.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <csignal>
#include <cstring>
#include <functional>
#include <memory>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace py = pybind11;

// The bug zoo (tests/zoo): the same run-time bug as the reference plugin's zoo build, by
// predicate, read from DLPV_ZOO_BUG="ROLE AXIS VALUE KIND" when the module loads (no variable,
// no bug: every other run of fakearray is unchanged). tests/zoo/zoo_bug.h needs an export's
// bookkeeping (the deleter_noop mark) and the loading thread.
typedef struct Export {
  int zoo_noop;
  int zoo_live;  // the repeat axis: counted alive until the deleter runs
} Export;
#define ZOO_LENDS_MEMORY 1  // the zoo's alias and copy kinds change what fakearray lends
static const std::thread::id g_zoo_loading_thread = std::this_thread::get_id();
static int on_loading_thread(void) { return std::this_thread::get_id() == g_zoo_loading_thread; }
#include "../../zoo/zoo_bug.h"
#include "../../fixtures/narrow_values.h"  // export_narrow_values, import_narrow_values

namespace {

// The "handle" of the CUDA stream fakearray computes on (fakearray never touches a GPU; the
// number only has to be a plausible stream handle > 2).
// Set for one from_dlpack call by the consumer_device_cpu_wraps bug.
bool g_device_kw_wraps = false;

constexpr long long kCudaStream = 0x5a000;


// Bookkeeping lives until the process ends (never destroyed): a deleter may run after
// interpreter finalisation, from another module's static destructor (DEL-07), and must still
// find it, whatever the order in which the modules' statics are torn down.
std::set<std::string>& g_bugs = *new std::set<std::string>;
bool bug(const char* name) { return g_bugs.count(name) != 0; }

/// Data buffer; poisoned when freed so a use after free reads 0xDD, never the pattern. An
/// imported buffer (from_dlpack) is foreign memory: dying runs the producer's release.
struct Buffer {
  explicit Buffer(size_t n) : size(n), data(static_cast<unsigned char*>(std::calloc(n ? n : 1, 1))) {}
  Buffer(unsigned char* foreign, std::function<void()> release)
      : size(0), data(foreign), external(true), release_(std::move(release)) {}
  ~Buffer() {
    if (external) {
      if (release_) release_();
      return;
    }
    std::memset(data, 0xDD, size);
    std::free(data);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  size_t size;
  unsigned char* data;
  bool external = false;
  std::function<void()> release_;
};

struct Array {
  std::shared_ptr<Buffer> buf;
  int64_t offset = 0;  // bytes from buf->data to element 0
  std::vector<int64_t> shape, strides;  // strides in elements
  DLDataType dtype{kDLFloat, 32, 1};
  bool read_only = false;
  bool big_endian = false;
  int32_t device_type = kDLCPU;          // kDLCPU, or kDLExtDev for the "ext_dev" heap
  int32_t device_id = 0;                 // consumer_result_device_wrong plants 1 on imports
  py::object last_capsule = py::none();  // for the same_capsule bug
  // An ext_dev array's writes still queued (make_pending): its final bytes, written when the
  // array's work is waited for (settle: a copy, to_bytes, an export asked with an ext_dev queue).
  std::vector<unsigned char> pending;
  int layout = -1;  // the DLPV_LAYOUT_* it was made in (the zoo's layout axis); -1: an import
  bool zoo_flip = false;  // the zoo's consumer elements bug: element 0's first byte reads flipped
  mutable bool copied_from = false;  // lawful_copies_keep_memory: its record is kept
};

/// DLPV_LAYOUT_* of a layout's name (docs/design.md §3; the zoo's names for what strides show).
int layout_code(const std::string& name) {
  return name == "fortran" ? DLPV_LAYOUT_FORTRAN : name == "strided" ? DLPV_LAYOUT_STRIDED
         : name == "offset" ? DLPV_LAYOUT_OFFSET : name == "reversed" ? DLPV_LAYOUT_REVERSED
         : name == "broadcast" ? DLPV_LAYOUT_BROADCAST : DLPV_LAYOUT_CONTIGUOUS;
}

void settle(Array& a) {
  if (a.pending.empty()) return;
  std::memcpy(a.buf->data + a.offset, a.pending.data(), a.pending.size());
  a.pending.clear();
}

size_t itemsize(const Array& a) { return a.dtype.bits / 8; }
unsigned char* element0(const Array& a) { return a.buf->data + a.offset; }

// lawful_copies_keep_memory (and copy_export_leaks): the first copy taken of an array, by an
// export with copy=True or by the namespace's asarray(x, copy=True), keeps a 96-byte record for
// good, as a runtime keeps memory for the arrays it has copied from (dpnp 0.20.0's SYCL runtime
// grows the heap by tens of bytes a copy of a fresh array, whoever asks for it:
// peers/confirm/dpnp_copy_keeps_memory.py). Copying one array again keeps nothing more.
bool copies_keep_memory() { return bug("lawful_copies_keep_memory") || bug("copy_export_leaks"); }
void keep_copy_record(const Array& a) {
  if (!copies_keep_memory() || a.copied_from) return;
  a.copied_from = true;
  // A list threaded through the records themselves: 96 bytes a record and nothing else (a
  // vector's doubling would add its whole capacity at once, in whichever loop it fell).
  static std::mutex& records_mutex = *new std::mutex;
  static void* head = nullptr;
  std::lock_guard<std::mutex> lock(records_mutex);
  void* record = std::malloc(96);
  std::memcpy(record, &head, sizeof head);
  head = record;
}

// ---- producer: managed tensors ------------------------------------------------------------

// The thread that loaded the module (the array API says nothing of threads: a library works
// on any thread that holds the GIL).
const std::thread::id g_loading_thread = std::this_thread::get_id();

struct Ctx {
  std::shared_ptr<Buffer> keep;  // the data lives until the deleter runs (DEL-05)
  std::vector<int64_t> shape, strides;
  std::thread::id creator = std::this_thread::get_id();
  PyObject* owner = nullptr;     // deleter_needs_interpreter: a Python reference
  Export zoo{0, 0};              // the zoo's deleter_noop mark and repeat count
  bool leaks = false;            // lent_export_leaks on this export: the deleter frees nothing
};

std::mutex& g_live_mutex = *new std::mutex;
std::set<void*>& g_live = *new std::set<void*>;  // managed structs not yet deleted (a second call is ignored)

bool retire(void* self) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return g_live.erase(self) == 1;
}

// lawful_deferred_frees: a deleter that hands its work to a queue, as a SYCL runtime frees once
// its tasks finish. The queue runs when the library is synchronized (fakearray.synchronize(),
// the adapter's synchronize()) or once it holds 10,000 entries: the memory is freed, later.
std::mutex& g_deferred_mutex = *new std::mutex;
std::vector<std::function<void()>>& g_deferred = *new std::vector<std::function<void()>>;

void run_deferred() {
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> lock(g_deferred_mutex);
    work.swap(g_deferred);
  }
  for (auto& w : work) w();
}

template <class M>
void delete_managed_now(M* self);

template <class M>
void delete_managed(M* self) {
  if (bug("lawful_deferred_frees")) {
    bool full = false;
    {
      std::lock_guard<std::mutex> lock(g_deferred_mutex);
      g_deferred.push_back([self] { delete_managed_now(self); });
      full = g_deferred.size() >= 10000;
    }
    if (full) run_deferred();
    return;
  }
  delete_managed_now(self);
}

template <class M>
void delete_managed_now(M* self) {
  auto* ctx = static_cast<Ctx*>(self->manager_ctx);
  if (bug("deleter_thread_affine") && std::this_thread::get_id() != ctx->creator) return;  // leaks
  if (!retire(self)) return;  // a second call (ctx may be gone): ignored before ctx is read
  zoo_export_gone(&ctx->zoo);
  if (ctx->zoo.zoo_noop) return;  // the zoo's deleter_noop: frees nothing
  if (bug("export_leaks")) return;  // frees nothing either: every export keeps its buffer and bookkeeping
  if (ctx->leaks) return;           // lent_export_leaks: a lent or read-only export's deleter frees nothing
  // deleter_without_gil: touches Python without taking the GIL, as NumPy 1.23's deleter of a
  // broadcast array did: fatal when called on a thread that does not hold it (DEL-06).
  if (bug("deleter_without_gil")) (void)PyThreadState_Get();
  if (ctx->owner) {  // deleter_needs_interpreter: touches Python without checking it still exists
    // Using the C API after Py_Finalize is undefined behaviour that crashes only sometimes;
    // the planted bug makes the outcome certain so the case is proven on every build.
    if (!Py_IsInitialized()) std::abort();
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(ctx->owner);
    PyGILState_Release(s);
  }
  if (bug("deleter_sets_error")) {
    PyGILState_STATE s = PyGILState_Ensure();
    PyErr_SetString(PyExc_RuntimeError, "fakearray deleter failed");
    PyGILState_Release(s);
  }
  // consumer_no_rename, destructor_ignores_used: the consumer still views what this deletes.
  // Reading freed memory crashes or reads stale bytes by chance (a build's heap layout decided
  // which); the planted bug makes the outcome certain: when this export is the data's last owner
  // its bytes are overwritten with a poison byte, and the export is kept (the 64 most recent;
  // older ones are freed) so that a late reader reads the poison, never an unmapped page. Only
  // small exports (under 64 KiB, the pair cases' 3x4 arrays among them): a large buffer is
  // freed as before, so the deleter cases still see the heap drop when it is released.
  const bool small = !ctx->keep || ctx->keep->size < (64u << 10);
  if ((bug("consumer_no_rename") || bug("destructor_ignores_used")) && small) {
    if (ctx->keep && ctx->keep.use_count() == 1 && !ctx->keep->external && ctx->keep->data)
      std::memset(ctx->keep->data, 0xDB, ctx->keep->size);
    static std::mutex& quarantine_mutex = *new std::mutex;
    static std::deque<std::pair<Ctx*, M*>>& quarantine = *new std::deque<std::pair<Ctx*, M*>>;
    std::pair<Ctx*, M*> oldest{nullptr, nullptr};
    {
      std::lock_guard<std::mutex> lock(quarantine_mutex);
      quarantine.emplace_back(ctx, self);
      if (quarantine.size() > 64) {
        oldest = quarantine.front();
        quarantine.pop_front();
      }
    }
    delete oldest.first;
    delete oldest.second;
    return;
  }
  delete ctx;
  delete self;
}

// `copy`: a compact copy, which lands in host memory (kDLCPU) whatever the array's device.
template <class M>
M* new_managed(const Array& a, bool copy) {
  auto* m = new M();
  auto* ctx = new Ctx();
  ctx->shape = a.shape;
  ctx->strides = a.strides;
  DLTensor& t = m->dl_tensor;
  // export_narrow_values: every CPU export of a byte-sized dtype goes out as such a copy.
  if (copy || (bug("export_narrow_values") && a.device_type == kDLCPU && a.dtype.bits % 8 == 0)) {
    if (copy) keep_copy_record(a);
    // A compact copy of the logical elements.
    const size_t es = itemsize(a);
    int64_t n = 1;
    for (int64_t s : a.shape) n *= s;
    auto nb = std::make_shared<Buffer>(static_cast<size_t>(n) * es);
    std::vector<int64_t> idx(a.shape.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * a.strides[i];
      std::memcpy(nb->data + k * static_cast<int64_t>(es), element0(a) + off * static_cast<int64_t>(es), es);
      for (size_t i = idx.size(); i-- > 0;) {
        if (++idx[i] < a.shape[i]) break;
        idx[i] = 0;
      }
    }
    // export_narrow_values: the copy keeps what a path that never saw a large or special
    // value keeps (narrow_values.h): the small numbers pass, the edge values do not.
    if (bug("export_narrow_values"))
      for (int64_t k = 0; k < n; ++k) dlpv_fixture_narrow_element(a.dtype, nb->data + k * static_cast<int64_t>(es));
    int64_t acc = 1;
    for (size_t i = a.shape.size(); i-- > 0;) { ctx->strides[i] = acc; acc *= a.shape[i]; }
    ctx->keep = nb;
    t.data = nb->data;
  } else {
    if (!bug("buffer_not_kept")) ctx->keep = a.buf;
    t.data = element0(a);
  }
  int64_t count = 1;
  for (int64_t s : a.shape) count *= s;
  if (count == 0) t.data = nullptr;  // zero-size tensors carry no data pointer (LAYOUT-10)
  t.byte_offset = 0;
  // An ext_dev array lent on its own device keeps its device id (lawful_two_ext_devices makes some
  // on device 1); second_device_exported_as_first: every export says device 0 (DEV-01).
  const int32_t id = !copy && a.device_type == kDLExtDev && !bug("second_device_exported_as_first") ? a.device_id : 0;
  t.device = DLDevice{static_cast<DLDeviceType>(copy ? kDLCPU : a.device_type), id};
  t.ndim = static_cast<int32_t>(a.shape.size());
  t.dtype = a.dtype;
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  // export_strides_in_bytes: the classic slip, strides counted in bytes (elements of more than
  // one byte only); export_scalar_as_1d: a 0-d array goes out as shape (1,);
  // export_narrow_int_signed: 8-bit unsigned and bool elements go out as kDLInt.
  if (bug("export_strides_in_bytes"))
    for (auto& st : ctx->strides) st *= static_cast<int64_t>(itemsize(a));
  if (bug("export_scalar_as_1d") && a.shape.empty()) {
    ctx->shape = {1};
    ctx->strides = {1};
    t.ndim = 1;
    t.shape = ctx->shape.data();
    t.strides = ctx->strides.data();
  }
  if (bug("export_narrow_int_signed") && t.dtype.bits == 8 && (t.dtype.code == kDLUInt || t.dtype.code == 6))
    t.dtype.code = kDLInt;
  // export_rank4_strides_swapped: a tensor of rank 4 or more goes out with the strides of its
  // last two dimensions swapped (a layout bug only rank >= 4 reaches).
  if (bug("export_rank4_strides_swapped") && t.ndim >= 4)
    std::swap(ctx->strides[static_cast<size_t>(t.ndim) - 1], ctx->strides[static_cast<size_t>(t.ndim) - 2]);
  // export_thread_affine: exported on a thread other than the one that loaded the module, the
  // tensor starts one element late.
  if (bug("export_thread_affine") && std::this_thread::get_id() != g_loading_thread && t.data)
    t.byte_offset = itemsize(a);
  m->manager_ctx = ctx;
  m->deleter = &delete_managed<M>;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_live.insert(m);
  return m;
}

// The capsule destructor: delete only when unconsumed (name still dltensor*).
void capsule_destructor(PyObject* cap) {
  if (bug("destructor_segfaults")) std::raise(SIGSEGV);  // a hostile library: dies in its destructor
  const char* name = PyCapsule_GetName(cap);
  if (!name) { PyErr_Clear(); return; }
  const bool versioned = std::strcmp(name, "dltensor_versioned") == 0 ||
                         (bug("destructor_ignores_used") && std::strcmp(name, "used_dltensor_versioned") == 0);
  const bool legacy = std::strcmp(name, "dltensor") == 0 ||
                      (bug("destructor_ignores_used") && std::strcmp(name, "used_dltensor") == 0);
  if (!versioned && !legacy) return;
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) { PyErr_Clear(); return; }
  // The struct kind is in the context (a bug may put a versioned struct under "dltensor").
  if (PyCapsule_GetContext(cap)) {
    auto* v = static_cast<DLManagedTensorVersioned*>(p);
    v->deleter(v);
  } else {
    auto* l = static_cast<DLManagedTensor*>(p);
    l->deleter(l);
  }
}

py::object make_capsule(void* p, const char* name, bool versioned) {
  PyObject* cap = PyCapsule_New(p, name, bug("no_destructor") ? nullptr : capsule_destructor);
  if (!cap) throw py::error_already_set();
  if (versioned) PyCapsule_SetContext(cap, reinterpret_cast<void*>(1));
  return py::reinterpret_steal<py::object>(cap);
}

[[noreturn]] void raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

// The zoo's producer bug on an export just built: the request as the zoo names it (copy=True
// copy, copy=False no_copy, a read-only array read_only, else plain), the layout the array
// was made in (an imported array's, as its strides show it), and edge values where element 0
// holds the edge pattern's (the array does not remember what make() was asked).
int zoo_export(const Array& a, const py::object& copy, DLTensor* t, uint64_t* flags, Ctx* ctx) {
  if (!g_zoo.on) return ZOO_NONE;
  DLPVRequest r{};
  r.struct_size = sizeof r;
  r.flags = !copy.is_none() ? (copy.cast<bool>() ? DLPV_REQ_COPY : DLPV_REQ_NO_COPY)
            : a.read_only   ? DLPV_REQ_READ_ONLY : 0u;
  if (zoo_holds_edge(t)) r.flags |= DLPV_REQ_EDGE_VALUES;
  r.layout = static_cast<uint32_t>(a.layout >= 0 ? a.layout : layout_code(zoo_layout_name(t)));
  return zoo_after_export(&r, t, flags, &ctx->zoo);
}

// What zoo_export asked of an export just built (m): ZOO_FAIL releases it and raises an
// exception that is no BufferError; ZOO_FLIP_COPY builds it again the other way (lent where it
// was copied, copied where it was lent), with the first one's dtype, version and flags: a
// library that ignores copy= and says nothing of it.
template <class M>
M* zoo_act(int asked, M* m, const Array& a, bool copied) {
  if (asked == ZOO_FAIL) {
    m->deleter(m);
    raise(PyExc_RuntimeError, "fakearray: the export failed (the zoo's exception bug)");
  }
  if (asked != ZOO_FLIP_COPY) return m;
  M* again = new_managed<M>(a, !copied);
  again->dl_tensor.dtype = m->dl_tensor.dtype;
  if constexpr (std::is_same_v<M, DLManagedTensorVersioned>) {
    again->version = m->version;
    again->flags = m->flags;
  }
  zoo_count_export(&static_cast<Ctx*>(again->manager_ctx)->zoo);
  m->deleter(m);
  return again;
}

// The zoo's consumer bug on an import's release, once zoo_on_import struck (zoo != 0):
// deleter_early has released the tensor already (the array goes on viewing it), deleter_leak
// never releases it, deleter_double releases it twice.
void zoo_release(int zoo, std::function<void()>& release) {
  if (!g_zoo.on) return;
  if (zoo && (zoo_kind("deleter_early") || zoo_kind("deleter_leak"))) release = nullptr;
  if (zoo && zoo_kind("deleter_double")) release = [once = std::move(release)] { once(); once(); };
  // Every import is uncounted for the repeat axis when its array lets go (zoo_on_import counted it).
  release = [inner = std::move(release)] {
    zoo_import_gone();
    if (inner) inner();
  };
}

py::object dlpack(py::object self_obj, py::object stream, py::object max_version, py::object dl_device,
                  py::object copy) {
  Array& a = self_obj.cast<Array&>();
  if (bug("same_capsule") && !a.last_capsule.is_none()) {
    const char* n = PyCapsule_GetName(a.last_capsule.ptr());
    if (n && std::strncmp(n, "dltensor", 8) == 0) return a.last_capsule;
  }
  if (bug("no_dl_device_kw") && !dl_device.is_none())
    raise(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument 'dl_device'");
  const bool request_ignored = bug("device_and_stream_ignored") && !dl_device.is_none() && !stream.is_none();
  if (request_ignored) {
    // A request naming a device and a stream is answered as if neither were given, and
    // answered whatever else it asks (a read-only array goes out in a legacy capsule too).
    dl_device = py::none();
    stream = py::none();
  }
  // An ext_dev queue (fakearray.Queue): the export is ordered after the array's queued writes
  // (STRM-05); queue_not_ordered hands the memory out as it is.
  const bool ext_queue = !stream.is_none() && py::hasattr(stream, "_fakearray_queue") && a.device_type == kDLExtDev;
  if (ext_queue) {
    if (!bug("queue_not_ordered")) settle(a);
  } else if (!stream.is_none()) {
    if (!py::isinstance<py::int_>(stream)) {
      if (!bug("accepts_bad_args")) raise(PyExc_TypeError, "stream must be None or an int");
    } else if (!bug("stream_accepted")) {
      raise(PyExc_ValueError, "fakearray lives on the CPU: stream must be None");
    }
  }
  bool versioned = false;
  bool minor_ahead = false;  // max_version (1, m) with m above the 1.3 fakearray speaks
  if (!max_version.is_none()) {
    if (!py::isinstance<py::tuple>(max_version) || py::len(max_version) != 2) {
      if (!bug("accepts_bad_args")) raise(PyExc_TypeError, "max_version must be a (major, minor) tuple");
    } else {
      const int major = max_version.cast<py::tuple>()[0].cast<int>();
      minor_ahead = major == 1 && max_version.cast<py::tuple>()[1].cast<int>() > 3;
      if (major >= 2 && bug("major2_type_error")) raise(PyExc_TypeError, "unsupported max_version");
      versioned = major >= 1 || bug("old_major_versioned");
    }
  } else if (bug("none_gives_versioned")) {
    versioned = true;
  }
  bool to_host = false;  // dl_device=(kDLCPU, 0) for an array on the ext_dev heap: a copy
  if (!dl_device.is_none()) {
    auto d = dl_device.cast<std::pair<int, int>>();
    if (d != std::pair<int, int>{1, 0} && d != std::pair<int, int>{a.device_type, 0} && !bug("dl_device_ignored"))
      raise(PyExc_BufferError, "fakearray can only export to the CPU (1, 0) or the array's own device");
    to_host = d == std::pair<int, int>{1, 0} && a.device_type != kDLCPU;
    // dl_device_cpu_refused: an ext_dev array is never copied to the host (DEV-05).
    if (to_host && bug("dl_device_cpu_refused")) raise(PyExc_BufferError, "fakearray does not copy ext_dev arrays to the host");
  }
  if (a.big_endian && !bug("exports_big_endian")) raise(PyExc_BufferError, "DLPack only supports native byte order");
  // export_memory_error: every export fails with MemoryError (an out-of-memory failure is no
  // refusal: ERR-02).
  if (bug("export_memory_error")) raise(PyExc_MemoryError, "cannot allocate the export");
  // refusal_type_error: int16 arrays are refused with TypeError, not BufferError (ERR-01: the
  // array API's __dlpack__ raises "BufferError: when the data cannot be exported as DLPack").
  if (bug("refusal_type_error") && a.dtype.code == kDLInt && a.dtype.bits == 16)
    raise(PyExc_TypeError, "fakearray does not export int16 arrays");
  bool do_copy = false;
  if (!copy.is_none()) do_copy = copy.cast<bool>();
  // lawful_always_copies: storage that cannot be lent (tiled, or immutable): every export is a
  // copy, flagged IS_COPIED, and copy=False is refused. The array API (__dlpack__, copy): None
  // "must reuse the existing memory buffer if possible and copy otherwise"; False "must never
  // copy, and raise a BufferError in case a copy is deemed necessary".
  if (bug("lawful_always_copies")) {
    if (!copy.is_none() && !copy.cast<bool>())
      raise(PyExc_BufferError, "fakearray[lawful_always_copies] cannot lend its storage: copy=False needs a copy");
    do_copy = true;
  }
  if (to_host) {
    // The array API (__dlpack__, copy): "If False, the function must never copy, and raise a
    // BufferError in case a copy is deemed necessary".
    if (!copy.is_none() && !copy.cast<bool>() && !bug("copy_false_copies_across_devices"))
      raise(PyExc_BufferError, "copy=False, but the array lives on ext_dev: a CPU export needs a copy");
    do_copy = true;
  }
  if (bug("copy_true_aliases") && do_copy) do_copy = false;
  // Bugs that show only when keywords come together (the request space, python.request.*).
  const bool copy_given = !copy.is_none(), device_given = !dl_device.is_none();
  if (bug("combo_copy_forgotten") && copy_given && copy.cast<bool>() && device_given && !to_host) do_copy = false;
  // minor_ahead_copy_forgotten: only the three together (a max_version minor ahead of 1.3,
  // copy=True, dl_device the array's own) lend instead of copying. Every pair of them copies,
  // so only a cover of every triple of the request keywords meets it (KW-03).
  if (bug("minor_ahead_copy_forgotten") && minor_ahead && copy_given && copy.cast<bool>() && device_given && !to_host)
    do_copy = false;
  if (bug("copy_false_copies") && !copy.is_none() && !copy.cast<bool>()) do_copy = true;
  if (bug("default_copies") && copy.is_none()) do_copy = true;
  if (do_copy) settle(a);  // a copy is made after the array's queued writes
  if (bug("lawful_legacy_under_max_version")) versioned = false;  // lawful: "or of a different version"
  if (!versioned && a.read_only && !bug("lawful_read_only_legacy_exported") && !request_ignored)
    raise(PyExc_BufferError, "cannot export a read-only array as a legacy capsule (no READ_ONLY flag)");

  // lent_export_leaks: the exports that take their own path (copy=False asked, or a read-only
  // array lent without a copy) keep their buffer and bookkeeping for good (DEL-01).
  // copy_export_leaks: beside lawful_copies_keep_memory's records, the deleter of an export asked
  // with copy=True frees nothing (DEL-01, seen past what the package's own copies keep).
  const bool leaks = (bug("lent_export_leaks") && !do_copy && ((copy_given && !copy.cast<bool>()) || a.read_only)) ||
                     (bug("copy_export_leaks") && do_copy && copy_given && copy.cast<bool>());
  // copy_mislabels_dtype: a copy's tensor names the copy routine's element type, int32 for float32
  // (DTYPE-02); a lent export is right.
  const bool mislabel = bug("copy_mislabels_dtype") && do_copy && a.dtype.code == kDLFloat && a.dtype.bits == 32;
  py::object cap;
  if (versioned) {
    auto* m = new_managed<DLManagedTensorVersioned>(a, do_copy);
    static_cast<Ctx*>(m->manager_ctx)->leaks = leaks;
    if (mislabel) m->dl_tensor.dtype.code = kDLInt;
    m->version = DLPackVersion{1, 3};
    if (bug("version_echoes_request") && !max_version.is_none()) {  // stamps what was asked, not its own
      auto asked = max_version.cast<py::tuple>();
      m->version = DLPackVersion{asked[0].cast<uint32_t>(), asked[1].cast<uint32_t>()};
    }
    m->flags = 0;
    if (a.read_only && !bug("no_read_only_flag") && !(bug("combo_read_only_dropped") && copy_given && device_given))
      m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    if (do_copy && !bug("copy_false_copies")) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    if (do_copy && bug("copy_false_copies")) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    // export_undefined_flag: every versioned export carries bit 7, which no DLPack version defines.
    if (bug("export_undefined_flag")) m->flags |= uint64_t{1} << 7;
    if (bug("deleter_needs_interpreter")) {
      static_cast<Ctx*>(m->manager_ctx)->owner = self_obj.ptr();
      Py_INCREF(self_obj.ptr());
    }
    m = zoo_act(zoo_export(a, copy, &m->dl_tensor, &m->flags, static_cast<Ctx*>(m->manager_ctx)), m, a, do_copy);
    cap = make_capsule(m, bug("versioned_named_legacy") ? "dltensor" : "dltensor_versioned", true);
  } else {
    auto* m = new_managed<DLManagedTensor>(a, do_copy);
    static_cast<Ctx*>(m->manager_ctx)->leaks = leaks;
    if (mislabel) m->dl_tensor.dtype.code = kDLInt;
    m = zoo_act(zoo_export(a, copy, &m->dl_tensor, nullptr, static_cast<Ctx*>(m->manager_ctx)), m, a, do_copy);
    cap = make_capsule(m, bug("legacy_struct_named_versioned") ? "dltensor_versioned" : "dltensor", false);
  }
  if (bug("same_capsule")) a.last_capsule = cap;  // a cache: hands the capsule out again
  return cap;
}

// ---- consumer: from_dlpack ----------------------------------------------------------------

const std::set<std::pair<int, int>> kImportable = {
    {0, 8}, {0, 16}, {0, 32}, {0, 64}, {1, 8}, {1, 16}, {1, 32}, {1, 64}, {2, 16}, {2, 32}, {2, 64},
    {6, 8}, {5, 64}, {5, 128}, {4, 16}};

/// Why fakearray cannot hold a tensor ("" if it can). Reads only the DLTensor's fields.
std::string refusal(const DLTensor& t, uint64_t flags) {
  // Its own two heaps: the CPU's and ext_dev's (an ext_dev import stays on ext_dev, DEV-07).
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLExtDev && !g_device_kw_wraps)
    return "fakearray can only import CPU (kDLCPU) and ext_dev (kDLExtDev) tensors";
  if (t.dtype.lanes != 1 || !kImportable.count({t.dtype.code, t.dtype.bits}))
    return "unsupported dtype in DLTensor";
  if (t.ndim < 0 || t.ndim > 64) return "unsupported number of dimensions";
  if (t.ndim > 0 && !t.shape) return "shape is NULL";
  if (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) return "padded sub-byte data is not supported";
  return "";
}

/// An Array over a foreign tensor's memory; `release` runs when the Array's buffer dies.
std::shared_ptr<Array> wrap(const DLTensor& t, uint64_t flags, std::function<void()> release, bool copy) {
  auto a = std::make_shared<Array>();
  a->dtype = t.dtype;
  a->shape.assign(t.shape, t.shape + t.ndim);
  a->strides.resize(a->shape.size());
  int64_t acc = 1;
  for (size_t i = a->shape.size(); i-- > 0;) {
    a->strides[i] = t.strides ? t.strides[i] : acc;
    acc *= a->shape[i];
  }
  a->read_only = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0 && !bug("consumer_read_only_ignored");
  // consumer_ext_as_cpu: an ext_dev tensor's memory taken for host memory, the array on the CPU.
  // import_lands_on_first_device: a tensor on ext_dev device 1 imported onto device 0 (DEV-07).
  if (t.device.device_type == kDLExtDev && !g_device_kw_wraps && !bug("consumer_ext_as_cpu")) {
    a->device_type = kDLExtDev;
    a->device_id = bug("import_lands_on_first_device") ? 0 : t.device.device_id;
  }
  if (bug("consumer_result_device_wrong")) a->device_id = 1;
  unsigned char* first = t.data ? static_cast<unsigned char*>(t.data) + t.byte_offset : nullptr;
  static unsigned char empty_byte = 0;
  a->buf = std::make_shared<Buffer>(first ? first : &empty_byte, std::move(release));
  a->offset = 0;
  if (copy) {
    // A compact private copy; the foreign tensor is released right away.
    auto c = std::make_shared<Array>();
    const size_t es = itemsize(*a);
    int64_t n = 1;
    for (int64_t s : a->shape) n *= s;
    c->dtype = a->dtype;
    c->shape = a->shape;
    c->read_only = false;
    c->device_id = a->device_id;
    c->buf = std::make_shared<Buffer>(static_cast<size_t>(n) * es);
    c->strides.resize(c->shape.size());
    acc = 1;
    for (size_t i = c->shape.size(); i-- > 0;) { c->strides[i] = acc; acc *= c->shape[i]; }
    std::vector<int64_t> idx(a->shape.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * a->strides[i];
      std::memcpy(c->buf->data + k * static_cast<int64_t>(es), element0(*a) + off * static_cast<int64_t>(es), es);
      for (size_t i = idx.size(); i-- > 0;) {
        if (++idx[i] < a->shape[i]) break;
        idx[i] = 0;
      }
    }
    return c;  // `a` dies here: its buffer runs the release
  }
  return a;
}

template <class M>
std::function<void()> deleter_of(M* m) {
  if (bug("consumer_calls_null_deleter")) return [m] { m->deleter(m); };
  return [m] { if (m->deleter) m->deleter(m); };
}

py::object array_object(std::shared_ptr<Array> a) { return py::cast(std::move(a)); }

// The exchange-API route: the producer type's table, if it has a usable one.
const DLPackExchangeAPI* exchange_table(py::handle obj) {
  PyObject* attr = bug("consumer_xapi_instance_lookup")
                       ? PyObject_GetAttrString(obj.ptr(), "__dlpack_c_exchange_api__")
                       : PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())),
                                                "__dlpack_c_exchange_api__");
  if (!attr) {
    PyErr_Clear();
    return nullptr;
  }
  py::object a = py::reinterpret_steal<py::object>(attr);
  if (!PyCapsule_IsValid(a.ptr(), "dlpack_exchange_api")) return nullptr;
  auto* api = static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(a.ptr(), "dlpack_exchange_api"));
  if (bug("consumer_xapi_no_major_check")) return api;
  if (bug("consumer_xapi_no_prev_walk")) return api && api->header.version.major == 1 ? api : nullptr;
  // Walk to a table of the one major this code knows (prev_api offers older majors).
  const DLPackExchangeAPIHeader* h = api ? &api->header : nullptr;
  for (int hops = 0; h && hops < 16; ++hops, h = h->prev_api)
    if (h->version.major == 1) return reinterpret_cast<const DLPackExchangeAPI*>(h);
  return nullptr;
}

py::object import_exchange(py::handle obj, const DLPackExchangeAPI* api) {
  if (api->dltensor_from_py_object_no_sync || bug("consumer_xapi_no_null_check")) {
    DLTensor view{};  // a cheap look before taking ownership
    if (api->dltensor_from_py_object_no_sync(obj.ptr(), &view) != 0) throw py::error_already_set();
    const std::string why = refusal(view, 0);
    if (!why.empty()) raise(PyExc_BufferError, why);
  }
  DLManagedTensorVersioned* m = nullptr;
  if (api->managed_tensor_from_py_object_no_sync(obj.ptr(), &m) != 0) throw py::error_already_set();
  if (!m) raise(PyExc_BufferError, "the exchange API returned no tensor");
  if (m->version.major != 1) {
    if (m->deleter) m->deleter(m);
    raise(PyExc_BufferError, "unsupported DLPack major version");
  }
  const std::string why = refusal(m->dl_tensor, m->flags);
  if (!why.empty()) {
    if (m->deleter) m->deleter(m);
    raise(PyExc_BufferError, why);
  }
  std::function<void()> release = deleter_of(m);
  if (bug("consumer_xapi_leaks")) release = nullptr;
  const int zoo = zoo_on_import(&m->dl_tensor, 1, m, nullptr);  // the zoo's consumer bug, as from_dlpack's
  zoo_release(zoo, release);
  const bool misread = zoo && zoo_kind("elements");  // a private copy that misread, as from_dlpack's
  std::shared_ptr<Array> out = wrap(m->dl_tensor, m->flags, std::move(release), misread);
  if (misread) *element0(*out) ^= 0x5A;
  return array_object(std::move(out));
}

std::shared_ptr<Array> make(std::vector<int64_t> shape, int code, int bits, const std::string& layout,
                            bool read_only, const std::string& data, int device_type = kDLCPU, int device_id = 0);

py::object from_dlpack(py::object obj, py::object copy, py::object device) {
  g_device_kw_wraps = false;
  if (bug("consumer_rejects_python_classes")) {
    py::object method = py::getattr(py::type::handle_of(obj), "__dlpack__", py::none());
    if (PyFunction_Check(method.ptr())) raise(PyExc_TypeError, "fakearray imports only from extension types");
  }
  if (bug("consumer_type_error_for_non_arrays") && !py::hasattr(obj, "__dlpack__"))
    raise(PyExc_TypeError, "not an array");
  if (bug("consumer_accepts_anything") && !py::hasattr(obj, "__dlpack__"))
    return array_object(make({0}, kDLFloat, 32, "contiguous", false, ""));  // "an empty array will do"
  if (bug("consumer_device_cpu_ignored")) device = py::none();  // device= accepted, then dropped
  if (!device.is_none()) {
    const bool cpu = (py::isinstance<py::str>(device) && device.cast<std::string>() == "cpu") ||
                     (py::isinstance<py::tuple>(device) && device.cast<std::pair<int, int>>() == std::pair<int, int>{1, 0});
    if (!cpu) raise(PyExc_BufferError, "fakearray arrays live on the CPU only");
  }
  if (copy.is_none() && device.is_none()) {
    if (const DLPackExchangeAPI* api = exchange_table(obj)) {
      if (api->managed_tensor_from_py_object_no_sync) return import_exchange(obj, api);
    }
  }
  const bool want_copy = !copy.is_none() && copy.cast<bool>() && !bug("consumer_copy_ignored");
  py::dict kw;
  py::object stream = py::none();
  if (bug("consumer_device_query_late")) {
    kw["stream"] = 1;
  } else if (bug("consumer_device_never_queried")) {
    // takes every producer for a CPU one: no device query, no stream (NumPy 2.2-2.4)
  } else {
    py::tuple dev = obj.attr("__dlpack_device__")();
    const int type = dev[0].cast<int>();
    // fakearray works on its own CUDA stream (kCudaStream, current_stream() reports it) and
    // says so to CUDA producers; the bugs pass 0 (forbidden) or 1 (a stream it does not use).
    if (type == kDLCUDA)
      stream = py::int_(bug("consumer_stream_zero_cuda") ? 0 : bug("consumer_stream_not_current") ? 1 : kCudaStream);
    if (type == kDLROCM) stream = py::int_(bug("consumer_rocm_stream_one") ? 1 : 0);   // default stream
    if (type == kDLCPU && bug("consumer_stream_on_cpu")) stream = py::int_(1);
    if (!stream.is_none()) kw["stream"] = stream;
  }
  kw["max_version"] = py::make_tuple(1, 3);
  if (!copy.is_none() && !bug("consumer_copy_ignored") && !bug("consumer_copy_not_forwarded") &&
      !bug("consumer_copy_in_place_aligned"))
    kw["copy"] = copy;
  // consumer_device_cpu_wraps: device="cpu" is taken as "read whatever comes as host memory".
  g_device_kw_wraps = !device.is_none() && bug("consumer_device_cpu_wraps");
  if (!device.is_none() && !g_device_kw_wraps) kw["dl_device"] = py::make_tuple(1, 0);
  py::object cap;
  try {
    cap = obj.attr("__dlpack__")(**kw);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) || bug("consumer_no_fallback")) {
      if (bug("consumer_wraps_errors")) raise(PyExc_RuntimeError, "import failed");
      throw;
    }
    // A pre-2023.12 producer: retry without the new keywords, unless the user asked for
    // something only they could carry (VER-11).
    if (kw.contains("copy") || kw.contains("dl_device"))
      raise(PyExc_BufferError, "the producer's __dlpack__ takes no copy=/dl_device=, so the request cannot be honoured");
    py::dict old;
    if (!stream.is_none()) old["stream"] = stream;
    cap = obj.attr("__dlpack__")(**old);
  }
  if (bug("consumer_device_query_late")) obj.attr("__dlpack_device__")();
  const char* name = PyCapsule_CheckExact(cap.ptr()) ? PyCapsule_GetName(cap.ptr()) : nullptr;
  if (PyErr_Occurred()) PyErr_Clear();
  const std::string n = name ? name : "";
  bool versioned = n == "dltensor_versioned";
  if (bug("consumer_ignores_capsule_name") && n == "dltensor") versioned = true;  // "we asked for 1.3"
  if (n != "dltensor_versioned" && n != "dltensor") {
    if (bug("consumer_takes_any_capsule") && name) {  // "we asked for 1.3": a versioned struct
      auto* v = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), name));
      if (v && v->deleter) v->deleter(v);
    }
    if (PyErr_Occurred()) PyErr_Clear();
    raise(PyExc_BufferError, "__dlpack__ did not return an unconsumed DLPack capsule ('" + n + "')");
  }
  void* p = PyCapsule_GetPointer(cap.ptr(), name);
  if (!p) throw py::error_already_set();
  DLTensor* t;
  uint64_t flags = 0;
  std::function<void()> release;
  std::function<void()> delete_now;
  if (versioned) {
    auto* v = static_cast<DLManagedTensorVersioned*>(p);
    if (!bug("consumer_no_major_check") && v->version.major != 1) {
      const std::string text = "unsupported DLPack version " + std::to_string(v->version.major) + "." +
                               std::to_string(v->version.minor);
      if (bug("lawful_rename_refuse_delete")) {  // only the prefix (the deleter) is touched
        if (PyCapsule_SetName(cap.ptr(), "used_dltensor_versioned") != 0) throw py::error_already_set();
        if (v->deleter) v->deleter(v);
      }
      raise(PyExc_BufferError, text);
    }
    if (bug("consumer_rejects_minor_ahead") && v->version.minor > 3)
      raise(PyExc_BufferError, "DLPack version newer than 1.3");
    t = &v->dl_tensor;
    flags = v->flags;
    release = deleter_of(v);
  } else {
    auto* l = static_cast<DLManagedTensor*>(p);
    t = &l->dl_tensor;
    release = deleter_of(l);
  }
  // consumer_writes_read_only: "touches" the first byte of a READ_ONLY tensor (writes the value
  // it holds back): any write is one too many.
  int64_t elements = 1;
  for (int k = 0; k < t->ndim; ++k) elements *= t->shape[k];
  if (bug("consumer_writes_read_only") && (flags & DLPACK_FLAG_BITMASK_READ_ONLY) && t->data && elements > 0) {
    volatile auto* first = static_cast<unsigned char*>(t->data) + t->byte_offset;
    *first = *first;
  }
  const std::string why = refusal(*t, flags);
  if (!why.empty() && bug("lawful_rename_refuse_delete")) {
    // Lawful: take ownership (rename), then refuse, releasing what it now owns exactly once.
    if (PyCapsule_SetName(cap.ptr(), versioned ? "used_dltensor_versioned" : "used_dltensor") != 0)
      throw py::error_already_set();
    release();
    raise(PyExc_BufferError, why);
  }
  if (!why.empty()) {
    if (bug("consumer_deletes_on_refusal")) release();
    if (bug("consumer_device_type_error") && t->device.device_type != kDLCPU) raise(PyExc_TypeError, why);
    // consumer_gpu_assertion (as a CPU build of torch 2.13): an internal assertion for the GPU
    // device types, BufferError for the rest.
    if (bug("consumer_gpu_assertion") && (t->device.device_type == kDLCUDA || t->device.device_type == kDLROCM))
      raise(PyExc_AssertionError, "not compiled with GPU support");
    if (bug("consumer_rejection_value_error") && t->device.device_type == kDLCPU) raise(PyExc_ValueError, why);
    raise(PyExc_BufferError, why);
  }
  if (!bug("consumer_no_rename") &&
      PyCapsule_SetName(cap.ptr(), versioned ? "used_dltensor_versioned" : "used_dltensor") != 0)
    throw py::error_already_set();
  // The zoo's consumer bug (its release here; its misread below).
  const int zoo = zoo_on_import(t, versioned, versioned ? static_cast<DLManagedTensorVersioned*>(p) : nullptr,
                                versioned ? nullptr : static_cast<DLManagedTensor*>(p));
  zoo_release(zoo, release);
  // copy=True: the producer copied (IS_COPIED) or we copy now.
  // consumer_copy_in_place_aligned (as JAX 0.10 does): 64-byte aligned data is imported in
  // place even under copy=True; only other data is copied.
  const bool in_place = bug("consumer_copy_in_place_aligned") &&
                        (reinterpret_cast<uintptr_t>(t->data) + t->byte_offset) % 64 == 0;
  const bool copy_here =
      (want_copy && !(flags & DLPACK_FLAG_BITMASK_IS_COPIED) && !in_place) || bug("consumer_always_copies");
  if (bug("consumer_deleter_early")) {  // deletes right after import, still viewing the data
    std::shared_ptr<Array> early = wrap(*t, flags, nullptr, copy_here);
    release();
    return array_object(std::move(early));
  }
  // consumer_large_strides_ignored: a tensor of 1,024 elements or more with positive strides is
  // read as if compact, whatever its strides say (a fast path taken only above a size
  // threshold; it stays inside the tensor's span, so the misread never faults).
  DLTensor seen = *t;  // (the producer's struct is read, never written)
  std::vector<int64_t> compact(static_cast<size_t>(t->ndim), 1);
  const bool positive = t->strides && std::all_of(t->strides, t->strides + t->ndim, [](int64_t s) { return s > 0; });
  if (bug("consumer_large_strides_ignored") && elements >= 1024 && positive) {
    for (int k = t->ndim - 1; k > 0; --k) compact[static_cast<size_t>(k) - 1] = compact[static_cast<size_t>(k)] * t->shape[k];
    seen.strides = compact.data();
  }
  // consumer_thread_affine: on a thread other than the loading one the release is dropped, so
  // the producer's deleter never runs (a leak).
  if (bug("consumer_thread_affine") && std::this_thread::get_id() != g_loading_thread) release = nullptr;
  // consumer_shared_release: one release slot for the whole module: an array calls the release
  // of the most recent import, so two imports alive at once release the second twice and the
  // first never (a bug only a second import while the first lives reaches).
  if (bug("consumer_shared_release")) {
    static std::shared_ptr<std::function<void()>> last;
    last = std::make_shared<std::function<void()>>(std::move(release));
    release = [] { if (last && *last) (*last)(); };
  }
  // The zoo's misread (elements): the array holds element 0's first byte flipped, in a private
  // copy (a consumer may copy where it is not told not to), so that every route that reads the
  // array sees it, its re-export included (generic mode reads nothing else); under copy=False it
  // must alias, and only the library's own read (to_bytes, the adapter's route) misreads.
  const bool misread = zoo && zoo_kind("elements");
  // import_narrow_values: a private copy where one is allowed, which keeps what a path that
  // never saw a large or special value keeps (narrow_values.h).
  const bool narrow = bug("import_narrow_values") && (copy.is_none() || copy.cast<bool>()) && seen.dtype.bits % 8 == 0 &&
                      seen.dtype.lanes == 1;
  const bool private_copy = copy_here || narrow || (misread && (copy.is_none() || copy.cast<bool>()));
  std::shared_ptr<Array> out = wrap(seen, flags, std::move(release), private_copy);
  if (narrow && private_copy)
    for (int64_t k = 0; k < elements; ++k)
      dlpv_fixture_narrow_element(out->dtype, element0(*out) + k * static_cast<int64_t>(itemsize(*out)));
  if (misread && private_copy) *element0(*out) ^= 0x5A;
  else out->zoo_flip = misread;
  return array_object(std::move(out));
}

// ---- the exchange API (DLPack 1.3): one static table --------------------------------------

int xapi_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* error_ctx,
                   void (*set_error)(void*, const char*, const char*)) {
  auto fail = [&](const char* kind, const char* msg) {
    if (set_error) set_error(error_ctx, kind, msg);
    return -1;
  };
  if (!proto || !out) return fail("ValueError", "NULL argument");
  if (proto->device.device_type != kDLCPU) return fail("BufferError", "fakearray allocates on the CPU only");
  if (proto->dtype.lanes != 1 || proto->dtype.bits % 8 != 0 || proto->dtype.bits == 0)
    return fail("BufferError", "unsupported dtype");
  if (proto->ndim < 0 || proto->ndim > 64 || (proto->ndim > 0 && !proto->shape))
    return fail("ValueError", "bad shape");
  uint64_t bytes = proto->dtype.bits / 8;
  for (int32_t i = 0; i < proto->ndim; ++i) {
    if (proto->shape[i] < 0) return fail("ValueError", "negative extent");
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(proto->shape[i]), &bytes))
      return fail("MemoryError", "allocation size overflows");
  }
  if (bytes > (uint64_t{1} << 40)) return fail("MemoryError", "allocation too large");
  try {
    Array a;
    a.dtype = proto->dtype;
    a.shape.assign(proto->shape, proto->shape + proto->ndim);
    a.strides.resize(a.shape.size());
    int64_t acc = 1;
    for (size_t i = a.shape.size(); i-- > 0;) { a.strides[i] = acc; acc *= a.shape[i]; }
    a.buf = std::make_shared<Buffer>(static_cast<size_t>(bytes));
    auto* m = new_managed<DLManagedTensorVersioned>(a, false);
    m->version = DLPackVersion{1, 3};
    m->flags = 0;
    *out = m;
    return 0;
  } catch (...) {
    return fail("MemoryError", "allocation failed");
  }
}

int xapi_from_py_object(void* obj, DLManagedTensorVersioned** out) {
  try {
    Array& a = py::handle(static_cast<PyObject*>(obj)).cast<Array&>();
    if (a.big_endian) {
      // dlpack.h: "this should be a BufferError if possible": another type is lawful (a warning).
      PyErr_SetString(bug("xapi_from_wrong_error")           ? PyExc_TypeError
                      : bug("lawful_xapi_runtime_error")   ? PyExc_RuntimeError
                                                           : PyExc_BufferError,
                      "DLPack only supports native byte order");
      return -1;
    }
    if (bug("xapi_from_unwritten")) return 0;  // success, and *out never written
    auto* m = new_managed<DLManagedTensorVersioned>(a, false);
    m->version = DLPackVersion{1, 3};
    m->flags = a.read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    if (bug("xapi_from_disagrees"))  // strides in bytes, a classic slip
      for (int64_t& s : static_cast<Ctx*>(m->manager_ctx)->strides) s *= static_cast<int64_t>(itemsize(a));
    *out = m;
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    return -1;
  }
}

int xapi_to_py_object(DLManagedTensorVersioned* t, void** out) {
  try {
    if (!t || !out) {
      PyErr_SetString(PyExc_ValueError, "NULL argument");
      return -1;
    }
    if (t->version.major != 1) {
      PyErr_SetString(PyExc_BufferError, "unsupported DLPack major version");
      return -1;
    }
    const std::string why = refusal(t->dl_tensor, t->flags);
    if (!why.empty()) {
      PyErr_SetString(PyExc_BufferError, why.c_str());
      return -1;
    }
    std::function<void()> release = [t] { if (t->deleter) t->deleter(t); };
    if (bug("xapi_to_leaks")) release = nullptr;
    *out = array_object(wrap(t->dl_tensor, t->flags, std::move(release), false)).release().ptr();
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return -1;
  }
}

int xapi_dltensor_from_py_object(void* obj, DLTensor* out) {
  try {
    Array& a = py::handle(static_cast<PyObject*>(obj)).cast<Array&>();
    if (a.big_endian) {
      PyErr_SetString(PyExc_BufferError, "DLPack only supports native byte order");
      return -1;
    }
    int64_t count = 1;
    for (int64_t s : a.shape) count *= s;
    out->data = count ? element0(a) : nullptr;
    out->device = DLDevice{static_cast<DLDeviceType>(a.device_type), 0};
    out->ndim = static_cast<int32_t>(a.shape.size());
    out->dtype = a.dtype;
    if (!bug("xapi_dltensor_skips_offset")) out->byte_offset = 0;  // the bug leaves it as it was
    if (bug("xapi_dltensor_allocates")) {  // fresh copies per call, never freed
      out->shape = new int64_t[a.shape.size() + 1];
      out->strides = new int64_t[a.shape.size() + 1];
      std::copy(a.shape.begin(), a.shape.end(), out->shape);
      std::copy(a.strides.begin(), a.strides.end(), out->strides);
    } else {
      out->shape = a.shape.data();
      out->strides = a.strides.data();
    }
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
    return -1;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    return -1;
  }
}

int xapi_current_work_stream(DLDeviceType type, int32_t, void** out) {
  // fakearray computes on kCudaStream for CUDA (current_stream() says the same); the CPU has none.
  if (out) *out = type == kDLCUDA && !bug("xapi_stream_null") ? reinterpret_cast<void*>(kCudaStream) : nullptr;
  // Lawful: for kDLCPU the header says the producer "can simply return NULL", not that it must.
  if (out && type == kDLCPU && bug("lawful_cpu_work_stream")) *out = reinterpret_cast<void*>(&g_bugs);
  return 0;
}

PyObject* g_array_type = nullptr;  // fakearray.Array, for set_bugs

DLPackExchangeAPI g_exchange_api = {
    {{1, 3}, nullptr}, xapi_allocator, xapi_from_py_object, xapi_to_py_object,
    xapi_dltensor_from_py_object, xapi_current_work_stream};

/// Attach the exchange API to the Array type as the active variant wants it.
void install_exchange_api(py::object cls) {
  g_exchange_api.managed_tensor_from_py_object_no_sync =
      bug("xapi_null_from_py_object") ? nullptr : xapi_from_py_object;
  for (const char* n : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"})
    if (py::hasattr(cls, n)) py::delattr(cls, n);
  // A package whose storage cannot be lent has no non-owning view to give the exchange API's
  // dltensor_from_py_object, and the table is optional (XAPI-01): lawful_always_copies has none.
  if (bug("lawful_always_copies")) return;
  py::capsule table(static_cast<void*>(&g_exchange_api), "dlpack_exchange_api");
  if (bug("xapi_int_v12")) {
    cls.attr("__c_dlpack_exchange_api__") = py::int_(reinterpret_cast<uintptr_t>(&g_exchange_api));
  } else if (bug("xapi_on_instance")) {
    py::cpp_function getter([table](py::handle) { return table; });
    cls.attr("__dlpack_c_exchange_api__") = py::module_::import("builtins").attr("property")(getter);
  } else {
    cls.attr("__dlpack_c_exchange_api__") = table;
  }
}

// ---- construction from compact bytes in one of docs/design.md §3's layouts ----------------

// Walks the n elements of a strided array in C order, the last axis as an inner loop of fixed-size
// copies: to_strided copies compact `from` into `base` (make), else `base` into compact `to`
// (to_bytes). Strides in elements; es bytes an element.
template <size_t E>
void walk_strided(unsigned char* base, const std::vector<int64_t>& shape, const std::vector<int64_t>& st,
                  size_t es, bool to_strided, const unsigned char* from, unsigned char* to, int64_t row_period) {
  const size_t e = E ? E : es;
  const size_t nd = shape.size();
  const int64_t inner = nd ? shape[nd - 1] : 1;
  const int64_t s_in = nd ? st[nd - 1] : 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  std::vector<int64_t> idx(nd, 0);
  int64_t k = 0;  // elements done (compact position)
  for (int64_t outer = n / inner; outer-- > 0;) {
    int64_t off = 0;
    for (size_t i = 0; i + 1 < nd; ++i) off += idx[i] * st[i];
    unsigned char* p = base + off * static_cast<int64_t>(e);
    for (int64_t j = 0; j < inner; ++j, ++k, p += s_in * static_cast<int64_t>(e)) {
      if (to_strided) {
        const int64_t src = row_period ? k % row_period : k;
        std::memcpy(p, from + src * static_cast<int64_t>(e), e);
      } else {
        std::memcpy(to + k * static_cast<int64_t>(e), p, e);
      }
    }
    for (size_t i = nd > 0 ? nd - 1 : 0; i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

void copy_strided(unsigned char* base, const std::vector<int64_t>& shape, const std::vector<int64_t>& st, size_t es,
                  bool to_strided, const unsigned char* from, unsigned char* to, int64_t row_period = 0) {
  switch (es) {
    case 1: return walk_strided<1>(base, shape, st, es, to_strided, from, to, row_period);
    case 2: return walk_strided<2>(base, shape, st, es, to_strided, from, to, row_period);
    case 4: return walk_strided<4>(base, shape, st, es, to_strided, from, to, row_period);
    case 8: return walk_strided<8>(base, shape, st, es, to_strided, from, to, row_period);
    case 16: return walk_strided<16>(base, shape, st, es, to_strided, from, to, row_period);
    default: return walk_strided<0>(base, shape, st, es, to_strided, from, to, row_period);
  }
}

std::shared_ptr<Array> make(std::vector<int64_t> shape, int code, int bits, const std::string& layout,
                            bool read_only, const std::string& data, int device_type, int device_id) {
  auto a = std::make_shared<Array>();
  a->device_type = device_type;
  a->device_id = device_id;
  a->layout = layout_code(layout);
  a->dtype = DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  a->shape = shape;
  a->read_only = read_only;
  const int64_t es = bits / 8;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const size_t nd = shape.size();
  std::vector<int64_t> st(nd, 1);
  int64_t acc = 1, extra = 0;
  if (layout == "fortran") {
    for (size_t i = 0; i < nd; ++i) { st[i] = acc; acc *= shape[i]; }
  } else {
    const int64_t step = layout == "strided" ? 2 : 1;
    acc = step;
    for (size_t i = nd; i-- > 0;) { st[i] = acc; acc *= shape[i]; }
    if (layout == "offset") extra = 1;
    if (layout == "broadcast" && nd > 0) st[0] = 0;
    if (layout == "reversed" && nd > 0) st[0] = -st[0];
    if (layout != "contiguous" && layout != "strided" && layout != "offset" && layout != "broadcast" &&
        layout != "reversed")
      throw py::value_error("unknown layout " + layout);
  }
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t reach = (shape[i] > 0 ? shape[i] - 1 : 0) * st[i];
    (reach < 0 ? lo : hi) += reach;
  }
  a->buf = std::make_shared<Buffer>(static_cast<size_t>((hi - lo + 1 + extra) * es));
  a->offset = (extra - lo) * es;
  a->strides = st;
  const int64_t row = nd > 0 && shape[0] > 0 ? n / shape[0] : n;
  const bool broadcast = layout == "broadcast";  // (asked once, not per element)
  copy_strided(element0(*a), shape, st, static_cast<size_t>(es), true,
               reinterpret_cast<const unsigned char*>(data.data()), nullptr, broadcast ? (row ? row : 1) : 0);
  return a;
}

py::bytes to_bytes(const Array& a) {
  const int64_t es = static_cast<int64_t>(itemsize(a));
  int64_t n = 1;
  for (int64_t s : a.shape) n *= s;
  std::string out(static_cast<size_t>(n * es), '\0');
  copy_strided(element0(a), a.shape, a.strides, static_cast<size_t>(es), false, nullptr,
               reinterpret_cast<unsigned char*>(out.data()));
  if (a.zoo_flip && !out.empty()) out[0] = static_cast<char>(out[0] ^ 0x5A);
  return py::bytes(out);
}

}  // namespace

PYBIND11_MODULE(_fakearray, m) {
  m.doc() = "fakearray: a DLPack test library with plantable bugs";
  zoo_read_bug();
  m.def("current_stream", [](int device_type) -> py::object {
    if (device_type == kDLCUDA) return py::int_(kCudaStream);
    if (device_type == kDLROCM) return py::int_(0);
    return py::none();
  });
  m.def("set_bugs", [](const std::vector<std::string>& bugs) {
    g_bugs = {bugs.begin(), bugs.end()};
    install_exchange_api(py::reinterpret_borrow<py::object>(g_array_type));
  });
  m.def("synchronize", [] { run_deferred(); });
  m.def("bugs", [] { return std::vector<std::string>(g_bugs.begin(), g_bugs.end()); });
  py::class_<Array, std::shared_ptr<Array>>(m, "Array", py::dynamic_attr())
      .def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const Array& a) {
        return py::make_tuple(a.device_type, bug("device_id_wrong") ? 1 : a.device_id);
      })
      .def("data_ptr", [](const Array& a) { return reinterpret_cast<uintptr_t>(element0(a)); })
      .def("to_bytes", [](Array& a) {  // the library's own host copy waits for its queued writes
        settle(a);
        return to_bytes(a);
      })
      .def_property_readonly("writable", [](const Array& a) { return !a.read_only; })
      .def_property_readonly("shape", [](const Array& a) { return a.shape; })
      // lawful_copies_keep_memory, copy_export_leaks: the array API's namespace (the module, whose
      // asarray copies); the other variants have none (the attribute is missing).
      .def_property_readonly("__array_namespace__", [](const Array&) -> py::object {
        if (!copies_keep_memory()) throw py::attribute_error("fakearray arrays have no __array_namespace__");
        return py::cpp_function([](py::args, py::kwargs) { return py::module_::import("fakearray"); });
      });
  // The namespace's copy (fakearray.asarray(x, copy=True)): a compact copy in the array's own place.
  m.def("copy", [](Array& a) {
    settle(a);
    keep_copy_record(a);
    return make(a.shape, a.dtype.code, a.dtype.bits, "contiguous", false, std::string(to_bytes(a)), a.device_type,
                a.device_id);
  });
  m.def("from_dlpack", &from_dlpack, py::arg("x"), py::kw_only(), py::arg("copy") = py::none(),
        py::arg("device") = py::none());
  g_array_type = py::object(m.attr("Array")).release().ptr();  // lives as long as the process
  install_exchange_api(py::reinterpret_borrow<py::object>(g_array_type));
  m.def("make", &make, py::arg("shape"), py::arg("code"), py::arg("bits"), py::arg("layout"),
        py::arg("read_only"), py::arg("data"), py::arg("device_type") = static_cast<int>(kDLCPU),
        py::arg("device_id") = 0);
  // An ext_dev array of zeros whose writes of `data` are still queued (python.stream.queue_ordered).
  m.def("make_pending", [](std::vector<int64_t> shape, int code, int bits, const std::string& data) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto a = make(shape, code, bits, "contiguous", false, std::string(static_cast<size_t>(n) * (bits / 8), '\0'),
                  static_cast<int>(kDLExtDev));
    a->pending.assign(data.begin(), data.end());
    return a;
  });
  m.def("make_big_endian", [](int64_t n) {
    auto a = make({n}, kDLFloat, 32, "contiguous", false, std::string(static_cast<size_t>(n) * 4, '\0'));
    a->big_endian = true;
    return a;
  });
}
