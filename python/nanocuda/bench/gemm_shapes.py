"""`nanocuda bench gemm_shapes`: issue 27's GEMM sweep, hopper_gemm_fast's gemm()/matmul() vs cuBLAS.

Protocol (issue 27): 3 s of 8192² matmuls bring the GPU to its clocks; then per cell (fp16 and
bf16, C = A·Bᵀ with B N×K and C = A·B with B K×N, each SHAPES M×N×K) interleaved rounds in a
shuffled order, each sample a burst of calls between two CUDA events on torch's stream, medians
over the rounds. Rows per cell: `gemm()` / `matmul()` called as a user calls them (output
allocated per call: its host cost is in the burst), the prepared launch of the configuration
gemm() chose (output given, nothing but the launch), and cuBLAS through torch.matmul (output
allocated per call, as gemm()). × cuBLAS = cuBLAS time / ours. Error: relative Frobenius
error of gemm()'s result against an fp32 product. `--sweep` adds every candidate configuration
(hopper_gemm_plan.CANDIDATES) as a prepared launch, the table the chooser is set from.
"""

from __future__ import annotations

import importlib.util
import os
import time

from ..workflow import example_path
from .kernels import event_burst
from .registry import Subcommand, register
from .runner import Run, Workload

SHAPES = [(2048, 2048, 2048), (3072, 3072, 3000), (4096, 4096, 4096), (4096, 4096, 4160),
          (3000, 5000, 2048), (8192, 8192, 8192), (1000, 8192, 3000)]
MAX_ROUNDS = 15
# Narrower runs (scripts/gemm-sweep's diagnostics): NANOCUDA_GEMM_CELLS="nk:3072x3072x3000,..."
# keeps only those layout:shape cells; NANOCUDA_GEMM_GAP=1 adds rows that split gemm()'s time
# from its prepared launch's (fixed output, allocation only, another output buffer, cuBLAS into
# the fixed output) and prints each path's host time per call.
CELLS = {c.strip() for c in os.environ.get("NANOCUDA_GEMM_CELLS", "").split(",") if c.strip()}
# NANOCUDA_GEMM_VARIANTS="bn192_c2,bn192_c2_df,..." keeps only those sweep configurations (exact names).
VARIANTS = {v.strip() for v in os.environ.get("NANOCUDA_GEMM_VARIANTS", "").split(",") if v.strip()}
GAP = os.environ.get("NANOCUDA_GEMM_GAP", "") == "1"
WARM_SECONDS = 3.0


def load_example():
    """examples/kernels/run_hopper_gemm_fast.py (installed beside the .cu, or the checkout's)."""
    spec = importlib.util.spec_from_file_location("_nanocuda_hopper_gemm_shapes",
                                                  example_path("run_hopper_gemm_fast.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warm_up(torch) -> None:
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < WARM_SECONDS:
        for _ in range(10):
            x @ x
        torch.cuda.synchronize()


def candidate_launches(ex, layout, a, b, c):
    """name -> prepared launch of every candidate configuration as the chooser builds it
    (hopper_gemm_plan.CANDIDATES with GROUP_M, GROUP_M_DTYPE and DEFER, TMA stores) and of the
    extra ones the sweep tries (SWEEP_EXTRAS)."""
    def group(bn, cluster):
        g = ex.GROUP_M.get((bn, cluster), 8)
        return {name: ex.GROUP_M_DTYPE.get((layout, bn, cluster, name), g) for name in ("float16", "bfloat16")}

    configs = {f"bn{bn}_c{cluster}": {"bn": bn, "cluster": cluster, "tma_store": True, "group_m": group(bn, cluster),
                                      "defer": (bn, cluster) in ex.DEFER} for bn, cluster in ex.CANDIDATES}
    out = {}
    # variants a smoke run found hanging or failing (scripts/gemm-sweep): left out, prefix match
    skip = [v for v in os.environ.get("NANOCUDA_GEMM_SKIP_VARIANTS", "").split(",") if v]
    for name, kw in {**configs, **ex.SWEEP_EXTRAS}.items():
        if any(name.startswith(v) for v in skip) or (VARIANTS and name not in VARIANTS):
            continue
        g = _configs.get((layout, name))
        if g is None:
            g = _configs[(layout, name)] = ex.HopperGemm(b_layout=layout, **kw)
        out[name] = g.prepare(a, b, c)[0]
    return out


_configs: dict[tuple[str, str], object] = {}  # (layout, name) -> HopperGemm: compiled once a run


def cell(torch, ex, run: Run, layout: str, dtype, m: int, n: int, k: int, rounds: int, sweep: bool):
    """One cell's rows, the chosen configuration and the relative error."""
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(*((k, n) if layout == "kn" else (n, k)), device="cuda", dtype=dtype)
    bt = b if layout == "kn" else b.T
    f = ex.matmul if layout == "kn" else ex.gemm
    got = f(a, b)
    ref = torch.matmul(a.float(), bt.float())
    err = ((got.float() - ref).norm() / ref.norm()).item()
    del ref, got
    chosen = ex.default_gemm(layout, a, b)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    paths = {"gemm()": lambda: f(a, b), "prepared": chosen.prepare(a, b, c)[0],
             "cuBLAS": lambda: torch.matmul(a, bt)}
    if sweep:
        paths.update(candidate_launches(ex, layout, a, b, c))
    if GAP:  # where gemm()'s time goes beside its prepared launch's: the output, or the host path
        c2 = torch.empty(m, n, device="cuda", dtype=dtype)
        prep, prep2 = paths["prepared"], chosen.prepare(a, b, c2)[0]
        paths.update({"gemm(out=c)": lambda: f(a, b, c),
                      "empty+prep": lambda: (torch.empty(m, n, device="cuda", dtype=dtype), prep()),
                      "new_empty+prep": lambda: (a.new_empty((m, n)), prep()),
                      "prep+empty": lambda: (prep(), a.new_empty((m, n))),  # allocated after the launch
                      "prep(c2)": prep2, "cuBLAS(out=c)": lambda: torch.matmul(a, bt, out=c)})
        print(f"GAP co-resident clusters {str(dtype)[6:]} {layout}: " + "  ".join(
            f"c{cl} {ex.HopperGemm(bn=192, cluster=cl, tma_store=True, b_layout=layout).max_clusters(dtype, True)}"
            for cl in (2, 4)))
        host_us, first_us = {}, {}
        for name in ("gemm()", "gemm(out=c)", "prepared", "empty+prep", "new_empty+prep", "prep+empty"):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):  # queued, not waited for: the host's time per call
                paths[name]()
            host_us[name] = (time.perf_counter() - t0) / 20 * 1e6
            firsts = []
            for _ in range(20):  # a burst's first call: right after a synchronize, as in event_burst
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                paths[name]()
                firsts.append((time.perf_counter() - t0) * 1e6)
            first_us[name] = sorted(firsts)[len(firsts) // 2]
            torch.cuda.synchronize()
        print(f"GAP host µs/call {str(dtype)[6:]} {layout} {m}x{n}x{k}: " +
              "  ".join(f"{k_} {v:.1f}" for k_, v in host_us.items()))
        print(f"GAP first call after a sync, host µs (median of 20) {str(dtype)[6:]} {layout} {m}x{n}x{k}: " +
              "  ".join(f"{k_} {v:.1f}" for k_, v in first_us.items()))
    repeats = max(3, min(50, int(2e12 / (2.0 * m * n * k))))
    workloads = [Workload(name, event_burst(torch, fn, repeats), None if name == "cuBLAS" else "cuBLAS")
                 for name, fn in paths.items()]
    if GAP:  # the same bursts queued behind a GPU sleep: GPU time alone, no host time in it
        workloads += [Workload(f"{name} queued", queued_burst(torch, paths[name], repeats), "cuBLAS")
                      for name in ("gemm()", "prepared", "cuBLAS")]
    label = f"{str(dtype)[6:]} {layout} {m}x{n}x{k}"
    rows = run.measure(workloads, torch.cuda.synchronize, rounds=rounds, per_sample=repeats, label=label)
    for r in rows:
        r["cell"] = label
    return rows, repr(chosen), err


def queued_burst(torch, fn, repeats: int):
    """event_burst with the calls queued behind ~2 ms of torch.cuda._sleep: the events time the
    GPU's work alone (the host has issued every call before the GPU reaches the first)."""
    return event_burst(torch, fn, repeats, before=lambda: torch.cuda._sleep(4_000_000))


class GemmShapes(Subcommand):
    name = "gemm_shapes"
    help = "issue 27's GEMM sweep: gemm()/matmul() per shape vs cuBLAS (--sweep: every candidate)"
    needs = ("torch",)

    def measure(self, run: Run) -> dict:
        import torch

        import nanocuda

        major, minor = nanocuda.Device(0).compute_capability
        if (major, minor) != (9, 0):
            run.skip("gemm_shapes: hopper_gemm_fast.cu is an sm_90a kernel")
            return run.result([])
        ex = load_example()
        sweep = bool(run.option("sweep", False))
        rounds = min(run.rounds, MAX_ROUNDS)
        shapes = SHAPES[:2] if rounds < 10 else SHAPES
        warm_up(torch)
        rows, cells = [], []
        for dtype in (torch.float16, torch.bfloat16):
            for layout in ("nk", "kn"):
                for m, n, k in shapes:
                    if CELLS and f"{layout}:{m}x{n}x{k}" not in CELLS:
                        continue
                    cell_rows, chosen, err = cell(torch, ex, run, layout, dtype, m, n, k, rounds, sweep)
                    rows += cell_rows
                    med = {r["name"]: r["median_us"] for r in cell_rows}
                    cells.append(dict(cell=cell_rows[0]["cell"], chosen=chosen, err=err, medians=med))
        print_cells(cells, rounds, sweep)
        return run.result(rows, cells=cells, rounds=rounds)


def print_cells(cells: list[dict], rounds: int, sweep: bool) -> None:
    print(f"\nHopper GEMM vs cuBLAS (torch.matmul): µs per call, median of {rounds} interleaved rounds "
          "of event-timed bursts; × = cuBLAS time / ours; err = rel. error vs fp32")
    head = (f"  {'cell':<26}{'gemm() µs':>10}{'prep µs':>9}{'cuBLAS µs':>10}{'× gemm()':>9}{'× prep':>8}"
            f"{'err':>9}  chosen")
    print(head)
    print("  " + "-" * (len(head) + 40))
    for c in cells:
        md = c["medians"]
        base = md["cuBLAS"]
        print(f"  {c['cell']:<26}{md['gemm()']:>10.1f}{md['prepared']:>9.1f}{base:>10.1f}"
              f"{base / md['gemm()']:>9.3f}{base / md['prepared']:>8.3f}{c['err']:>9.1e}  {c['chosen']}")
    if GAP:
        print("\n  gemm() beside its prepared launch: µs per call (medians)")
        for c in cells:
            md = c["medians"]
            print(f"  GAP {c['cell']:<26}" + "  ".join(
                f"{k} {md[k]:.1f}" for k in ("gemm()", "gemm(out=c)", "empty+prep", "new_empty+prep", "prep+empty",
                                             "prepared",
                                             "prep(c2)", "cuBLAS", "cuBLAS(out=c)", "gemm() queued",
                                             "prepared queued", "cuBLAS queued") if k in md))
    if sweep:
        print("\n  every candidate (prepared launch), × cuBLAS; * = fastest")
        for c in cells:
            md = c["medians"]
            cands = {k: v for k, v in md.items() if k.startswith("bn")}  # candidates and extras
            best = min(cands, key=cands.get) if cands else None
            print(f"  SWEEP {c['cell']:<26}" + "  ".join(
                f"{k}{'*' if k == best else ' '} {md['cuBLAS'] / v:.3f}" for k, v in cands.items()))


run = register(GemmShapes())
