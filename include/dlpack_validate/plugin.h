/* include/dlpack_validate/plugin.h: the dlpack-validate plugin ABI, version 1.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A library under test is wrapped in a small shared object that exports
 *     const DLPVPlugin* dlpv_get_plugin(void);
 * returning a static table (see DLPVPlugin below). This header is the only one a plugin
 * author needs. It compiles as C99 and as C++17, and it brings:
 *   - the DLPack v1.x types the validator needs (DLPackVersion, DLManagedTensorVersioned,
 *     the flag bits, the C exchange-API table), defined here from the DLPack specification
 *     because Debian ships the 0.6 header; a newer system header that already defines them
 *     is used instead, and the layouts are checked at compile time either way;
 *   - prefixed constants for every dtype code and device type of DLPack 1.3, whatever the
 *     system header knows (DLPV_CODE_*, DLPV_DEV_*);
 *   - the reference data pattern (dlpv_pattern_*), so that a plugin and the validator agree
 *     on the bytes of every test tensor.
 */
#ifndef DLPACK_VALIDATE_PLUGIN_H_
#define DLPACK_VALIDATE_PLUGIN_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * DLPack v1.x definitions (layouts: spec checklist section 1.5)
 * ------------------------------------------------------------------------------------- */
#if !defined(DLPACK_MAJOR_VERSION)
/* Pre-1.0 system header: the versioned types do not exist yet. */
typedef struct DLPackVersion {
  uint32_t major; /* incompatible ABI changes */
  uint32_t minor; /* compatible additions (new enum values) */
} DLPackVersion;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version; /* fixed prefix: version, manager_ctx, deleter, flags */
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self); /* may be NULL */
  uint64_t flags;                                          /* DLPACK_FLAG_BITMASK_* */
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPV_OWN_VERSIONED_TYPES 1
#else
#define DLPV_OWN_VERSIONED_TYPES 0
#endif

#if !defined(DLPACK_MAJOR_VERSION) || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION < 2)
/* The C exchange API arrived with DLPack 1.2. */
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void* py_object,
                                                     DLManagedTensorVersioned** out);
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned* tensor,
                                                   void** out_py_object);
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id,
                                       void** out_current_stream);

typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;                    /* consumers check major before use */
  struct DLPackExchangeAPIHeader* prev_api; /* older-major table, or NULL */
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;                      /* required */
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync; /* required */
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;     /* required */
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;           /* optional */
  DLPackCurrentWorkStream current_work_stream;                                /* required */
} DLPackExchangeAPI;
#define DLPV_OWN_EXCHANGE_TYPES 1
#else
#define DLPV_OWN_EXCHANGE_TYPES 0
#endif

/* Newest DLPack version these definitions describe. */
#define DLPV_DLPACK_MAJOR 1
#define DLPV_DLPACK_MINOR 3

/* Dtype codes of DLPack 1.3 (DLDataType.code). */
enum {
  DLPV_CODE_INT = 0, DLPV_CODE_UINT = 1, DLPV_CODE_FLOAT = 2, DLPV_CODE_OPAQUE_HANDLE = 3,
  DLPV_CODE_BFLOAT = 4, DLPV_CODE_COMPLEX = 5, DLPV_CODE_BOOL = 6,
  DLPV_CODE_FLOAT8_E3M4 = 7, DLPV_CODE_FLOAT8_E4M3 = 8, DLPV_CODE_FLOAT8_E4M3B11FNUZ = 9,
  DLPV_CODE_FLOAT8_E4M3FN = 10, DLPV_CODE_FLOAT8_E4M3FNUZ = 11, DLPV_CODE_FLOAT8_E5M2 = 12,
  DLPV_CODE_FLOAT8_E5M2FNUZ = 13, DLPV_CODE_FLOAT8_E8M0FNU = 14,
  DLPV_CODE_FLOAT6_E2M3FN = 15, DLPV_CODE_FLOAT6_E3M2FN = 16, DLPV_CODE_FLOAT4_E2M1FN = 17,
  DLPV_CODE_LAST = 17, /* highest code defined by DLPack 1.3 */
  /* Provisional: on DLPack's unreleased `main` after 1.3 (complex of two bfloat16, bits 32),
   * reportedly without a minor bump. Requests may name it; a 1.3 library refuses it. */
  DLPV_CODE_BCOMPLEX = 18
};

/* Device types of DLPack 1.3 (DLDevice.device_type); 0, 5 and 6 are unassigned. */
enum {
  DLPV_DEV_CPU = 1, DLPV_DEV_CUDA = 2, DLPV_DEV_CUDA_HOST = 3, DLPV_DEV_OPENCL = 4,
  DLPV_DEV_VULKAN = 7, DLPV_DEV_METAL = 8, DLPV_DEV_VPI = 9, DLPV_DEV_ROCM = 10,
  DLPV_DEV_ROCM_HOST = 11, DLPV_DEV_EXT_DEV = 12, DLPV_DEV_CUDA_MANAGED = 13,
  DLPV_DEV_ONEAPI = 14, DLPV_DEV_WEBGPU = 15, DLPV_DEV_HEXAGON = 16, DLPV_DEV_MAIA = 17,
  DLPV_DEV_TRN = 18
};

/* ---------------------------------------------------------------------------------------
 * Compile-time layout checks (C99 has no static_assert: a negative array size fails)
 * ------------------------------------------------------------------------------------- */
#define DLPV_LAYOUT_CHECK(name, cond) typedef char dlpv_layout_check_##name[(cond) ? 1 : -1]
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
DLPV_LAYOUT_CHECK(version_size, sizeof(DLPackVersion) == 8);
DLPV_LAYOUT_CHECK(version_minor, offsetof(DLPackVersion, minor) == 4);
DLPV_LAYOUT_CHECK(device_size, sizeof(DLDevice) == 8);
DLPV_LAYOUT_CHECK(device_id, offsetof(DLDevice, device_id) == 4);
DLPV_LAYOUT_CHECK(dtype_size, sizeof(DLDataType) == 4);
DLPV_LAYOUT_CHECK(dtype_lanes, offsetof(DLDataType, lanes) == 2);
DLPV_LAYOUT_CHECK(tensor_size, sizeof(DLTensor) == 48);
DLPV_LAYOUT_CHECK(tensor_device, offsetof(DLTensor, device) == 8);
DLPV_LAYOUT_CHECK(tensor_ndim, offsetof(DLTensor, ndim) == 16);
DLPV_LAYOUT_CHECK(tensor_dtype, offsetof(DLTensor, dtype) == 20);
DLPV_LAYOUT_CHECK(tensor_shape, offsetof(DLTensor, shape) == 24);
DLPV_LAYOUT_CHECK(tensor_strides, offsetof(DLTensor, strides) == 32);
DLPV_LAYOUT_CHECK(tensor_byte_offset, offsetof(DLTensor, byte_offset) == 40);
DLPV_LAYOUT_CHECK(legacy_size, sizeof(DLManagedTensor) == 64);
DLPV_LAYOUT_CHECK(legacy_ctx, offsetof(DLManagedTensor, manager_ctx) == 48);
DLPV_LAYOUT_CHECK(legacy_deleter, offsetof(DLManagedTensor, deleter) == 56);
DLPV_LAYOUT_CHECK(versioned_size, sizeof(DLManagedTensorVersioned) == 80);
DLPV_LAYOUT_CHECK(versioned_ctx, offsetof(DLManagedTensorVersioned, manager_ctx) == 8);
DLPV_LAYOUT_CHECK(versioned_deleter, offsetof(DLManagedTensorVersioned, deleter) == 16);
DLPV_LAYOUT_CHECK(versioned_flags, offsetof(DLManagedTensorVersioned, flags) == 24);
DLPV_LAYOUT_CHECK(versioned_tensor, offsetof(DLManagedTensorVersioned, dl_tensor) == 32);
DLPV_LAYOUT_CHECK(xheader_size, sizeof(DLPackExchangeAPIHeader) == 16);
DLPV_LAYOUT_CHECK(xheader_prev, offsetof(DLPackExchangeAPIHeader, prev_api) == 8);
DLPV_LAYOUT_CHECK(xapi_size, sizeof(DLPackExchangeAPI) == 56);
DLPV_LAYOUT_CHECK(xapi_alloc, offsetof(DLPackExchangeAPI, managed_tensor_allocator) == 16);
DLPV_LAYOUT_CHECK(xapi_from, offsetof(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync) == 24);
DLPV_LAYOUT_CHECK(xapi_to, offsetof(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync) == 32);
DLPV_LAYOUT_CHECK(xapi_dlt, offsetof(DLPackExchangeAPI, dltensor_from_py_object_no_sync) == 40);
DLPV_LAYOUT_CHECK(xapi_stream, offsetof(DLPackExchangeAPI, current_work_stream) == 48);
#endif
/* The legacy struct and the versioned struct's tail must be the same DLTensor. */
DLPV_LAYOUT_CHECK(shared_tensor,
                  sizeof(((DLManagedTensorVersioned*)0)->dl_tensor) == sizeof(DLTensor));
DLPV_LAYOUT_CHECK(flag_bits, DLPACK_FLAG_BITMASK_READ_ONLY == 1 &&
                                 DLPACK_FLAG_BITMASK_IS_COPIED == 2 &&
                                 DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED == 4);
DLPV_LAYOUT_CHECK(code_values, (int)kDLInt == (int)DLPV_CODE_INT &&
                                   (int)kDLUInt == (int)DLPV_CODE_UINT &&
                                   (int)kDLFloat == (int)DLPV_CODE_FLOAT &&
                                   (int)kDLBfloat == (int)DLPV_CODE_BFLOAT &&
                                   (int)kDLComplex == (int)DLPV_CODE_COMPLEX);
DLPV_LAYOUT_CHECK(device_values, (int)kDLCPU == (int)DLPV_DEV_CPU &&
                                     (int)kDLCUDA == (int)DLPV_DEV_CUDA &&
                                     (int)kDLCUDAHost == (int)DLPV_DEV_CUDA_HOST &&
                                     (int)kDLROCM == (int)DLPV_DEV_ROCM &&
                                     (int)kDLCUDAManaged == (int)DLPV_DEV_CUDA_MANAGED);

/* ---------------------------------------------------------------------------------------
 * The plugin table
 * ------------------------------------------------------------------------------------- */
#define DLPV_ABI_VERSION 1
#define DLPV_OK 0
#define DLPV_UNSUPPORTED 1 /* clean refusal: dtype/device/layout/version not supported */
#define DLPV_ERROR 2       /* anything else; details from last_error() */
#define DLPV_NO_STREAM INT64_MIN

/* Layouts a producer is asked for (DLPVRequest.layout). Strides count elements; for shape
 * (3, 4) the validator's own tensors use the strides shown. Logical element i (row-major over
 * the shape) must hold dlpv_pattern_value(dtype, i), whatever the memory order, except for
 * BROADCAST. A layout the library cannot make is refused with DLPV_UNSUPPORTED; answering with
 * compact row-major strides instead is a copy, which a versioned tensor must flag IS_COPIED.
 * (docs/plugin.md has the table.) */
enum {
  DLPV_LAYOUT_CONTIGUOUS = 0, /* row-major compact: (4, 1) */
  DLPV_LAYOUT_FORTRAN = 1,    /* column-major, the transpose of a compact array: (1, 3) */
  DLPV_LAYOUT_STRIDED = 2,    /* every 2nd element along the last axis of a 2x wider array: (8, 2) */
  DLPV_LAYOUT_OFFSET = 3,     /* a view from element 1 of a 1-longer buffer (data or byte_offset): (4, 1) */
  DLPV_LAYOUT_REVERSED = 4,   /* axis 0 reversed, a negative stride: (-4, 1); data + byte_offset
                                 addresses logical element (0, 0), the last row in memory */
  DLPV_LAYOUT_BROADCAST = 5   /* axis 0 broadcast, stride 0: (0, 1); one row in memory, so
                                 element i holds the pattern of i mod (size / shape[0]) */
};
#define DLPV_REQ_READ_ONLY (1u << 0) /* the source array is read-only */
#define DLPV_REQ_COPY (1u << 1)      /* the consumer asks for a copy (copy=True) */
/* The consumer forbids a copy (copy=False): a request the library can only meet by copying
 * (another target_device, for instance) must be refused, never answered with a copy. Without
 * DLPV_REQ_COPY or DLPV_REQ_NO_COPY the library copies only where it must (copy=None). Added
 * compatibly in plugin ABI 1, so a plugin says that it understands it: see dlpv_request_flags
 * below. A plugin that does not is never sent it (its copy=False cases are skips that say so). */
#define DLPV_REQ_NO_COPY (1u << 2)
/* The producer fills the array with the edge pattern (dlpv_pattern_fill_values with
 * DLPV_VALUES_EDGE: each dtype's extremes and special values) instead of the small numbers of
 * dlpv_pattern_fill. Added compatibly in plugin ABI 1, declared like DLPV_REQ_NO_COPY: a plugin
 * that does not declare it is never sent it (its edge-value cases are skips that say so). */
#define DLPV_REQ_EDGE_VALUES (1u << 3)
/* The request bits of plugin ABI 1 as first published: every plugin understands these. */
#define DLPV_REQ_BASE (DLPV_REQ_READ_ONLY | DLPV_REQ_COPY)

/* Optional second export: the DLPV_REQ_* bits the plugin understands (DLPV_REQ_BASE included),
 *   uint32_t dlpv_request_flags(void);
 * A plugin without it is taken to understand DLPV_REQ_BASE only. A request carrying a bit the
 * plugin does not declare is not sent to it: the validator reports the case as a skip (the
 * library was never asked), never as a failure. Bits added later come with the same rule, so
 * plugins built against an older header keep loading and are judged by what they understand. */
typedef uint32_t (*dlpv_request_flags_fn)(void);
#define DLPV_REQUEST_FLAGS_ENTRY_POINT "dlpv_request_flags"

/* What the validator asks a producer for. */
typedef struct DLPVRequest {
  uint32_t struct_size; /* sizeof(DLPVRequest) */
  DLDataType dtype;
  DLDevice device;
  int32_t ndim;
  const int64_t* shape;
  uint32_t layout;           /* DLPV_LAYOUT_* */
  uint32_t flags;            /* DLPV_REQ_* */
  DLPackVersion max_version; /* consumer's max version (export_versioned only) */
  int64_t stream;            /* consumer stream per the array-API stream table, or DLPV_NO_STREAM.
                                A CPU array takes no stream (array API: stream=None only for
                                kDLCPU): a CPU export given one must refuse it (STRM-04). */
  DLDevice target_device;    /* like dl_device=: {0,0} means the source's own device */
} DLPVRequest;

/* The table a plugin returns from dlpv_get_plugin(). Every pointer except name may be NULL,
 * which means the library does not implement that role. */
typedef struct DLPVPlugin {
  uint32_t abi_version;         /* DLPV_ABI_VERSION */
  const char* name;             /* "mylib 2.3.1" */
  DLPackVersion dlpack_version; /* newest DLPack version the library implements */
  /* Producer: a new tensor for req whose logical element i (row-major) holds
   * dlpv_pattern_value(req->dtype, i), exported through the library's real exporter. */
  int (*export_versioned)(const DLPVRequest* req, DLManagedTensorVersioned** out);
  int (*export_legacy)(const DLPVRequest* req, DLManagedTensor** out);
  /* Consumer: import through the library's real importer. On DLPV_OK the library owns the
   * tensor and must call its deleter exactly once, after release_array(). On any other
   * return the library has either called the deleter exactly once itself or left ownership
   * with the caller, who then calls it: both are lawful, and the validator counts the calls
   * through its own deleter to tell them apart (two calls fail). For a versioned tensor whose
   * major version is not 1, dlpack.h says the consumer "must call the deleter (and it is safe
   * to do so)": call it, reading nothing past the fixed prefix (version, manager_ctx, deleter,
   * flags). */
  int (*import_versioned)(DLManagedTensorVersioned* t, void** out_array);
  int (*import_legacy)(DLManagedTensor* t, void** out_array);
  /* Copy an imported array's elements, row-major compact, into host memory dst. */
  int (*read_array)(void* array, void* dst, size_t nbytes);
  int (*is_writable)(void* array); /* 1 writable, 0 read-only, -1 no such notion */
  void (*release_array)(void* array);
  /* The library's C exchange API table, if it has one (must be static). */
  const DLPackExchangeAPI* (*exchange_api)(void);
  const char* (*last_error)(void); /* message for the calling thread's last failure */
} DLPVPlugin;

typedef const DLPVPlugin* (*dlpv_get_plugin_fn)(void);
#define DLPV_ENTRY_POINT "dlpv_get_plugin"

/* ---------------------------------------------------------------------------------------
 * Reference data pattern
 *
 * Values are drawn from small sets that every dtype represents exactly:
 *   int/uint     ((7i + 3) mod 101) - 50 (signed) or (7i + 3) mod 101 (unsigned)
 *   float16/32/64, bfloat16, complex parts   quarter steps in [-7.5, 7.5], period 61
 *   fp8 / fp6 / fp4   a 15-entry table of 0, +-0.5, +-1, +-1.5, +-2, +-3, +-4, +-6
 *   e8m0fnu      powers of two 2^-3 .. 2^3
 *   bool         0 or 1
 * ------------------------------------------------------------------------------------- */
static inline int64_t dlpv__mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static inline double dlpv__small_float(int64_t i) {
  static const double table[15] = {0.0, 1.0, -1.0, 2.0, 0.5, -2.0, 3.0, -0.5,
                                   4.0, 1.5, -3.0, 6.0, -1.5, -4.0, -6.0};
  return table[dlpv__mod(i, 15)];
}

static inline int dlpv__is_minifloat(uint8_t code) {
  return code >= DLPV_CODE_FLOAT8_E3M4 && code <= DLPV_CODE_FLOAT4_E2M1FN;
}

/* Value of logical element i (real part for complex). */
static inline double dlpv_pattern_value(DLDataType dtype, int64_t i) {
  switch (dtype.code) {
    case DLPV_CODE_INT: return (double)(dlpv__mod(7 * i + 3, 101) - 50);
    case DLPV_CODE_UINT: return (double)dlpv__mod(7 * i + 3, 101);
    case DLPV_CODE_BOOL: return (double)(dlpv__mod(7 * i + 3, 11) % 2);
    case DLPV_CODE_FLOAT8_E8M0FNU: {
      int64_t e = dlpv__mod(i, 7) - 3;
      double v = 1.0;
      for (; e > 0; --e) v *= 2.0;
      for (; e < 0; ++e) v *= 0.5;
      return v;
    }
    default:
      if (dlpv__is_minifloat(dtype.code)) return dlpv__small_float(i);
      return (double)(dlpv__mod(7 * i + 3, 61) - 30) / 4.0;
  }
}

static inline int dlpv__is_complex(uint8_t code) {
  return code == DLPV_CODE_COMPLEX || code == DLPV_CODE_BCOMPLEX;
}

/* Imaginary part of element i for complex dtypes (0 for every other dtype). */
static inline double dlpv_pattern_value_imag(DLDataType dtype, int64_t i) {
  if (!dlpv__is_complex(dtype.code)) return 0.0;
  return (double)(dlpv__mod(11 * i + 5, 61) - 30) / 4.0;
}

/* Bit pattern of an exactly representable value v in a small float format with e exponent
 * bits, m mantissa bits and the given bias; signed formats put the sign above the exponent.
 * Subnormals are handled; values are assumed representable (the pattern guarantees it). */
static inline uint32_t dlpv__encode_float(double v, int e, int m, int bias, int has_sign) {
  uint32_t sign = 0;
  int exp2 = 0;
  double frac;
  int biased;
  if (v == 0.0) return 0;
  if (v < 0) { sign = 1; v = -v; }
  frac = v;
  while (frac >= 2.0) { frac *= 0.5; ++exp2; }
  while (frac < 1.0) { frac *= 2.0; --exp2; }
  biased = exp2 + bias;
  {
    uint32_t mant;
    uint32_t bits;
    if (biased <= 0) { /* subnormal: value = mant * 2^(1 - bias - m) */
      double scaled = v;
      int k;
      for (k = 0; k < m + bias - 1; ++k) scaled *= 2.0;
      mant = (uint32_t)scaled;
      biased = 0;
    } else {
      double scaled = frac - 1.0;
      int k;
      for (k = 0; k < m; ++k) scaled *= 2.0;
      mant = (uint32_t)scaled;
    }
    bits = ((uint32_t)biased << m) | mant;
    if (has_sign) bits |= sign << (e + m);
    return bits;
  }
}

/* Encoding of element i as an unsigned integer of dtype.bits bits (one lane; for complex,
 * `imag` selects the part; bits then counts one part). Returns 0 for unknown codes. */
static inline uint64_t dlpv__encode_bits(DLDataType dtype, int64_t i, int imag) {
  double v = imag ? dlpv_pattern_value_imag(dtype, i) : dlpv_pattern_value(dtype, i);
  switch (dtype.code) {
    case DLPV_CODE_INT: return (uint64_t)(int64_t)v;
    case DLPV_CODE_UINT: return (uint64_t)v;
    case DLPV_CODE_BOOL: return v != 0.0 ? 1u : 0u;
    case DLPV_CODE_BFLOAT:
    case DLPV_CODE_BCOMPLEX: return dlpv__encode_float(v, 8, 7, 127, 1);
    case DLPV_CODE_FLOAT:
    case DLPV_CODE_COMPLEX: {
      unsigned part_bits = dtype.code == DLPV_CODE_COMPLEX ? dtype.bits / 2u : dtype.bits;
      if (part_bits == 16) return dlpv__encode_float(v, 5, 10, 15, 1);
      if (part_bits == 32) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
      }
      if (part_bits == 64) {
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
      }
      return 0;
    }
    case DLPV_CODE_FLOAT8_E3M4: return dlpv__encode_float(v, 3, 4, 3, 1);
    case DLPV_CODE_FLOAT8_E4M3: return dlpv__encode_float(v, 4, 3, 7, 1);
    case DLPV_CODE_FLOAT8_E4M3B11FNUZ: return dlpv__encode_float(v, 4, 3, 11, 1);
    case DLPV_CODE_FLOAT8_E4M3FN: return dlpv__encode_float(v, 4, 3, 7, 1);
    case DLPV_CODE_FLOAT8_E4M3FNUZ: return dlpv__encode_float(v, 4, 3, 8, 1);
    case DLPV_CODE_FLOAT8_E5M2: return dlpv__encode_float(v, 5, 2, 15, 1);
    case DLPV_CODE_FLOAT8_E5M2FNUZ: return dlpv__encode_float(v, 5, 2, 16, 1);
    case DLPV_CODE_FLOAT8_E8M0FNU: return dlpv__encode_float(v, 8, 0, 127, 0);
    case DLPV_CODE_FLOAT6_E2M3FN: return dlpv__encode_float(v, 2, 3, 1, 1);
    case DLPV_CODE_FLOAT6_E3M2FN: return dlpv__encode_float(v, 3, 2, 3, 1);
    case DLPV_CODE_FLOAT4_E2M1FN: return dlpv__encode_float(v, 2, 1, 1, 1);
    default: return 0;
  }
}

static inline void dlpv__store_le(uint64_t value, unsigned nbytes, unsigned char* dst) {
  unsigned k;
  /* Elements are native-endian; dlpack-validate runs on little-endian hosts, and the
   * encoding below is the in-memory byte order there. */
  for (k = 0; k < nbytes; ++k) dst[k] = (unsigned char)(value >> (8u * k));
}

/* ---------------------------------------------------------------------------------------
 * The edge pattern (DLPV_REQ_EDGE_VALUES; the input space's values axis)
 *
 * The small numbers above never set a high bit or a special value, so a library that loses
 * the sign bit, the top byte, an infinity, a NaN or a subnormal on the way passes them. The edge
 * pattern is a table of bit patterns per dtype, cycled: element i (one lane, one part) holds
 * entry (i mod the table's length), the imaginary part of a complex entry (i + 5).
 *   int/uint (any width)   all ones, the top bit alone, all but the top bit, 0, 1, the top bit
 *                          and 1, alternating bits both ways, the top byte, the low byte (of
 *                          an 8-bit type: the top and low nibble), all ones but bit 0
 *   float16/32/64, bfloat16 (and complex parts)
 *                          lowest finite, +inf, -inf, the quiet NaN (top mantissa bit only),
 *                          -0, largest finite, smallest normal, smallest subnormal, the largest
 *                          negative subnormal, 1 + one ulp, 0
 *   bool                   0 and 1 in a period of 11 (a DLPack bool holds nothing else)
 *   other dtypes           the small numbers (no edge table)
 * The NaN is the quiet one every conversion keeps; no payloads, no signalling NaNs.
 * ------------------------------------------------------------------------------------- */
#define DLPV_VALUES_PLAIN 0
#define DLPV_VALUES_EDGE 1

/* Whether dtype has an edge table (else its edge pattern is the small numbers). */
static inline int dlpv_pattern_has_edge(DLDataType dtype) {
  switch (dtype.code) {
    case DLPV_CODE_INT:
    case DLPV_CODE_UINT: return dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    case DLPV_CODE_FLOAT: return dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    case DLPV_CODE_COMPLEX: return dtype.bits == 32 || dtype.bits == 64 || dtype.bits == 128;
    case DLPV_CODE_BFLOAT: return dtype.bits == 16;
    case DLPV_CODE_BOOL: return dtype.bits == 8;
    default: return 0;
  }
}

/* Bits of a float format with e exponent bits and m mantissa bits (sign on top) for one of the
 * edge table's 11 entries. */
static inline uint64_t dlpv__edge_float(unsigned e, unsigned m, int64_t k) {
  const uint64_t sign = (uint64_t)1 << (e + m), exp_all = (((uint64_t)1 << e) - 1u) << m;
  const uint64_t mant_all = ((uint64_t)1 << m) - 1u, one_exp = ((((uint64_t)1 << (e - 1u)) - 1u)) << m;
  switch (k) {
    case 0: return sign | (exp_all - ((uint64_t)1 << m)) | mant_all; /* lowest finite */
    case 1: return exp_all;                                          /* +inf */
    case 2: return sign | exp_all;                                   /* -inf */
    case 3: return exp_all | ((uint64_t)1 << (m - 1u));              /* quiet NaN */
    case 4: return sign;                                             /* -0 */
    case 5: return (exp_all - ((uint64_t)1 << m)) | mant_all;        /* largest finite */
    case 6: return (uint64_t)1 << m;                                 /* smallest normal */
    case 7: return 1u;                                               /* smallest subnormal */
    case 8: return sign | mant_all;                                  /* largest negative subnormal */
    case 9: return one_exp | 1u;                                     /* 1 + one ulp */
    default: return 0u;                                              /* 0 */
  }
}
#define DLPV__EDGE_FLOATS 11
#define DLPV__EDGE_INTS 11

/* Bits of an integer of `bits` bits for one of the edge table's 11 entries. */
static inline uint64_t dlpv__edge_int(unsigned bits, int64_t k) {
  const uint64_t all = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1u);
  const uint64_t top = (uint64_t)1 << (bits - 1u);
  switch (k) {
    case 0: return all;                                    /* all ones (-1 signed) */
    case 1: return top;                                    /* the top bit alone (the minimum) */
    case 2: return all & ~top;                             /* the signed maximum */
    case 3: return 0u;
    case 4: return 1u;
    case 5: return top | 1u;                               /* the minimum + 1 */
    case 6: return all & (uint64_t)0x5555555555555555ull;  /* alternating, low bit set */
    case 7: return all & (uint64_t)0xAAAAAAAAAAAAAAAAull;  /* alternating, top bit set */
    case 8: return bits == 8 ? 0xF0u : all & ~(all >> 8); /* the top byte (of a byte: its top nibble) */
    case 9: return bits == 8 ? 0x0Fu : 0xFFu;              /* the low byte (of a byte: its low nibble) */
    default: return all - 1u;                              /* all ones but the lowest bit */
  }
}

/* Encoding of element i of the edge pattern (one lane; `imag` selects a complex part's bits). */
static inline uint64_t dlpv__edge_bits(DLDataType dtype, int64_t i, int imag) {
  const int64_t k = imag ? i + 5 : i;
  switch (dtype.code) {
    case DLPV_CODE_INT:
    case DLPV_CODE_UINT: return dlpv__edge_int(dtype.bits, dlpv__mod(k, DLPV__EDGE_INTS));
    case DLPV_CODE_BOOL: return (0x4E3u >> dlpv__mod(k, 11)) & 1u; /* 1,1,0,0,0,1,1,1,0,0,1 */
    case DLPV_CODE_BFLOAT: return dlpv__edge_float(8, 7, dlpv__mod(k, DLPV__EDGE_FLOATS));
    case DLPV_CODE_FLOAT:
    case DLPV_CODE_COMPLEX: {
      unsigned part_bits = dtype.code == DLPV_CODE_COMPLEX ? dtype.bits / 2u : dtype.bits;
      if (part_bits == 16) return dlpv__edge_float(5, 10, dlpv__mod(k, DLPV__EDGE_FLOATS));
      if (part_bits == 32) return dlpv__edge_float(8, 23, dlpv__mod(k, DLPV__EDGE_FLOATS));
      return dlpv__edge_float(11, 52, dlpv__mod(k, DLPV__EDGE_FLOATS));
    }
    default: return 0u;
  }
}

/* Store element i (all lanes; lane j holds pattern element i*lanes + j) at dst, from the small
 * numbers or, `edge`, the edge pattern above. Only for byte-addressable dtypes (bits % 8 == 0). */
static inline void dlpv__store_values(DLDataType dtype, int64_t i, void* dst, int edge) {
  unsigned char* out = (unsigned char*)dst;
  unsigned lanes = dtype.lanes ? dtype.lanes : 1u;
  unsigned lane;
  for (lane = 0; lane < lanes; ++lane) {
    int64_t li = i * (int64_t)lanes + (int64_t)lane;
    if (dlpv__is_complex(dtype.code)) {
      unsigned half = dtype.bits / 16u; /* bytes per part */
      dlpv__store_le(edge ? dlpv__edge_bits(dtype, li, 0) : dlpv__encode_bits(dtype, li, 0), half, out);
      dlpv__store_le(edge ? dlpv__edge_bits(dtype, li, 1) : dlpv__encode_bits(dtype, li, 1), half, out + half);
      out += 2u * half;
    } else {
      dlpv__store_le(edge ? dlpv__edge_bits(dtype, li, 0) : dlpv__encode_bits(dtype, li, 0), dtype.bits / 8u, out);
      out += dtype.bits / 8u;
    }
  }
}

/* Store element i of the small numbers (all lanes) at dst. Only for byte-addressable dtypes. */
static inline void dlpv_pattern_store(DLDataType dtype, int64_t i, void* dst) { dlpv__store_values(dtype, i, dst, 0); }

/* Bytes needed for n elements stored compactly (packed for sub-byte dtypes). */
static inline size_t dlpv_pattern_nbytes(DLDataType dtype, int64_t n) {
  uint64_t lanes = dtype.lanes ? dtype.lanes : 1u;
  if (n <= 0) return 0;
  return (size_t)(((uint64_t)n * lanes * dtype.bits + 7u) / 8u);
}

/* Write elements 0..n-1 row-major compact into dst (sub-byte dtypes packed little
 * bit-endian: element i occupies bits [i*bits, (i+1)*bits) of the stream). Returns the
 * number of bytes written. */
static inline size_t dlpv_pattern_fill(DLDataType dtype, int64_t n, void* dst) {
  size_t nbytes = dlpv_pattern_nbytes(dtype, n);
  unsigned char* out = (unsigned char*)dst;
  int64_t i;
  if (dtype.bits % 8u == 0) {
    size_t elem = dlpv_pattern_nbytes(dtype, 1);
    for (i = 0; i < n; ++i) dlpv_pattern_store(dtype, i, out + (size_t)i * elem);
  } else {
    int64_t total = n * (int64_t)(dtype.lanes ? dtype.lanes : 1u);
    uint64_t mask = (1u << dtype.bits) - 1u;
    memset(out, 0, nbytes);
    for (i = 0; i < total; ++i) {
      uint64_t bit = (uint64_t)i * dtype.bits;
      uint64_t v = dlpv__encode_bits(dtype, i, 0) & mask;
      unsigned b;
      for (b = 0; b < dtype.bits; ++b, ++bit)
        if ((v >> b) & 1u) out[bit / 8u] |= (unsigned char)(1u << (bit % 8u));
    }
  }
  return nbytes;
}

/* dlpv_pattern_store for `values` DLPV_VALUES_PLAIN (the small numbers) or DLPV_VALUES_EDGE
 * (the edge pattern above; the small numbers for a dtype without an edge table). Only for
 * byte-addressable dtypes (bits % 8 == 0). */
static inline void dlpv_pattern_store_values(DLDataType dtype, int64_t i, void* dst, int values) {
  dlpv__store_values(dtype, i, dst, values == DLPV_VALUES_EDGE && dlpv_pattern_has_edge(dtype));
}

/* dlpv_pattern_fill for `values` (dlpv_pattern_store_values). */
static inline size_t dlpv_pattern_fill_values(DLDataType dtype, int64_t n, void* dst, int values) {
  unsigned char* out = (unsigned char*)dst;
  size_t elem;
  int64_t i;
  if (values != DLPV_VALUES_EDGE || !dlpv_pattern_has_edge(dtype)) return dlpv_pattern_fill(dtype, n, dst);
  elem = dlpv_pattern_nbytes(dtype, 1);
  for (i = 0; i < n; ++i) dlpv_pattern_store_values(dtype, i, out + (size_t)i * elem, values);
  return dlpv_pattern_nbytes(dtype, n);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLPACK_VALIDATE_PLUGIN_H_ */
