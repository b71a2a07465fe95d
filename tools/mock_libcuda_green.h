/* The mock driver's green-context answers (included by mock_libcuda.c, one file for the
 * compilers that build the mock): SM resources and their split for an H100, (opt-in) each
 * thread's context stack, and the virtual-memory calls' answers. */
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

/* Each green context its own handle, and its CUcontext (cuCtxFromGreenCtx) one of its own,
 * neither 0 nor a primary context's, as the driver gives. */
static CUresult green_create(void** out) {
  static long made;
  *out = (void*)(0x20000 + 0x100 * ++made);
  return 0;
}
static CUresult green_as_context(void** ctx, void* green) { *ctx = (char*)green + 0x10; return 0; }

/* NANOCUDA_MOCK_CTX_STACK=1 models each thread's context stack as the driver keeps it
 * (cuCtxPushCurrent/PopCurrent/SetCurrent/GetCurrent; device 0's primary context is 0x5000).
 * Unset, the current context stays the fixed answer of NANOCUDA_MOCK_CURRENT_DEVICE. */
static __thread void* ctx_stack[16];
static __thread int ctx_depth;
static int ctx_model(void) { return getenv("NANOCUDA_MOCK_CTX_STACK") != NULL; }
static CUresult model_get_current(void** ctx) { *ctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL; return 0; }
static CUresult model_push(void* ctx) {
  if (ctx_depth == 16) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  ctx_stack[ctx_depth++] = ctx;
  return 0;
}
static CUresult model_pop(void** out) {
  if (!ctx_depth) return 201; /* CUDA_ERROR_INVALID_CONTEXT: nothing to pop */
  if (out) *out = ctx_stack[ctx_depth - 1];
  --ctx_depth;
  return 0;
}
static CUresult model_set(void* ctx) {
  if (!ctx) { if (ctx_depth) --ctx_depth; return 0; }
  if (!ctx_depth) return model_push(ctx);
  ctx_stack[ctx_depth - 1] = ctx;
  return 0;
}
static CUresult model_primary(void** ctx, int dev) { *ctx = (void*)(0x5000 + 0x100 * (long)dev); return 0; }

/* Virtual memory: a 2 MiB granularity, reservations at distinct addresses, and what the last
 * cuMemCreate / cuMemSetAccess / granularity query were asked (nanocuda_mock_vmm: allocation
 * type, handle types, location type, RDMA flag, self access, peer access, granularity flag),
 * which tests read through ctypes. Offsets are cuda.h 13.0's CUmemAllocationProp/AccessDesc. */
int nanocuda_mock_vmm[7];
static CUresult vmm_granularity(size_t* g, const unsigned char* prop, int flags) {
  (void)prop;
  nanocuda_mock_vmm[6] = flags;
  *g = (size_t)2 << 20;
  return 0;
}
static CUresult vmm_reserve(unsigned long long* p, size_t size, size_t align, unsigned long long addr,
                            unsigned long long flags) {
  static unsigned long long next = 0x7d0000000000ull;
  (void)align; (void)addr; (void)flags;
  *p = next;
  next += (size + 0xFFFFFull) & ~0xFFFFFull;
  return 0;
}
static CUresult vmm_create(unsigned long long* h, size_t size, const unsigned char* prop, unsigned long long flags) {
  (void)size; (void)flags;
  memcpy(&nanocuda_mock_vmm[0], prop, 4);
  memcpy(&nanocuda_mock_vmm[1], prop + 4, 4);
  memcpy(&nanocuda_mock_vmm[2], prop + 8, 4);
  nanocuda_mock_vmm[3] = prop[25]; /* allocFlags.gpuDirectRDMACapable */
  *h = 0x9000;
  return 0;
}
static CUresult vmm_access(unsigned long long p, size_t size, const unsigned char* desc, size_t count) {
  (void)p; (void)size;
  memcpy(&nanocuda_mock_vmm[4], desc + 8, 4);
  if (count > 1) memcpy(&nanocuda_mock_vmm[5], desc + 20, 4);
  return 0;
}
