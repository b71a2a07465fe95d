/* The mock driver's executable graphs (included by mock_libcuda.c): an instance remembers the
 * modelled graph it was made from, so cuGraphExecUpdate can refuse a source of another shape
 * as the driver does (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, result TOPOLOGY_CHANGED). */
typedef struct MockExec { unsigned magic; MockGraph* g; MockUserObject* uo[MOCK_MAX]; int nuo; } MockExec;
/* An executable holds the user-object references of its source graph and of the graphs
 * inside it (child copies, bodies), taken at instantiation and kept until it is destroyed: an
 * update neither drops them nor takes the new source's (what an H100's driver did). */
static void exec_take(MockExec* e, MockGraph* g) {
  if (!g) return;
  for (int i = 0; i < g->nuo && e->nuo < MOCK_MAX; ++i) { g->uo[i]->refs++; e->uo[e->nuo++] = g->uo[i]; }
  for (size_t i = 0; i < g->n; ++i) {
    if (!g->nodes[i]->alive) continue;
    exec_take(e, g->nodes[i]->child);
    for (int b = 0; b < g->nodes[i]->nbodies; ++b) exec_take(e, g->nodes[i]->bodies[b]);
  }
}
static void exec_drop(MockExec* e) {
  for (int i = 0; i < e->nuo; ++i) uo_release(e->uo[i], 1);
  e->nuo = 0;
}
static CUresult exec_destroy(void* exec) {
  MockExec* e = exec;
  if (e && e->magic == MOCK_MAGIC) { exec_drop(e); e->magic = 0; }
  return 0;
}
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
  exec_take(e, e->g);
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
