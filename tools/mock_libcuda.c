/* A do-nothing libcuda for profiling nanocuda's host-side overhead on machines without a
 * GPU: every entry point returns CUDA_SUCCESS and leaves its outputs zeroed. Not a test
 * double for correctness (nothing runs), only for `perf`/callgrind of the Python paths.
 *   cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
 *   NANOCUDA_LIBCUDA=/tmp/libcuda_mock.so python3 ...
 * NANOCUDA_MOCK_MISSING="cuA,cuB" makes those entry points absent, like an older driver
 * (the reliability tests use it to check that a missing one is a clear error).
 * NANOCUDA_MOCK_DRIVER_VERSION ("12.4", "12.8", "13.0" or 12040) is the CUDA version the driver
 * reports (default 13.0), for the driver-version gates (scripts/test-driver-versions).
 * NANOCUDA_MOCK_DEVICES=N reports N devices (default 1); NANOCUDA_MOCK_CURRENT_DEVICE=K makes a
 * context of device K current on every thread (unset: none is), for the default-device rule.
 * NANOCUDA_MOCK_FAIL="cuX:720" makes entry point cuX return that CUresult (failure injection).
 * NANOCUDA_MOCK_CC ("9.0") is the compute capability device attributes 75/76 report (default 0.0). */
#define _GNU_SOURCE /* dladdr (mock_libcuda_launch.h) */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

/* Calls of the entry points handed out by cuGetProcAddress (the generic bodies and the
 * memory/handle/context ones count themselves; the graph model below does not): the perf
 * tests read it through ctypes to bound the driver calls a Python call makes. */
unsigned long long nanocuda_mock_calls = 0;

static CUresult ok(void) { ++nanocuda_mock_calls; return 0; }
/* cuStreamDestroy calls: the C++ tests check that only a stream's owner destroys it. */
unsigned long long nanocuda_mock_stream_destroys = 0;
static CUresult stream_destroy(void* s) { (void)s; ++nanocuda_mock_calls; ++nanocuda_mock_stream_destroys; return 0; }
/* The stream of the last cuLaunchKernel / cuMemcpyAsync: the C++ tests check that a StreamRef's
 * CUstream is what reaches the driver. */
void* nanocuda_mock_last_stream = 0;
static CUresult launch_on(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned smem, void* s, void** params, void** extra) {
  (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)smem; (void)params; (void)extra;
  ++nanocuda_mock_calls; nanocuda_mock_last_stream = s; return 0;
}
static CUresult memcpy_on(unsigned long long dst, unsigned long long src, size_t n, void* s) {
  (void)dst; (void)src; (void)n; ++nanocuda_mock_calls; nanocuda_mock_last_stream = s; return 0;
}
/* cuMemcpyPeerAsync calls: the tests check that a copy between two devices' buffers is a peer copy. */
unsigned long long nanocuda_mock_peer_copies = 0;
static CUresult memcpy_peer_on(unsigned long long dst, void* dc, unsigned long long src, void* sc, size_t n, void* s) {
  (void)dst; (void)dc; (void)src; (void)sc; (void)n;
  ++nanocuda_mock_calls; ++nanocuda_mock_peer_copies; nanocuda_mock_last_stream = s; return 0;
}
static CUresult count_one(int* n) {
  ++nanocuda_mock_calls;
  const char* spec = getenv("NANOCUDA_MOCK_DEVICES");
  *n = spec ? atoi(spec) : 1;
  return 0;
}
/* A device's handle is its ordinal, so the ordinal a context's device has can be found. */
static CUresult device_get(int* dev, int ordinal) { ++nanocuda_mock_calls; *dev = ordinal; return 0; }
static CUresult ctx_get_current(void** ctx) {
  ++nanocuda_mock_calls;
  *ctx = getenv("NANOCUDA_MOCK_CURRENT_DEVICE") ? (void*)0x5000 : NULL;
  return 0;
}
static CUresult ctx_get_device(int* dev) {
  ++nanocuda_mock_calls;
  const char* spec = getenv("NANOCUDA_MOCK_CURRENT_DEVICE");
  *dev = spec ? atoi(spec) : 0;
  return 0;
}
static CUresult version(int* v) { ++nanocuda_mock_calls;
  const char* spec = getenv("NANOCUDA_MOCK_DRIVER_VERSION");
  char* end = NULL;
  long major = spec ? strtol(spec, &end, 10) : 13;
  if (spec && *end == '.') *v = (int)(major * 1000 + strtol(end + 1, NULL, 10) * 10);
  else *v = (int)(major >= 1000 ? major : major * 1000);
  return 0;
}

/* Exported like the real driver's, so a version query needs no cuInit or cuGetProcAddress. */
CUresult cuDriverGetVersion(int* v) { return version(v); }
static CUresult encode(void* map) { ++nanocuda_mock_calls; memset(map, 0x5a, 128); return 0; }
/* An H100's stream priorities: least 0, greatest -5. */
static CUresult priority_range(int* least, int* greatest) { ++nanocuda_mock_calls; *least = 0; *greatest = -5; return 0; }
static CUresult handle(void** out) { ++nanocuda_mock_calls; *out = (void*)0x1000; return 0; }
static CUresult handle2(void** out) { ++nanocuda_mock_calls; *out = (void*)0x2000; return 0; }
/* cuArray3DCreate / cuMipmappedArrayCreate: CUDA_ARRAY3D_DESCRIPTOR starts Width, Height, Depth;
 * extents past an H100's texture limits (1D/2D width 131072, 2D height 65536, 3D 16384 each)
 * are CUDA_ERROR_INVALID_VALUE, as the driver says. */
static CUresult array_create(void** out, const size_t* desc) { ++nanocuda_mock_calls;
  size_t w = desc[0], h = desc[1], d = desc[2];
  if (d ? (w > 16384 || h > 16384 || d > 16384) : (w > 131072 || h > 65536)) return 1;
  *out = (void*)0x1000;
  return 0;
}
/* Allocations get a non-zero address (a Buffer at 0 reads as closed). */
static CUresult device_ptr(unsigned long long* out) { ++nanocuda_mock_calls; *out = 0x7f0000000000ull; return 0; }
/* Every kernel looks like (const void*, const void*, void*, int), or has the parameter sizes
 * listed in NANOCUDA_MOCK_PARAMS ("8,8,4,4,8"), each at its natural alignment. */
static CUresult param_info(void* k, size_t i, size_t* offset, size_t* size) { ++nanocuda_mock_calls;
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


/* Graphs made by cuGraphCreate (or conditional bodies, child clones) are modelled: nodes with
 * their types and edges, so the explicit-graph API's topology can be tested without a GPU.
 * Offsets into CUgraphNodeParams are cuda.h 13.0's (the mock includes no CUDA header). */
#define MOCK_MAGIC 0x6e636d67u
#include "mock_libcuda_keep.h"
#define MOCK_MAX 512
typedef struct MockGraph MockGraph;
typedef struct MockNode { unsigned magic; int type, alive, nbodies; MockGraph* g; MockGraph* child; MockGraph* bodies[8];
                          struct MockNode* origin; } MockNode; /* origin: what a child copy's node copies */
/* CUDA user objects (refcounted; a graph's references go with it and are copied by cuGraphClone). */
typedef struct MockUserObject { unsigned magic; int refs; void* ptr; void (*destroy)(void*); } MockUserObject;
#define MOCK_MAX_UO MOCK_MAX
struct MockGraph { unsigned magic; size_t n, ne; MockNode* nodes[MOCK_MAX]; MockNode* from[MOCK_MAX]; MockNode* to[MOCK_MAX];
                   MockUserObject* uo[MOCK_MAX_UO]; int nuo; };
static unsigned long long next_alloc = 0x7f0000100000ull, next_cond = 1;
/* Other mock handles are small constants (0x1000, 0x3000 + 8i): never dereferenced. */
static MockGraph* mock_graph(void* g) {
  MockGraph* m = g;
  return (unsigned long long)g > 0x100000 && m->magic == MOCK_MAGIC ? m : NULL;
}
static MockNode* mock_node(void* n) {
  MockNode* m = n;
  return (unsigned long long)n > 0x100000 && m->magic == MOCK_MAGIC ? m : NULL;
}
static MockGraph* new_graph(void) { MockGraph* g = keep(calloc(1, sizeof *g)); g->magic = MOCK_MAGIC; return g; }
static CUresult graph_create(void** g, unsigned flags) { (void)flags; *g = new_graph(); return 0; }
#include "mock_libcuda_uo.h"

/* Stream capture: which streams capture; a capturing stream refuses synchronization, as the
 * driver does (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), until its capture ends. */
static void* capturing[16];
static int ncapturing;
static int capture_index(void* s) {
  for (int i = 0; i < ncapturing; ++i) if (capturing[i] == s) return i;
  return -1;
}
static CUresult begin_capture(void* s, int mode) {
  (void)mode;
  if (capture_index(s) >= 0) return 900;
  if (ncapturing < 16) capturing[ncapturing++] = s;
  return 0;
}
static CUresult end_capture(void* s, void** g) {
  int i = capture_index(s);
  if (i < 0) return 401; /* CUDA_ERROR_ILLEGAL_STATE */
  capturing[i] = capturing[--ncapturing];
  *g = new_graph();
  return 0;
}
static CUresult stream_sync(void* s) { if (capture_index(s) >= 0) return 900; run_host_fns(s, 0); return 0; }
static int has_edge(MockGraph* g, MockNode* a, MockNode* b) {
  for (size_t i = 0; i < g->ne; ++i) if (g->from[i] == a && g->to[i] == b) return 1;
  return 0;
}
static CUresult add_edges(void* g, void** from, void** to, void* data, size_t n) {
  MockGraph* m = mock_graph(g);
  (void)data;
  if (!m) return 0;
  for (size_t i = 0; i < n; ++i) {
    MockNode *a = mock_node(from[i]), *b = mock_node(to[i]);
    if (!a || !b || a->g != m || b->g != m || !a->alive || !b->alive || a == b) return 1;
    if (has_edge(m, a, b)) return 1;
    if (m->ne == MOCK_MAX) return 2;
    m->from[m->ne] = a; m->to[m->ne++] = b;
  }
  return 0;
}
static CUresult remove_edges(void* g, void** from, void** to, void* data, size_t n) {
  MockGraph* m = mock_graph(g);
  (void)data;
  if (!m) return 0;
  for (size_t i = 0; i < n; ++i) {
    size_t j = 0;
    while (j < m->ne && !(m->from[j] == from[i] && m->to[j] == to[i])) ++j;
    if (j == m->ne) return 1; /* no such edge */
    m->from[j] = m->from[m->ne - 1]; m->to[j] = m->to[--m->ne];
  }
  return 0;
}
static CUresult add_node(void** out, void* g, void** deps, void* data, size_t n, void* params) {
  MockGraph* m = mock_graph(g);
  unsigned char* p = params;
  int type = *(int*)p;
  if (!m) { *out = NULL; return 0; }
  for (size_t i = 0; i < n; ++i) { MockNode* d = mock_node(deps[i]); if (!d || d->g != m || !d->alive) return 1; }
  if (m->n == MOCK_MAX) return 2;
  MockNode* node = calloc(1, sizeof *node);
  node->magic = MOCK_MAGIC; node->type = type; node->alive = 1; node->g = m;
  if (type == 13) { /* conditional: make its bodies */
    unsigned size = *(unsigned*)(p + 28);
    void** bodies = *(void***)(p + 32);
    if (size == 0) { free(node); return 1; }
    for (unsigned i = 0; i < size; ++i) { bodies[i] = new_graph(); if (i < 8) node->bodies[node->nbodies++] = bodies[i]; }
  }
  if (type == 10) { *(unsigned long long*)(p + 128) = next_alloc; next_alloc += 0x100000; }
  if (type == 4) node->child = graph_copy(mock_graph(*(void**)(p + 16))); /* the node's clone of the child graph */
  m->nodes[m->n++] = node;
  *out = node;
  for (size_t i = 0; i < n; ++i) { m->from[m->ne] = deps[i]; m->to[m->ne++] = node; }
  (void)data;
  return 0;
}
static CUresult destroy_node(void* n) {
  MockNode* node = mock_node(n);
  if (!node || !node->alive) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  MockGraph* m = node->g;
  node->alive = 0;
  node_drop_graphs(node); /* its child copy and bodies go with it (mock_libcuda_uo.h) */
  for (size_t i = 0; i < m->ne;)
    if (m->from[i] == node || m->to[i] == node) { m->from[i] = m->from[m->ne - 1]; m->to[i] = m->to[--m->ne]; }
    else ++i;
  return 0;
}
static CUresult node_type(void* n, int* type) { MockNode* node = mock_node(n); *type = node ? node->type : 0; return 0; }
static CUresult child_graph(void* n, void** g) { MockNode* node = mock_node(n); *g = node ? node->child : NULL; return 0; }
static CUresult get_edges(void* g, void** from, void** to, void* data, size_t* n) {
  MockGraph* m = mock_graph(g);
  (void)data;
  if (!m) { *n = 0; return 0; }
  if (from) for (size_t i = 0; i < m->ne && i < *n; ++i) { from[i] = m->from[i]; to[i] = m->to[i]; }
  *n = m->ne;
  return 0;
}
static CUresult cond_create(unsigned long long* h, void* g, void* ctx, unsigned v, unsigned f) {
  (void)g; (void)ctx; (void)v; (void)f;
  *h = next_cond++;
  return 0;
}

/* Graphs report NANOCUDA_MOCK_GRAPH_NODES nodes (default 0), all kernel nodes (type 0). */
static CUresult graph_nodes(void* g, void** nodes, size_t* n) { ++nanocuda_mock_calls;
  const char* spec = getenv("NANOCUDA_MOCK_GRAPH_NODES");
  size_t count = spec ? strtoul(spec, NULL, 10) : 0;
  MockGraph* m = mock_graph(g);
  if (m) { /* a modelled graph: its live nodes */
    size_t k = 0;
    for (size_t i = 0; i < m->n; ++i)
      if (m->nodes[i]->alive) { if (nodes && k < *n) nodes[k] = m->nodes[i]; ++k; }
    *n = k;
    return 0;
  }
  if (nodes)
    for (size_t i = 0; i < count && i < *n; ++i) nodes[i] = (void*)(0x3000 + 8 * i);
  *n = count;
  return 0;
}

#include "mock_libcuda_ipc.h"
static CUresult pool_export_pointer(unsigned char* data, unsigned long long ptr) { ++nanocuda_mock_calls;
  memset(data, 0x42, 64);
  (void)ptr;
  return 0;
}
static CUresult pool_import_pointer(unsigned long long* out, void* pool, void* data) { ++nanocuda_mock_calls;
  (void)pool; (void)data; ++nanocuda_mock_pointer_imports;
  *out = 0x7e0000000000ull;
  return 0;
}

/* NANOCUDA_MOCK_TRACE=FILE: each pool destroy and each free is appended there as a line
 * ("destroy POOL", "free PTR"), so tests can check their order (a free after its pool's
 * destroy would be a use of a destroyed pool on a real driver). */
#include <stdio.h>
static void trace(const char* what, unsigned long long v) {
  static const char* path = (const char*)1;  /* read once: the perf tests count these calls' instructions */
  if (path == (const char*)1) path = getenv("NANOCUDA_MOCK_TRACE");
  FILE* f = path ? fopen(path, "a") : NULL;
  if (f) { fprintf(f, "%s %llx\n", what, v); fclose(f); }
}
static CUresult pool_destroy(void* pool) { ++nanocuda_mock_calls; trace("destroy", (unsigned long long)pool); return 0; }
static void gmem_free(unsigned long long ptr);
static CUresult free_async(unsigned long long ptr, void* stream) {
  ++nanocuda_mock_calls;
  (void)stream;
  trace("free", ptr);
  gmem_free(ptr); /* mock_libcuda_gmem.h */
  return 0;
}

/* What cuPointerGetAttribute says about every address: NANOCUDA_MOCK_POINTER is "pageable"
 * (unknown to the driver: CUDA_ERROR_INVALID_VALUE), "pinned", "managed" or "device" (each on
 * device 0); unset, it succeeds and writes nothing, like every other call. An imported IPC
 * pointer (pool_import_pointer's) reaches 4096 bytes (RANGE_START_ADDR 11, RANGE_SIZE 12), so
 * a descriptor claiming more is caught. */
static CUresult pointer_attribute(void* data, int attr, unsigned long long ptr) { ++nanocuda_mock_calls;
  const char* kind = getenv("NANOCUDA_MOCK_POINTER");
  if (ptr == 0x7e0000000000ull && (attr == 11 || attr == 12)) {
    if (!ipc_range_by_attribute()) return 1; /* mock_libcuda_ipc.h */
    if (attr == 11) *(unsigned long long*)data = ptr;
    else *(size_t*)data = ipc_attribute_size();
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

/* Compute capability (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75 / MINOR 76) from
 * NANOCUDA_MOCK_CC; every other attribute reads 0, like every other output. */
static CUresult device_attribute(int* out, int attr, int dev) {
  const char* cc = getenv("NANOCUDA_MOCK_CC");
  char* end = NULL;
  (void)dev;
  *out = 0;
  if (cc && attr == 75) *out = (int)strtol(cc, NULL, 10);
  if (cc && attr == 76 && (strtol(cc, &end, 10), *end == '.')) *out = (int)strtol(end + 1, NULL, 10);
  return 0;
}

static CUresult fail_code = 0;
static CUresult fail(void) { return fail_code; }

#include "mock_libcuda_green.h"
#include "mock_libcuda_order.h"
#include "mock_libcuda_gmem.h"
#include "mock_libcuda_launch.h"
#include "mock_libcuda_kset.h"
#include "mock_libcuda_batch.h"

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
  const char* inject = getenv("NANOCUDA_MOCK_FAIL");
  if (inject && !strncmp(inject, symbol, len) && inject[len] == ':') {
    fail_code = (CUresult)strtol(inject + len + 1, NULL, 10);
    *fn = (void*)fail;
    return 0;
  }
  if (!strcmp(symbol, "cuDeviceGetCount")) *fn = (void*)count_one;
  else if (!strcmp(symbol, "cuDeviceGet")) *fn = (void*)device_get;
  else if (!strcmp(symbol, "cuCtxGetCurrent")) *fn = ctx_model() ? (void*)model_get_current : (void*)ctx_get_current;
  else if (ctx_model() && !strcmp(symbol, "cuCtxPushCurrent")) *fn = (void*)model_push;
  else if (ctx_model() && !strcmp(symbol, "cuCtxPopCurrent")) *fn = (void*)model_pop;
  else if (ctx_model() && !strcmp(symbol, "cuCtxSetCurrent")) *fn = (void*)model_set;
  else if (ctx_model() && !strcmp(symbol, "cuDevicePrimaryCtxRetain")) *fn = (void*)model_primary;
  else if (!strcmp(symbol, "cuCtxGetDevice")) *fn = (void*)ctx_get_device;
  else if (!strcmp(symbol, "cuDriverGetVersion")) *fn = (void*)version;
  else if (!strcmp(symbol, "cuDeviceGetAttribute")) *fn = (void*)device_attribute;
  else if (!strcmp(symbol, "cuCtxGetStreamPriorityRange")) *fn = (void*)priority_range;
  else if (!strcmp(symbol, "cuStreamDestroy")) *fn = (void*)stream_destroy;
  else if (stream_symbol(symbol, fn)) {} /* mock_libcuda_order.h */
  else if (host_fn_symbol(symbol, fn)) {} /* mock_libcuda_uo.h */
  else if (!strcmp(symbol, "cuTensorMapEncodeTiled")) *fn = (void*)encode;
  else if (!strcmp(symbol, "cuLibraryGetKernel")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuLaunchKernel") && getenv("NANOCUDA_MOCK_LAUNCH_FRAMES")) *fn = (void*)launch_frames;
  else if (!strcmp(symbol, "cuLaunchKernel")) *fn = (void*)launch_on;
  else if (batch_symbol(symbol, fn)) {} /* mock_libcuda_batch.h */
  else if (!strcmp(symbol, "cuMemcpyAsync")) *fn = (void*)memcpy_on;
  else if (!strcmp(symbol, "cuMemcpyPeerAsync")) *fn = (void*)memcpy_peer_on;
  else if (!strcmp(symbol, "cuLibraryLoadData")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuKernelGetFunction")) *fn = (void*)handle2;
  else if (!strcmp(symbol, "cuDeviceGetMemPool")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuMemPoolCreate")) *fn = (void*)pool_create;
  else if (!strcmp(symbol, "cuMemPoolSetAccess")) *fn = (void*)pool_set_access;
  else if (!strcmp(symbol, "cuMemPoolGetAccess")) *fn = (void*)pool_get_access;
  else if (!strcmp(symbol, "cuMemPoolDestroy")) *fn = (void*)pool_destroy;
  else if (!strcmp(symbol, "cuMemFreeAsync")) *fn = (void*)ordered_free;
  else if (!strcmp(symbol, "cuMemPoolExportToShareableHandle")) *fn = (void*)pool_export;
  else if (!strcmp(symbol, "cuMemPoolImportFromShareableHandle")) *fn = (void*)pool_import;
  else if (!strcmp(symbol, "cuMemPoolExportPointer")) *fn = (void*)pool_export_pointer;
  else if (!strcmp(symbol, "cuMemPoolImportPointer")) *fn = (void*)pool_import_pointer;
  else if (!strcmp(symbol, "cuDeviceGetDefaultMemPool")) *fn = (void*)handle;
  else if (gmem_symbol(symbol, fn)) {} /* mock_libcuda_gmem.h: before the cuMemAlloc prefix */
  else if (!strcmp(symbol, "cuMemAllocFromPoolAsync")) *fn = (void*)ordered_alloc;
  else if (!strncmp(symbol, "cuMemAlloc", 10)) *fn = (void*)device_ptr;
  else if (!strcmp(symbol, "cuKernelGetParamInfo")) *fn = (void*)param_info;
  else if (!strcmp(symbol, "cuFuncGetParamInfo")) *fn = (void*)param_info;
  else if (!strcmp(symbol, "cuGraphGetNodes")) *fn = (void*)graph_nodes;
  else if (!strcmp(symbol, "cuGraphExecKernelNodeSetParams") && kset_modelled()) *fn = (void*)kernel_set;
  /* CUDA arrays, textures and surfaces get non-zero handles too (0 reads as closed). */
  else if (!strcmp(symbol, "cuArray3DCreate") || !strcmp(symbol, "cuMipmappedArrayCreate")) *fn = (void*)array_create;
  else if (!strcmp(symbol, "cuMipmappedArrayGetLevel")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuTexObjectCreate") || !strcmp(symbol, "cuSurfObjectCreate")) *fn = (void*)device_ptr;
  else if (!strcmp(symbol, "cuPointerGetAttribute")) *fn = (void*)pointer_attribute;
  else if (!strcmp(symbol, "cuMemGetAddressRange")) *fn = (void*)mem_address_range;
  else if (!strcmp(symbol, "cuGraphCreate")) *fn = (void*)graph_create;
  else if (!strcmp(symbol, "cuGraphDestroy")) *fn = (void*)graph_destroy;
  else if (!strcmp(symbol, "cuGraphClone")) *fn = (void*)cuGraphClone;
  else if (!strcmp(symbol, "cuUserObjectCreate")) *fn = (void*)uo_create;
  else if (!strcmp(symbol, "cuUserObjectRelease")) *fn = (void*)uo_release;
  else if (!strcmp(symbol, "cuUserObjectRetain")) *fn = (void*)uo_retain;
  else if (!strcmp(symbol, "cuGraphRetainUserObject")) *fn = (void*)graph_retain_uo;
  else if (!strcmp(symbol, "cuGraphReleaseUserObject")) *fn = (void*)graph_release_uo;
  else if (!strcmp(symbol, "cuGraphNodeFindInClone")) *fn = (void*)find_in_clone;
  else if (!strcmp(symbol, "cuStreamBeginCapture")) *fn = (void*)begin_capture;
  else if (!strcmp(symbol, "cuStreamEndCapture")) *fn = (void*)end_capture;
  else if (!strcmp(symbol, "cuStreamSynchronize")) *fn = (void*)stream_sync;
  else if (!strcmp(symbol, "cuGraphAddNode")) *fn = (void*)add_node;
  else if (!strcmp(symbol, "cuGraphDestroyNode")) *fn = (void*)destroy_node;
  else if (!strcmp(symbol, "cuGraphAddDependencies")) *fn = (void*)add_edges;
  else if (!strcmp(symbol, "cuGraphRemoveDependencies")) *fn = (void*)remove_edges;
  else if (!strcmp(symbol, "cuGraphGetEdges")) *fn = (void*)get_edges;
  else if (!strcmp(symbol, "cuGraphNodeGetType")) *fn = (void*)node_type;
  else if (!strcmp(symbol, "cuGraphChildGraphNodeGetGraph")) *fn = (void*)child_graph;
  else if (!strcmp(symbol, "cuGraphConditionalHandleCreate")) *fn = (void*)cond_create;
  /* Events get a non-zero handle (an Event whose handle is 0 reads as closed). */
  else if (!strcmp(symbol, "cuEventCreate")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuIpcOpenEventHandle")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuDeviceGetDevResource") || !strcmp(symbol, "cuCtxGetDevResource"))
    *fn = (void*)dev_resource;
  else if (!strcmp(symbol, "cuGreenCtxGetDevResource")) *fn = (void*)green_resource;
  else if (!strcmp(symbol, "cuDevSmResourceSplitByCount")) *fn = (void*)sm_split;
  else if (!strcmp(symbol, "cuDevResourceGenerateDesc") || !strcmp(symbol, "cuGreenCtxStreamCreate")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuGreenCtxCreate")) *fn = (void*)green_create;
  else if (!strcmp(symbol, "cuCtxFromGreenCtx")) *fn = (void*)green_as_context;
  else if (!strcmp(symbol, "cuMemGetAllocationGranularity")) *fn = (void*)vmm_granularity;
  else if (!strcmp(symbol, "cuMemAddressReserve")) *fn = (void*)vmm_reserve;
  else if (!strcmp(symbol, "cuMemCreate")) *fn = (void*)vmm_create;
  else if (!strcmp(symbol, "cuMemSetAccess")) *fn = (void*)vmm_access;
  else *fn = (void*)ok;
  return 0;
}
