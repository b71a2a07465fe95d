// Bindless texture and surface objects, and the resource descriptions they are built from.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "nanocuda/core/opaque_array.h"
#include "nanocuda/driver/unique_handle.h"

namespace nanocuda {

// What a texture or surface reads: an OpaqueArray, a MipmappedArray, or linear device memory
// (1D typed fetch, or a row-pitched 2D image). The arrays are held (kept alive); for linear
// memory the caller keeps the allocation alive as long as any object built from it.
class ResourceDesc {
 public:
  enum class Kind { array, mipmapped_array, linear, pitch2d };

  static ResourceDesc from_array(const OpaqueArray& array);
  static ResourceDesc from_mipmapped_array(const MipmappedArray& array);
  // `size_bytes` defaults to `buffer_size`; it must be a whole number (>= 1) of elements.
  static ResourceDesc from_linear(CUdeviceptr ptr, std::size_t buffer_size, int device, ArrayFormat format,
                                  long long num_channels, std::optional<long long> size_bytes);
  // Rows of `width` elements, `pitch_bytes` apart; height * pitch_bytes must fit in the buffer.
  static ResourceDesc from_pitch2d(CUdeviceptr ptr, std::size_t buffer_size, int device, ArrayFormat format,
                                   long long num_channels, long long width, long long height,
                                   long long pitch_bytes);

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] const char* kind_name() const noexcept;
  [[nodiscard]] ArrayFormat format() const noexcept { return format_; }
  [[nodiscard]] unsigned num_channels() const noexcept { return channels_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_bytes_; }
  [[nodiscard]] std::size_t width() const noexcept { return width_; }
  [[nodiscard]] std::size_t height() const noexcept { return height_; }
  [[nodiscard]] std::size_t pitch_bytes() const noexcept { return pitch_bytes_; }
  // The device of the backing memory (-1: unknown, the current device is used).
  [[nodiscard]] int device_ordinal() const noexcept { return device_; }
  [[nodiscard]] const OpaqueArray* array() const noexcept { return array_ ? &*array_ : nullptr; }
  // The driver's view.
  [[nodiscard]] CUDA_RESOURCE_DESC to_cu() const;
  [[nodiscard]] std::string describe() const;

 private:
  ResourceDesc() = default;
  Kind kind_ = Kind::array;
  std::optional<OpaqueArray> array_;
  std::optional<MipmappedArray> mipmapped_;
  CUdeviceptr ptr_ = 0;
  int device_ = -1;
  ArrayFormat format_ = ArrayFormat::float32;
  unsigned channels_ = 1;
  std::size_t size_bytes_ = 0, width_ = 0, height_ = 0, pitch_bytes_ = 0;
};

enum class AddressMode { wrap, clamp, mirror, border };
enum class FilterMode { point, linear };

// Sampling state of a texture object (cuda.core's TextureObjectOptions, names resolved).
struct TextureOptions {
  std::array<AddressMode, 3> address_mode{AddressMode::clamp, AddressMode::clamp, AddressMode::clamp};
  FilterMode filter_mode = FilterMode::point;
  bool read_normalized_float = false;  // ReadModeType.NORMALIZED_FLOAT
  bool normalized_coords = false;
  bool srgb = false;
  bool disable_trilinear_optimization = false;
  bool seamless_cubemap = false;
  long long max_anisotropy = 0;  // 0..16 (ValueError outside)
  FilterMode mipmap_filter_mode = FilterMode::point;
  float mipmap_level_bias = 0, min_mipmap_level_clamp = 0, max_mipmap_level_clamp = 0;
  std::array<float, 4> border_color{0, 0, 0, 0};
};

// "wrap" -> AddressMode::wrap, ...; ValueError naming `call` and `what` for another name.
[[nodiscard]] AddressMode address_mode_from_name(std::string_view name, const char* call, const std::string& what);
[[nodiscard]] FilterMode filter_mode_from_name(std::string_view name, const char* call, const std::string& what);
// ReadModeType's names: "normalized_float" -> true, "element_type" -> false; ValueError otherwise.
[[nodiscard]] bool read_mode_is_normalized_float(std::string_view name, const char* call);

namespace detail {
void destroy_tex_object(CUtexObject handle) noexcept;
void destroy_surf_object(CUsurfObject handle) noexcept;
}  // namespace detail

// A CUtexObject over a ResourceDesc (which it keeps); destroyed with the object or by close().
class TextureObject {
 public:
  TextureObject(const ResourceDesc& resource, const TextureOptions& options, const Device& device);
  [[nodiscard]] CUtexObject handle() const noexcept { return handle_.get(); }
  [[nodiscard]] const ResourceDesc& resource() const noexcept { return resource_; }
  [[nodiscard]] const Device& device() const noexcept { return device_; }
  void close() noexcept { handle_.reset(); }

 private:
  ResourceDesc resource_;
  Device device_;
  detail::UniqueHandle<CUtexObject, detail::destroy_tex_object> handle_;
};

// A CUsurfObject over an OpaqueArray made with surface_load_store.
class SurfaceObject {
 public:
  SurfaceObject(const ResourceDesc& resource, const Device& device);
  [[nodiscard]] CUsurfObject handle() const noexcept { return handle_.get(); }
  [[nodiscard]] const ResourceDesc& resource() const noexcept { return resource_; }
  [[nodiscard]] const Device& device() const noexcept { return device_; }
  void close() noexcept { handle_.reset(); }

 private:
  ResourceDesc resource_;
  Device device_;
  detail::UniqueHandle<CUsurfObject, detail::destroy_surf_object> handle_;
};

}  // namespace nanocuda
