// Stream-ordered copies and fills between device and host memory.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "nanocuda/core/stream_ref.h"

namespace nanocuda {

// Async copy of `size` bytes between any two addresses the driver knows (device, pinned or
// pageable host; unified addressing picks the direction), in the order of `stream`.
void copy_async(CUdeviceptr dst, CUdeviceptr src, std::size_t size, StreamRef stream);
// Sets `size` bytes at `dst` to `value`, in the order of `stream`.
void memset_async(CUdeviceptr dst, unsigned char value, std::size_t size, StreamRef stream);
// Sets `size` bytes at `dst` to `value` repeated every `width` (1, 2 or 4) bytes
// (cuMemsetD8/D16/D32Async); ValueError when width, value or size do not fit together.
void fill_async(CUdeviceptr dst, std::uint32_t value, unsigned width, std::size_t size,
                StreamRef stream);

}  // namespace nanocuda
