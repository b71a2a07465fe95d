"""The driver half of the TensorMap property: random tiled geometries (20,000 by default,
NANOCUDA_TMA_GEOMETRIES to change) given both to nanocuda and, converted here to cuda.h's
innermost-first arguments, straight to cuTensorMapEncodeTiled. Every geometry nanocuda
accepts must encode to the driver's exact bytes; every one it rejects that the driver takes
is listed by rule (nanocuda's documented stricter rules), and none may be anything else."""

import collections
import os
import re

import numpy as np
import pytest

import nanocuda
from nanocuda import TensorMap
from testing_hooks import hooks

pytestmark = pytest.mark.gpu

# name: (CUtensorMapDataType, bytes)
DTYPES = {"uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4), "uint64": (4, 8),
          "int64": (5, 8), "float16": (6, 2), "float32": (7, 4), "float64": (8, 8), "bfloat16": (9, 2),
          "tfloat32": (11, 4)}
SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
INTERLEAVE = {"none": 0, "16B": 1, "32B": 2}
L2 = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
FILL = {"none": 0, "nan": 1}


def random_geometry(rng, base):
    rank = int(rng.integers(1, 6))
    dtype = str(rng.choice(list(DTYPES)))
    size = DTYPES[dtype][1]
    shape = [int(rng.choice([rng.integers(1, 64), rng.integers(1, 4096), rng.integers(1, 1 << 20),
                             rng.integers((1 << 32) - 4, (1 << 32) + 4)], p=[0.4, 0.4, 0.15, 0.05]))
             for _ in range(rank)]
    # Row-major strides in bytes: compact, padded to 16, or (sometimes) broken.
    strides, acc = [0] * rank, size
    for d in range(rank - 1, -1, -1):
        strides[d] = acc
        pad = int(rng.choice([0, 0, 16, 48, 128]))
        acc = (acc * shape[d] + pad + 15) // 16 * 16 if rng.random() < 0.9 else acc * shape[d] + int(rng.integers(1, 16))
    strides[-1] = size
    if rng.random() < 0.03:
        strides[0] = int(rng.integers(1 << 39, 1 << 41)) // 16 * 16
    box = [int(min(shape[d], rng.integers(1, 257))) if rng.random() < 0.93 else int(rng.choice([0, 257, 300]))
           for d in range(rank)]
    if rng.random() < 0.5:
        # Half are plausible tiles (an inner row of whole 16-byte units, small outer dims), so
        # that enough are accepted for the byte comparison to mean something; the rest roam.
        box = [int(min(shape[d], rng.integers(1, 17))) for d in range(rank)]
        box[-1] = int(max(1, 16 // size) * rng.choice([1, 2, 4, 8]))
    element_strides = [int(rng.integers(1, 9)) if rng.random() < 0.95 else int(rng.choice([0, 9]))
                       for _ in range(rank)]
    if rng.random() < 0.7:
        element_strides = [1] * rank
    swizzle = str(rng.choice(list(SWIZZLE)))
    interleave = str(rng.choice(list(INTERLEAVE), p=[0.85, 0.05, 0.1]))
    l2 = str(rng.choice(list(L2)))
    fill = str(rng.choice(list(FILL)))
    ptr = base + int(rng.choice([0, 0, 0, 16, 32, 8]))
    return dict(ptr=ptr, dtype=dtype, shape=shape, strides=strides, box=box, element_strides=element_strides,
                swizzle=swizzle, interleave=interleave, l2_promotion=l2, oob_fill=fill)


def via_nanocuda(g):
    try:
        tm = TensorMap.tiled_from_pointer(g["ptr"], g["dtype"], g["shape"], g["strides"], box=g["box"],
                                          element_strides=g["element_strides"], swizzle=g["swizzle"],
                                          interleave=g["interleave"], l2_promotion=g["l2_promotion"],
                                          oob_fill=g["oob_fill"])
        return bytes(tm), None
    except (ValueError, TypeError) as e:
        return None, str(e)
    except nanocuda.CudaError as e:  # nanocuda's rules let it through, the driver refused it
        return DRIVER_REFUSED, str(e)


DRIVER_REFUSED = b"driver refused what nanocuda accepted"


def show_bad(kind, bad):
    """Every disagreement on one line each (up to 40), so the missing rule can be read off."""
    for why, g in bad[:40]:
        print(f"  BAD {kind}: {why[:90]} | " + ", ".join(f"{k}={v}" for k, v in g.items() if k != "ptr")
              + f", ptr%256={g['ptr'] % 256}")


def via_driver(g):
    """cuda.h order: innermost first; strides of dims 1.. in bytes."""
    rank = len(g["shape"])
    try:
        return hooks.encode_tiled_raw(
            DTYPES[g["dtype"]][0], rank, g["ptr"], g["shape"][::-1], g["strides"][::-1][1:], g["box"][::-1],
            g["element_strides"][::-1], INTERLEAVE[g["interleave"]], SWIZZLE[g["swizzle"]],
            L2[g["l2_promotion"]], FILL[g["oob_fill"]]), None
    except (nanocuda.CudaError, ValueError, TypeError, OverflowError) as e:
        return None, str(e)


def rule_of(message: str) -> str:
    """The rule a rejection names, with the numbers taken out (groups the stricter rules)."""
    text = message.split(": ", 1)[-1]
    return re.sub(r"0x[0-9a-f]+|-?\d+", "N", text)[:120]


class Tally:
    """Both verdicts on each geometry, sorted: accepted by both (bytes compared), refused by
    both, refused only by nanocuda's stricter rules (by rule), and bad (anything else)."""

    def __init__(self):
        self.both, self.neither, self.stricter, self.bad = 0, 0, collections.Counter(), []

    def add(self, g, ours, why, theirs, driver_why):
        if ours is DRIVER_REFUSED and theirs is not None:
            self.bad.append(("nanocuda's encode refused what the raw encode took", g))
        elif ours is not None and theirs is None:  # accepted, or passed our rules (DRIVER_REFUSED)
            self.bad.append((f"accepted, driver refused: {driver_why}", g))
        elif ours is not None:
            self.both += 1
            if ours != theirs:
                self.bad.append(("different bytes", g))
        elif theirs is not None:
            self.stricter[rule_of(why)] += 1
        else:
            self.neither += 1

    def report(self, kind, label, n):
        print(f"\n{label} geometries: {n} tried, {self.both} accepted by both (bytes identical), {self.neither} "
              f"refused by both, {sum(self.stricter.values())} refused only by nanocuda's stricter rules, "
              f"{len(self.bad)} bad")
        for rule, k in self.stricter.most_common():
            print(f"  stricter ({k}): {rule}")
        show_bad(kind, self.bad)


def test_random_geometries_agree_with_the_driver():
    n = int(os.environ.get("NANOCUDA_TMA_GEOMETRIES", "20000"))
    rng = np.random.default_rng(int(os.environ.get("NANOCUDA_TMA_SEED", "16")))
    buf = nanocuda.Buffer(1 << 20)
    base = (buf.ptr + 255) // 256 * 256
    t = Tally()
    for _ in range(n):
        g = random_geometry(rng, base)
        t.add(g, *via_nanocuda(g), *via_driver(g))
    t.report("tiled", "TMA", n)
    both, bad = t.both, t.bad
    assert both > n // 10, "too few accepted geometries to mean anything"
    assert not bad, bad[:5]


def test_memo_on_and_off_give_identical_descriptors():
    """The per-thread descriptor memo (same geometry, new address: an address swap) against a
    fresh encode, over random geometries visited twice in shuffled order."""
    rng = np.random.default_rng(7)
    buf = nanocuda.Buffer(1 << 20)
    base = (buf.ptr + 255) // 256 * 256
    geoms = []
    while len(geoms) < 300:
        g = random_geometry(rng, base)
        g["ptr"] = base
        if via_nanocuda(g)[0] not in (None, DRIVER_REFUSED):
            geoms.append(g)
    for _ in range(2):
        for i in rng.permutation(len(geoms)):
            for offset in (0, 256, 512, 256, 0, 4096):
                g = dict(geoms[i], ptr=base + offset)
                ours = via_nanocuda(g)[0]
                if ours is not DRIVER_REFUSED:
                    assert ours == via_driver(g)[0]


def random_im2col(rng, base):
    rank = int(rng.integers(3, 6))
    dtype = str(rng.choice(list(DTYPES)))
    size = DTYPES[dtype][1]
    shape = [int(rng.integers(1, 5))] + [int(rng.integers(1, 48)) for _ in range(rank - 2)] + \
        [int(rng.choice([8, 16, 32, 64, 128, 256, 3]))]
    strides, acc = [0] * rank, size
    for d in range(rank - 1, -1, -1):
        strides[d] = acc
        acc = (acc * shape[d] + 15) // 16 * 16
    strides[-1] = size
    span = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}[rank]
    corner = lambda: [int(rng.integers(-span - 2, span + 2)) if rng.random() < 0.1 else int(rng.integers(-2, 3))
                      for _ in range(rank - 2)]
    return dict(ptr=base + int(rng.choice([0, 0, 0, 16, 8])), dtype=dtype, shape=shape, strides=strides,
                pixels_per_column=int(rng.choice([1, 8, 32, 64, 128, 256, 1024, 0, 1025])),
                channels_per_pixel=int(min(shape[-1], rng.choice([8, 16, 32, 64, 256, 3]))),
                lower_corner=corner(), upper_corner=corner(),
                element_strides=[1] * rank if rng.random() < 0.7 else [int(rng.integers(1, 9)) for _ in range(rank)],
                swizzle=str(rng.choice(list(SWIZZLE))), interleave="none",
                l2_promotion=str(rng.choice(list(L2))), oob_fill=str(rng.choice(list(FILL))))


def test_random_im2col_geometries_agree_with_the_driver():
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        pytest.skip("cuda.bindings is needed for the raw cuTensorMapEncodeIm2col call")
    nanocuda.Device(0).set_current()  # cuda.bindings' call needs a current context
    n = int(os.environ.get("NANOCUDA_TMA_GEOMETRIES", "20000")) // 4
    rng = np.random.default_rng(61)
    buf = nanocuda.Buffer(1 << 20)
    base = (buf.ptr + 255) // 256 * 256
    t = Tally()
    dump = []  # every geometry with both verdicts, for NANOCUDA_TMA_DUMP (finding the driver's rules)
    for _ in range(n):
        g = random_im2col(rng, base)
        try:
            ours = bytes(TensorMap.im2col_from_pointer(
                g["ptr"], g["dtype"], g["shape"], g["strides"], pixels_per_column=g["pixels_per_column"],
                channels_per_pixel=g["channels_per_pixel"], lower_corner=g["lower_corner"],
                upper_corner=g["upper_corner"], element_strides=g["element_strides"], swizzle=g["swizzle"],
                interleave=g["interleave"], l2_promotion=g["l2_promotion"], oob_fill=g["oob_fill"]))
            why = None
        except (ValueError, TypeError, OverflowError) as e:
            ours, why = None, str(e)
        except nanocuda.CudaError as e:  # passed nanocuda's rules, refused by the driver
            ours, why = DRIVER_REFUSED, str(e)
        rank = len(g["shape"])
        err, ref = cu.cuTensorMapEncodeIm2col(
            cu.CUtensorMapDataType(DTYPES[g["dtype"]][0]), rank, g["ptr"],
            [cu.cuuint64_t(v) for v in g["shape"][::-1]], [cu.cuuint64_t(v) for v in g["strides"][::-1][1:]],
            g["lower_corner"][::-1], g["upper_corner"][::-1], g["channels_per_pixel"], g["pixels_per_column"],
            [cu.cuuint32_t(v) for v in g["element_strides"][::-1]], cu.CUtensorMapInterleave(0),
            cu.CUtensorMapSwizzle(SWIZZLE[g["swizzle"]]), cu.CUtensorMapL2promotion(L2[g["l2_promotion"]]),
            cu.CUtensorMapFloatOOBfill(FILL[g["oob_fill"]]))
        theirs = None
        if int(err) == 0:
            theirs = bytes(ref.opaque) if not isinstance(ref.opaque, list) else b"".join(
                int(q).to_bytes(8, "little") for q in ref.opaque)
        dump.append(dict(g, ptr=g["ptr"] - base, driver=int(err),
                         nanocuda="refused by the driver" if ours is DRIVER_REFUSED else
                         ("accepted" if ours is not None else why)))
        t.add(g, ours, why, theirs, int(err))
    t.report("im2col", "im2col", n)
    both, bad = t.both, t.bad
    if os.environ.get("NANOCUDA_TMA_DUMP"):
        import json
        with open(os.environ["NANOCUDA_TMA_DUMP"], "w") as f:
            json.dump(dump, f)
    assert both > 0
    assert not bad, bad[:5]
