/* cuGraphExecKernelNodeSetParams, recorded (included by mock_libcuda.c after the context model):
 * with NANOCUDA_MOCK_KSET_RECORD=1, the calls made and the last one's arguments, which tests
 * read through ctypes to check that a kernel-node update makes the C++ loop's one driver call
 * (bench graphs: cpp_graph_update) with the same parameters. NANOCUDA_MOCK_KSET_NEEDS_CTX=1
 * (with NANOCUDA_MOCK_CTX_STACK=1) makes the call fail with CUDA_ERROR_INVALID_CONTEXT while no
 * context is current, as a driver needing one would. With neither set, the entry point is the
 * generic body (tools/hot_path_instructions.py counts what it costs). */
typedef struct MockKernelSet {
  void* exec; void* node;
  void* func; unsigned grid[3], block[3], shared_mem;
  void** params; void** extra; void* kern; void* ctx; /* CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h 12/13) */
  unsigned long long first_param;                      /* the 8 bytes at params[0] */
} MockKernelSet;
unsigned long long nanocuda_mock_kernel_sets = 0;
MockKernelSet nanocuda_mock_last_kernel_set;
static CUresult kernel_set(void* exec, void* node, const unsigned char* p) {
  ++nanocuda_mock_calls;
  if (getenv("NANOCUDA_MOCK_KSET_NEEDS_CTX") && ctx_model() && !ctx_depth) return 201;
  if (!getenv("NANOCUDA_MOCK_KSET_RECORD")) return 0;
  ++nanocuda_mock_kernel_sets;
  MockKernelSet* s = &nanocuda_mock_last_kernel_set;
  s->exec = exec; s->node = node;
  memcpy(&s->func, p, 72);
  s->first_param = 0;
  if (s->params && s->params[0]) memcpy(&s->first_param, s->params[0], 8);
  return 0;
}
static int kset_modelled(void) {
  return getenv("NANOCUDA_MOCK_KSET_RECORD") || getenv("NANOCUDA_MOCK_KSET_NEEDS_CTX");
}
