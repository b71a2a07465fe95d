"""Probes the driver's unwritten TensorMap rules on a GPU machine (needs cuda.bindings):
the largest box the encoders take (tiled and im2col, in bytes), and what 16B interleave
demands of the inner box. Prints one line per finding; nanocuda's validation mirrors them."""
import itertools
import sys

from cuda.bindings import driver as cu


def ok(err):
    return int(err) == 0


def tiled(ptr, dtype, size, shape, box, interleave=0, swizzle=0, estr=None):
    rank = len(shape)
    strides, acc = [], size * shape[-1]
    for d in range(rank - 2, -1, -1):
        acc = (acc + 15) // 16 * 16
        strides.append(acc)
        acc *= shape[d]
    err, _ = cu.cuTensorMapEncodeTiled(
        cu.CUtensorMapDataType(dtype), rank, ptr, [cu.cuuint64_t(v) for v in shape[::-1]],
        [cu.cuuint64_t(v) for v in strides], [cu.cuuint32_t(v) for v in box[::-1]],
        [cu.cuuint32_t(v) for v in (estr or [1] * rank)[::-1]], cu.CUtensorMapInterleave(interleave),
        cu.CUtensorMapSwizzle(swizzle), cu.CUtensorMapL2promotion(0), cu.CUtensorMapFloatOOBfill(0))
    return ok(err)


def main():
    cu.cuInit(0)
    _, dev = cu.cuDeviceGet(0)
    _, ctx = cu.cuDevicePrimaryCtxRetain(dev)
    cu.cuCtxSetCurrent(ctx)
    _, smem = cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev)
    print(f"max shared memory per block (opt-in): {smem} bytes")
    _, ptr = cu.cuMemAlloc(1 << 22)
    ptr = int(ptr)
    # 1. Tiled box bytes: uint8, rank 3, box [a, b, 256] = a*b*256 bytes.
    best_ok, worst_bad = 0, 1 << 60
    for a in range(1, 9):
        for b in range(1, 257):
            n = a * b * 256
            if n < 160_000 or n > 300_000:
                continue
            good = tiled(ptr, 0, 1, [a, b, 256], [a, b, 256])
            if good:
                best_ok = max(best_ok, n)
            else:
                worst_bad = min(worst_bad, n)
    print(f"tiled box bytes: largest taken {best_ok}, smallest refused {worst_bad}")
    # Does the element stride shrink the box counted? box [8, 256, 256] uint8, estr 2 on dim 1.
    for estr in ([1, 2, 1], [1, 1, 2], [2, 2, 1]):
        print(f"tiled box 8x256x256 uint8 (512 KiB) with element_strides {estr}:",
              tiled(ptr, 0, 1, [8, 256, 256], [8, 256, 256], estr=estr))
    for a, b in ((4, 227), (4, 228), (7, 129), (7, 130)):
        print(f"tiled box {a}x{b}x256 uint8 = {a * b * 256} bytes, element_strides 1:",
              tiled(ptr, 0, 1, [a, b, 256], [a, b, 256]))
    # 2. 16B interleave: fp16 rank 3, which inner boxes / shapes / swizzles work.
    rows = []
    for inner_shape, inner_box, sw in itertools.product([8, 16, 24, 43, 64], [1, 2, 4, 8, 16, 43, 64], [0, 1, 2, 3]):
        if inner_box > inner_shape:
            continue
        rows.append((inner_shape, inner_box, sw, tiled(ptr, 6, 2, [4, 8, inner_shape], [2, 4, inner_box], 1, sw)))
    taken = [(s, b, w) for s, b, w, g in rows if g]
    refused = [(s, b, w) for s, b, w, g in rows if not g]
    print("interleave 16B fp16 (inner shape, inner box, swizzle) taken:", taken)
    print("interleave 16B fp16 refused:", refused)
    # 16B interleave, uint8 and fp32 inner box bytes
    for dtype, size in ((0, 1), (7, 4), (8, 8)):
        t = [b for b in (1, 2, 4, 8, 16, 32, 64) if tiled(ptr, dtype, size, [4, 8, 64], [2, 4, b], 1, 0)]
        print(f"interleave 16B dtype {dtype}: inner boxes taken (swizzle none): {t}")
        t = [b for b in (1, 2, 4, 8, 16, 32, 64) if tiled(ptr, dtype, size, [4, 8, 64], [2, 4, b], 1, 3)]
        print(f"interleave 16B dtype {dtype}: inner boxes taken (swizzle 128B): {t}")
    # 3. im2col box bytes: channels*pixels*size, fp32 channels 64 (256 B), pixels 1..1024.
    def im2col(c, ppc, size=4, dtype=7, sw=0):
        err, _ = cu.cuTensorMapEncodeIm2col(
            cu.CUtensorMapDataType(dtype), 4, ptr, [cu.cuuint64_t(v) for v in (c, 16, 16, 2)],
            [cu.cuuint64_t(v) for v in (c * size, c * size * 16, c * size * 256)], [0, 0], [0, 0], c, ppc,
            [cu.cuuint32_t(1)] * 4, cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(sw),
            cu.CUtensorMapL2promotion(0), cu.CUtensorMapFloatOOBfill(0))
        return ok(err)
    t = [p for p in range(700, 1025) if im2col(64, p)]
    print(f"im2col fp32 64 channels: pixels_per_column taken up to {max(t) if t else None} "
          f"({max(t) * 256 if t else 0} bytes); refused from {min(set(range(700, 1025)) - set(t), default=None)}")
    t = [c for c in (1, 2, 3, 4, 5, 8, 12, 16, 20, 32) if im2col(c, 8)]
    print(f"im2col fp32 channels taken (8 pixels): {t}")
    t = [c for c in (4, 8, 16, 32, 64) if im2col(c, 8, sw=3)]
    print(f"im2col fp32 channels taken with 128B swizzle: {t}")


if __name__ == "__main__":
    sys.exit(main())
