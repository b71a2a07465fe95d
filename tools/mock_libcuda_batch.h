/* The mock's recording cuMemcpyBatchAsync / cuMemcpyAsync (included by mock_libcuda.c). */
/* NANOCUDA_MOCK_BATCH=FILE: each cuMemcpyBatchAsync appends one line to FILE ("batch N",
 * then per copy " dst:src:size", then per attribute entry " @first:order:flags:srctype.id:
 * dsttype.id"), and each cuMemcpyAsync appends "copy dst:src:size", so a test sees what the
 * core handed the driver. Unset, both stay the do-nothing calls (instruction counts unchanged). */
/* cuda.h's CUmemcpyAttributes (the mock does not include cuda.h). */
typedef struct { int type, id; } MockMemLocation;
typedef struct { int srcAccessOrder; MockMemLocation srcLocHint, dstLocHint; unsigned flags; } CUmemcpyAttributes;
static CUresult batch_copy(unsigned long long* dsts, unsigned long long* srcs, size_t* sizes, size_t count,
                           CUmemcpyAttributes* attrs, size_t* first, size_t n_attrs, void* stream) {
  FILE* out = fopen(getenv("NANOCUDA_MOCK_BATCH"), "a");
  size_t i;
  (void)stream;
  ++nanocuda_mock_calls;
  if (!out) return 0;
  fprintf(out, "batch %zu", count);
  for (i = 0; i < count; ++i) fprintf(out, " %llx:%llx:%zu", dsts[i], srcs[i], sizes[i]);
  for (i = 0; i < n_attrs; ++i)
    fprintf(out, " @%zu:%d:%u:%d.%d:%d.%d", first[i], (int)attrs[i].srcAccessOrder, attrs[i].flags,
            (int)attrs[i].srcLocHint.type, attrs[i].srcLocHint.id, (int)attrs[i].dstLocHint.type,
            attrs[i].dstLocHint.id);
  fprintf(out, "\n");
  fclose(out);
  return 0;
}
static CUresult batch_single(unsigned long long dst, unsigned long long src, size_t n, void* stream) {
  FILE* out = fopen(getenv("NANOCUDA_MOCK_BATCH"), "a");
  (void)stream;
  ++nanocuda_mock_calls;
  if (out) fprintf(out, "copy %llx:%llx:%zu\n", dst, src, n), fclose(out);
  return 0;
}
static int batch_symbol(const char* symbol, void** fn) {
  if (!getenv("NANOCUDA_MOCK_BATCH")) return 0;
  if (!strcmp(symbol, "cuMemcpyBatchAsync")) *fn = (void*)batch_copy;
  else if (!strcmp(symbol, "cuMemcpyAsync")) *fn = (void*)batch_single;
  else return 0;
  return 1;
}
