// Resource descriptions (validated once, here), texture objects and surface objects.
#include "nanocuda/core/texture_object.h"

#include <cmath>

#include "nanocuda/core/context.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace detail {
void destroy_tex_object(CUtexObject handle) noexcept {
  const auto* api = loaded_driver();
  if (!api) return;
  if (CUresult rc = api->cuTexObjectDestroy(handle); rc != CUDA_SUCCESS)
    record_deferred_error(rc, "cuTexObjectDestroy", "TextureObject");
}
void destroy_surf_object(CUsurfObject handle) noexcept {
  const auto* api = loaded_driver();
  if (!api) return;
  if (CUresult rc = api->cuSurfObjectDestroy(handle); rc != CUDA_SUCCESS)
    record_deferred_error(rc, "cuSurfObjectDestroy", "SurfaceObject");
}
}  // namespace detail

namespace {

std::size_t element_bytes(ArrayFormat f, long long channels) {
  return array_format_bytes(f) * static_cast<std::size_t>(channels);
}

CUaddress_mode to_cu(AddressMode m) noexcept {
  switch (m) {
    case AddressMode::wrap: return CU_TR_ADDRESS_MODE_WRAP;
    case AddressMode::mirror: return CU_TR_ADDRESS_MODE_MIRROR;
    case AddressMode::border: return CU_TR_ADDRESS_MODE_BORDER;
    case AddressMode::clamp: break;
  }
  return CU_TR_ADDRESS_MODE_CLAMP;
}

CUfilter_mode to_cu(FilterMode m) noexcept {
  return m == FilterMode::linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
}

}  // namespace

AddressMode address_mode_from_name(std::string_view name, const char* call, const std::string& what) {
  if (name == "wrap") return AddressMode::wrap;
  if (name == "clamp") return AddressMode::clamp;
  if (name == "mirror") return AddressMode::mirror;
  if (name == "border") return AddressMode::border;
  throw ValueError(std::string(call) + ": " + what + " must be an AddressModeType (wrap, clamp, mirror, "
                   "border), got '" + std::string(name) + "'");
}

FilterMode filter_mode_from_name(std::string_view name, const char* call, const std::string& what) {
  if (name == "point") return FilterMode::point;
  if (name == "linear") return FilterMode::linear;
  throw ValueError(std::string(call) + ": " + what + " must be a FilterModeType (point, linear), got '" +
                   std::string(name) + "'");
}

bool read_mode_is_normalized_float(std::string_view name, const char* call) {
  if (name == "normalized_float") return true;
  if (name == "element_type") return false;
  throw ValueError(std::string(call) + ": read_mode must be a ReadModeType (element_type, normalized_float), got '" +
                   std::string(name) + "'");
}

// --- ResourceDesc -------------------------------------------------------------------------

ResourceDesc ResourceDesc::from_array(const OpaqueArray& array) {
  ResourceDesc r;
  r.kind_ = Kind::array;
  if (array.is_closed())
    throw ValueError("ResourceDesc::from_array", "the OpaqueArray is closed (close() was called)");
  const ArrayShape& s = array.shape();
  r.format_ = s.format;
  r.channels_ = s.num_channels;
  r.size_bytes_ = s.size_bytes();
  r.device_ = array.device().ordinal();
  r.array_ = array;
  return r;
}

ResourceDesc ResourceDesc::from_mipmapped_array(const MipmappedArray& array) {
  ResourceDesc r;
  r.kind_ = Kind::mipmapped_array;
  if (array.is_closed())
    throw ValueError("ResourceDesc::from_mipmapped_array", "the MipmappedArray is closed (close() was called)");
  const ArrayShape& s = array.shape();
  r.format_ = s.format;
  r.channels_ = s.num_channels;
  r.device_ = array.device().ordinal();
  r.mipmapped_ = array;
  return r;
}

ResourceDesc ResourceDesc::from_linear(CUdeviceptr ptr, std::size_t buffer_size, int device, ArrayFormat format,
                                       long long num_channels, std::optional<long long> size_bytes) {
  const char* call = "ResourceDesc::from_linear";
  check_num_channels(num_channels, call);
  const std::size_t elem = element_bytes(format, num_channels);
  long long size = size_bytes.value_or(static_cast<long long>(buffer_size));
  if (size < 0) throw ValueError(std::string(call) + ": size_bytes must be >= 0, got " + std::to_string(size));
  if (static_cast<std::size_t>(size) > buffer_size)
    throw ValueError(std::string(call) + ": size_bytes " + std::to_string(size) + " exceeds buffer.size (" +
                     std::to_string(buffer_size) + ")");
  if (static_cast<std::size_t>(size) < elem)
    throw ValueError(std::string(call) + ": size_bytes must cover at least one element (" +
                     std::to_string(elem) + " bytes), got " + std::to_string(size));
  if (static_cast<std::size_t>(size) % elem != 0)
    throw ValueError(std::string(call) + ": size_bytes " + std::to_string(size) + " is not a multiple of element size (" +
                     std::to_string(elem) + " bytes)");
  ResourceDesc r;
  r.kind_ = Kind::linear;
  r.ptr_ = ptr;
  r.device_ = device;
  r.format_ = format;
  r.channels_ = static_cast<unsigned>(num_channels);
  r.size_bytes_ = static_cast<std::size_t>(size);
  return r;
}

ResourceDesc ResourceDesc::from_pitch2d(CUdeviceptr ptr, std::size_t buffer_size, int device, ArrayFormat format,
                                        long long num_channels, long long width, long long height,
                                        long long pitch_bytes) {
  const std::string call = "ResourceDesc::from_pitch2d";
  check_num_channels(num_channels, call.c_str());
  if (width < 1) throw ValueError(call + ": width must be >= 1, got " + std::to_string(width));
  if (height < 1) throw ValueError(call + ": height must be >= 1, got " + std::to_string(height));
  const std::size_t elem = element_bytes(format, num_channels);
  const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
  if (pitch_bytes < 0 || static_cast<std::size_t>(pitch_bytes) < w * elem)
    throw ValueError(call + ": pitch_bytes " + std::to_string(pitch_bytes) + " is less than a row (width * " +
                     "element bytes = " + std::to_string(w * elem) + ")");
  const auto pitch = static_cast<std::size_t>(pitch_bytes);
  if (h > buffer_size / pitch + 1 || pitch * h > buffer_size)
    throw ValueError(call + ": pitch_bytes * height (" + std::to_string(pitch) + " * " + std::to_string(h) +
                     ") exceeds buffer.size (" + std::to_string(buffer_size) + ")");
  ResourceDesc r;
  r.kind_ = Kind::pitch2d;
  r.ptr_ = ptr;
  r.device_ = device;
  r.format_ = format;
  r.channels_ = static_cast<unsigned>(num_channels);
  r.size_bytes_ = pitch * h;
  r.width_ = w;
  r.height_ = h;
  r.pitch_bytes_ = pitch;
  return r;
}

const char* ResourceDesc::kind_name() const noexcept {
  switch (kind_) {
    case Kind::array: return "array";
    case Kind::mipmapped_array: return "mipmapped_array";
    case Kind::linear: return "linear";
    case Kind::pitch2d: return "pitch2d";
  }
  return "?";
}

std::string ResourceDesc::describe() const {
  return std::string("ResourceDescriptor(kind='") + kind_name() + "', format=" + array_format_name(format_) +
         ", num_channels=" + std::to_string(channels_) + ")";
}

CUDA_RESOURCE_DESC ResourceDesc::to_cu() const {
  // The arrays are held by this descriptor (closing the caller's copy does not release them).
  CUDA_RESOURCE_DESC d{};
  switch (kind_) {
    case Kind::array:
      d.resType = CU_RESOURCE_TYPE_ARRAY;
      d.res.array.hArray = array_->handle();
      break;
    case Kind::mipmapped_array:
      d.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
      d.res.mipmap.hMipmappedArray = mipmapped_->handle();
      break;
    case Kind::linear:
      d.resType = CU_RESOURCE_TYPE_LINEAR;
      d.res.linear.devPtr = ptr_;
      d.res.linear.format = to_cu_format(format_);
      d.res.linear.numChannels = channels_;
      d.res.linear.sizeInBytes = size_bytes_;
      break;
    case Kind::pitch2d:
      d.resType = CU_RESOURCE_TYPE_PITCH2D;
      d.res.pitch2D.devPtr = ptr_;
      d.res.pitch2D.format = to_cu_format(format_);
      d.res.pitch2D.numChannels = channels_;
      d.res.pitch2D.width = width_;
      d.res.pitch2D.height = height_;
      d.res.pitch2D.pitchInBytes = pitch_bytes_;
      break;
  }
  return d;
}

// --- TextureObject / SurfaceObject --------------------------------------------------------

TextureObject::TextureObject(const ResourceDesc& resource, const TextureOptions& o, const Device& device)
    : resource_(resource), device_(device) {
  const char* call = "TextureObject::TextureObject";
  if (o.max_anisotropy < 0 || o.max_anisotropy > 16)
    throw ValueError(std::string(call) + ": max_anisotropy must be in 0..16, got " + std::to_string(o.max_anisotropy));
  for (float v : {o.mipmap_level_bias, o.min_mipmap_level_clamp, o.max_mipmap_level_clamp})
    if (!std::isfinite(v)) throw ValueError(std::string(call) + ": mipmap levels and bias must be finite numbers");
  CUDA_RESOURCE_DESC res = resource_.to_cu();
  CUDA_TEXTURE_DESC t{};
  for (int i = 0; i < 3; ++i) t.addressMode[i] = to_cu(o.address_mode[static_cast<std::size_t>(i)]);
  t.filterMode = to_cu(o.filter_mode);
  t.flags = (o.read_normalized_float ? 0u : unsigned{CU_TRSF_READ_AS_INTEGER}) |
            (o.normalized_coords ? unsigned{CU_TRSF_NORMALIZED_COORDINATES} : 0u) |
            (o.srgb ? unsigned{CU_TRSF_SRGB} : 0u) |
            (o.disable_trilinear_optimization ? unsigned{CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION} : 0u) |
            (o.seamless_cubemap ? unsigned{CU_TRSF_SEAMLESS_CUBEMAP} : 0u);
  t.maxAnisotropy = static_cast<unsigned>(o.max_anisotropy);
  t.mipmapFilterMode = to_cu(o.mipmap_filter_mode);
  t.mipmapLevelBias = o.mipmap_level_bias;
  t.minMipmapLevelClamp = o.min_mipmap_level_clamp;
  t.maxMipmapLevelClamp = o.max_mipmap_level_clamp;
  for (int i = 0; i < 4; ++i) t.borderColor[i] = o.border_color[static_cast<std::size_t>(i)];
  CurrentContext guard(*device_.context());
  CUtexObject h = 0;
  NANOCUDA_CALL(cuTexObjectCreate, [&] { return "new TextureObject over " + resource_.describe(); }, &h, &res, &t,
                nullptr);
  handle_.reset(h);
}

SurfaceObject::SurfaceObject(const ResourceDesc& resource, const Device& device)
    : resource_(resource), device_(device) {
  const char* call = "SurfaceObject::SurfaceObject";
  if (resource_.kind() != ResourceDesc::Kind::array)
    throw ValueError(std::string(call) + ": a surface needs an array-backed ResourceDescriptor "
                     "(ResourceDescriptor.from_opaque_array), got kind '" + resource_.kind_name() + "'");
  CUDA_RESOURCE_DESC res = resource_.to_cu();
  if (!resource_.array()->shape().surface_load_store)
    throw ValueError(std::string(call) + ": " + resource_.array()->describe() + " was not created with "
                     "is_surface_load_store=True, so it cannot back a surface");
  CurrentContext guard(*device_.context());
  CUsurfObject h = 0;
  NANOCUDA_CALL(cuSurfObjectCreate, [&] { return "new SurfaceObject over " + resource_.describe(); }, &h, &res);
  handle_.reset(h);
}

}  // namespace nanocuda
