// CUDA arrays (opaque, driver-laid-out storage for textures and surfaces) and mipmapped arrays.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nanocuda/core/device.h"
#include "nanocuda/core/stream_ref.h"

namespace nanocuda {


// The element formats cuda.core offers (ArrayFormatType), by their names there.
enum class ArrayFormat { uint8, uint16, uint32, int8, int16, int32, float16, float32 };

// "uint8" -> ArrayFormat::uint8; ValueError naming `call` for any other name.
[[nodiscard]] ArrayFormat array_format_from_name(std::string_view name, const char* call);
[[nodiscard]] const char* array_format_name(ArrayFormat f) noexcept;
[[nodiscard]] CUarray_format to_cu_format(ArrayFormat f) noexcept;
// Bytes of one channel of `f`.
[[nodiscard]] std::size_t array_format_bytes(ArrayFormat f) noexcept;
// ValueError naming `call` unless `channels` is 1, 2 or 4 (what the texture unit reads).
void check_num_channels(long long channels, const char* call);

// What Device::create_opaque_array / create_mipmapped_array allocate.
struct ArrayShape {
  std::vector<std::size_t> extent;  // (width[, height[, depth]]) in elements, each >= 1
  ArrayFormat format = ArrayFormat::float32;
  unsigned num_channels = 1;
  bool surface_load_store = false;  // CUDA_ARRAY3D_SURFACE_LDST: bindable as a surface
  [[nodiscard]] std::size_t element_bytes() const noexcept {
    return array_format_bytes(format) * num_channels;
  }
  [[nodiscard]] std::size_t size_bytes() const noexcept;
};
// ValueError naming `call` for a rank outside 1..3, a zero extent or bad channels.
void check_array_shape(const ArrayShape& shape, const char* call);
// ValueError unless 1 <= num_levels <= the levels `shape` has (each halves its largest extent).
void check_mipmap_levels(const ArrayShape& shape, long long num_levels, const char* call);
// An ArrayShape from signed dims and channels as a user types them, checked as above.
[[nodiscard]] ArrayShape make_array_shape(const std::vector<long long>& dims, ArrayFormat format,
                                          long long num_channels, bool surface_load_store, const char* call);

namespace detail {
struct ArrayStorage;           // a CUarray and what keeps it alive
struct MipmappedArrayStorage;  // a CUmipmappedArray
}  // namespace detail

// An allocated CUDA array. Copies share the storage; the CUarray is destroyed with the last
// copy. A level of a mipmapped array keeps the whole mipmapped array alive.
class OpaqueArray {
 public:
  static OpaqueArray create(const Device& device, const ArrayShape& shape);

  [[nodiscard]] CUarray handle() const noexcept;  // 0 once closed
  [[nodiscard]] const ArrayShape& shape() const;
  [[nodiscard]] const Device& device() const;
  // Drops this object's reference (idempotent); the storage goes with the last one.
  void close() noexcept { storage_.reset(); }
  [[nodiscard]] bool is_closed() const noexcept { return !storage_; }

  // Whole-array copies in the order of `stream`; `bytes` is the extent of the other side and
  // must hold size_bytes() (ValueError: "... smaller than the array extent").
  void copy_from_host(const void* src, std::size_t bytes, StreamRef stream) const;
  void copy_from_device(CUdeviceptr src, std::size_t bytes, StreamRef stream) const;
  void copy_to_host(void* dst, std::size_t bytes, StreamRef stream) const;
  void copy_to_device(CUdeviceptr dst, std::size_t bytes, StreamRef stream) const;

  [[nodiscard]] std::string describe() const;

 private:
  friend class MipmappedArray;
  explicit OpaqueArray(std::shared_ptr<const detail::ArrayStorage> s) : storage_(std::move(s)) {}
  const detail::ArrayStorage& live(const char* call) const;
  void copy(const void* host, CUdeviceptr device, std::size_t bytes, bool to_array, StreamRef stream,
            const char* call) const;
  std::shared_ptr<const detail::ArrayStorage> storage_;
};

// A CUmipmappedArray: `num_levels` levels, each dimension halving per level (floor 1).
class MipmappedArray {
 public:
  // num_levels: 1..64 (ValueError otherwise; 64 levels already reach 1 from any size).
  static MipmappedArray create(const Device& device, const ArrayShape& shape, long long num_levels);

  [[nodiscard]] CUmipmappedArray handle() const noexcept;  // 0 once closed
  [[nodiscard]] const ArrayShape& shape() const;
  [[nodiscard]] unsigned num_levels() const;
  [[nodiscard]] const Device& device() const;
  void close() noexcept { storage_.reset(); }
  [[nodiscard]] bool is_closed() const noexcept { return !storage_; }
  // Level `level` (0 is the base) as an OpaqueArray that keeps this mipmapped array alive.
  [[nodiscard]] OpaqueArray level(long long level) const;

  [[nodiscard]] std::string describe() const;

 private:
  explicit MipmappedArray(std::shared_ptr<const detail::MipmappedArrayStorage> s) : storage_(std::move(s)) {}
  const detail::MipmappedArrayStorage& live(const char* call) const;
  std::shared_ptr<const detail::MipmappedArrayStorage> storage_;
};

}  // namespace nanocuda
