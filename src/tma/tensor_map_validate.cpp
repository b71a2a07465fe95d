// Validation of TMA geometry against every rule documented for cuTensorMapEncodeTiled /
// cuTensorMapEncodeIm2col in cuda.h, done before (and without) the driver.
//
// Each rule throws ValueError (TypeError for a dtype the hardware does not know) whose text
// names the API, the rule and the offending value. The success path builds no strings and
// allocates nothing: it only fills the innermost-first TensorMapDriverArgs.
#include <cstdint>
#include <cstdio>
#include <string>

#include "nanocuda/driver/error.h"
#include "nanocuda/tma/tensor_map.h"

namespace nanocuda {

namespace {

constexpr std::uint64_t kMaxGlobalDim = 1ull << 32;
constexpr std::uint64_t kMaxGlobalStride = 1ull << 40;
// The largest box the driver encodes: 228 KiB, the shared memory of an sm_90/sm_100
// multiprocessor. cuda.h does not say so; measured on the H100 (driver 13.0): 233,472 bytes
// are taken, 234,240 refused, for tiled and im2col maps alike (tools/tma_driver_rules.py).
constexpr std::uint64_t kMaxBoxBytes = 228 * 1024;

void check_box_bytes(const char* where, std::uint64_t bytes, const std::string& how) {
  if (bytes > kMaxBoxBytes)
    throw ValueError(std::string(where) + ": the box is " + std::to_string(bytes) + " bytes (" +
                     how + "): a TMA box must fit in 228 KiB (" + std::to_string(kMaxBoxBytes) +
                     " bytes), a multiprocessor's shared memory");
}

[[noreturn]] void fail(const char* where, const std::string& rule) {
  throw ValueError(std::string(where) + ": " + rule);
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// "box[1] = 300" with row-major index i.
std::string at(const char* name, std::uint32_t i, std::uint64_t value) {
  return std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(value);
}

bool is_float(CUtensorMapDataType t) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return true;
    default: return false;
  }
}

bool is_packed16(CUtensorMapDataType t) {
  return t == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || t == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

std::uint32_t swizzle_span(CUtensorMapSwizzle s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    default: return 128;  // 128B and its atom variants
  }
}

// Rules on everything but the box: dtype, rank, address, shape, strides, element strides,
// enums, and the interleave/swizzle/oob combinations. Fills `a` (innermost first).
// `inner_bytes` is the inner box row in bytes (box[-1] or channels_per_pixel times the
// element size), `inner_what` how to name it.
void validate_common(const char* where, CUtensorMapDataType dtype, std::uint32_t rank,
                     std::uint32_t min_rank, std::uint64_t address, const TensorMapDims& shape,
                     const TensorMapDims& strides, const TensorMapOptions& o,
                     std::uint64_t inner_box, const char* inner_what, bool tiled,
                     TensorMapDriverArgs& a) {
  const int bits = tensor_map_element_bits(dtype);
  if (bits == 0)
    throw TypeError(std::string(where) + ": unsupported TMA dtype " +
                    std::to_string(static_cast<int>(dtype)) +
                    " (not a CUtensorMapDataType value)");
  if (rank < min_rank || rank > kTensorMapMaxRank)
    fail(where, "rank must be " + std::to_string(min_rank) + "..5, got " + std::to_string(rank));
  if (static_cast<unsigned>(o.interleave) > CU_TENSOR_MAP_INTERLEAVE_32B)
    fail(where, "unknown interleave " + std::to_string(static_cast<int>(o.interleave)));
  if (o.swizzle && static_cast<unsigned>(*o.swizzle) > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B)
    fail(where, "unknown swizzle " + std::to_string(static_cast<int>(*o.swizzle)));
  if (static_cast<unsigned>(o.l2_promotion) > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
    fail(where, "unknown l2_promotion " + std::to_string(static_cast<int>(o.l2_promotion)));
  if (static_cast<unsigned>(o.oob_fill) > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
    fail(where, "unknown oob_fill " + std::to_string(static_cast<int>(o.oob_fill)));

  const bool il32 = o.interleave == CU_TENSOR_MAP_INTERLEAVE_32B;
  const bool interleaved = o.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE;
  const bool packed16 = is_packed16(dtype);
  if (tiled && interleaved && rank < 3)
    fail(where, std::string("rank must be >= 3 with ") + interleave_name(o.interleave) +
                    " interleave, got " + std::to_string(rank));
  if (dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && interleaved)
    fail(where, "dtype 16U6_align16B requires interleave none, got " +
                    std::string(interleave_name(o.interleave)));

  // Address.
  const std::uint64_t addr_align = (il32 || packed16) ? 32 : 16;
  if (address % addr_align != 0)
    fail(where, "global address must be " + std::to_string(addr_align) + "-byte aligned" +
                    (il32 ? " with 32B interleave" : packed16 ? " for packed 16-byte types" : "") +
                    ", got " + hex(address));

  // Shape, innermost first for the driver.
  for (std::uint32_t i = 0; i < rank; ++i) {
    if (shape[i] == 0 || shape[i] > kMaxGlobalDim)
      fail(where, at("shape", i, shape[i]) + ": every dimension must be 1..2^32 elements");
    a.global_dim[rank - 1 - i] = shape[i];
  }
  const std::uint64_t inner_dim = shape[rank - 1];
  if (packed16 && inner_dim % 128 != 0)
    fail(where, at("shape", rank - 1, inner_dim) + ": the innermost dimension of " +
                    tensor_map_dtype_name(dtype) + " must be a multiple of 128");
  if (dtype == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && inner_dim % 2 != 0)
    fail(where, at("shape", rank - 1, inner_dim) +
                    ": the innermost dimension of 16U4_align8B must be even");

  // Strides (bytes). All zero: compact row-major.
  bool compact = true;
  for (std::uint32_t i = 0; i < rank; ++i) compact = compact && strides[i] == 0;
  const std::uint64_t elem_bytes = bits >= 8 ? static_cast<std::uint64_t>(bits / 8) : 0;
  if (!compact && bits >= 8 && strides[rank - 1] != elem_bytes)
    fail(where, at("strides", rank - 1, strides[rank - 1]) +
                    " bytes: the innermost dimension must be contiguous (stride = element "
                    "size, " + std::to_string(elem_bytes) + " bytes)");
  const std::uint64_t stride_mult = (il32 || packed16) ? 32 : 16;
  std::uint64_t running = inner_dim * static_cast<std::uint64_t>(bits) / 8;  // compact row
  for (std::uint32_t i = rank - 1; i-- > 0;) {
    const std::uint64_t s = compact ? running : strides[i];
    if (s % stride_mult != 0)
      fail(where, at("strides", i, s) + " bytes: global strides must be multiples of " +
                      std::to_string(stride_mult) + " bytes" +
                      (il32 ? " with 32B interleave" : packed16 ? " for packed 16-byte types" : "") +
                      (compact ? " (computed from the compact shape)" : ""));
    if (s >= kMaxGlobalStride)
      fail(where, at("strides", i, s) + " bytes: global strides must be < 2^40 bytes");
    a.global_strides[rank - 2 - i] = s;
    running = s * shape[i];
  }

  // Element strides.
  for (std::uint32_t i = 0; i < rank; ++i) {
    const std::uint32_t e = o.element_strides[i];
    if (e < 1 || e > 8)
      fail(where, at("element_strides", i, e) + ": element strides must be 1..8");
    a.element_strides[rank - 1 - i] = e;
  }

  // Swizzle against the inner box row.
  const std::uint64_t inner_bytes = inner_box * static_cast<std::uint64_t>(bits) / 8;
  const CUtensorMapSwizzle sw =
      o.swizzle ? *o.swizzle
                : (il32 ? CU_TENSOR_MAP_SWIZZLE_32B
                        : interleaved ? CU_TENSOR_MAP_SWIZZLE_NONE : auto_swizzle(inner_bytes));
  if (il32 && sw != CU_TENSOR_MAP_SWIZZLE_32B)
    fail(where, std::string("32B interleave requires swizzle 32B, got ") + swizzle_name(sw));
  if (!interleaved && sw != CU_TENSOR_MAP_SWIZZLE_NONE && inner_bytes > swizzle_span(sw))
    fail(where, std::string("the inner box row is ") + std::to_string(inner_bytes) + " bytes (" +
                    inner_what + " = " + std::to_string(inner_box) + " x " +
                    tensor_map_dtype_name(dtype) + "): it must fit the " + swizzle_name(sw) +
                    " swizzle span of " + std::to_string(swizzle_span(sw)) + " bytes");
  if (packed16) {
    const bool ok = sw == CU_TENSOR_MAP_SWIZZLE_NONE || sw == CU_TENSOR_MAP_SWIZZLE_128B ||
                    sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B ||
                    (dtype == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
                     sw == CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B);
    if (!ok)
      fail(where, std::string("swizzle ") + swizzle_name(sw) + " is not supported for " +
                      tensor_map_dtype_name(dtype));
  }
  if (o.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !is_float(dtype))
    fail(where, std::string("oob_fill nan requires a floating-point dtype, got ") +
                    tensor_map_dtype_name(dtype));

  a.dtype = dtype;
  a.rank = rank;
  a.address = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
  a.interleave = o.interleave;
  a.swizzle = sw;
  a.l2_promotion = o.l2_promotion;
  a.oob_fill = o.oob_fill;
}

}  // namespace

TensorMapDriverArgs TensorMap::validate(const TiledParams& p) {
  constexpr const char* where = "TensorMap::tiled";
  TensorMapDriverArgs a{};
  const std::uint32_t rank = p.rank;
  // The inner box is read before validate_common checks the rank, so bound it here.
  if (rank < 1 || rank > kTensorMapMaxRank)
    fail(where, "rank must be 1..5, got " + std::to_string(rank));
  validate_common(where, p.dtype, rank, 1, p.address, p.shape, p.strides, p.options,
                  p.box[rank - 1], "box[-1]", true, a);
  const int bits = tensor_map_element_bits(p.dtype);
  for (std::uint32_t i = 0; i < rank; ++i) {
    // A box may be larger than the tensor: the part outside is filled (OOB fill).
    if (p.box[i] < 1 || p.box[i] > 256)
      fail(where, at("box", i, p.box[i]) + ": box sizes must be 1..256 elements");
    a.box_dim[rank - 1 - i] = p.box[i];
  }
  const std::uint64_t inner_bytes = std::uint64_t{p.box[rank - 1]} * bits / 8;
  // cuda.h states this for interleave none; the driver applies it to 16B interleave as well.
  if (inner_bytes % 16 != 0)
    fail(where, "the inner box row is " + std::to_string(inner_bytes) + " bytes (box[-1] = " +
                    std::to_string(p.box[rank - 1]) + " x " + tensor_map_dtype_name(p.dtype) +
                    "): it must be a multiple of 16 bytes");
  // What lands in shared memory: every element_strides-th element along each dim.
  std::uint64_t elements = 1;
  for (std::uint32_t i = 0; i < rank; ++i) {
    const std::uint32_t e = p.options.element_strides[i];
    elements *= (std::uint64_t{p.box[i]} + e - 1) / e;
  }
  check_box_bytes(where, elements * static_cast<std::uint64_t>(bits) / 8,
                  "the box shape divided by element_strides");
  if (is_packed16(p.dtype) && p.box[rank - 1] != 128)
    fail(where, at("box", rank - 1, p.box[rank - 1]) + ": the inner box of " +
                    tensor_map_dtype_name(p.dtype) + " must be 128");
  return a;
}

TensorMapDriverArgs TensorMap::validate(const Im2colParams& p) {
  constexpr const char* where = "TensorMap::im2col";
  TensorMapDriverArgs a{};
  const std::uint32_t rank = p.rank;
  if (rank < 3 || rank > kTensorMapMaxRank)
    fail(where, "rank must be 3..5 (N, spatial dims, C), got " + std::to_string(rank));
  validate_common(where, p.dtype, rank, 3, p.address, p.shape, p.strides, p.options,
                  p.channels_per_pixel, "channels_per_pixel", false, a);
  if (p.channels_per_pixel < 1 || p.channels_per_pixel > 256)
    fail(where, "channels_per_pixel = " + std::to_string(p.channels_per_pixel) +
                    ": must be 1..256");
  if (is_packed16(p.dtype) && p.channels_per_pixel != 128)
    fail(where, "channels_per_pixel = " + std::to_string(p.channels_per_pixel) + ": " +
                    tensor_map_dtype_name(p.dtype) + " requires 128");
  if (p.pixels_per_column < 1 || p.pixels_per_column > 1024)
    fail(where, "pixels_per_column = " + std::to_string(p.pixels_per_column) +
                    ": must be 1..1024");
  const std::uint64_t pixel_bytes = std::uint64_t{p.channels_per_pixel} *
                                    tensor_map_element_bits(p.dtype) / 8;
  if (!is_packed16(p.dtype) && pixel_bytes % 16 != 0)
    fail(where, "channels_per_pixel = " + std::to_string(p.channels_per_pixel) + " x " +
                    tensor_map_dtype_name(p.dtype) + " is " + std::to_string(pixel_bytes) +
                    " bytes per pixel: it must be a multiple of 16 bytes");
  check_box_bytes(where, pixel_bytes * p.pixels_per_column,
                  "channels_per_pixel x pixels_per_column x element size");
  // Corner offsets are signed fields whose width shrinks as spatial dims are added.
  const std::uint32_t spatial = rank - 2;
  const int limit = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (std::uint32_t j = 0; j < spatial; ++j) {
    for (const auto* corner : {&p.lower_corner, &p.upper_corner}) {
      const int c = (*corner)[j];
      if (c < -limit || c > limit - 1)
        fail(where, std::string(corner == &p.lower_corner ? "lower_corner" : "upper_corner") +
                        "[" + std::to_string(j) + "] = " + std::to_string(c) + ": with rank " +
                        std::to_string(rank) + " corner offsets must be in [" +
                        std::to_string(-limit) + ", " + std::to_string(limit - 1) + "]");
    }
    // The box spans shape + upper - lower pixels along this spatial dim.
    const std::int64_t extent = static_cast<std::int64_t>(p.shape[1 + j]) + p.upper_corner[j] -
                                p.lower_corner[j];
    if (extent <= 0)
      fail(where, "the bounding box has zero area along spatial dim " + std::to_string(j) +
                      " (shape " + std::to_string(p.shape[1 + j]) + ", lower_corner " +
                      std::to_string(p.lower_corner[j]) + ", upper_corner " +
                      std::to_string(p.upper_corner[j]) + ")");
    a.lower_corner[spatial - 1 - j] = p.lower_corner[j];
    a.upper_corner[spatial - 1 - j] = p.upper_corner[j];
  }
  a.channels_per_pixel = p.channels_per_pixel;
  a.pixels_per_column = p.pixels_per_column;
  return a;
}

}  // namespace nanocuda
