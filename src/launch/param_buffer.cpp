// The parameter-buffer owner: one aligned allocation, pointers pre-set at the offsets.
#include "nanocuda/launch/param_buffer.h"

#include <cstring>
#include <new>

namespace nanocuda {

ParamBuffer::ParamBuffer(const ParamLayout& layout)
    // Rounded up and padded, so a 16-byte parameter at the end is always inside the buffer.
    : size_((layout.total_size() + 15) / 16 * 16 + 16) {
  storage_.reset(static_cast<unsigned char*>(std::aligned_alloc(16, size_)));
  if (!storage_) throw std::bad_alloc();
  // Zeroed once, so padding between parameters is deterministic (same bytes for same args).
  std::memset(storage_.get(), 0, size_);
  pointers_ = std::make_unique<void*[]>(layout.count() + 1);
  for (std::size_t i = 0; i < layout.count(); ++i)
    pointers_[i] = storage_.get() + layout.params[i].offset;
}

}  // namespace nanocuda
