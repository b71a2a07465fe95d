// Stream-ordered copies and fills.
#include "nanocuda/core/copy.h"

#include <string>

#include "nanocuda/driver/check.h"

namespace nanocuda {

void copy_async(CUdeviceptr dst, CUdeviceptr src, std::size_t size, StreamRef stream) {
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemcpyAsync,
                [&] { return "copy of " + std::to_string(size) + " bytes on " + stream.describe(); },
                dst, src, size, stream.handle());
}

void memset_async(CUdeviceptr dst, unsigned char value, std::size_t size, StreamRef stream) {
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemsetD8Async,
                [&] { return "memset of " + std::to_string(size) + " bytes on " + stream.describe(); },
                dst, value, size, stream.handle());
}

void fill_async(CUdeviceptr dst, std::uint32_t value, unsigned width, std::size_t size,
                StreamRef stream) {
  if (width != 1 && width != 2 && width != 4)
    throw ValueError("nanocuda::fill_async", "width must be 1, 2 or 4 bytes, got " + std::to_string(width));
  if (width < 4 && value >> (8 * width) != 0)
    throw ValueError("nanocuda::fill_async", "value " + std::to_string(value) + " does not fit in " +
                     std::to_string(width) + " byte(s)");
  if (size % width != 0)
    throw ValueError("nanocuda::fill_async", "the size (" + std::to_string(size) + " bytes) is not a multiple "
                     "of width " + std::to_string(width));
  CurrentContext guard(stream.context());
  auto what = [&] { return "fill of " + std::to_string(size) + " bytes on " + stream.describe(); };
  if (width == 1)
    NANOCUDA_CALL(cuMemsetD8Async, what, dst, static_cast<unsigned char>(value), size, stream.handle());
  else if (width == 2)
    NANOCUDA_CALL(cuMemsetD16Async, what, dst, static_cast<unsigned short>(value), size / 2, stream.handle());
  else
    NANOCUDA_CALL(cuMemsetD32Async, what, dst, static_cast<unsigned int>(value), size / 4, stream.handle());
}

}  // namespace nanocuda
