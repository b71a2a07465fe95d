"""`nanocuda bench kernels`: each example kernel's GPU time against its torch equivalent.

Method: a sample is the mean of `min(burst, 20)` back-to-back launches between two CUDA
events on torch's current stream (launches through the workflow's bound form,
`mod.kernel[grid, block](...)`); nanocuda and torch alternate round by round, and the
reported ratio is nanocuda / torch on min and median (below 1: the example is faster).
Needs torch; the Hopper GEMM rows need an sm_90 device.
"""

from __future__ import annotations

from ..workflow import example_path
from .harness import Variant, print_table, run_interleaved, summarize

MAX_REPEATS = 20  # launches per sample: enough to hide event overhead, few for slow kernels


def event_burst(torch, fn, repeats: int):
    """A burst of `repeats` calls of fn, timed with CUDA events; returns nanoseconds."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def run() -> int:
        start.record()
        for _ in range(repeats):
            fn()
        end.record()
        end.synchronize()
        return int(start.elapsed_time(end) * 1e6)

    return run


def pairs(torch, nanocuda) -> tuple[list[tuple[str, object, object]], list[str]]:
    """(label, nanocuda call, torch call) per example, on fresh random inputs."""
    skipped: list[str] = []
    out = []
    dev = "cuda"

    n = 512 * 32768  # the overview's SAXPY size
    x, y, o = torch.rand(n, device=dev), torch.rand(n, device=dev), torch.empty(n, device=dev)
    saxpy = nanocuda.load(example_path("saxpy.cu")).saxpy[(n + 511) // 512, 512]
    out.append((f"saxpy, {n} floats", lambda: saxpy(2.0, x, y, o, n),
                lambda: torch.add(y, x, alpha=2.0, out=o)))

    sq = nanocuda.load(example_path("square.cu")).square[(n + 255) // 256, 256]
    out.append((f"square, {n} floats", lambda: sq(x, o, n), lambda: torch.mul(x, x, out=o)))

    m = 1024
    a, b, c = (torch.randn(m, m, device=dev) for _ in range(3))
    mm = nanocuda.load(example_path("matmul.cu"))
    grid = ((m + 15) // 16, (m + 15) // 16)
    for kind in ("naive", "tiled"):
        f = getattr(mm, f"matmul_{kind}")[grid, (16, 16)]
        out.append((f"matmul_{kind}, fp32 {m}³", lambda f=f: f(a, b, c, m, m, m),
                    lambda: torch.matmul(a, b, out=c)))

    major, minor = nanocuda.Device(0).compute_capability
    if (major, minor) == (9, 0):
        gm = nanocuda.load(example_path("hopper_gemm.cu"), arch="sm_90a")
        for s in (512, 2048):
            a16, b16, c16 = (torch.randn(s, s, device=dev, dtype=torch.float16) for _ in range(3))
            maps = [nanocuda.TensorMap.tiled(t, (64, 64), swizzle="none") for t in (a16, b16, c16)]
            f = gm.hopper_gemm[((s + 63) // 64, (s + 63) // 64), 128]
            bt = b16.T
            out.append((f"hopper_gemm, fp16 {s}³ (A·Bᵀ)", lambda f=f, m=maps, s=s: f(*m, s),
                        lambda a16=a16, bt=bt, c16=c16: torch.matmul(a16, bt, out=c16)))
    else:
        skipped.append(f"hopper_gemm (sm_90a kernel; device 0 is sm_{major}{minor})")
    return out, skipped


def run(rounds: int, burst: int) -> dict:
    """Runs the comparison; returns {"rows": [...], "skipped": [...]} and prints the table."""
    try:
        import torch
    except ImportError:
        print("\n  skipped: bench kernels needs torch (not installed)")
        return {"rows": [], "skipped": ["bench kernels needs torch (not installed)"]}
    import nanocuda

    repeats = max(1, min(burst, MAX_REPEATS))
    examples, skipped = pairs(torch, nanocuda)
    variants = []
    for label, ours, theirs in examples:
        base = f"torch: {label}"
        variants.append(Variant(base, event_burst(torch, theirs, repeats)))
        variants.append(Variant(f"nanocuda: {label}", event_burst(torch, ours, repeats), baseline=base))
    run_interleaved(variants, rounds, repeats, torch.cuda.synchronize, "bench kernels")
    rows = summarize(variants)
    print_table(f"Example kernels vs torch, GPU time per launch (µs), mean of {repeats} launches, "
                f"{rounds} rounds", rows, baseline_label="torch")
    for s in skipped:
        print(f"  skipped: {s}")
    return {"rows": rows, "skipped": skipped, "repeats": repeats, "rounds": rounds}
