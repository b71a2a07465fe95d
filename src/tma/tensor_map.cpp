// TensorMap encoding, address replacement, and the names/descriptions used in errors.
//
// Defaults (TensorMapOptions): swizzle "auto" picks the swizzle whose span equals the inner
// box row (a 64-element fp16 row is 128 bytes -> 128B), which is the layout bank-conflict-
// free kernels want, and none otherwise; L2 promotion 128B matches the 128-byte L2 line;
// OOB fill none means out-of-bounds elements read as zero, which works for every dtype.
#include <cstdio>
#include <cstring>
#include <string>

#include "nanocuda/core/any_context.h"
#include "nanocuda/driver/check.h"
#include "nanocuda/driver/driver_version.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tensor_map.h"
#include "nanocuda/tma/descriptor_cache.h"
#include "nanocuda/tma/tma_names.h"

namespace nanocuda {

namespace {

template <class T>
std::string tuple(const T* values, std::uint32_t n) {
  std::string s = "(";
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  if (n == 1) s += ",";
  return s + ")";
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint32_t clamp_rank(std::uint32_t rank) { return rank > kTensorMapMaxRank ? kTensorMapMaxRank : rank; }

std::string describe_options(const TensorMapOptions& o, std::uint32_t rank) {
  return ", element_strides=" + tuple(o.element_strides.data(), rank) +
         ", interleave=" + interleave_name(o.interleave) +
         ", swizzle=" + (o.swizzle ? swizzle_name(*o.swizzle) : "auto") +
         ", l2_promotion=" + l2_promotion_name(o.l2_promotion) +
         ", oob_fill=" + oob_fill_name(o.oob_fill);
}

// What the driver itself received, innermost first, for errors after validation passed.
std::string describe_driver(const TensorMapDriverArgs& a, bool tiled) {
  std::string s = "; driver arguments (innermost first): globalDim=" +
                  tuple(a.global_dim, a.rank) +
                  ", globalStrides=" + tuple(a.global_strides, a.rank - 1);
  if (tiled) {
    s += ", boxDim=" + tuple(a.box_dim, a.rank);
  } else {
    s += ", pixelBoxLowerCorner=" + tuple(a.lower_corner, a.rank - 2) +
         ", pixelBoxUpperCorner=" + tuple(a.upper_corner, a.rank - 2) +
         ", channelsPerPixel=" + std::to_string(a.channels_per_pixel) +
         ", pixelsPerColumn=" + std::to_string(a.pixels_per_column);
  }
  return s + ", elementStrides=" + tuple(a.element_strides, a.rank) +
         ", swizzle=" + swizzle_name(a.swizzle);
}

// The sub-byte dtypes and the 128B-atom swizzles (Blackwell's TMA) came with CUDA 12.8's
// driver; an older one rejects them with a bare CUDA_ERROR_INVALID_VALUE.
void require_driver_for(const TensorMapDriverArgs& a, const char* where) {
  const bool new_dtype = a.dtype >= CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
  const bool new_swizzle = a.swizzle >= CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B;
  if (!new_dtype && !new_swizzle) [[likely]] return;
  const std::string feature = std::string(where) + " with " +
                              (new_dtype ? std::string("dtype ") + tensor_map_dtype_name(a.dtype)
                                         : std::string("swizzle ") + swizzle_name(a.swizzle));
  detail::require_driver_version(12080, feature.c_str());
}

}  // namespace

TensorMap TensorMap::tiled(const TiledParams& p) {
  detail::DescriptorCache& cache = detail::DescriptorCache::for_this_thread();
  TensorMap m{Uninitialized{}};
  // A remembered geometry is valid already: only its address rule is re-checked (in at()).
  if (cache.same_geometry(p) && cache.at(p.address, m.map_)) [[likely]] return m;
  return encode_tiled(p, cache, true);
}

TensorMap TensorMap::encode_tiled(const TiledParams& p, detail::DescriptorCache& cache,
                                  bool keyed_on_context) {
  const TensorMapDriverArgs a = validate(p);  // before any driver use: errors need no GPU
  require_driver_for(a, "TensorMap::tiled");
  detail::AnyContext context;  // the encode fails with CUDA_ERROR_INVALID_CONTEXT without one
  TensorMap m;
  NANOCUDA_CALL(cuTensorMapEncodeTiled,
                [&] { return "TensorMap::tiled(" + describe(p) + ")" + describe_driver(a, true); },
                &m.map_, a.dtype, a.rank, a.address, a.global_dim, a.global_strides, a.box_dim,
                a.element_strides, a.interleave, a.swizzle, a.l2_promotion, a.oob_fill);
  cache.start(p, keyed_on_context ? context.get() : detail::DescriptorCache::kAnyContext, m.map_);
  ++cache.stats.encodes;
  return m;
}

TensorMap TensorMap::im2col(const Im2colParams& p) {
  const TensorMapDriverArgs a = validate(p);
  require_driver_for(a, "TensorMap::im2col");
  detail::AnyContext context;
  TensorMap m;
  NANOCUDA_CALL(cuTensorMapEncodeIm2col,
                [&] { return "TensorMap::im2col(" + describe(p) + ")" + describe_driver(a, false); },
                &m.map_, a.dtype, a.rank, a.address, a.global_dim, a.global_strides,
                a.lower_corner, a.upper_corner, a.channels_per_pixel, a.pixels_per_column,
                a.element_strides, a.interleave, a.swizzle, a.l2_promotion, a.oob_fill);
  return m;
}

void TensorMap::replace_address(std::uint64_t address) {
  // 32B-interleaved and packed maps need 32; the driver reports those (the opaque
  // descriptor does not tell us which kind this is).
  if (address % 16 != 0)
    throw ValueError("TensorMap::replace_address: global address must be 16-byte aligned, got " +
                     hex(address));
  detail::AnyContext context;
  NANOCUDA_CALL(cuTensorMapReplaceAddress,
                [&] { return "TensorMap::replace_address(" + hex(address) + ")"; }, &map_,
                reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)));
}

TensorMap TensorMap::from_bytes(std::span<const std::byte, 128> bytes) noexcept {
  TensorMap m;
  std::memcpy(&m.map_, bytes.data(), 128);
  return m;
}

bool operator==(const TensorMap& a, const TensorMap& b) noexcept {
  return std::memcmp(&a.map_, &b.map_, 128) == 0;
}

// The names come from the one table (tma_enums.inc), like parsing does.
const char* tensor_map_dtype_name(CUtensorMapDataType t) noexcept {
  return tma_enum_name(TmaEnum::DataType, t);
}
int tensor_map_element_bits(CUtensorMapDataType t) noexcept { return tma_element_bits(t); }
const char* swizzle_name(CUtensorMapSwizzle s) noexcept { return tma_enum_name(TmaEnum::Swizzle, s); }
const char* interleave_name(CUtensorMapInterleave i) noexcept {
  return tma_enum_name(TmaEnum::Interleave, i);
}
const char* l2_promotion_name(CUtensorMapL2promotion p) noexcept {
  return tma_enum_name(TmaEnum::L2Promotion, p);
}
const char* oob_fill_name(CUtensorMapFloatOOBfill f) noexcept {
  return tma_enum_name(TmaEnum::OobFill, f);
}

CUtensorMapSwizzle auto_swizzle(std::uint64_t inner_bytes) noexcept {
  switch (inner_bytes) {
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

std::string describe(const TiledParams& p) {
  const std::uint32_t r = clamp_rank(p.rank);
  return std::string("dtype=") + tensor_map_dtype_name(p.dtype) +
         ", rank=" + std::to_string(p.rank) + ", address=" + hex(p.address) +
         ", shape=" + tuple(p.shape.data(), r) + ", strides=" + tuple(p.strides.data(), r) +
         " bytes, box=" + tuple(p.box.data(), r) + describe_options(p.options, r);
}

std::string describe(const Im2colParams& p) {
  const std::uint32_t r = clamp_rank(p.rank);
  const std::uint32_t spatial = r >= 2 ? r - 2 : 0;
  return std::string("dtype=") + tensor_map_dtype_name(p.dtype) +
         ", rank=" + std::to_string(p.rank) + ", address=" + hex(p.address) +
         ", shape=" + tuple(p.shape.data(), r) + ", strides=" + tuple(p.strides.data(), r) +
         " bytes, lower_corner=" + tuple(p.lower_corner.data(), spatial) +
         ", upper_corner=" + tuple(p.upper_corner.data(), spatial) +
         ", channels_per_pixel=" + std::to_string(p.channels_per_pixel) +
         ", pixels_per_column=" + std::to_string(p.pixels_per_column) +
         describe_options(p.options, r);
}

}  // namespace nanocuda
