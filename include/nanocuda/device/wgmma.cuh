// Kernel-side wgmma (sm_90a): shared-memory matrix descriptors for 128B-swizzled tiles (K-major,
// and MN-major for a transposed B), wgmma.mma_async m64nNk16 for fp16/bf16 inputs with fp32
// accumulators (N = 64, 128, 192, 256), and the fence / commit / wait that order them. Header-only.
//
// K-major tile (what TMA writes with swizzle "128B" and a box whose inner extent is 64 fp16/bf16
// = 128 bytes along K): rows of 128 bytes, 8-row groups of 1024 bytes, the 16-byte chunks of
// row r XOR-permuted by (r % 8). The tile must start 1024-byte aligned. A is always M×K
// (K-major); a K-major B is N×K (rows of K), and the product is A·Bᵀ.
//
// MN-major B (B stored K×N, N contiguous; the product is A·B): TMA boxes of [64 K rows][64 N
// columns] with swizzle "128B", one box per 64 columns, placed `mn_block_bytes` apart (64 rows ×
// 128 bytes = 8192 for a 64-deep K tile). desc_mn128 describes them; mma<N, T, 1> reads them.
//
// One warpgroup (128 threads) computes a 64×N block:
//   float d[N / 2] = {};                       // this thread's part of the 64×N fp32 result
//   wgmma::fence();                            // d was written by ordinary code
//   for (int k = 0; k < 64; k += 16)           // one 64-wide K tile = 4 steps of k16
//     wgmma::mma<N, wgmma::F16>(d, wgmma::desc_k128(a_tile + k), wgmma::desc_k128(b_tile + k));
//   wgmma::commit();  wgmma::wait<0>();        // d is ready; the tiles may be overwritten
// a_tile/b_tile are element pointers (2-byte types) into shared memory; +k moves 32 bytes
// along K inside the swizzle atom, which is how the hardware expects K steps to be addressed.
// With an MN-major B the k step moves 16 rows of 128 bytes instead:
//     wgmma::mma<N, wgmma::F16, 1>(d, wgmma::desc_k128(a_tile + k),
//                                  wgmma::desc_mn128(b_bytes + k * 128, 8192));
//
// Accumulator layout (PTX "wgmma D fragment" for f32): thread t, warp w = t / 32, lane l:
// d[i] sits at row 16*w + l/4 + 8*((i/2) % 2), column 8*(i/4) + 2*(l%4) + (i%2).
#pragma once

namespace nanocuda {
namespace wgmma {

enum Type { F16, BF16 };

// Descriptor of a K-major, 128B-swizzled tile at shared-memory pointer `p`: start address,
// leading offset (unused for this layout: 1), stride between 8-row groups = 1024 bytes, and
// layout type 1 (128B swizzle) in bits 62-63.
__device__ __forceinline__ unsigned long long desc_k128(const void* p) {
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) | (1ull << 16) |
         (static_cast<unsigned long long>(1024 >> 4) << 32) | (1ull << 62);
}

// Descriptor of an MN-major, 128B-swizzled tile at `p` (1024-byte aligned, or a multiple of
// 1024 bytes past such a start): K rows of 64 MN-elements (128 bytes), 8-row groups 1024 bytes
// apart (the stride byte offset), the next 64 MN-elements `mn_block_bytes` further (the leading
// byte offset). This is CUTLASS's canonical SW128 MN-major layout; wgmma needs TransB = 1.
__device__ __forceinline__ unsigned long long desc_mn128(const void* p, unsigned mn_block_bytes) {
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((mn_block_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<unsigned long long>(1024 >> 4) << 32) | (1ull << 62);
}

// Before the first wgmma, and whenever registers it accumulates into were written by
// other instructions (zeroing, the epilogue of the previous tile).
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Closes the group of wgmmas issued since the last commit.
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// Waits until at most N committed groups are still running.
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads/writes across an in-flight wgmma.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Eight accumulator operands starting at d[o].
#define NANOCUDA_WGMMA_D8(o)                                                                    \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]),               \
      "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7])
#define NANOCUDA_WGMMA_D32(o) \
  NANOCUDA_WGMMA_D8(o), NANOCUDA_WGMMA_D8(o + 8), NANOCUDA_WGMMA_D8(o + 16), NANOCUDA_WGMMA_D8(o + 24)
#define NANOCUDA_WGMMA_D64(o) NANOCUDA_WGMMA_D32(o), NANOCUDA_WGMMA_D32(o + 32)
#define NANOCUDA_WGMMA_D96(o) NANOCUDA_WGMMA_D64(o), NANOCUDA_WGMMA_D32(o + 64)
#define NANOCUDA_WGMMA_D128(o) NANOCUDA_WGMMA_D64(o), NANOCUDA_WGMMA_D64(o + 64)

// The register lists "%0, %1, ..." of 32, 64 and 128 accumulators.
#define NANOCUDA_WGMMA_R32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define NANOCUDA_WGMMA_R64 NANOCUDA_WGMMA_R32 ", " "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define NANOCUDA_WGMMA_R96 NANOCUDA_WGMMA_R64 ", " "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define NANOCUDA_WGMMA_R128 NANOCUDA_WGMMA_R64 ", " "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

template <int N, Type T>
struct Mma;

// One specialization per (N, type): the accumulators are %0 .. %(N/2 - 1), then the two
// descriptors, scale_d and the B transpose immediate (operand numbers IA, IB, IS, IT).
#define NANOCUDA_WGMMA_SPEC(N, T, TS, DOPS, REGS, IA, IB, IS, IT)                             \
  template <>                                                                                 \
  struct Mma<N, T> {                                                                          \
    template <int TB>                                                                         \
    static __device__ __forceinline__ void run(float (&d)[N / 2], unsigned long long desc_a,   \
                                               unsigned long long desc_b, int scale_d) {      \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\n"                          \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TS "." TS " {" REGS "}, %" #IA \
                   ", %" #IB ", p, 1, 1, 0, %" #IT ";\n}\n"                                     \
                   : DOPS                                                                     \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TB));                        \
    }                                                                                         \
  };

NANOCUDA_WGMMA_SPEC(64, F16, "f16", NANOCUDA_WGMMA_D32(0), NANOCUDA_WGMMA_R32, 32, 33, 34, 35)
NANOCUDA_WGMMA_SPEC(64, BF16, "bf16", NANOCUDA_WGMMA_D32(0), NANOCUDA_WGMMA_R32, 32, 33, 34, 35)
NANOCUDA_WGMMA_SPEC(128, F16, "f16", NANOCUDA_WGMMA_D64(0), NANOCUDA_WGMMA_R64, 64, 65, 66, 67)
NANOCUDA_WGMMA_SPEC(128, BF16, "bf16", NANOCUDA_WGMMA_D64(0), NANOCUDA_WGMMA_R64, 64, 65, 66, 67)
NANOCUDA_WGMMA_SPEC(192, F16, "f16", NANOCUDA_WGMMA_D96(0), NANOCUDA_WGMMA_R96, 96, 97, 98, 99)
NANOCUDA_WGMMA_SPEC(192, BF16, "bf16", NANOCUDA_WGMMA_D96(0), NANOCUDA_WGMMA_R96, 96, 97, 98, 99)
NANOCUDA_WGMMA_SPEC(256, F16, "f16", NANOCUDA_WGMMA_D128(0), NANOCUDA_WGMMA_R128, 128, 129, 130, 131)
NANOCUDA_WGMMA_SPEC(256, BF16, "bf16", NANOCUDA_WGMMA_D128(0), NANOCUDA_WGMMA_R128, 128, 129, 130, 131)
#undef NANOCUDA_WGMMA_SPEC
#undef NANOCUDA_WGMMA_R128
#undef NANOCUDA_WGMMA_R96
#undef NANOCUDA_WGMMA_R64
#undef NANOCUDA_WGMMA_R32

// d (+)= A·B for a 64×N×16 step; scale_d = 0 overwrites d instead of accumulating. A is K-major
// (desc_k128). B is K-major (desc_k128: the product is A·Bᵀ of an N×K matrix) with
// TransB = 0, or MN-major (desc_mn128: a K×N matrix, the product is A·B) with TransB = 1.
template <int N, Type T, int TransB = 0>
__device__ __forceinline__ void mma(float (&d)[N / 2], unsigned long long desc_a,
                                    unsigned long long desc_b, int scale_d = 1) {
  static_assert(TransB == 0 || TransB == 1, "TransB: 0 (B K-major) or 1 (B MN-major)");
  Mma<N, T>::template run<TransB>(d, desc_a, desc_b, scale_d);
}

#undef NANOCUDA_WGMMA_D128
#undef NANOCUDA_WGMMA_D96
#undef NANOCUDA_WGMMA_D64
#undef NANOCUDA_WGMMA_D32
#undef NANOCUDA_WGMMA_D8

}  // namespace wgmma
}  // namespace nanocuda
