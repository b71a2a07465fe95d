// GraphMemoryResource: cuMemAllocAsync under capture, the device's graph-memory counters and
// trim, and the capture-state rules of the memory resources.
#include "nanocuda/core/graph_memory_resource.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "nanocuda/core/context.h"
#include "nanocuda/core/peer_access.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {
CUstreamCaptureStatus capture_status(StreamRef stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  NANOCUDA_CALL(cuStreamIsCapturing, [&] { return stream.describe(); }, stream.handle(), &status);
  return status;
}
}  // namespace

bool is_capturing(StreamRef stream) { return capture_status(stream) != CU_STREAM_CAPTURE_STATUS_NONE; }

void require_not_capturing(const MemoryResource& resource, StreamRef stream) {
  // cuda.core's words (its users match on them); the object follows.
  if (is_capturing(stream))
    throw std::runtime_error(resource.describe() + " cannot perform memory operations on a capturing stream "
                             "(consider using GraphMemoryResource). (" + stream.describe() + ")");
}

std::shared_ptr<GraphMemoryResource> GraphMemoryResource::for_device(const Device& device) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<GraphMemoryResource>> resources;
  std::lock_guard lock(mutex);
  auto& slot = resources[device.ordinal()];
  if (!slot) slot = std::make_shared<GraphMemoryResource>(device);
  return slot;
}

std::string GraphMemoryResource::describe() const {
  return "GraphMemoryResource(device " + std::to_string(device_.ordinal()) + ")";
}

CUdeviceptr GraphMemoryResource::allocate(std::size_t size, StreamRef stream) {
  if (stream.device_ordinal() != device_.ordinal())
    check_same_device("GraphMemoryResource::allocate", "the stream", stream.device_ordinal(), "the resource",
                      device_.ordinal());
  CurrentContext guard(stream.context());
  // cuda.core's words: outside a capture the driver would make ordinary pool memory (an
  // invalidated capture is refused too: it can record nothing).
  if (capture_status(stream) != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    throw std::runtime_error("GraphMemoryResource cannot perform memory operations on a non-capturing stream. (" +
                             describe() + ".allocate on " + stream.describe() +
                             "; allocate on a GraphBuilder, or a stream it captures)");
  CUdeviceptr ptr = 0;
  NANOCUDA_CALL(cuMemAllocAsync,
                [&] { return describe() + ".allocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                &ptr, size, stream.handle());
  return ptr;
}

void GraphMemoryResource::deallocate(CUdeviceptr ptr, std::size_t size, StreamRef stream) {
  // Any stream: under capture this records a mem-free node; outside, graph memory may be
  // freed in stream order like any other stream-ordered allocation.
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemFreeAsync,
                [&] { return describe() + ".deallocate(" + std::to_string(size) + " bytes) on " + stream.describe(); },
                ptr, stream.handle());
}

GraphMemoryAttributes GraphMemoryResource::attributes() const {
  GraphMemoryAttributes a;
  auto read = [&](CUgraphMem_attribute attr, std::uint64_t& out) {
    cuuint64_t v = 0;
    NANOCUDA_CALL(cuDeviceGetGraphMemAttribute, [&] { return describe() + ".attributes"; }, device_.handle(),
                  attr, &v);
    out = v;
  };
  read(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, a.reserved_mem_current);
  read(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, a.reserved_mem_high);
  read(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, a.used_mem_current);
  read(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, a.used_mem_high);
  return a;
}

namespace {
void reset_high(const GraphMemoryResource& r, CUgraphMem_attribute attr, const char* name) {
  cuuint64_t zero = 0;
  NANOCUDA_CALL(cuDeviceSetGraphMemAttribute, [&] { return r.describe() + ".reset_" + name; }, r.device().handle(),
                attr, &zero);
}
}  // namespace

void GraphMemoryResource::reset_reserved_mem_high() {
  reset_high(*this, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, "reserved_mem_high");
}
void GraphMemoryResource::reset_used_mem_high() { reset_high(*this, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, "used_mem_high"); }

void GraphMemoryResource::trim() {
  NANOCUDA_CALL(cuDeviceGraphMemTrim, [&] { return describe() + ".trim"; }, device_.handle());
}

}  // namespace nanocuda
