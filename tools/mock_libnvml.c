/* A fake libnvidia-ml for nanocuda.system's CPU tests: two GPUs with fixed, known answers.
 *   cc -shared -fPIC -O2 -o /tmp/libnvml_mock.so tools/mock_libnvml.c
 *   NANOCUDA_LIBNVML=/tmp/libnvml_mock.so python3 ...
 * Device 1 has no serial (NOT_SUPPORTED), like a board without an InfoROM; setting persistence
 * mode needs NANOCUDA_MOCK_NVML_ROOT=1 (else NO_PERMISSION); event waits time out (system events:
 * see NANOCUDA_MOCK_NVML_SYSTEM_EVENT below); there is no
 * nvmlDeviceGetRepairStatus (an older driver's library). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int R;
enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NO_PERMISSION = 4, NOT_FOUND = 6,
       INSUFFICIENT_SIZE = 7, TIMEOUT = 10, UNINITIALIZED = 1 };
typedef struct dev { int index; int persistence; } dev;
static dev g_devs[2] = {{0, 1}, {1, 0}};
static int g_init = 0;
#define DEV(h) dev* d = (dev*)(h); if (!g_init) return UNINITIALIZED; \
  if (d != &g_devs[0] && d != &g_devs[1]) return INVALID_ARGUMENT

static R put(char* out, unsigned n, const char* s) {
  if (strlen(s) + 1 > n) return INSUFFICIENT_SIZE;
  strcpy(out, s);
  return OK;
}

R nvmlInit_v2(void) { g_init = 1; return OK; }
const char* nvmlErrorString(R r) { return r == NOT_SUPPORTED ? "Not Supported" : "mock error"; }
R nvmlSystemGetDriverVersion(char* b, unsigned n) { return put(b, n, "580.65.06"); }
R nvmlSystemGetNVMLVersion(char* b, unsigned n) { return put(b, n, "13.580.65.06"); }
R nvmlSystemGetCudaDriverVersion_v2(int* v) { *v = 13000; return OK; }
typedef struct { unsigned version; char branch[80]; } branch_t;
R nvmlSystemGetDriverBranch(branch_t* b, unsigned n) {
  if (b->version != (sizeof(branch_t) | (1u << 24))) return 25;  /* ARGUMENT_VERSION_MISMATCH */
  return put(b->branch, n, "r580_00");
}
R nvmlDeviceGetCount_v2(unsigned* n) { *n = 2; return OK; }
R nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
  if (i >= 2) return INVALID_ARGUMENT;
  *h = &g_devs[i];
  return OK;
}
static const char* uuid_of(int i) {
  return i ? "GPU-11111111-2222-3333-4444-555555555555" : "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
}
static const char* bus_of(int i) { return i ? "00000000:41:00.0" : "00000000:01:00.0"; }
R nvmlDeviceGetHandleByUUID(const char* u, void** h) {
  for (int i = 0; i < 2; ++i) if (!strcmp(u, uuid_of(i))) { *h = &g_devs[i]; return OK; }
  return NOT_FOUND;
}
R nvmlDeviceGetHandleByPciBusId_v2(const char* b, void** h) {
  for (int i = 0; i < 2; ++i) if (!strcasecmp(b, bus_of(i))) { *h = &g_devs[i]; return OK; }
  return NOT_FOUND;
}
R nvmlDeviceGetIndex(void* h, unsigned* v) { DEV(h); *v = (unsigned)d->index; return OK; }
R nvmlDeviceGetName(void* h, char* b, unsigned n) { DEV(h); return put(b, n, "Mock H100"); }
R nvmlDeviceGetUUID(void* h, char* b, unsigned n) { DEV(h); return put(b, n, uuid_of(d->index)); }
R nvmlDeviceGetSerial(void* h, char* b, unsigned n) {
  DEV(h);
  return d->index ? NOT_SUPPORTED : put(b, n, "1650123456789");
}
R nvmlDeviceGetBrand(void* h, int* v) { DEV(h); *v = 14; return OK; }
R nvmlDeviceGetArchitecture(void* h, unsigned* v) { DEV(h); *v = 9; return OK; }
R nvmlDeviceGetMinorNumber(void* h, unsigned* v) { DEV(h); *v = (unsigned)d->index; return OK; }
R nvmlDeviceGetModuleId(void* h, unsigned* v) { DEV(h); *v = 1 + (unsigned)d->index; return OK; }
R nvmlDeviceGetNumaNodeId(void* h, unsigned* v) { DEV(h); *v = (unsigned)d->index; return OK; }
R nvmlDeviceGetCudaComputeCapability(void* h, int* a, int* b) { DEV(h); *a = 9; *b = 0; return OK; }
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } mem2;
R nvmlDeviceGetMemoryInfo_v2(void* h, mem2* m) {
  DEV(h);
  if (m->version != (sizeof(mem2) | (2u << 24))) return 25;
  m->total = 80ull << 30; m->reserved = 512ull << 20; m->used = 1ull << 30;
  m->free = m->total - m->reserved - m->used;
  return OK;
}
R nvmlDeviceGetBAR1MemoryInfo(void* h, unsigned long long* m) {
  DEV(h); m[0] = 128ull << 30; m[1] = 127ull << 30; m[2] = 1ull << 30; return OK;
}
typedef struct { unsigned version, domain, bus, device, id, sub, base, subclass; char bus_id[32]; } pci_t;
R nvmlDeviceGetPciInfoExt(void* h, pci_t* p) {
  DEV(h);
  if (p->version != (sizeof(pci_t) | (1u << 24))) return 25;
  p->domain = 0; p->bus = d->index ? 0x41 : 0x01; p->device = 0;
  p->id = (0x2330u << 16) | 0x10de; p->sub = 0x16c110de; p->base = 3; p->subclass = 2;
  strcpy(p->bus_id, bus_of(d->index));
  return OK;
}
static R five(void* h, unsigned* v) { DEV(h); *v = 5; return OK; }
R nvmlDeviceGetMaxPcieLinkGeneration(void* h, unsigned* v) { return five(h, v); }
R nvmlDeviceGetGpuMaxPcieLinkGeneration(void* h, unsigned* v) { return five(h, v); }
R nvmlDeviceGetCurrPcieLinkGeneration(void* h, unsigned* v) { return five(h, v); }
R nvmlDeviceGetMaxPcieLinkWidth(void* h, unsigned* v) { DEV(h); *v = 16; return OK; }
R nvmlDeviceGetCurrPcieLinkWidth(void* h, unsigned* v) { DEV(h); *v = 16; return OK; }
R nvmlDeviceGetPcieThroughput(void* h, int c, unsigned* v) { DEV(h); *v = c ? 200 : 100; return OK; }
R nvmlDeviceGetPcieReplayCounter(void* h, unsigned* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetCpuAffinityWithinScope(void* h, unsigned n, unsigned long* set, int scope) {
  DEV(h);
  if (n < 1) return INSUFFICIENT_SIZE;
  memset(set, 0, n * sizeof(*set));
  set[0] = scope ? 0xFFul : (d->index ? 0xF0ul : 0x0Ful);  /* CPUs 0-3 / 4-7 */
  return OK;
}
R nvmlDeviceGetMemoryAffinity(void* h, unsigned n, unsigned long* set, int scope) {
  DEV(h); (void)scope;
  memset(set, 0, n * sizeof(*set));
  set[0] = 1ul << d->index;
  return OK;
}
R nvmlDeviceGetPersistenceMode(void* h, int* v) { DEV(h); *v = d->persistence; return OK; }
R nvmlDeviceSetPersistenceMode(void* h, int v) {
  DEV(h);
  const char* root = getenv("NANOCUDA_MOCK_NVML_ROOT");
  if (!root || strcmp(root, "1")) return NO_PERMISSION;
  d->persistence = v;
  return OK;
}
R nvmlDeviceGetDisplayMode(void* h, int* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetDisplayActive(void* h, int* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetC2cModeInfoV(void* h, unsigned* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetAddressingMode(void* h, unsigned* m) {
  DEV(h);
  if (m[0] != (8u | (1u << 24))) return 25;
  m[1] = d->index ? 0 : 1;  /* device 0: HMM, device 1: none */
  return OK;
}
R nvmlDeviceGetPerformanceState(void* h, int* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetSupportedPerformanceStates(void* h, int* s, unsigned n) {
  DEV(h);
  if (n < 2) return INSUFFICIENT_SIZE;
  s[0] = 0; s[1] = 2;  /* the rest stay NVML_PSTATE_UNKNOWN */
  return OK;
}
R nvmlDeviceGetDynamicPstatesInfo(void* h, unsigned* info) {
  DEV(h);
  memset(info, 0, sizeof(unsigned) * 33);
  info[1] = 1; info[2] = 42; info[3] = 80; info[4] = 30;  /* domain 0 */
  return OK;
}
R nvmlDeviceGetUtilizationRates(void* h, unsigned* u) { DEV(h); u[0] = 7; u[1] = 3; return OK; }
R nvmlDeviceGetCurrentClocksEventReasons(void* h, unsigned long long* v) { DEV(h); *v = 0x1; return OK; }
R nvmlDeviceGetSupportedClocksEventReasons(void* h, unsigned long long* v) { DEV(h); *v = 0x1FF; return OK; }
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } proc_t;
R nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned* n, proc_t* p) {
  DEV(h);
  if (d->index) { *n = 0; return OK; }
  if (*n < 1) { *n = 1; return INSUFFICIENT_SIZE; }
  *n = 1; p[0].pid = 4242; p[0].used = 1ull << 20; p[0].gi = p[0].ci = 0xFFFFFFFFu;
  return OK;
}
R nvmlDeviceIsMigDeviceHandle(void* h, unsigned* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetMigMode(void* h, unsigned* c, unsigned* p) { DEV(h); *c = 0; *p = 0; return OK; }
R nvmlDeviceGetMaxMigDeviceCount(void* h, unsigned* v) { DEV(h); *v = 0; return OK; }
R nvmlDeviceGetTopologyNearestGpus(void* h, int level, unsigned* n, void** out) {
  DEV(h); (void)level;
  if (!out) { *n = 1; return OK; }
  if (*n < 1) return INSUFFICIENT_SIZE;
  *n = 1; out[0] = &g_devs[1 - d->index];
  return OK;
}
R nvmlSystemGetTopologyGpuSet(unsigned cpu, unsigned* n, void** out) {
  unsigned want = cpu < 4 ? 1 : (cpu < 8 ? 1 : 0);
  if (!out || *n == 0) { *n = want; return OK; }
  *n = want;
  if (want) out[0] = &g_devs[cpu < 4 ? 0 : 1];
  return OK;
}
R nvmlDeviceGetNvLinkState(void* h, unsigned link, int* v) { DEV(h); *v = link < 2; return OK; }
R nvmlDeviceGetNvLinkVersion(void* h, unsigned link, unsigned* v) { DEV(h); (void)link; *v = 6; return OK; }
R nvmlDeviceGetSupportedEventTypes(void* h, unsigned long long* v) { DEV(h); *v = 0x8 | 0x4; return OK; }
static int g_sets = 0;
R nvmlEventSetCreate(void** set) { *set = &g_sets; ++g_sets; return OK; }
R nvmlDeviceRegisterEvents(void* h, unsigned long long types, void* set) {
  DEV(h); (void)set;
  return (types & ~(0x8ull | 0x4ull)) ? NOT_SUPPORTED : OK;
}
R nvmlEventSetWait_v2(void* set, void* data, unsigned ms) { (void)set; (void)data; (void)ms; return TIMEOUT; }
R nvmlEventSetFree(void* set) { (void)set; --g_sets; return OK; }
int nanocuda_mock_nvml_open_event_sets(void) { return g_sets; }
/* System events (versioned requests, checked like the real library's): bind (2) and unbind (1)
 * register; NANOCUDA_MOCK_NVML_SYSTEM_EVENT="TYPE,GPU_ID" is delivered by every wait, else it times out. */
typedef struct { unsigned version; void* set; } sys_set_req;
typedef struct { unsigned version; unsigned long long types; void* set; } sys_reg_req;
typedef struct { unsigned long long type; unsigned gpu_id; } sys_event;
typedef struct { unsigned version, timeout_ms; void* set; sys_event* data; unsigned size, num; } sys_wait_req;
static int g_system_sets = 0;
#define SYS_VERSION(T) (unsigned)(sizeof(T) | (1u << 24))
R nvmlSystemEventSetCreate(sys_set_req* r) {
  if (!r || r->version != SYS_VERSION(sys_set_req)) return 25;
  r->set = &g_system_sets; ++g_system_sets; return OK;
}
R nvmlSystemRegisterEvents(sys_reg_req* r) {
  if (!r || r->version != SYS_VERSION(sys_reg_req) || r->set != &g_system_sets) return INVALID_ARGUMENT;
  return (r->types == 0 || (r->types & ~0x3ull)) ? NOT_SUPPORTED : OK;
}
R nvmlSystemEventSetWait(sys_wait_req* r) {
  const char* spec = getenv("NANOCUDA_MOCK_NVML_SYSTEM_EVENT");
  if (!r || r->version != SYS_VERSION(sys_wait_req) || !r->data || r->size == 0) return INVALID_ARGUMENT;
  if (!spec) return TIMEOUT;
  char* end = NULL;
  r->data[0].type = strtoull(spec, &end, 0);
  r->data[0].gpu_id = (unsigned)strtoul(end && *end == ',' ? end + 1 : "0", NULL, 0);
  r->num = 1;
  return OK;
}
R nvmlSystemEventSetFree(sys_set_req* r) {
  if (!r || r->version != SYS_VERSION(sys_set_req)) return 25;
  --g_system_sets; return OK;
}
int nanocuda_mock_nvml_open_system_event_sets(void) { return g_system_sets; }
R nvmlDeviceGetInforomImageVersion(void* h, char* b, unsigned n) { DEV(h); return put(b, n, "G520.0200.00.05"); }
R nvmlDeviceGetInforomVersion(void* h, int object, char* b, unsigned n) {
  DEV(h);
  return object == 0 ? put(b, n, "2.1") : NOT_SUPPORTED;
}
R nvmlDeviceGetInforomConfigurationChecksum(void* h, unsigned* v) { DEV(h); *v = 0xC0FFEE; return OK; }
R nvmlDeviceValidateInforom(void* h) { DEV(h); return d->index ? 14 : OK; }  /* 14: CORRUPTED_INFOROM */
R nvmlDeviceGetLastBBXFlushTime(void* h, unsigned long long* t, unsigned long* us) {
  DEV(h); *t = 1700000000ull; *us = 250; return OK;
}
R nvmlDeviceGetBoardPartNumber(void* h, char* b, unsigned n) { DEV(h); return put(b, n, "692-2G520-0200-000"); }
typedef struct { unsigned id, scope; long long ts, lat; int type; R ret; union { double d; unsigned long long ull; } v; } field_t;
static unsigned long long g_replays = 7;
R nvmlDeviceGetFieldValues(void* h, int n, field_t* f) {
  DEV(h);
  for (int i = 0; i < n; ++i) {
    f[i].ts = 1000 + i; f[i].lat = 2; f[i].ret = OK;
    if (f[i].id == 83) { f[i].type = 3; f[i].v.ull = 123456789ull; }       /* energy, mJ */
    else if (f[i].id == 94) { f[i].type = 1; f[i].v.ull = g_replays; }     /* replay counter */
    else if (f[i].id == 186) { f[i].type = 0; f[i].v.d = 71.5; }            /* instant power, a double */
    else f[i].ret = NOT_SUPPORTED;
  }
  return OK;
}
R nvmlDeviceClearFieldValues(void* h, int n, field_t* f) {
  DEV(h);
  for (int i = 0; i < n; ++i) if (f[i].id == 94) g_replays = 0;
  return OK;
}
