/* A do-nothing libcuda for profiling nanocuda's host-side overhead on machines without a
 * GPU: every entry point returns CUDA_SUCCESS and leaves its outputs zeroed. Not a test
 * double for correctness (nothing runs), only for `perf`/callgrind of the Python paths.
 *   cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
 *   NANOCUDA_LIBCUDA=/tmp/libcuda_mock.so python3 ...
 * NANOCUDA_MOCK_MISSING="cuA,cuB" makes those entry points absent, like an older driver
 * (the reliability tests use it to check that a missing one is a clear error).
 * NANOCUDA_MOCK_DRIVER_VERSION ("12.4", "12.8", "13.0" or 12040) is the CUDA version the driver
 * reports (default 13.0), for the driver-version gates (scripts/test-driver-versions). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

static CUresult ok(void) { return 0; }
static CUresult count_one(int* n) { *n = 1; return 0; }
static CUresult version(int* v) {
  const char* spec = getenv("NANOCUDA_MOCK_DRIVER_VERSION");
  char* end = NULL;
  long major = spec ? strtol(spec, &end, 10) : 13;
  if (spec && *end == '.') *v = (int)(major * 1000 + strtol(end + 1, NULL, 10) * 10);
  else *v = (int)(major >= 1000 ? major : major * 1000);
  return 0;
}

/* Exported like the real driver's, so a version query needs no cuInit or cuGetProcAddress. */
CUresult cuDriverGetVersion(int* v) { return version(v); }
static CUresult encode(void* map) { memset(map, 0x5a, 128); return 0; }
/* An H100's stream priorities: least 0, greatest -5. */
static CUresult priority_range(int* least, int* greatest) { *least = 0; *greatest = -5; return 0; }
static CUresult handle(void** out) { *out = (void*)0x1000; return 0; }
static CUresult handle2(void** out) { *out = (void*)0x2000; return 0; }
/* Allocations get a non-zero address (a Buffer at 0 reads as closed). */
static CUresult device_ptr(unsigned long long* out) { *out = 0x7f0000000000ull; return 0; }
/* Every kernel looks like (const void*, const void*, void*, int), or has the parameter sizes
 * listed in NANOCUDA_MOCK_PARAMS ("8,8,4,4,8"), each at its natural alignment. */
static CUresult param_info(void* k, size_t i, size_t* offset, size_t* size) {
  const char* spec = getenv("NANOCUDA_MOCK_PARAMS");
  size_t sizes[64], n = 0, at = 0;
  (void)k;
  if (!spec) spec = "8,8,8,4";
  while (*spec && n < 64) {
    sizes[n++] = strtoul(spec, (char**)&spec, 10);
    if (*spec == ',') ++spec;
  }
  if (i >= n) return 1; /* CUDA_ERROR_INVALID_VALUE: past the last parameter */
  for (size_t j = 0;; ++j) {
    at = (at + sizes[j] - 1) / sizes[j] * sizes[j];
    if (j == i) break;
    at += sizes[j];
  }
  *offset = at;
  *size = sizes[i];
  return 0;
}

/* Graphs report NANOCUDA_MOCK_GRAPH_NODES nodes (default 0), all kernel nodes (type 0). */
static CUresult graph_nodes(void* g, void** nodes, size_t* n) {
  const char* spec = getenv("NANOCUDA_MOCK_GRAPH_NODES");
  size_t count = spec ? strtoul(spec, NULL, 10) : 0;
  (void)g;
  if (nodes)
    for (size_t i = 0; i < count && i < *n; ++i) nodes[i] = (void*)(0x3000 + 8 * i);
  *n = count;
  return 0;
}

/* IPC pools: an exported pool is a real file descriptor (of /dev/null), so multiprocessing can
 * send it to another process as it would the driver's; the importer gets a pool handle back. */
static CUresult pool_export(int* fd, void* pool, int type, unsigned long long flags) {
  (void)pool; (void)type; (void)flags;
  *fd = open("/dev/null", O_RDONLY);
  return *fd < 0 ? 999 : 0;
}
static CUresult pool_import(void** pool, void* fd, int type, unsigned long long flags) {
  (void)fd; (void)type; (void)flags;
  *pool = (void*)0x4000;
  return 0;
}
static CUresult pool_export_pointer(unsigned char* data, unsigned long long ptr) {
  memset(data, 0x42, 64);
  (void)ptr;
  return 0;
}
static CUresult pool_import_pointer(unsigned long long* out, void* pool, void* data) {
  (void)pool; (void)data;
  *out = 0x7e0000000000ull;
  return 0;
}

/* What cuPointerGetAttribute says about every address: NANOCUDA_MOCK_POINTER is "pageable"
 * (unknown to the driver: CUDA_ERROR_INVALID_VALUE), "pinned", "managed" or "device" (each on
 * device 0); unset, it succeeds and writes nothing, like every other call. An imported IPC
 * pointer (pool_import_pointer's) reaches 4096 bytes (RANGE_START_ADDR 11, RANGE_SIZE 12), so
 * a descriptor claiming more is caught. */
static CUresult pointer_attribute(void* data, int attr, unsigned long long ptr) {
  const char* kind = getenv("NANOCUDA_MOCK_POINTER");
  if (ptr == 0x7e0000000000ull && (attr == 11 || attr == 12)) {
    if (attr == 11) *(unsigned long long*)data = ptr;
    else *(size_t*)data = 4096;
    return 0;
  }
  if (!kind) return 0;  /* leaves the output alone, like every other call */
  if (!strcmp(kind, "pageable")) return 1;
  unsigned value = 0;
  if (attr == 2) value = !strcmp(kind, "pinned") ? 1 : 2;      /* MEMORY_TYPE: HOST or DEVICE */
  else if (attr == 8) value = !strcmp(kind, "managed");         /* IS_MANAGED */
  memcpy(data, &value, 4);                                     /* DEVICE_ORDINAL (9): 0 */
  return 0;
}

/* Green contexts: the device is an H100 (132 SMs; groups of at least 8, in multiples of 8, or
 * of 2 when a flag relaxes co-scheduling). A CUdevResource is 144 bytes: the type (int) first,
 * its SM fields (count, minimum partition, alignment) at byte 96. A green context reports a
 * partition of 8 SMs (the mock does not remember which group made it). */
enum { RES_BYTES = 144, RES_SM = 96 };
static void fill_sm(unsigned char* r, unsigned count) {
  unsigned sm[3] = {count, 8, 8};
  memset(r, 0, RES_BYTES);
  r[0] = 1; /* CU_DEV_RESOURCE_TYPE_SM */
  memcpy(r + RES_SM, sm, sizeof sm);
}
static CUresult dev_resource(int dev, unsigned char* r, int type) {
  (void)dev;
  if (type != 1) return 1;
  fill_sm(r, 132);
  return 0;
}
static CUresult green_resource(void* ctx, unsigned char* r, int type) {
  (void)ctx;
  if (type != 1) return 1;
  fill_sm(r, 8);
  return 0;
}
static CUresult sm_split(unsigned char* result, unsigned* groups, const unsigned char* input,
                         unsigned char* remaining, unsigned flags, unsigned min_count) {
  unsigned total, step = flags ? 2 : 8, each, fit, n;
  memcpy(&total, input + RES_SM, sizeof total);
  each = min_count < step ? step : (min_count + step - 1) / step * step;
  fit = total / each;
  n = *groups < fit ? *groups : fit;
  if (!result) { *groups = fit; return 0; }
  for (unsigned i = 0; i < n; ++i) fill_sm(result + (size_t)i * RES_BYTES, each);
  if (remaining) fill_sm(remaining, total - n * each);
  *groups = n;
  return 0;
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }

CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int v, unsigned long long flags,
                             int* status) {
  const char* missing = getenv("NANOCUDA_MOCK_MISSING");
  size_t len = strlen(symbol);
  (void)v; (void)flags;
  if (status) *status = 0;
  for (const char* at = missing; at && (at = strstr(at, symbol)); at += len)
    if ((at == missing || at[-1] == ',') && (at[len] == ',' || at[len] == 0)) {
      *fn = NULL;
      if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
      return 500;              /* CUDA_ERROR_NOT_FOUND */
    }
  if (!strcmp(symbol, "cuDeviceGetCount")) *fn = (void*)count_one;
  else if (!strcmp(symbol, "cuDriverGetVersion")) *fn = (void*)version;
  else if (!strcmp(symbol, "cuCtxGetStreamPriorityRange")) *fn = (void*)priority_range;
  else if (!strcmp(symbol, "cuTensorMapEncodeTiled")) *fn = (void*)encode;
  else if (!strcmp(symbol, "cuLibraryGetKernel")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuLibraryLoadData")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuKernelGetFunction")) *fn = (void*)handle2;
  else if (!strcmp(symbol, "cuDeviceGetMemPool")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuMemPoolCreate")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuMemPoolExportToShareableHandle")) *fn = (void*)pool_export;
  else if (!strcmp(symbol, "cuMemPoolImportFromShareableHandle")) *fn = (void*)pool_import;
  else if (!strcmp(symbol, "cuMemPoolExportPointer")) *fn = (void*)pool_export_pointer;
  else if (!strcmp(symbol, "cuMemPoolImportPointer")) *fn = (void*)pool_import_pointer;
  else if (!strcmp(symbol, "cuDeviceGetDefaultMemPool")) *fn = (void*)handle;
  else if (!strncmp(symbol, "cuMemAlloc", 10)) *fn = (void*)device_ptr;
  else if (!strcmp(symbol, "cuKernelGetParamInfo")) *fn = (void*)param_info;
  else if (!strcmp(symbol, "cuFuncGetParamInfo")) *fn = (void*)param_info;
  else if (!strcmp(symbol, "cuGraphGetNodes")) *fn = (void*)graph_nodes;
  /* CUDA arrays, textures and surfaces get non-zero handles too (0 reads as closed). */
  else if (!strcmp(symbol, "cuArray3DCreate") || !strcmp(symbol, "cuMipmappedArrayCreate") ||
           !strcmp(symbol, "cuMipmappedArrayGetLevel")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuTexObjectCreate") || !strcmp(symbol, "cuSurfObjectCreate")) *fn = (void*)device_ptr;
  else if (!strcmp(symbol, "cuPointerGetAttribute")) *fn = (void*)pointer_attribute;
  /* Events get a non-zero handle (an Event whose handle is 0 reads as closed). */
  else if (!strcmp(symbol, "cuEventCreate")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuIpcOpenEventHandle")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuDeviceGetDevResource") || !strcmp(symbol, "cuCtxGetDevResource"))
    *fn = (void*)dev_resource;
  else if (!strcmp(symbol, "cuGreenCtxGetDevResource")) *fn = (void*)green_resource;
  else if (!strcmp(symbol, "cuDevSmResourceSplitByCount")) *fn = (void*)sm_split;
  else if (!strcmp(symbol, "cuDevResourceGenerateDesc") || !strcmp(symbol, "cuGreenCtxCreate") ||
           !strcmp(symbol, "cuGreenCtxStreamCreate")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuCtxFromGreenCtx")) *fn = (void*)handle2; /* not the primary's (0) */
  else *fn = (void*)ok;
  return 0;
}
