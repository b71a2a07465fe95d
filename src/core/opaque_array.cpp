// CUDA arrays and mipmapped arrays: validation, allocation, whole-array copies.
#include "nanocuda/core/opaque_array.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "nanocuda/core/context.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/driver/check.h"

namespace nanocuda {

namespace {

struct FormatRow {
  ArrayFormat format;
  const char* name;
  CUarray_format cu;
  std::size_t bytes;
};
constexpr FormatRow kFormats[] = {
    {ArrayFormat::uint8, "uint8", CU_AD_FORMAT_UNSIGNED_INT8, 1},
    {ArrayFormat::uint16, "uint16", CU_AD_FORMAT_UNSIGNED_INT16, 2},
    {ArrayFormat::uint32, "uint32", CU_AD_FORMAT_UNSIGNED_INT32, 4},
    {ArrayFormat::int8, "int8", CU_AD_FORMAT_SIGNED_INT8, 1},
    {ArrayFormat::int16, "int16", CU_AD_FORMAT_SIGNED_INT16, 2},
    {ArrayFormat::int32, "int32", CU_AD_FORMAT_SIGNED_INT32, 4},
    {ArrayFormat::float16, "float16", CU_AD_FORMAT_HALF, 2},
    {ArrayFormat::float32, "float32", CU_AD_FORMAT_FLOAT, 4},
};

const FormatRow& row(ArrayFormat f) noexcept { return kFormats[static_cast<int>(f)]; }

std::string shape_text(const std::vector<std::size_t>& extent) {
  std::string s = "(";
  for (std::size_t i = 0; i < extent.size(); ++i) s += (i ? ", " : "") + std::to_string(extent[i]);
  return s + (extent.size() == 1 ? ",)" : ")");
}

std::string shape_describe(const char* kind, const ArrayShape& s, const Device& d) {
  return std::string(kind) + " " + shape_text(s.extent) + " " + array_format_name(s.format) + "x" +
         std::to_string(s.num_channels) + " on device " + std::to_string(d.ordinal());
}

CUDA_ARRAY3D_DESCRIPTOR descriptor(const ArrayShape& s) {
  CUDA_ARRAY3D_DESCRIPTOR d{};
  // A 1D array is height 0 and depth 0 to the driver; a 2D one is depth 0.
  d.Width = s.extent[0];
  d.Height = s.extent.size() > 1 ? s.extent[1] : 0;
  d.Depth = s.extent.size() > 2 ? s.extent[2] : 0;
  d.Format = to_cu_format(s.format);
  d.NumChannels = s.num_channels;
  d.Flags = s.surface_load_store ? CUDA_ARRAY3D_SURFACE_LDST : 0u;
  return d;
}

}  // namespace

namespace detail {

struct MipmappedArrayStorage {
  Device device;
  std::shared_ptr<Context> context;
  CUmipmappedArray handle = nullptr;
  ArrayShape shape;
  unsigned num_levels = 0;
  MipmappedArrayStorage(const Device& d, const ArrayShape& s, unsigned n)
      : device(d), context(d.context()), shape(s), num_levels(n) {}
  MipmappedArrayStorage(const MipmappedArrayStorage&) = delete;
  MipmappedArrayStorage& operator=(const MipmappedArrayStorage&) = delete;
  ~MipmappedArrayStorage() {
    const auto* api = loaded_driver();
    if (!handle || !api) return;
    if (CUresult rc = api->cuMipmappedArrayDestroy(handle); rc != CUDA_SUCCESS)
      record_deferred_error(rc, "cuMipmappedArrayDestroy", "MipmappedArray");
  }
};

struct ArrayStorage {
  Device device;
  std::shared_ptr<Context> context;
  CUarray handle = nullptr;
  ArrayShape shape;
  // A level of a mipmapped array: the driver owns the CUarray; this keeps its owner alive.
  std::shared_ptr<const MipmappedArrayStorage> parent;
  ArrayStorage(const Device& d, const ArrayShape& s) : device(d), context(d.context()), shape(s) {}
  ArrayStorage(const ArrayStorage&) = delete;
  ArrayStorage& operator=(const ArrayStorage&) = delete;
  ~ArrayStorage() {
    const auto* api = loaded_driver();
    if (!handle || parent || !api) return;
    if (CUresult rc = api->cuArrayDestroy(handle); rc != CUDA_SUCCESS)
      record_deferred_error(rc, "cuArrayDestroy", "OpaqueArray");
  }
};

}  // namespace detail

ArrayFormat array_format_from_name(std::string_view name, const char* call) {
  for (const FormatRow& r : kFormats)
    if (name == r.name) return r.format;
  throw ValueError(std::string(call), "format must be an ArrayFormatType (uint8, uint16, uint32, "
                   "int8, int16, int32, float16, float32); '" + std::string(name) +
                   "' has no ArrayFormatType equivalent");
}

const char* array_format_name(ArrayFormat f) noexcept { return row(f).name; }
CUarray_format to_cu_format(ArrayFormat f) noexcept { return row(f).cu; }
std::size_t array_format_bytes(ArrayFormat f) noexcept { return row(f).bytes; }

void check_num_channels(long long channels, const char* call) {
  if (channels != 1 && channels != 2 && channels != 4)
    throw ValueError(std::string(call), "num_channels must be 1, 2 or 4 (what the texture unit "
                     "reads), got " + std::to_string(channels));
}

std::size_t ArrayShape::size_bytes() const noexcept {
  std::size_t n = element_bytes();
  for (std::size_t e : extent) n *= e;
  return n;
}

void check_array_shape(const ArrayShape& s, const char* call) {
  if (s.extent.empty() || s.extent.size() > 3)
    throw ValueError(std::string(call), "shape rank must be 1, 2 or 3 ((width,), (width, height) or "
                     "(width, height, depth)), got " + std::to_string(s.extent.size()) + " dimensions");
  for (std::size_t i = 0; i < s.extent.size(); ++i)
    if (s.extent[i] < 1)
      throw ValueError(std::string(call), "shape[" + std::to_string(i) + "] must be >= 1, got " +
                       std::to_string(s.extent[i]));
  check_num_channels(s.num_channels, call);
  // prod(shape) * element_bytes must fit: the copies size the other side by it.
  std::size_t n = s.element_bytes();
  for (std::size_t e : s.extent) {
    if (e > std::numeric_limits<std::size_t>::max() / n)
      throw ValueError(std::string(call), "shape " + shape_text(s.extent) + " is too large to address");
    n *= e;
  }
}

void check_mipmap_levels(const ArrayShape& shape, long long num_levels, const char* call) {
  if (num_levels < 1 || num_levels > 64)
    throw ValueError(call, "num_levels must be in 1..64, got " + std::to_string(num_levels));
  // Each level halves the largest dimension down to 1; the driver would silently clamp a
  // longer chain (cuMipmappedArrayCreate), leaving num_levels and get_level() wrong.
  std::size_t largest = shape.extent.empty() ? 1 : *std::max_element(shape.extent.begin(), shape.extent.end());
  long long most = 1;
  while (largest >>= 1) ++most;
  if (num_levels > most)
    throw ValueError(call, "num_levels " + std::to_string(num_levels) + " is more than shape " +
                     shape_text(shape.extent) + " has (" + std::to_string(most) +
                     ": each level halves the largest dimension, down to 1)");
}

ArrayShape make_array_shape(const std::vector<long long>& dims, ArrayFormat format, long long num_channels,
                            bool surface_load_store, const char* call) {
  check_num_channels(num_channels, call);
  ArrayShape s;
  s.format = format;
  s.num_channels = static_cast<unsigned>(num_channels);
  s.surface_load_store = surface_load_store;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1 && dims.size() <= 3)
      throw ValueError(std::string(call), "shape[" + std::to_string(i) + "] must be >= 1, got " +
                       std::to_string(dims[i]));
    s.extent.push_back(static_cast<std::size_t>(std::max(dims[i], 0LL)));
  }
  check_array_shape(s, call);
  return s;
}

// --- OpaqueArray --------------------------------------------------------------------------

OpaqueArray OpaqueArray::create(const Device& device, const ArrayShape& shape) {
  check_array_shape(shape, "OpaqueArray::create");
  auto s = std::make_shared<detail::ArrayStorage>(device, shape);
  CurrentContext guard(*s->context);
  CUDA_ARRAY3D_DESCRIPTOR d = descriptor(shape);
  NANOCUDA_CALL(cuArray3DCreate, [&] { return shape_describe("new OpaqueArray", shape, device); },
                &s->handle, &d);
  return OpaqueArray(std::move(s));
}

CUarray OpaqueArray::handle() const noexcept { return storage_ ? storage_->handle : nullptr; }

const detail::ArrayStorage& OpaqueArray::live(const char* call) const {
  if (!storage_) throw ValueError(std::string(call), "the OpaqueArray is closed (close() was called)");
  return *storage_;
}

const ArrayShape& OpaqueArray::shape() const { return live("OpaqueArray::shape").shape; }
const Device& OpaqueArray::device() const { return live("OpaqueArray::device").device; }

std::string OpaqueArray::describe() const {
  if (!storage_) return "closed OpaqueArray";
  return shape_describe("OpaqueArray", storage_->shape, storage_->device);
}

void OpaqueArray::copy(const void* host, CUdeviceptr device, std::size_t bytes, bool to_array,
                       StreamRef stream, const char* call) const {
  const detail::ArrayStorage& s = live(call);
  const std::size_t need = s.shape.size_bytes();
  if (bytes < need)
    throw ValueError(std::string(call), std::string("the ") + (to_array ? "source" : "destination") + " (" +
                     std::to_string(bytes) + " bytes) is smaller than the array extent (" +
                     std::to_string(need) + " bytes of " + describe() + ")");
  CUDA_MEMCPY3D m{};
  const std::size_t width_bytes = s.shape.extent[0] * s.shape.element_bytes();
  const std::size_t height = s.shape.extent.size() > 1 ? s.shape.extent[1] : 1;
  m.WidthInBytes = width_bytes;
  m.Height = height;
  m.Depth = s.shape.extent.size() > 2 ? s.shape.extent[2] : 1;
  // The linear side is packed: rows of width_bytes, slices of `height` rows.
  CUmemorytype linear_type = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (to_array) {
    m.srcMemoryType = linear_type;
    m.srcHost = host;
    m.srcDevice = device;
    m.srcPitch = width_bytes;
    m.srcHeight = height;
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    m.dstArray = s.handle;
  } else {
    m.dstMemoryType = linear_type;
    m.dstHost = const_cast<void*>(host);
    m.dstDevice = device;
    m.dstPitch = width_bytes;
    m.dstHeight = height;
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    m.srcArray = s.handle;
  }
  CurrentContext guard(*s.context);
  NANOCUDA_CALL(cuMemcpy3DAsync, [&] { return describe() + " on " + stream.describe(); }, &m, stream.handle());
}

void OpaqueArray::copy_from_host(const void* src, std::size_t bytes, StreamRef stream) const {
  copy(src, 0, bytes, true, stream, "OpaqueArray::copy_from_host");
}
void OpaqueArray::copy_from_device(CUdeviceptr src, std::size_t bytes, StreamRef stream) const {
  copy(nullptr, src, bytes, true, stream, "OpaqueArray::copy_from_device");
}
void OpaqueArray::copy_to_host(void* dst, std::size_t bytes, StreamRef stream) const {
  copy(dst, 0, bytes, false, stream, "OpaqueArray::copy_to_host");
}
void OpaqueArray::copy_to_device(CUdeviceptr dst, std::size_t bytes, StreamRef stream) const {
  copy(nullptr, dst, bytes, false, stream, "OpaqueArray::copy_to_device");
}

// --- MipmappedArray -----------------------------------------------------------------------

MipmappedArray MipmappedArray::create(const Device& device, const ArrayShape& shape, long long num_levels) {
  check_array_shape(shape, "MipmappedArray::create");
  check_mipmap_levels(shape, num_levels, "MipmappedArray::create");
  auto s = std::make_shared<detail::MipmappedArrayStorage>(device, shape, static_cast<unsigned>(num_levels));
  CurrentContext guard(*s->context);
  CUDA_ARRAY3D_DESCRIPTOR d = descriptor(shape);
  NANOCUDA_CALL(cuMipmappedArrayCreate,
                [&] { return shape_describe("new MipmappedArray", shape, device) + ", " +
                             std::to_string(num_levels) + " levels"; },
                &s->handle, &d, s->num_levels);
  return MipmappedArray(std::move(s));
}

CUmipmappedArray MipmappedArray::handle() const noexcept { return storage_ ? storage_->handle : nullptr; }

const detail::MipmappedArrayStorage& MipmappedArray::live(const char* call) const {
  if (!storage_) throw ValueError(std::string(call), "the MipmappedArray is closed (close() was called)");
  return *storage_;
}

const ArrayShape& MipmappedArray::shape() const { return live("MipmappedArray::shape").shape; }
unsigned MipmappedArray::num_levels() const { return live("MipmappedArray::num_levels").num_levels; }
const Device& MipmappedArray::device() const { return live("MipmappedArray::device").device; }

std::string MipmappedArray::describe() const {
  if (!storage_) return "closed MipmappedArray";
  return shape_describe("MipmappedArray", storage_->shape, storage_->device) + ", " +
         std::to_string(storage_->num_levels) + " levels";
}

OpaqueArray MipmappedArray::level(long long level) const {
  const detail::MipmappedArrayStorage& m = live("MipmappedArray::level");
  if (level < 0)
    throw ValueError("MipmappedArray::level", "level must be >= 0, got " + std::to_string(level));
  if (level >= static_cast<long long>(m.num_levels))
    throw ValueError("MipmappedArray::level", "level " + std::to_string(level) + " is out of range; "
                     "this array has num_levels=" + std::to_string(m.num_levels));
  ArrayShape shape = m.shape;
  for (std::size_t& e : shape.extent) e = std::max<std::size_t>(1, e >> level);
  auto s = std::make_shared<detail::ArrayStorage>(m.device, shape);
  s->parent = storage_;
  CurrentContext guard(*s->context);
  NANOCUDA_CALL(cuMipmappedArrayGetLevel, [&] { return describe() + ", level " + std::to_string(level); },
                &s->handle, m.handle, static_cast<unsigned>(level));
  return OpaqueArray(std::move(s));
}

}  // namespace nanocuda
