"""`nanocuda bench kernels`: each example kernel's GPU time against its torch equivalent.

Method (at most MAX_ROUNDS rounds): a sample is the mean of a burst of back-to-back launches between two CUDA events on
torch's current stream (launches through the workflow's bound form, `mod.kernel[grid,
block](...)`); nanocuda and torch alternate in a shuffled order every round, and the table
gives medians over the rounds, the rate (GB/s for the elementwise kernels, TFLOP/s for the
matmuls) and the speed relative to torch: torch time / nanocuda time (above 1: faster). The
GEMM rows (hopper_gemm_fast.cu, against cuBLAS through torch.matmul; c = a·bᵀ and, labelled
"A·B", c = a·b with b stored K×N) need an sm_90 device.
"""

from __future__ import annotations

from ..workflow import example_path
from . import stats
from .registry import Subcommand, register
from .runner import Run, Workload

MAX_REPEATS = 20  # launches per sample: enough to hide event overhead, few for slow kernels
MAX_ROUNDS = 40  # the 8192³ GEMMs take ~30 ms a sample: 40 rounds keep the run near a minute
GEMM_SIZES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4000, 3000, 5000),
              (8192, 1000, 3000)]


def event_burst(torch, fn, repeats: int, before=None):
    """A burst of `repeats` calls of fn, timed with CUDA events; returns nanoseconds. `before`
    (optional) is called first, outside the events: e.g. a GPU sleep the burst queues behind."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run() -> int:
        if before is not None:
            before()
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        end.synchronize()
        return int(start.elapsed_time(end) * 1e6)

    return run


def fast_gemm(nanocuda, torch, b_layout: str = "nk"):
    """hopper_gemm_fast.cu as examples/kernels/run_hopper_gemm_fast.py's gemm()/matmul() run it
    (the configuration its chooser picks per shape; that file is installed beside the .cu): prepare(a, b, c) ->
    launch. b_layout "nk": b is N×K and c = a·bᵀ; "kn": b is K×N and c = a·b."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_nanocuda_hopper_gemm",
                                                  example_path("run_hopper_gemm_fast.py"))
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)

    def prepare(a, b, c):
        return runner.default_gemm(b_layout, a, b).prepare(a, b, c)[0]

    return prepare


def pairs(torch, nanocuda, quick: bool = False):
    """(label, work, unit, nanocuda call, torch call) per example, on fresh random inputs."""
    skipped: list[str] = []
    out = []
    dev = "cuda"
    sms = nanocuda.Device(0).multiprocessor_count

    n = 512 * 32768  # the overview's SAXPY size
    x, y, o = torch.rand(n, device=dev), torch.rand(n, device=dev), torch.empty(n, device=dev)
    blocks = min((n // 4 + 255) // 256, sms * 32)  # one float4 per thread, grid-stride beyond
    saxpy = nanocuda.load(example_path("saxpy.cu")).saxpy[blocks, 256]
    out.append((f"saxpy, {n} floats", 12.0 * n, "GB/s", lambda: saxpy(2.0, x, y, o, n),
                lambda: torch.add(y, x, alpha=2.0, out=o)))
    sq = nanocuda.load(example_path("square.cu")).square[blocks, 256]
    out.append((f"square, {n} floats", 8.0 * n, "GB/s", lambda: sq(x, o, n),
                lambda: torch.mul(x, x, out=o)))

    m = 1024
    a, b, c = (torch.randn(m, m, device=dev) for _ in range(3))
    mm = nanocuda.load(example_path("matmul.cu"))
    grid = ((m + 15) // 16, (m + 15) // 16)
    for kind in ("naive", "tiled"):
        f = getattr(mm, f"matmul_{kind}")[grid, (16, 16)]
        out.append((f"matmul_{kind} (teaching), fp32 {m}³", 2.0 * m ** 3, "TFLOP/s",
                    lambda f=f: f(a, b, c, m, m, m), lambda: torch.matmul(a, b, out=c)))

    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) == (9, 0):
        sizes = GEMM_SIZES[:2] if quick else GEMM_SIZES
        for b_layout, op in (("nk", ""), ("kn", " A·B")):  # c = a·bᵀ (b N×K), c = a·b (b K×N)
            prepare = fast_gemm(nanocuda, torch, b_layout)
            for dtype in (torch.float16, torch.bfloat16):
                for gm, gn, gk in sizes:
                    a16 = torch.randn(gm, gk, device=dev, dtype=dtype)
                    b16 = torch.randn(*((gk, gn) if b_layout == "kn" else (gn, gk)), device=dev, dtype=dtype)
                    c16 = torch.empty(gm, gn, device=dev, dtype=dtype)
                    ours = prepare(a16, b16, c16)
                    bt = b16 if b_layout == "kn" else b16.T  # what torch multiplies a16 by
                    ref = a16.float() @ bt.float()
                    ours()
                    err = ((c16.float() - ref).norm() / ref.norm()).item()
                    del ref
                    label = f"hopper_gemm_fast{op}, {str(dtype)[6:]} {gm}x{gn}x{gk}"
                    if not err < 1e-2:
                        skipped.append(f"{label}: wrong result (relative error {err:.2e})")
                        continue
                    out.append((label, 2.0 * gm * gn * gk, "TFLOP/s", ours,
                                lambda a16=a16, bt=bt, c16=c16: torch.matmul(a16, bt, out=c16)))
    else:
        skipped.append(f"hopper_gemm_fast (sm_90a kernel; device 0 is sm_{major}{minor})")
    return out, skipped


def print_rates(title: str, rows: list[dict]) -> None:
    """One line per kernel: medians, rates, and speed relative to torch."""
    print(f"\n{title}")
    w = max([44, *(len(r["label"]) for r in rows)])
    head = (f"  {'kernel':<{w}} {'torch µs':>9} {'ours µs':>9} {'torch rate':>11} {'our rate':>10} "
            f"{'unit':>8} {'× torch':>8} {'p10–p90':>12}")
    print(head)
    print("  " + "-" * (len(head) - 2))
    for r in rows:
        print(f"  {r['label']:<{w}} {r['torch_us']:>9.1f} {r['ours_us']:>9.1f} {r['torch_rate']:>11.1f} "
              f"{r['our_rate']:>10.1f} {r['unit']:>8} {r['speed']:>8.3f} {r['spread']:>12}")


class Kernels(Subcommand):
    name = "kernels"
    help = "each example kernel's GPU time vs its torch equivalent (template)"
    needs = ("torch",)

    def measure(self, run: Run) -> dict:
        """The rate table; the JSON has every sample's "rows" and the printed "rates"."""
        import torch

        import nanocuda

        repeats = max(1, min(run.burst, MAX_REPEATS))
        rounds = min(run.rounds, MAX_ROUNDS)
        examples, skipped = pairs(torch, nanocuda, quick=rounds < 10)  # --quick: 5 rounds
        run.skipped += skipped
        workloads = []
        for label, _, _, ours, theirs in examples:
            base = f"torch: {label}"
            workloads.append(Workload(base, event_burst(torch, theirs, repeats)))
            workloads.append(Workload(f"nanocuda: {label}", event_burst(torch, ours, repeats), base))
        rows = run.measure(workloads, torch.cuda.synchronize, rounds=rounds, per_sample=repeats)
        by_name = {r["name"]: r for r in rows}
        rates = []
        for label, work, unit, _, _ in examples:
            t, o = by_name[f"torch: {label}"], by_name[f"nanocuda: {label}"]
            scale = 1e-3 if unit == "GB/s" else 1e-6  # work per µs -> GB/s or TFLOP/s
            p10, p90 = stats.spread(stats.round_ratios(t["samples_us"], o["samples_us"]))
            rates.append(dict(label=label, unit=unit, torch_us=t["median_us"], ours_us=o["median_us"],
                              torch_rate=work / t["median_us"] * scale, our_rate=work / o["median_us"] * scale,
                              speed=t["median_us"] / o["median_us"], spread=f"{p10:.2f}–{p90:.2f}"))
        print_rates(f"Example kernels vs torch (cuBLAS for GEMMs): GPU time per launch, median of {rounds} "
                    f"interleaved rounds of {repeats} launches; × torch = torch time / ours", rates)
        return run.result(rows, rates=rates, repeats=repeats, rounds=rounds)


run = register(Kernels())
