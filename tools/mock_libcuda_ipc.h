/* The mock driver's pool IPC model (included by mock_libcuda.c): exported pools as real file descriptors, host pools as the driver treats them. */
#include <unistd.h>

/* IPC pools: an exported pool is a real file descriptor (an unlinked temporary file holding the pool's location
 * type), so multiprocessing can send it to another process as it would the driver's, and the
 * importer learns what kind of pool it maps. Device pools are all 0x1000 and import as 0x4000;
 * host pools model what the driver does with them (begin ipc-host-pools):
 * - cuMemPoolCreate gives a host pool 0x1000 + 0x100 * location type (HOST 2, HOST_NUMA 3),
 *   + 0x10 when it was made exportable (handleTypes POSIX_FILE_DESCRIPTOR);
 * - cuMemPoolExportToShareableHandle of a pool made without that handle type, or asked for
 *   another type, is CUDA_ERROR_INVALID_VALUE; an import of a bad descriptor too;
 * - an imported host pool (0x4000 + 0x100 * location type) is reachable from no device until
 *   cuMemPoolSetAccess: nanocuda_mock_imported_host_access counts the grants on it;
 * - imported pools cannot allocate (cuMemAllocFromPoolAsync: CUDA_ERROR_INVALID_VALUE). */
unsigned long long nanocuda_mock_imported_host_access = 0;
static CUresult pool_create(void** out, const int* props) { ++nanocuda_mock_calls;
  /* CUmemPoolProps: allocType, handleTypes, location.type, location.id, ... */
  int handle_types = props[1], location = props[2];
  unsigned long long h = 0x1000;
  if (location == 2 || location == 3) h += 0x100ull * (unsigned)location + ((handle_types & 1) ? 0x10 : 0);
  *out = (void*)h;
  return 0;
}
static CUresult pool_export(int* fd, void* pool, int type, unsigned long long flags) { ++nanocuda_mock_calls;
  unsigned long long h = (unsigned long long)pool;
  int location = h == 0x1000 ? 1 : (int)((h >> 8) & 0xf);
  (void)flags;
  if (type != 1 || (h != 0x1000 && !(h & 0x10))) return 1; /* CUDA_ERROR_INVALID_VALUE */
  char path[] = "/tmp/nanocuda-mock-poolXXXXXX";
  *fd = mkstemp(path);
  if (*fd < 0) return 999;
  unlink(path);
  if (write(*fd, &location, sizeof location) != (ssize_t)sizeof location) { close(*fd); return 999; }
  return 0;
}
static CUresult pool_import(void** pool, void* fd, int type, unsigned long long flags) { ++nanocuda_mock_calls;
  int location = 0;
  (void)flags;
  if (type != 1 || pread((int)(long)fd, &location, sizeof location, 0) != (ssize_t)sizeof location) return 1;
  *pool = (void*)(0x4000ull + (location == 1 ? 0 : 0x100ull * (unsigned)location));
  return 0;
}
static CUresult pool_set_access(void* pool, const int* desc, size_t count) { ++nanocuda_mock_calls;
  unsigned long long h = (unsigned long long)pool;
  (void)desc;
  if (h == 0x4200 || h == 0x4300) nanocuda_mock_imported_host_access += count;
  return 0;
}
/* Imported host pools report no access for any device (PROT_NONE) until granted; for other
 * pools the output is left alone, as before this model. */
static CUresult pool_get_access(int* flags, void* pool, const int* location) { ++nanocuda_mock_calls;
  unsigned long long h = (unsigned long long)pool;
  (void)location;
  if (h == 0x4200 || h == 0x4300) *flags = 0;
  return 0;
}
static CUresult alloc_from_pool(unsigned long long* out, size_t size, void* pool, void* stream) {
  unsigned long long h = (unsigned long long)pool;
  (void)size; (void)stream;
  if (h >= 0x4000 && h < 0x5000) { ++nanocuda_mock_calls; return 1; }
  return device_ptr(out);
}
/* (end ipc-host-pools) */
/* Imported pointers (pool_import_pointer's, all 0x7e0000000000): nanocuda_mock_pointer_imports
 * counts the driver's imports. They reach 4096 bytes, told by the range attributes and by
 * cuMemGetAddressRange. NANOCUDA_MOCK_IPC_RANGE models what a host pool's pointer may answer
 * instead: "address_range" takes the attributes away (CUDA_ERROR_INVALID_VALUE), "chunk" has
 * them tell the pool's whole 2 MiB chunk; cuMemGetAddressRange still says 4096. */
unsigned long long nanocuda_mock_pointer_imports = 0;
static int ipc_range_by_attribute(void) {
  const char* how = getenv("NANOCUDA_MOCK_IPC_RANGE");
  return !how || strcmp(how, "address_range");
}
static size_t ipc_attribute_size(void) {
  const char* how = getenv("NANOCUDA_MOCK_IPC_RANGE");
  return how && !strcmp(how, "chunk") ? (size_t)2 << 20 : 4096;
}
static CUresult mem_address_range(unsigned long long* base, size_t* size, unsigned long long ptr) { ++nanocuda_mock_calls;
  if (ptr != 0x7e0000000000ull) return 1; /* CUDA_ERROR_INVALID_VALUE: not an allocation this mock knows */
  *base = ptr;
  *size = 4096;
  return 0;
}
