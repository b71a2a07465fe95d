"""hopper_gemm_plan on the CPU: the shape chooser's model, and gemm()'s cached host path on the mock."""

import pathlib
import sys

import pytest

from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)

KERNELS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "kernels"
sys.path.insert(0, str(KERNELS))
import hopper_gemm_plan as plan  # noqa: E402

sys.path.remove(str(KERNELS))
H100 = 132


def test_waves_count_persistent_rounds():
    assert plan.waves(2048, 2048, 256, 1, H100) == 1  # 16 × 8 = 128 tiles
    assert plan.waves(3072, 3072, 256, 1, H100) == 3  # 288 tiles: 2.18 waves round up
    assert plan.waves(3072, 3072, 192, 1, H100) == 3  # 384 tiles: 2.91
    assert plan.waves(3072, 3072, 192, 2, H100) == 3  # 12 pairs × 16 = 192 units on 66 pairs
    assert plan.waves(3000, 5000, 256, 1, H100) == 4  # 24 × 20 = 480
    assert plan.waves(129, 1, 128, 1, H100) == 1


@pytest.mark.parametrize("m,n,k", [(2048, 2048, 2048), (4096, 4096, 4096),
                                   (1000, 8192, 3000), (4096, 4096, 4160)])
@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_full_waves_keep_the_widest_tile(m, n, k, layout):
    bn, _ = plan.choose(m, n, k, layout, H100)
    assert bn == 256, (m, n, k, layout, bn)


@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_partial_waves_move_to_a_narrower_tile(layout):
    # issue 27's worst cell: 288 tiles of 128×256 leave the third wave 18% full
    bn, _ = plan.choose(3072, 3072, 3000, layout, H100)
    assert bn in (192, 128)
    assert plan.cost(3072, 3072, 3000, bn, 1, H100) < plan.cost(3072, 3072, 3000, 256, 1, H100)


def test_clusters_follow_the_alignment_of_b_rows():
    for m, n in ((2048, 2048), (3072, 3072), (1000, 8192)):
        assert plan.choose(m, n, 4096, "nk", H100)[1] == 1  # 8192-byte rows: no cluster
        assert plan.choose(m, n, 3000, "nk", H100)[1] == 2  # N×K B, 6000-byte rows
        assert plan.choose(m, n, 3000, "kn", H100)[1] == 1  # K×N B: its rows are N long
    assert plan.choose(3000, 5000, 2048, "kn", H100)[1] == 2  # 10000-byte rows
    assert plan.choose(3000, 5000, 2048, "nk", H100) == (192, 1)  # 648 tiles: 5 rounds of 3/4 tiles


def test_sweep_table_choices():
    # the H100 sweep's winners (NOTES-hopper-gemm.md) on issue 27's shapes
    assert plan.choose(2048, 2048, 2048, "nk", H100) == (256, 1)
    assert plan.choose(4096, 4096, 4096, "kn", H100) == (256, 1)
    assert plan.choose(8192, 8192, 8192, "nk", H100) == (192, 1)
    assert plan.choose(1000, 8192, 3000, "nk", H100) == (256, 2)
    assert plan.choose(1000, 8192, 3000, "kn", H100) == (256, 1)
    assert plan.choose(3072, 3072, 3000, "nk", H100) == (192, 2)
    assert plan.choose(3072, 3072, 3000, "kn", H100) == (192, 1)


def test_choose_depends_on_the_sm_count():
    # 3072×3072 on a 144-SM part: 288 tiles are exactly 2 waves of 128×256
    assert plan.choose(3072, 3072, 3072, "nk", 144) == (256, 1)


def test_config_rejects_bad_knobs_by_name():
    for kw, rule in (({"bn": 160}, "bn must be 128, 192 or 256"), ({"cluster": 3}, "cluster must be 1, 2 or 4"),
                     ({"b_layout": "mk"}, "b_layout must be"), ({"group_m": 7, "cluster": 2}, "multiple of cluster"),
                     ({"c_bufs": 3}, "c_bufs must be 1 or 2")):
        with pytest.raises(ValueError, match=rule):
            plan.Config(sms=H100, **kw)
    with pytest.raises(ValueError, match="dtype must be float16 or bfloat16"):
        plan.dtype_name("float32")
    with pytest.raises(ValueError, match=r"group_m \(9\) must be a multiple of cluster \(2\)"):
        plan.Config(sms=H100, cluster=2, group_m={"bfloat16": 9})  # a per-dtype grouping is checked too
    with pytest.raises(ValueError, match="defer=True needs tma_store=True"):
        plan.Config(sms=H100, defer=True)
    with pytest.raises(ValueError, match=r"l2_hints must be 0, 1 \(C evict_first\) or 2"):
        plan.Config(sms=H100, l2_hints=3)


def test_grouping_per_dtype_and_deferred_epilogue_knobs():
    g = plan.Config(192, cluster=2, tma_store=True, sms=H100, group_m={"bfloat16": 24}, defer=True)
    assert g.groups == {"float16": 8, "bfloat16": 24}  # a dtype left out keeps 8
    assert g.defines["GEMM_GROUP_M"] == 8 and "defer=True" in repr(g) and "group_m={'bfloat16': 24}" in repr(g)
    assert plan.Config(sms=H100, group_m=16).groups == {"float16": 16, "bfloat16": 16}
    assert "defer" not in repr(plan.Config(sms=H100, tma_store=True))
    h = plan.Config(sms=H100, tma_store=True, l2_hints=2)
    assert h.defines["GEMM_L2_HINTS"] == 2 and repr(h).endswith("l2_hints=2)")


def test_shared_memory_fits_every_sweep_configuration():
    # H100: 227 KB of dynamic shared memory a block; one C buffer a consumer makes room for 5 stages at BN = 192
    limit = 227 * 1024
    for bn, cluster in plan.CANDIDATES:
        assert plan.Config(bn, cluster=cluster, tma_store=True, sms=H100).smem(True) <= limit
    for kw in plan.SWEEP_EXTRAS.values():
        assert plan.Config(sms=H100, **kw).smem(True) <= limit, kw
    five = plan.Config(192, 5, cluster=2, tma_store=True, sms=H100, c_bufs=1)
    assert five.smem(True) == 5 * (128 + 192) * 64 * 2 + 2 * 8192 + 1280
    assert five.defines["GEMM_C_BUFS"] == 1 and "c_bufs=1" in repr(five)
    assert plan.Config(192, 5, cluster=2, tma_store=True, sms=H100).smem(True) > limit  # two buffers: no


HOST_PATH = """
import os, sys
sys.path.insert(0, {kernels!r})
import nanocuda
import hopper_gemm_plan as plan

calls = []
bound = plan.Config.bound
def counting(self, dtype, tma, grid):  # each launch the plans make, through the real Launcher
    launcher = bound(self, dtype, tma, grid)
    def launch(*args, stream):
        calls.append(grid)
        launcher(*args, stream=stream)
    return launch
plan.Config.bound = counting
def launches():
    return len(calls)

plans = plan.Plans()
plans.sms = 132
stream = nanocuda.Stream.legacy(nanocuda.Device(0))
# the mock reads each kernel's parameter sizes from here when it is first bound
os.environ["NANOCUDA_MOCK_PARAMS"] = "128,128,128,4,4,4"  # maps of A, B, C; M, N, K
A, B, C = 0x7f0000000000, 0x7f0010000000, 0x7f0020000000
m, n, k = 3072, 3072, 3000
for dtype in ("float16", "bfloat16"):
    plans.launch("nk", dtype, m, n, k, A, B, C, stream)
assert launches() == 2, launches()
assert len(plans.prepared) == 2
first = plans.prepared[("nk", "float16", m, n, k, A, B, C)]
plans.launch("nk", "float16", m, n, k, A, B, C, stream)  # the same call again: the same plan
assert plans.prepared[("nk", "float16", m, n, k, A, B, C)] is first and len(plans.prepared) == 2
assert launches() == 3
launcher, args = first
a_map, b_map, c_map = args[:3]
assert args[3:] == (m, n, k)
assert a_map.address == A and b_map.address == B and c_map.address == C  # TMA stores: n % 8 == 0
bn, cluster = plan.choose(m, n, k, "nk", 132)
assert (bn, cluster) == (192, 2)
g = plans.config("nk", m, n, k)
assert g.defines["GEMM_GROUP_M"] == 16 and g.groups == {{"float16": 16, "bfloat16": 24}}  # GROUP_M(_DTYPE)
assert "group_m={{'float16': 16, 'bfloat16': 24}}" in repr(g)
assert plans.config("kn", 3000, 5000, 2048).groups == {{"float16": 16, "bfloat16": 16}}  # 192 c2, A·B: 16
assert plans.config("kn", 2048, 2048, 2048).defines["GEMM_GROUP_M"] == 8
# what each compiled module got (nanocuda.load's defines), per dtype and epilogue
loads = []
real_load = nanocuda.load
nanocuda.load = lambda path, **kw: loads.append(kw["defines"]) or real_load(path, **kw)
saved = dict(plan.GROUP_M_DTYPE)
plan.GROUP_M_DTYPE[("nk", 192, 2, "bfloat16")] = 20
plan.DEFER.add((192, 2))
other = plan.Plans()
other.sms = 132
other.launch("nk", "bfloat16", m, n, k, A, B, C, stream)
other.launch("nk", "float16", m, n, k, A, B, C, stream)
os.environ["NANOCUDA_MOCK_PARAMS"] = "128,128,8,4,4,4"
other.launch("nk", "float16", m, n, k, A, B, C + 2, stream)  # C's start not TMA's: register stores
os.environ["NANOCUDA_MOCK_PARAMS"] = "128,128,128,4,4,4"
nanocuda.load = real_load
plan.GROUP_M_DTYPE.clear()
plan.GROUP_M_DTYPE.update(saved)
plan.DEFER.clear()
assert [(d["GEMM_GROUP_M"], d.get("GEMM_DEFER_EPILOGUE"), d["GEMM_TMA_STORE"]) for d in loads] == \
    [(20, 1, 1), (16, 1, 1), (16, None, 0)], loads
assert plans.config("nk", m, n, k).defer is False  # the first Plans built its configuration before
assert tuple(b_map.geometry["box"]) == (bn // cluster, 64), b_map.geometry  # N×K B: rows, 64 K
assert tuple(a_map.geometry["shape"]) == (m, k) and tuple(c_map.geometry["box"]) == (64, 64)
assert launcher is not None and calls[0] == min(-(-m // 128) * -(-n // bn), 132 // cluster * cluster)
# an output whose pitch TMA cannot store (n % 8 != 0): its pointer goes to the kernel
os.environ["NANOCUDA_MOCK_PARAMS"] = "128,128,8,4,4,4"
plans.launch("nk", "float16", 300, 130, 64, A, B, C + 2, stream)
assert plans.prepared[("nk", "float16", 300, 130, 64, A, B, C + 2)][1][2] == C + 2
# a K×N B: boxes of 64 columns
os.environ["NANOCUDA_MOCK_PARAMS"] = "128,128,128,4,4,4"
plans.launch("kn", "bfloat16", 2048, 2048, 2048, A, B, C, stream)
kn_map = plans.prepared[("kn", "bfloat16", 2048, 2048, 2048, A, B, C)][1][1]
assert kn_map.address == B
# bounded: a full table is cleared, not grown
plans.LIMIT = 4
for i in range(6):
    plans.launch("nk", "float16", 256, 256, 64, A, B, C + 4096 * i, stream)
assert len(plans.prepared) <= 4
assert launches() == 14, launches()  # 11 here, 3 in the GROUP_M_DTYPE / DEFER check
# configurations are shared by shapes that choose the same one
assert len(plans.configs) <= len(plan.CANDIDATES) * 2
print("ok")
"""


def test_host_path_caches_one_launch_per_call(mock_libcuda):
    run_on_mock(mock_libcuda, HOST_PATH.format(kernels=str(KERNELS)), version="13.0", NANOCUDA_MOCK_CC="9.0",
                NANOCUDA_MOCK_POINTER="device")


def test_event_burst_runs_its_before_hook_outside_the_events():
    # gemm_shapes' queued bursts: the GPU sleep goes first, then the timed burst (a fake torch records the order)
    from nanocuda.bench.gemm_shapes import queued_burst
    from nanocuda.bench.kernels import event_burst

    order = []

    class FakeEvent:
        def __init__(self, enable_timing):
            self.name = "start" if not order.count("made") else "end"
            order.append("made")

        def record(self):
            order.append(self.name)

        def synchronize(self):
            order.append("sync")

        def elapsed_time(self, other):
            return 0.25  # ms

    class Cuda:
        Event = FakeEvent

        @staticmethod
        def _sleep(cycles):
            order.append(f"sleep {cycles}")

    class Torch:
        cuda = Cuda

    assert event_burst(Torch, lambda: order.append("call"), 2)() == 250_000
    del order[:]
    assert queued_burst(Torch, lambda: order.append("call"), 2)() == 250_000
    assert order[2:] == ["sleep 4000000", "start", "call", "call", "end", "sync"], order
