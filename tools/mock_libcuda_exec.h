/* The mock driver's executable graphs (included by mock_libcuda.c): an instance remembers the
 * modelled graph it was made from, so cuGraphExecUpdate can refuse a source of another shape
 * as the driver does (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, result TOPOLOGY_CHANGED). */
typedef struct MockExec { unsigned magic; MockGraph* g; } MockExec;
static size_t live_nodes(MockGraph* g) {
  size_t k = 0;
  for (size_t i = 0; i < g->n; ++i) k += g->nodes[i]->alive;
  return k;
}
static CUresult instantiate(void** exec, void* g, unsigned long long flags) {
  (void)flags;
  ++nanocuda_mock_calls; /* counted, as the generic body counted it before it was modelled */
  MockExec* e = keep(calloc(1, sizeof *e));
  e->magic = MOCK_MAGIC; e->g = mock_graph(g);
  *exec = e;
  return 0;
}
static CUresult exec_update(void* exec, void* source, void* info) {
  MockExec* e = exec;
  ++nanocuda_mock_calls;
  MockGraph* s = mock_graph(source);
  if (!e || e->magic != MOCK_MAGIC || !e->g || !s) return 0; /* not modelled: accepted */
  if (live_nodes(e->g) == live_nodes(s) && e->g->ne == s->ne) return 0;
  memset(info, 0, 24);
  *(int*)info = 2; /* CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED */
  return 910;      /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
}
