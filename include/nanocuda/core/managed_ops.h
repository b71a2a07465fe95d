// Batched memory operations: managed-memory prefetch/discard and advice, and batched copies.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

// Where pages go or prefer to be (cuda.core's Device / Host / Host(numa_id) /
// Host.numa_current()).
struct MemoryLocation {
  enum class Kind { device, host, host_numa, host_numa_current };
  Kind kind = Kind::host;
  int id = 0;  // the device ordinal or NUMA node
  [[nodiscard]] static MemoryLocation device(int ordinal) { return {Kind::device, ordinal}; }
  [[nodiscard]] static MemoryLocation host() { return {Kind::host, 0}; }
  [[nodiscard]] std::string describe() const;  // "device 0", "the host", "host NUMA node 1"
  // The location of kind `kind` ("device", "host", "host_numa", "host_numa_current") at `id`
  // (ignored by the two without one); throws ValueError naming `call` for another kind.
  [[nodiscard]] static MemoryLocation from_name(std::string_view kind, int id, const char* call);
  [[nodiscard]] const char* kind_name() const noexcept;  // the name from_name takes
  bool operator==(const MemoryLocation&) const = default;
};

// The advice called `name` (set_/unset_ read_mostly, preferred_location, accessed_by);
// throws ValueError naming `call` for another name.
[[nodiscard]] CUmem_advise advice_from_name(std::string_view name, const char* call);

// A byte range of managed memory.
struct ManagedRange {
  CUdeviceptr ptr = 0;
  std::size_t size = 0;
};

// ValueError naming `call` unless `ptr` is managed memory (cuPointerGetAttribute IS_MANAGED).
void check_managed(CUdeviceptr ptr, const char* call);

// Migrates each range to its location, in the order of `stream`: `locations` holds one
// location for all the ranges or one per range (ValueError otherwise; device ordinals are
// checked). cuMemPrefetchBatchAsync where the driver has it (CUDA 13), else one
// cuMemPrefetchAsync per range.
void prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<MemoryLocation>& locations,
                    StreamRef stream, const char* call);
// Marks the ranges' contents as no longer needed (cuMemDiscardBatchAsync, CUDA 13).
void discard_batch(const std::vector<ManagedRange>& ranges, StreamRef stream, const char* call);
// Discards, then prefetches to the locations (cuMemDiscardAndPrefetchBatchAsync, CUDA 13).
void discard_prefetch_batch(const std::vector<ManagedRange>& ranges, const std::vector<MemoryLocation>& locations,
                            StreamRef stream, const char* call);

// One copy of a batch: `size` bytes from `src` to `dst`, whose capacity `dst_size` must be
// the same (copy_batch checks: ValueError).
struct BatchCopy {
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  std::size_t size = 0;
  std::size_t dst_size = 0;
};

// How one copy of a batch may read its source, and hints for where its operands live.
struct BatchCopyAttributes {
  CUmemcpySrcAccessOrder src_access_order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  std::optional<MemoryLocation> src_hint;
  std::optional<MemoryLocation> dst_hint;
  bool prefer_overlap = false;  // CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE
  bool operator==(const BatchCopyAttributes&) const = default;
};

// The access order called `name` ("stream", "during_api_call", "any"); ValueError naming
// `call` for another name.
[[nodiscard]] CUmemcpySrcAccessOrder src_access_order_from_name(std::string_view name, const char* call);

// Queues the copies on `stream` (the batch as a whole is stream-ordered; copies within it are
// not ordered, so they must not overlap): `attrs` holds one entry for all the copies or one
// per copy (ValueError otherwise). One cuMemcpyBatchAsync where the driver has it (CUDA 13)
// and the stream is a created one; on a driver without it, or on the legacy default stream
// (which cuMemcpyBatchAsync refuses), one cuMemcpyAsync per copy, then a stream sync when a
// copy asked for DURING_API_CALL (its source must be read before the call returns). A
// capturing stream is refused (std::runtime_error): the driver has no graph node for it.
void copy_batch(const std::vector<BatchCopy>& copies, const std::vector<BatchCopyAttributes>& attrs,
                StreamRef stream, const char* call);

// cuMemAdvise for one range: SET/UNSET_READ_MOSTLY (no location), SET/UNSET_PREFERRED_LOCATION
// and SET/UNSET_ACCESSED_BY (a device or the host; ValueError for NUMA kinds there).
void advise(const ManagedRange& range, CUmem_advise advice, const std::optional<MemoryLocation>& location,
            const char* call);

// The advice in force (cuMemRangeGetAttribute).
[[nodiscard]] bool range_read_mostly(const ManagedRange& range);
[[nodiscard]] std::optional<MemoryLocation> range_preferred_location(const ManagedRange& range);
[[nodiscard]] std::vector<MemoryLocation> range_accessed_by(const ManagedRange& range);
// Where the range was last prefetched to; nullopt when never.
[[nodiscard]] std::optional<MemoryLocation> range_last_prefetch_location(const ManagedRange& range);

}  // namespace nanocuda
