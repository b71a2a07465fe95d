/* The mock driver's stream-capture query and graph memory (included by mock_libcuda.c). */
/* cuStreamIsCapturing: CU_STREAM_CAPTURE_STATUS_ACTIVE (1) while capturing, else NONE. */
static CUresult stream_is_capturing(void* s, int* status) { ++nanocuda_mock_calls; *status = capture_index(s) >= 0; return 0; }

/* Graph memory: cuMemAllocAsync on a capturing stream is a graph allocation (a new address,
 * counted at once: the mock launches nothing); cuMemFreeAsync of one gives it back. The
 * device's counters (cuDeviceGetGraphMemAttribute: USED_MEM_CURRENT 0, USED_MEM_HIGH 1,
 * RESERVED_MEM_CURRENT 2, RESERVED_MEM_HIGH 3) follow; trim drops the reserve to the use, and
 * a high-water mark set to 0 resets to the current value (only those two, only to 0). */
#define MOCK_MAX_GMEM 256
static unsigned long long gmem_ptr[MOCK_MAX_GMEM], gmem_size[MOCK_MAX_GMEM], gmem_attr[4];
static int ngmem;
static void gmem_account(long long delta) {
  gmem_attr[0] += (unsigned long long)delta;
  if (gmem_attr[0] > gmem_attr[2]) gmem_attr[2] = gmem_attr[0];
  if (gmem_attr[0] > gmem_attr[1]) gmem_attr[1] = gmem_attr[0];
  if (gmem_attr[2] > gmem_attr[3]) gmem_attr[3] = gmem_attr[2];
}
static CUresult alloc_async(unsigned long long* out, size_t size, void* stream) {
  if (capture_index(stream) < 0) return device_ptr(out);
  if (ngmem == MOCK_MAX_GMEM) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  *out = next_alloc; next_alloc += 0x100000;
  gmem_ptr[ngmem] = *out; gmem_size[ngmem++] = size;
  gmem_account((long long)size);
  return 0;
}
static void gmem_free(unsigned long long ptr) {
  for (int i = 0; i < ngmem; ++i)
    if (gmem_ptr[i] == ptr) {
      gmem_account(-(long long)gmem_size[i]);
      gmem_ptr[i] = gmem_ptr[--ngmem]; gmem_size[i] = gmem_size[ngmem];
      return;
    }
}
static CUresult gmem_get(int dev, int attr, unsigned long long* v) {
  (void)dev;
  if (attr < 0 || attr > 3) return 1;
  *v = gmem_attr[attr];
  return 0;
}
static CUresult gmem_set(int dev, int attr, unsigned long long* v) {
  (void)dev;
  if ((attr != 1 && attr != 3) || *v != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
  gmem_attr[attr] = gmem_attr[attr - 1];
  return 0;
}
static CUresult gmem_trim(int dev) { (void)dev; gmem_attr[2] = gmem_attr[0]; return 0; }

#include "mock_libcuda_exec.h"
/* The entry points modelled here and in mock_libcuda_exec.h: 1 when `symbol` is one of them. */
static int gmem_symbol(const char* symbol, void** fn) {
  if (!strcmp(symbol, "cuMemAllocAsync")) *fn = (void*)alloc_async;
  else if (!strcmp(symbol, "cuStreamIsCapturing")) *fn = (void*)stream_is_capturing;
  else if (!strcmp(symbol, "cuDeviceGetGraphMemAttribute")) *fn = (void*)gmem_get;
  else if (!strcmp(symbol, "cuDeviceSetGraphMemAttribute")) *fn = (void*)gmem_set;
  else if (!strcmp(symbol, "cuDeviceGraphMemTrim")) *fn = (void*)gmem_trim;
  else if (!strcmp(symbol, "cuGraphInstantiateWithFlags")) *fn = (void*)instantiate;
  else if (!strcmp(symbol, "cuGraphExecUpdate")) *fn = (void*)exec_update;
  else if (!strcmp(symbol, "cuGraphExecDestroy")) *fn = (void*)exec_destroy;
  else return 0;
  return 1;
}
