// Stream-ordered copies and fills.
#include "nanocuda/core/copy.h"

#include <string>

#include "nanocuda/driver/check.h"

namespace nanocuda {

void copy_async(CUdeviceptr dst, CUdeviceptr src, std::size_t size, const Stream& stream) {
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemcpyAsync,
                [&] { return "copy of " + std::to_string(size) + " bytes on " + stream.describe(); },
                dst, src, size, stream.handle());
}

void memset_async(CUdeviceptr dst, unsigned char value, std::size_t size, const Stream& stream) {
  CurrentContext guard(stream.context());
  NANOCUDA_CALL(cuMemsetD8Async,
                [&] { return "memset of " + std::to_string(size) + " bytes on " + stream.describe(); },
                dst, value, size, stream.handle());
}

}  // namespace nanocuda
