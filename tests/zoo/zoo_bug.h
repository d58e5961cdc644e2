/* tests/zoo/zoo_bug.h: the bug zoo's run-time bug for the reference plugin (tests/zoo/README.md).
 * Included by tests/fixtures/reference_plugin.c (after Export and on_loading_thread), where its
 * hooks are called behind ZOO_BUILD (a constant 0 except in the zoo's own build, dlpv_zoo, so
 * every other build folds them away), and by the fake array library's extension
 * (tests/python/fakearray/_fakearray.cpp: the adapter route, and the generic route through
 * tests/python/generic/fakeplain.py), where no DLPV_ZOO_BUG means no bug.
 *
 * One bug per process, read once from the environment:
 *   DLPV_ZOO_BUG="ROLE AXIS VALUE KIND"
 * ROLE is producer or consumer; the bug strikes only the exports (producer) or imports
 * (consumer) whose AXIS has VALUE, as the tensor itself shows it:
 *   dtype    float32 int16 uint8 float64 bool complex64 bfloat16 (other: any dtype not named)
 *   size     zero (no element), scalar (0-d), small (up to 100 elements), k (up to 100,000), m
 *   ndim     0 1 2 3 4+
 *   layout   contiguous fortran strided offset reversed broadcast (what the strides and
 *            byte_offset say; NULL strides read as contiguous)
 *   align    a256 a64 a16 odd (the address of element 0 past a 256-byte boundary)
 *   thread   loading other (the thread that loaded the plugin, or another)
 *   capsule  versioned legacy
 *   request  plain copy no_copy read_only (producer: the request's flags)
 *   values   plain edge (producer: the request's DLPV_REQ_EDGE_VALUES; consumer: element 0 holds
 *            the edge pattern's first value and not the small numbers' (never so for bool,
 *            whose two patterns start alike))
 *   repeat   once again (again: another export (producer) or import (consumer) of this library
 *            is alive, as the input space's `again` inputs hold two at once)
 *   any      any (every export or import)
 * DLPV_ZOO_HITS=FILE: a line is appended there by each process the bug struck in (a bug that
 * could not change the tensor it matched, such as the strides of a 0-d tensor, did not strike).
 * KIND is what goes wrong then:
 *   producer: elements (element 0's first byte flipped), strides (the last stride 0),
 *             shape (the last extent one less), dtype (a neighbouring type code), flags (read-only
 *             data said writable, else an undefined flag bit set; versioned only), deleter_noop
 *             (the deleter frees nothing), alias (a copy request is answered without a copy),
 *             copy (a no_copy request is answered with a copy), exception (the export fails
 *             with an error that is no refusal: DLPV_ERROR, or a Python exception other than
 *             BufferError)
 *             Where the includer lends memory itself (ZOO_LENDS_MEMORY 1: fakearray), alias and
 *             copy change the memory and leave the flags as they were; elsewhere (the
 *             reference plugin, whose every export is a fresh allocation) the IS_COPIED flag is
 *             all a copy shows, so they change that flag, and a legacy struct is not struck;
 *             a tensor without elements has nothing to copy or lend: not struck either
 *   consumer: elements (element 0's first byte read flipped), deleter_leak (never calls the
 *             deleter), deleter_double (calls it twice), deleter_early (calls it at import and
 *             goes on viewing the memory)
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef DLPV_ZOO_BUG_H
#define DLPV_ZOO_BUG_H

#include <stdio.h>

#ifndef ZOO_LENDS_MEMORY
#define ZOO_LENDS_MEMORY 0
#endif

/* What zoo_after_export asks of the exporter. */
enum { ZOO_NONE = 0, ZOO_FAIL = 1, ZOO_FLIP_COPY = 2 };

typedef struct ZooBug {
  int on;
  char role[16], axis[16], value[24], kind[24];
} ZooBug;
static ZooBug g_zoo;
/* The repeat axis: exports and imports of this library alive now (zoo_after_export and
 * zoo_on_import count them, zoo_export_gone and zoo_import_gone uncount them). */
static int g_zoo_live_exports, g_zoo_live_imports;

static void zoo_read_bug(void) {
  const char* text = getenv("DLPV_ZOO_BUG");
  if (!text) return;
  g_zoo.on = sscanf(text, "%15s %15s %23s %23s", g_zoo.role, g_zoo.axis, g_zoo.value, g_zoo.kind) == 4;
}

static const char* zoo_dtype_name(DLDataType t) {
  if (t.lanes != 1) return "other";
  if (t.code == DLPV_CODE_FLOAT && t.bits == 32) return "float32";
  if (t.code == DLPV_CODE_FLOAT && t.bits == 64) return "float64";
  if (t.code == DLPV_CODE_INT && t.bits == 16) return "int16";
  if (t.code == DLPV_CODE_UINT && t.bits == 8) return "uint8";
  if (t.code == DLPV_CODE_BOOL && t.bits == 8) return "bool";
  if (t.code == DLPV_CODE_COMPLEX && t.bits == 64) return "complex64";
  if (t.code == DLPV_CODE_BFLOAT && t.bits == 16) return "bfloat16";
  return "other";
}

static int64_t zoo_elements(const DLTensor* t) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static const char* zoo_layout_name(const DLTensor* t) {
  int64_t acc = 1;
  int32_t i;
  int row = 1, col = 1;
  if (t->byte_offset) return "offset";
  if (!t->strides) return "contiguous";
  for (i = 0; i < t->ndim; ++i) {
    if (t->strides[i] < 0) return "reversed";
    if (t->strides[i] == 0 && t->shape[i] > 1) return "broadcast";
  }
  for (i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != acc) row = 0;
    acc *= t->shape[i];
  }
  acc = 1;
  for (i = 0; i < t->ndim; ++i) {
    if (t->shape[i] != 1 && t->strides[i] != acc) col = 0;
    acc *= t->shape[i];
  }
  return row ? "contiguous" : col ? "fortran" : "strided";
}

/* Whether element 0 of a CPU tensor holds the edge pattern's element 0 and not the small
 * numbers' (plugin.h): how a consumer's bug tells edge values from the reference pattern. */
static int zoo_holds_edge(const DLTensor* t) {
  unsigned char edge[16], plain[16];
  const size_t es = (size_t)(t->dtype.bits / 8u) * (t->dtype.lanes ? t->dtype.lanes : 1u);
  if (!t->data || zoo_elements(t) <= 0 || es == 0 || es > sizeof edge || t->device.device_type != kDLCPU) return 0;
  dlpv_pattern_fill_values(t->dtype, 1, edge, DLPV_VALUES_EDGE);
  dlpv_pattern_fill_values(t->dtype, 1, plain, DLPV_VALUES_PLAIN);
  return memcmp(edge, plain, es) != 0 && memcmp((const unsigned char*)t->data + t->byte_offset, edge, es) == 0;
}

/* The value the tensor (and, for the producer, the request) has on the bug's axis. */
static const char* zoo_value(const DLTensor* t, int versioned, const DLPVRequest* req) {
  const char* axis = g_zoo.axis;
  if (!strcmp(axis, "any")) return "any";
  if (!strcmp(axis, "dtype")) return zoo_dtype_name(t->dtype);
  if (!strcmp(axis, "size")) {
    const int64_t n = zoo_elements(t);
    return n == 0 ? "zero" : t->ndim == 0 ? "scalar" : n <= 100 ? "small" : n <= 100000 ? "k" : "m";
  }
  if (!strcmp(axis, "ndim")) {
    static const char* const names[] = {"0", "1", "2", "3"};
    return t->ndim >= 4 ? "4+" : t->ndim < 0 ? "" : names[t->ndim];
  }
  if (!strcmp(axis, "layout")) return req ? (req->layout == DLPV_LAYOUT_CONTIGUOUS ? "contiguous"
                                             : req->layout == DLPV_LAYOUT_FORTRAN  ? "fortran"
                                             : req->layout == DLPV_LAYOUT_STRIDED  ? "strided"
                                             : req->layout == DLPV_LAYOUT_OFFSET   ? "offset"
                                             : req->layout == DLPV_LAYOUT_REVERSED ? "reversed"
                                                                                   : "broadcast")
                                          : zoo_layout_name(t);
  if (!strcmp(axis, "align")) {
    const uintptr_t at = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
    return at % 256 == 0 ? "a256" : at % 64 == 0 ? "a64" : at % 16 == 0 ? "a16" : "odd";
  }
  if (!strcmp(axis, "thread")) return on_loading_thread() ? "loading" : "other";
  if (!strcmp(axis, "capsule")) return versioned ? "versioned" : "legacy";
  if (!strcmp(axis, "request") && req)
    return (req->flags & DLPV_REQ_NO_COPY) ? "no_copy" : (req->flags & DLPV_REQ_COPY) ? "copy"
           : (req->flags & DLPV_REQ_READ_ONLY) ? "read_only" : "plain";
  if (!strcmp(axis, "repeat"))
    return __atomic_load_n(!strcmp(g_zoo.role, "producer") ? &g_zoo_live_exports : &g_zoo_live_imports,
                           __ATOMIC_SEQ_CST) > 0 ? "again" : "once";
  if (!strcmp(axis, "values"))
    return req ? ((req->flags & DLPV_REQ_EDGE_VALUES) ? "edge" : "plain") : zoo_holds_edge(t) ? "edge" : "plain";
  return "";
}

/* DLPV_ZOO_HITS=FILE: each process the bug strikes in appends one line there, so the zoo can tell
 * a bug no input reached from one the cases saw and did not judge. */
static void zoo_note_hit(void) {
  static int noted;
  const char* path;
  FILE* f;
  if (noted) return;
  noted = 1;
  path = getenv("DLPV_ZOO_HITS");
  if (!path) return;
  f = fopen(path, "a");
  if (f) {
    fprintf(f, "%s %s %s %s\n", g_zoo.role, g_zoo.axis, g_zoo.value, g_zoo.kind);
    fclose(f);
  }
}

/* Whether the bug's predicate holds for this export (role "producer") or import ("consumer"). */
static int zoo_matches(const char* role, const DLTensor* t, int versioned, const DLPVRequest* req) {
  return g_zoo.on && !strcmp(g_zoo.role, role) && !strcmp(zoo_value(t, versioned, req), g_zoo.value);
}

static int zoo_kind(const char* kind) { return !strcmp(g_zoo.kind, kind); }

/* An export made: alive for the repeat axis until zoo_export_gone (once per export). */
static void zoo_count_export(Export* e) {
  if (!g_zoo.on || e->zoo_live) return;
  e->zoo_live = 1;
  __atomic_add_fetch(&g_zoo_live_exports, 1, __ATOMIC_SEQ_CST);
}

/* The producer's bug, on a tensor it has just built (flags: the versioned struct's, else NULL).
 * A bug that cannot change this tensor (strides of a 0-d tensor, the flags of a legacy one) is
 * not a strike: the zoo counts it as never struck there, not as a miss. Returns what the
 * exporter must do besides: ZOO_FAIL (release the export and fail), ZOO_FLIP_COPY (lend where
 * it copied, copy where it lent; ZOO_LENDS_MEMORY only), else ZOO_NONE. Every export is counted
 * alive for the repeat axis, and its deleter must call zoo_export_gone. */
static int zoo_after_export(const DLPVRequest* req, DLTensor* t, uint64_t* flags, Export* e) {
  int struck = 1, asked = ZOO_NONE;
  const int matches = zoo_matches("producer", t, flags != NULL, req);
  zoo_count_export(e); /* after the match: "again" means another one is alive */
  if (!matches) return ZOO_NONE;
  if (zoo_kind("elements") && t->data && zoo_elements(t) > 0 && t->device.device_type == kDLCPU)
    *((unsigned char*)t->data + t->byte_offset) ^= 0x5A;
  else if (zoo_kind("strides") && t->ndim > 0 && t->strides && t->shape[t->ndim - 1] > 1)
    t->strides[t->ndim - 1] = 0; /* reads element 0 again and again: never past the buffer */
  else if (zoo_kind("shape") && t->ndim > 0 && t->shape[t->ndim - 1] > 1)
    t->shape[t->ndim - 1] -= 1;
  else if (zoo_kind("dtype"))
    t->dtype.code = t->dtype.code == DLPV_CODE_FLOAT ? DLPV_CODE_INT : t->dtype.code == DLPV_CODE_INT ? DLPV_CODE_UINT : DLPV_CODE_FLOAT;
  else if (zoo_kind("flags") && flags)
    /* read-only data said writable; else a flag bit DLPack does not define (marking data
     * read-only unasked is lawful, so that is not the bug planted) */
    *flags = (*flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? *flags & ~(uint64_t)DLPACK_FLAG_BITMASK_READ_ONLY
                                                      : *flags | ((uint64_t)1 << 7);
  else if (zoo_kind("deleter_noop"))
    e->zoo_noop = 1;
  else if (zoo_kind("alias") && req && (req->flags & DLPV_REQ_COPY) && t->data && zoo_elements(t) > 0 &&
           (ZOO_LENDS_MEMORY || flags)) {
    if (ZOO_LENDS_MEMORY) asked = ZOO_FLIP_COPY;
    else *flags &= ~(uint64_t)DLPACK_FLAG_BITMASK_IS_COPIED;
  } else if (zoo_kind("copy") && req && (req->flags & DLPV_REQ_NO_COPY) && t->data && zoo_elements(t) > 0 &&
             (ZOO_LENDS_MEMORY || flags)) {
    if (ZOO_LENDS_MEMORY) asked = ZOO_FLIP_COPY;
    else *flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  } else if (zoo_kind("exception"))
    asked = ZOO_FAIL;
  else
    struck = 0;
  if (struck) zoo_note_hit();
  return asked;
}

/* An export's deleter ran (the first time): it is no longer alive for the repeat axis. */
static void zoo_export_gone(Export* e) {
  if (!e->zoo_live) return;
  e->zoo_live = 0;
  __atomic_sub_fetch(&g_zoo_live_exports, 1, __ATOMIC_SEQ_CST);
}

/* An imported array was released: no longer alive for the repeat axis. */
static void zoo_import_gone(void) {
  if (g_zoo.on) __atomic_sub_fetch(&g_zoo_live_imports, 1, __ATOMIC_SEQ_CST);
}

/* The consumer's bug, decided at import: 1 when it strikes this array. Every import is counted
 * for the repeat axis, and its release must call zoo_import_gone. deleter_early releases
 * the tensor now (and the array goes on viewing its memory). A misread of no element, or an
 * early release of a tensor with no data to view, is not a strike. */
static int zoo_on_import(DLTensor* t, int versioned, DLManagedTensorVersioned* v, DLManagedTensor* l) {
  const int matches = zoo_matches("consumer", t, versioned, NULL);
  if (g_zoo.on) __atomic_add_fetch(&g_zoo_live_imports, 1, __ATOMIC_SEQ_CST); /* zoo_import_gone uncounts */
  if (!matches) return 0;
  if ((zoo_kind("elements") || zoo_kind("deleter_early")) && (zoo_elements(t) == 0 || !t->data)) return 0;
  zoo_note_hit();
  if (zoo_kind("deleter_early")) {
    if (v && v->deleter) v->deleter(v);
    if (l && l->deleter) l->deleter(l);
  }
  return 1;
}

#endif
