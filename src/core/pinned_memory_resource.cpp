// Pinned host memory through the resource interface.
#include "nanocuda/core/pinned_memory_resource.h"

#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

CUdeviceptr PinnedMemoryResource::allocate(std::size_t size, const Stream& stream) {
  (void)stream;  // cuMemHostAlloc is synchronous
  CurrentContext guard(*device_.context());
  void* p = nullptr;
  NANOCUDA_CALL(cuMemHostAlloc,
                [&] { return "PinnedMemoryResource.allocate(" + std::to_string(size) + " bytes = " + format_bytes(size) + ")"; },
                &p, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  return reinterpret_cast<CUdeviceptr>(p);
}

void PinnedMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, const Stream& stream) {
  stream.sync();  // a copy in flight may still read or write it
  NANOCUDA_CALL(cuMemFreeHost,
                [&] { return "PinnedMemoryResource.deallocate(" + std::to_string(size) + " bytes)"; },
                reinterpret_cast<void*>(ptr));
}

}  // namespace nanocuda
