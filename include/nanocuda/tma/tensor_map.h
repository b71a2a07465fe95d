// TensorMap: a TMA descriptor (CUtensorMap) as a 128-byte value type, validated before encoding.
//
// Geometry is given in the usual row-major order, outermost dimension first (like torch's
// shape and stride()); nanocuda reverses it into the innermost-first arrays the driver
// wants. Strides are in bytes. Encoding allocates nothing: every array is fixed at rank 5.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace nanocuda {

namespace detail {
class DescriptorCache;
}

inline constexpr int kTensorMapMaxRank = 5;

// Row-major (outermost first) arrays; only the first `rank` entries are read.
using TensorMapDims = std::array<std::uint64_t, kTensorMapMaxRank>;
using TensorMapBox = std::array<std::uint32_t, kTensorMapMaxRank>;

// Options shared by tiled and im2col maps. The defaults are what a GEMM/attention kernel
// usually wants; see docs in tensor_map.cpp for why.
struct TensorMapOptions {
  // Traversal step per dimension (row-major), 1..8. The innermost entry is ignored by the
  // hardware without interleave.
  TensorMapBox element_strides{1, 1, 1, 1, 1};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  // nullopt: "auto", the swizzle whose span equals the inner box row (32, 64 or 128 bytes),
  // else none. Resolved before encoding; resolved_swizzle() tells which.
  std::optional<CUtensorMapSwizzle> swizzle;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

// A tiled map: `box` elements per dimension are copied to/from shared memory per TMA op.
struct TiledParams {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  std::uint32_t rank = 0;
  std::uint64_t address = 0;  // global address of element (0, ..., 0)
  TensorMapDims shape{};      // elements per dimension, outermost first
  TensorMapDims strides{};    // bytes, outermost first; all zero: compact row-major.
                              // The innermost stride must be the element size.
  TensorMapBox box{};         // elements per dimension, outermost first
  TensorMapOptions options{};
};

// An im2col map over an N, (D,) (H,) W, C tensor (rank 3..5, outermost first).
struct Im2colParams {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  std::uint32_t rank = 0;
  std::uint64_t address = 0;
  TensorMapDims shape{};
  TensorMapDims strides{};
  // Bounding-box corner offsets of the spatial dims, outermost first ({D, H, W}; only the
  // last rank-2 spatial dims exist, so entries [0, rank-2) are read).
  std::array<int, 3> lower_corner{};
  std::array<int, 3> upper_corner{};
  std::uint32_t channels_per_pixel = 0;  // 1..256
  std::uint32_t pixels_per_column = 0;   // 1..1024
  TensorMapOptions options{};
};

// The arguments exactly as the driver takes them (innermost first), after validation.
// Exposed so tests can call the raw driver function with identical arguments.
struct TensorMapDriverArgs {
  CUtensorMapDataType dtype;
  std::uint32_t rank;
  void* address;
  cuuint64_t global_dim[kTensorMapMaxRank];
  cuuint64_t global_strides[kTensorMapMaxRank - 1];
  cuuint32_t box_dim[kTensorMapMaxRank];  // tiled only
  cuuint32_t element_strides[kTensorMapMaxRank];
  int lower_corner[3];  // im2col only
  int upper_corner[3];
  cuuint32_t channels_per_pixel;
  cuuint32_t pixels_per_column;
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2_promotion;
  CUtensorMapFloatOOBfill oob_fill;
};

class TensorMap {
 public:
  // All-zero bytes: not a usable descriptor, but a valid value to overwrite.
  TensorMap() noexcept : map_{} {}

  // Validate (throwing ValueError/TypeError naming the rule and value, no driver needed),
  // then encode with cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col. A driver refusal
  // throws Error whose object() lists every argument passed.
  [[nodiscard]] static TensorMap tiled(const TiledParams& params);
  [[nodiscard]] static TensorMap im2col(const Im2colParams& params);

  // The memo tiled() keeps per thread, for callers that hold on to one geometry: its
  // generation (changes whenever it holds another geometry; 0: none), and the descriptor for
  // `address` while the memo still has generation `generation` (false: call tiled()).
  [[nodiscard]] static std::uint64_t tiled_memo_generation() noexcept;
  [[nodiscard]] static bool tiled_from_memo(std::uint64_t generation, std::uint64_t address,
                                            CUtensorMap& out);

  // Validation alone, and the driver arguments it produces; neither touches the driver.
  static TensorMapDriverArgs validate(const TiledParams& params);
  static TensorMapDriverArgs validate(const Im2colParams& params);

  // Points the map at new memory of the same geometry (cuTensorMapReplaceAddress; no
  // re-encode). The address must be 16-byte aligned.
  void replace_address(std::uint64_t address);

  [[nodiscard]] const void* data() const noexcept { return &map_; }
  [[nodiscard]] std::span<const std::byte, 128> bytes() const noexcept {
    return std::span<const std::byte, 128>(reinterpret_cast<const std::byte*>(&map_), 128);
  }
  [[nodiscard]] static TensorMap from_bytes(std::span<const std::byte, 128> bytes) noexcept;
  [[nodiscard]] const CUtensorMap& native() const noexcept { return map_; }
  [[nodiscard]] CUtensorMap& native() noexcept { return map_; }

  friend bool operator==(const TensorMap& a, const TensorMap& b) noexcept;

 private:
  // The full path: validate, encode, and remember in `cache` under the current context
  // (keyed_on_context: TensorMap::tiled's per-thread cache) or under none (a bound map's).
  static TensorMap encode_tiled(const TiledParams& params, detail::DescriptorCache& cache,
                                bool keyed_on_context);
  friend class detail::DescriptorCache;

  // For TensorMap::tiled's memo paths, which overwrite all 128 bytes at once.
  struct Uninitialized {};
  explicit TensorMap(Uninitialized) noexcept {}

  CUtensorMap map_;
};

// 128 bytes, and at least the 64-byte alignment the driver requires (cuda.h 13 declares
// CUtensorMap with 128); copied by value into kernel parameters.
static_assert(sizeof(TensorMap) == 128);
static_assert(alignof(TensorMap) >= 64 && alignof(TensorMap) == alignof(CUtensorMap));
static_assert(std::is_trivially_copyable_v<TensorMap>);
static_assert(std::is_standard_layout_v<TensorMap>);

// Names for messages and reprs: "float16", "128B", "L2_128B", "nan".
[[nodiscard]] const char* tensor_map_dtype_name(CUtensorMapDataType dtype) noexcept;
[[nodiscard]] const char* swizzle_name(CUtensorMapSwizzle swizzle) noexcept;
[[nodiscard]] const char* interleave_name(CUtensorMapInterleave interleave) noexcept;
[[nodiscard]] const char* l2_promotion_name(CUtensorMapL2promotion promotion) noexcept;
[[nodiscard]] const char* oob_fill_name(CUtensorMapFloatOOBfill fill) noexcept;
// Bits per element in global memory (4 for the packed 16U4_ALIGN8B); 0 if unknown.
[[nodiscard]] int tensor_map_element_bits(CUtensorMapDataType dtype) noexcept;
// The swizzle "auto" resolves to for an inner box row of `inner_bytes`.
[[nodiscard]] CUtensorMapSwizzle auto_swizzle(std::uint64_t inner_bytes) noexcept;

// Every argument, in row-major order, for errors and reprs.
[[nodiscard]] std::string describe(const TiledParams& params);
[[nodiscard]] std::string describe(const Im2colParams& params);

}  // namespace nanocuda
