/* A do-nothing libcuda for profiling nanocuda's host-side overhead on machines without a
 * GPU: every entry point returns CUDA_SUCCESS and leaves its outputs zeroed. Not a test
 * double for correctness (nothing runs), only for `perf`/callgrind of the Python paths.
 *   cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
 *   NANOCUDA_LIBCUDA=/tmp/libcuda_mock.so python3 ...                                   */
#include <string.h>

typedef int CUresult;

static CUresult ok(void) { return 0; }
static CUresult count_one(int* n) { *n = 1; return 0; }
static CUresult version(int* v) { *v = 13000; return 0; }
static CUresult encode(void* map) { memset(map, 0x5a, 128); return 0; }
static CUresult handle(void** out) { *out = (void*)0x1000; return 0; }
static CUresult handle2(void** out) { *out = (void*)0x2000; return 0; }
/* Every kernel looks like (const void*, const void*, void*, int). */
static CUresult param_info(void* k, size_t i, size_t* offset, size_t* size) {
  (void)k;
  if (i >= 4) return 1; /* CUDA_ERROR_INVALID_VALUE: past the last parameter */
  *offset = i * 8;
  *size = i == 3 ? 4 : 8;
  return 0;
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }

CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int v, unsigned long long flags,
                             int* status) {
  (void)v; (void)flags;
  if (status) *status = 0;
  if (!strcmp(symbol, "cuDeviceGetCount")) *fn = (void*)count_one;
  else if (!strcmp(symbol, "cuDriverGetVersion")) *fn = (void*)version;
  else if (!strcmp(symbol, "cuTensorMapEncodeTiled")) *fn = (void*)encode;
  else if (!strcmp(symbol, "cuLibraryGetKernel")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuLibraryLoadData")) *fn = (void*)handle;
  else if (!strcmp(symbol, "cuKernelGetFunction")) *fn = (void*)handle2;
  else if (!strcmp(symbol, "cuKernelGetParamInfo")) *fn = (void*)param_info;
  else *fn = (void*)ok;
  return 0;
}
