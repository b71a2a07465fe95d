/* The stream-ordered allocator's context rule (with NANOCUDA_MOCK_CTX_STACK=1): as the driver
 * documents, cuMemAllocFromPoolAsync/cuMemFreeAsync on an implicit stream (0, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD) with no current context fail with CUDA_ERROR_INVALID_CONTEXT; a created
 * stream names its own context, so none need be current. Included after mock_libcuda_green.h.
 * NANOCUDA_MOCK_STREAMS=1: created streams get distinct handles, as on a GPU (by default they
 * read 0, which nanocuda then treats as the implicit stream it is to the driver). */
static int implicit_without_context(void* stream) {
  static int model = -1; /* ctx_model() reads the environment: once */
  if ((unsigned long long)stream > 2 || ctx_depth != 0) return 0;
  if (model < 0) model = ctx_model();
  return model;
}
static CUresult ordered_alloc(unsigned long long* out, size_t size, void* pool, void* stream) {
  if (implicit_without_context(stream)) { ++nanocuda_mock_calls; return 201; }
  return alloc_from_pool(out, size, pool, stream);
}
static CUresult ordered_free(unsigned long long ptr, void* stream) {
  if (implicit_without_context(stream)) { ++nanocuda_mock_calls; return 201; }
  return free_async(ptr, stream);
}
static CUresult stream_create(void** out, unsigned flags, int priority) {
  static unsigned long long made;
  (void)flags; (void)priority;
  ++nanocuda_mock_calls;
  *out = (void*)(0x9000 + 0x10 * ++made);
  return 0;
}
static int stream_symbol(const char* symbol, void** fn) {
  if (strcmp(symbol, "cuStreamCreateWithPriority") || !getenv("NANOCUDA_MOCK_STREAMS")) return 0;
  *fn = (void*)stream_create;
  return 1;
}
