/* examples/toy_plugin/toy_plugin.c: a small, clean dlpack-validate plugin over a toy array
 * library (CPU, byte-sized element types, row-major arrays with a reference count). The first
 * half is the "library"; the second is all a plugin needs: export through the library's
 * exporter, import through its importer, read an imported array back, release it.
 * Build: see examples/README.md. SPDX-License-Identifier: Apache-2.0 */
#include <dlpack_validate/plugin.h>
#include <stdlib.h>
#include <string.h>

/* ---- the toy library ------------------------------------------------------------------ */
typedef struct Toy {
  int refs;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[32], strides[32]; /* in elements */
  char* data;                     /* first element */
  int read_only;
  void* owner;                    /* imported: the DLPack tensor this array borrows */
  int owner_versioned;
} Toy;

static size_t toy_itemsize(DLDataType t) { return t.bits / 8u; }
static int64_t toy_size(const Toy* a) {
  int64_t n = 1;
  for (int32_t d = 0; d < a->ndim; ++d) n *= a->shape[d];
  return n;
}
static void toy_release(Toy* a) {
  if (--a->refs > 0) return;
  if (a->owner && a->owner_versioned) {
    DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)a->owner;
    if (m->deleter) m->deleter(m);
  } else if (a->owner) {
    DLManagedTensor* m = (DLManagedTensor*)a->owner;
    if (m->deleter) m->deleter(m);
  } else {
    free(a->data);
  }
  free(a);
}

/* ---- the plugin: errors --------------------------------------------------------------- */
static _Thread_local const char* g_error = "no error";
static int refuse(int code, const char* why) { g_error = why; return code; }
static const char* last_error(void) { return g_error; }

static int supported(DLDataType t) {  /* the element types the toy has, one lane each */
  const int b = t.bits;
  if (t.lanes != 1) return 0;
  switch (t.code) {
    case DLPV_CODE_INT: case DLPV_CODE_UINT: return b == 8 || b == 16 || b == 32 || b == 64;
    case DLPV_CODE_FLOAT: return b == 16 || b == 32 || b == 64;
    case DLPV_CODE_BFLOAT: return b == 16;
    case DLPV_CODE_COMPLEX: return b == 64 || b == 128;
    case DLPV_CODE_BOOL: return b == 8;
    default: return 0;  /* anything else, a code from a newer DLPack included: refused */
  }
}

/* ---- producer: the toy's exporter --------------------------------------------------------- */
typedef struct Export { Toy* array; int64_t shape[32], strides[32]; } Export;

static void delete_versioned(DLManagedTensorVersioned* m) {
  toy_release(((Export*)m->manager_ctx)->array);
  free(m->manager_ctx);
  free(m);
}
static void delete_legacy(DLManagedTensor* m) {
  toy_release(((Export*)m->manager_ctx)->array);
  free(m->manager_ctx);
  free(m);
}

/* A new toy array holding the reference pattern, in the requested element type and shape. */
static int make_source(const DLPVRequest* req, Toy** out) {
  if (!supported(req->dtype)) return refuse(DLPV_UNSUPPORTED, "element type not supported");
  if (req->device.device_type != kDLCPU || (req->target_device.device_type && req->target_device.device_type != kDLCPU))
    return refuse(DLPV_UNSUPPORTED, "the toy library lives on the CPU only");
  if (req->layout != DLPV_LAYOUT_CONTIGUOUS) return refuse(DLPV_UNSUPPORTED, "only row-major arrays");
  if (req->ndim > 32) return refuse(DLPV_UNSUPPORTED, "more than 32 dimensions");
  /* The array API's stream rule for CPU arrays: stream=None only. */
  if (req->stream != DLPV_NO_STREAM) return refuse(DLPV_UNSUPPORTED, "CPU arrays take no stream");
  if (req->flags & DLPV_REQ_COPY) return refuse(DLPV_UNSUPPORTED, "copy=True is not implemented");
  Toy* a = (Toy*)calloc(1, sizeof *a);
  a->refs = 1;
  a->dtype = req->dtype;
  a->ndim = req->ndim;
  for (int32_t d = req->ndim - 1, step = 1; d >= 0; step *= (int)req->shape[d], --d) {
    a->shape[d] = req->shape[d];
    a->strides[d] = step;
  }
  a->data = (char*)malloc(dlpv_pattern_nbytes(a->dtype, toy_size(a)) + 1);
  dlpv_pattern_fill(a->dtype, toy_size(a), a->data);
  a->read_only = (req->flags & DLPV_REQ_READ_ONLY) != 0;
  *out = a;
  return DLPV_OK;
}

/* Fill `t` to describe `a` (zero-copy: the export holds a reference to the array). */
static Export* describe(Toy* a, DLTensor* t) {
  Export* e = (Export*)calloc(1, sizeof *e);
  e->array = a;
  ++a->refs;
  memcpy(e->shape, a->shape, sizeof e->shape);
  memcpy(e->strides, a->strides, sizeof e->strides);
  t->data = toy_size(a) ? a->data : NULL; /* a zero-size tensor carries no data pointer */
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = a->ndim;
  t->dtype = a->dtype;
  t->shape = e->shape;
  t->strides = e->strides;
  t->byte_offset = 0;
  return e;
}

static int export_versioned(const DLPVRequest* req, DLManagedTensorVersioned** out) {
  Toy* a;
  int rc = make_source(req, &a);
  if (rc != DLPV_OK) return rc;
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof *m);
  m->version.major = 1;
  m->version.minor = 0;
  m->manager_ctx = describe(a, &m->dl_tensor);
  m->deleter = delete_versioned;
  m->flags = a->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  toy_release(a); /* the caller's source array goes away; the export keeps the data alive */
  *out = m;
  return DLPV_OK;
}

static int export_legacy(const DLPVRequest* req, DLManagedTensor** out) {
  Toy* a;
  int rc = make_source(req, &a);
  if (rc != DLPV_OK) return rc;
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof *m);
  m->manager_ctx = describe(a, &m->dl_tensor);
  m->deleter = delete_legacy;
  toy_release(a);
  *out = m;
  return DLPV_OK;
}

/* ---- consumer: the toy's importer ------------------------------------------------------ */
/* A refusal leaves the tensor to the caller (the plugin ABI allows that, or one deleter call). */
static int wrap(DLTensor* t, void* owner, int versioned, int read_only, void** out) {
  if (t->device.device_type != kDLCPU) return refuse(DLPV_UNSUPPORTED, "not CPU memory");
  if (!supported(t->dtype)) return refuse(DLPV_UNSUPPORTED, "element type not supported");
  if (t->ndim < 0 || t->ndim > 32) return refuse(DLPV_UNSUPPORTED, "more than 32 dimensions");
  Toy* a = (Toy*)calloc(1, sizeof *a);
  a->refs = 1;
  a->dtype = t->dtype;
  a->ndim = t->ndim;
  for (int32_t d = t->ndim - 1, step = 1; d >= 0; step *= (int)t->shape[d], --d) {
    a->shape[d] = t->shape[d];
    a->strides[d] = t->strides ? t->strides[d] : step; /* NULL strides: compact row-major */
  }
  a->data = (char*)t->data + t->byte_offset;
  a->read_only = read_only;
  a->owner = owner;
  a->owner_versioned = versioned;
  *out = a;
  return DLPV_OK;
}

static int import_versioned(DLManagedTensorVersioned* m, void** out) {
  if (m->version.major != 1) { /* another layout: release it, reading nothing else */
    if (m->deleter) m->deleter(m);
    return refuse(DLPV_UNSUPPORTED, "DLPack major version is not 1");
  }
  return wrap(&m->dl_tensor, m, 1, (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, out);
}
static int import_legacy(DLManagedTensor* m, void** out) { return wrap(&m->dl_tensor, m, 0, 0, out); }

/* Elements row-major compact, whatever the strides (which may be negative or zero). */
static int read_array(void* array, void* dst, size_t nbytes) {
  Toy* a = (Toy*)array;
  const size_t item = toy_itemsize(a->dtype);
  const int64_t n = toy_size(a);
  if (nbytes != (size_t)n * item) return refuse(DLPV_ERROR, "wrong destination size");
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, offset = 0;
    for (int32_t d = a->ndim - 1; d >= 0; --d) {
      offset += (rest % a->shape[d]) * a->strides[d];
      rest /= a->shape[d];
    }
    memcpy((char*)dst + i * item, a->data + offset * (int64_t)item, item);
  }
  return DLPV_OK;
}
static int is_writable(void* array) { return ((Toy*)array)->read_only ? 0 : 1; }
static void release_array(void* array) { toy_release((Toy*)array); }

/* ---- the table ------------------------------------------------------------------------ */
static const DLPVPlugin g_plugin = {DLPV_ABI_VERSION, "toyarray 0.1", {1, 0},
                                    export_versioned, export_legacy, import_versioned, import_legacy,
                                    read_array, is_writable, release_array, NULL, last_error};

__attribute__((visibility("default"))) const DLPVPlugin* dlpv_get_plugin(void) { return &g_plugin; }
