// Owns a kernel's parameter buffer: 16-byte aligned storage for the packed arguments and the
// void** array cuLaunchKernel takes, pointed once at each parameter's offset.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "nanocuda/compile/param_layout.h"

namespace nanocuda {

// Filled by a ParamPacker over (data(), pointers()) or by plain byte copies at the layout's
// offsets; the pointers never change, so a bound launch only rewrites the bytes.
class ParamBuffer {
 public:
  ParamBuffer() = default;
  explicit ParamBuffer(const ParamLayout& layout);

  // 16-byte aligned, at least layout.total_size() bytes (and never null).
  [[nodiscard]] unsigned char* data() const noexcept { return storage_.get(); }
  // layout.count() + 1 entries; entry i points at data() + params[i].offset.
  [[nodiscard]] void** pointers() const noexcept { return pointers_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct FreeAligned {
    void operator()(unsigned char* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<unsigned char[], FreeAligned> storage_;
  std::unique_ptr<void*[]> pointers_;
  std::size_t size_ = 0;
};

}  // namespace nanocuda
