/* The mock driver's CUDA user objects and graph copies (included by mock_libcuda.c): an object
 * is refcounted; a graph's references go with it, are copied by cuGraphClone and into a child
 * graph node's copy, and a graph destroyed (or destroyed with its node) drops them, its child
 * copies' and bodies' too, as the driver documents. */
static CUresult uo_release(void* o, unsigned n) {
  MockUserObject* u = o;
  if (!u || u->magic != MOCK_MAGIC) return 1;
  u->refs -= (int)n;
  if (u->refs <= 0) { u->magic = 0; if (u->destroy) u->destroy(u->ptr); }
  return 0;
}
static CUresult uo_retain(void* o, unsigned n) {
  MockUserObject* u = o;
  if (!u || u->magic != MOCK_MAGIC) return 1;
  u->refs += (int)n;
  return 0;
}
static CUresult uo_create(void** out, void* ptr, void (*destroy)(void*), unsigned refs, unsigned flags) {
  MockUserObject* u = keep(calloc(1, sizeof *u));
  (void)flags;
  u->magic = MOCK_MAGIC; u->refs = (int)refs; u->ptr = ptr; u->destroy = destroy;
  *out = u;
  return 0;
}
static CUresult graph_retain_uo(void* g, void* o, unsigned n, unsigned flags) {
  MockGraph* m = mock_graph(g);
  MockUserObject* u = o;
  if (!m || !u || u->magic != MOCK_MAGIC || m->nuo == MOCK_MAX_UO) return 1;
  if (!(flags & 1)) u->refs += (int)n; /* CU_GRAPH_USER_OBJECT_MOVE takes the caller's */
  m->uo[m->nuo++] = u;
  return 0;
}
/* Drops one of the graph's references (CUDA_ERROR_INVALID_VALUE when it holds none). */
static CUresult graph_release_uo(void* g, void* o, unsigned n) {
  MockGraph* m = mock_graph(g);
  if (!m) return 1;
  for (int i = 0; i < m->nuo; ++i)
    if (m->uo[i] == o) { m->uo[i] = m->uo[--m->nuo]; return uo_release(o, n); }
  return 1;
}
static CUresult graph_destroy(void* g);
static void node_drop_graphs(MockNode* node) {
  if (node->child) graph_destroy(node->child);
  for (int i = 0; i < node->nbodies; ++i) graph_destroy(node->bodies[i]);
}
static CUresult graph_destroy(void* g) {
  MockGraph* m = mock_graph(g);
  if (!m) return 0;
  m->magic = 0;
  for (int i = 0; i < m->nuo; ++i) uo_release(m->uo[i], 1);
  for (size_t i = 0; i < m->n; ++i) if (m->nodes[i]->alive) node_drop_graphs(m->nodes[i]);
  return 0;
}
/* A child graph node's copy of `src`: its live nodes (each remembering its original), edges,
 * child copies and user-object references. */
static MockGraph* graph_copy(MockGraph* src) {
  MockGraph* c = new_graph();
  if (!src) return c;
  for (size_t i = 0; i < src->n; ++i) {
    MockNode* o = src->nodes[i];
    if (!o->alive) continue;
    MockNode* n = keep(calloc(1, sizeof *n));
    n->magic = MOCK_MAGIC; n->type = o->type; n->alive = 1; n->g = c; n->origin = o;
    if (o->child) n->child = graph_copy(o->child);
    c->nodes[c->n++] = n;
  }
  for (size_t i = 0; i < src->ne; ++i)
    for (size_t a = 0; a < c->n; ++a)
      for (size_t b = 0; b < c->n; ++b)
        if (c->nodes[a]->origin == src->from[i] && c->nodes[b]->origin == src->to[i]) {
          c->from[c->ne] = c->nodes[a]; c->to[c->ne++] = c->nodes[b];
        }
  for (int i = 0; i < src->nuo; ++i) { src->uo[i]->refs++; c->uo[c->nuo++] = src->uo[i]; }
  return c;
}
static CUresult find_in_clone(void** out, void* original, void* cloned) {
  MockGraph* c = mock_graph(cloned);
  *out = NULL;
  if (!c) return 1;
  for (size_t i = 0; i < c->n; ++i) if (c->nodes[i]->origin == original) { *out = c->nodes[i]; return 0; }
  return 1;
}
/* Exported too, so CPU tests can clone a graph through ctypes as cuda.bindings users do. */
CUresult cuGraphClone(void** out, void* g) {
  MockGraph* m = mock_graph(g);
  if (!m) return 1;
  MockGraph* c = new_graph();
  for (int i = 0; i < m->nuo; ++i) { m->uo[i]->refs++; c->uo[c->nuo++] = m->uo[i]; }
  *out = c;
  return 0;
}
CUresult cuGraphDestroy(void* g) { return graph_destroy(g); }
/* Host functions (cuLaunchHostFunc) wait until their stream (cuStreamSynchronize), the context
 * (cuCtxSynchronize) or a test (nanocuda_mock_run_host_funcs) completes them, as queued work
 * waits on a GPU: a release queued behind a graph's launches is seen deferred. */
#include <pthread.h>
typedef struct MockHostFn { void* stream; void (*fn)(void*); void* data; } MockHostFn;
static MockHostFn host_fns[64];
int nanocuda_mock_host_funcs_pending = 0;
static CUresult host_func(void* s, void (*fn)(void*), void* data) {
  ++nanocuda_mock_calls;
  if (nanocuda_mock_host_funcs_pending == 64) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  host_fns[nanocuda_mock_host_funcs_pending++] = (MockHostFn){s, fn, data};
  return 0;
}
typedef struct MockDue { MockHostFn fns[64]; int n; } MockDue;
static void* run_due(void* arg) {
  MockDue* due = arg;
  for (int i = 0; i < due->n; ++i) due->fns[i].fn(due->fns[i].data);
  return NULL;
}
/* Runs, in order, the queued host functions of stream `s` (every stream's when `all`) on a
 * thread of their own, as the driver does, and waits for them (a caller holding a lock they
 * need deadlocks, as on a GPU). */
static void run_host_fns(void* s, int all) {
  MockDue due = {.n = 0};
  int k = 0;
  pthread_t thread;
  for (int i = 0; i < nanocuda_mock_host_funcs_pending; ++i)
    if (all || host_fns[i].stream == s) due.fns[due.n++] = host_fns[i];
    else host_fns[k++] = host_fns[i];
  nanocuda_mock_host_funcs_pending = k;
  if (!due.n) return;
  if (pthread_create(&thread, NULL, run_due, &due) == 0) pthread_join(thread, NULL);
  else run_due(&due);
}
void nanocuda_mock_run_host_funcs(void) { run_host_fns(NULL, 1); }
static CUresult ctx_sync(void) { ++nanocuda_mock_calls; run_host_fns(NULL, 1); return 0; }
/* Page-locked memory is plain heap memory here; freeing it waits for the device's queued work,
 * host functions included, as the driver's cuMemFreeHost does. */
static CUresult host_alloc(void** p, size_t n, unsigned flags) {
  (void)flags;
  ++nanocuda_mock_calls;
  *p = malloc(n ? n : 1);
  return *p ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
static CUresult free_host(void* p) { ++nanocuda_mock_calls; run_host_fns(NULL, 1); free(p); return 0; }
static int host_fn_symbol(const char* symbol, void** fn) {
  if (!strcmp(symbol, "cuLaunchHostFunc")) *fn = (void*)host_func;
  else if (!strcmp(symbol, "cuCtxSynchronize")) *fn = (void*)ctx_sync;
  else if (!strcmp(symbol, "cuMemFreeHost")) *fn = (void*)free_host;
  else if (!strcmp(symbol, "cuMemHostAlloc")) *fn = (void*)host_alloc;
  else return 0;
  return 1;
}
