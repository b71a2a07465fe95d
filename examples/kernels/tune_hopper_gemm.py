"""Checks and times hopper_gemm_fast.cu's variants against torch.matmul (cuBLAS) on one GPU.

    python examples/kernels/tune_hopper_gemm.py OUT_DIR [--quick] [--variants base,cluster2,...]
    python examples/kernels/tune_hopper_gemm.py --smoke   # each variant once; prints SMOKE_OK lines
Variants (run_hopper_gemm_fast.VARIANTS) for both B layouts: C = A·Bᵀ (B N×K, "nk") and C = A·B
(B K×N, "kn"). Each is compiled (cold compile times reported), checked on the timing shapes
against an fp32 torch product (a wrong variant is reported and left out of the timing), then
timed interleaved: each sample is a burst of launches between CUDA events, variants in a
shuffled order every round, median over rounds; × cuBLAS = torch time / ours (same layout).
Full numbers go to OUT_DIR/gemm.json; the table is printed last.
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_hopper_gemm_fast import VARIANTS, HopperGemm  # noqa: E402

DTYPES = (torch.float16, torch.bfloat16)
LAYOUTS = ("nk", "kn")
parser = argparse.ArgumentParser(description="hopper_gemm_fast.cu variants against torch.matmul")
parser.add_argument("out_dir", nargs="?", default="gemm-results")
parser.add_argument("--quick", action="store_true", help="8 rounds instead of 15")
parser.add_argument("--smoke", action="store_true", help="run each variant once and exit")
parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated VARIANTS names")
opts = parser.parse_args()
chosen = [v for v in opts.variants.split(",") if v]
unknown = set(chosen) - set(VARIANTS)
if unknown:
    parser.error(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")

if opts.smoke:
    # One multi-tile launch per variant and layout, each line printed as soon as it is done, so
    # a caller running this under `timeout` learns which variant hangs (scripts/gemm-gpu).
    m, n, k = 2350, 2056, 136
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    for name in chosen:
        for layout in LAYOUTS:
            print(f"SMOKE_START {name} {layout}", flush=True)
            b = torch.randn(*((k, n) if layout == "kn" else (n, k)), device="cuda", dtype=torch.float16)
            try:
                c = HopperGemm(b_layout=layout, **VARIANTS[name])(a, b)
                torch.cuda.synchronize()
            except Exception as e:  # a launch or compile error: report it, try the others
                print(f"SMOKE_FAILED {name} {layout}: {e}", flush=True)
                continue
            ref = torch.matmul(a.float(), b.float() if layout == "kn" else b.float().T)
            err = ((c.float() - ref).norm() / ref.norm()).item()
            print(f"SMOKE_{'OK' if err < 2e-3 else 'WRONG'} {name} {layout} rel err {err:.1e}", flush=True)
    sys.exit(0)

out_dir, quick = opts.out_dir, opts.quick
os.makedirs(out_dir, exist_ok=True)
log = open(os.path.join(out_dir, "gemm.log"), "w")


def say(*a):
    print(*a, flush=True)
    print(*a, file=log, flush=True)


say(torch.cuda.get_device_name(0))
configs = {}  # (variant, layout) -> HopperGemm
for layout in LAYOUTS:
    for name, kw in VARIANTS.items():
        if name not in chosen:
            continue
        try:
            g = HopperGemm(b_layout=layout, **kw)
            for dtype in DTYPES:
                t0 = time.perf_counter()
                g.kernel(dtype)
                say(f"compile {name} {layout} {str(dtype)[6:]} (one dtype per module; cache as found): "
                    f"{time.perf_counter() - t0:.2f} s")
        except Exception as e:  # one broken variant must not cost the run
            say(f"compile {name} {layout} FAILED: {e}")
            continue
        configs[(name, layout)] = g

# M×N×K: issue 27's sweep (wave quantization on 132 SMs makes 3072² and 3000×5000 the hard ones)
sizes = [(2048, 2048, 2048), (3072, 3072, 3000), (4096, 4096, 4096), (4096, 4096, 4160),
         (3000, 5000, 2048), (8192, 8192, 8192), (1000, 8192, 3000)]
rounds = 8 if quick else 15
results, wrong = [], []
for m, n, k in sizes:
    for dtype in DTYPES:
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        c = torch.empty(m, n, device="cuda", dtype=dtype)
        for layout in LAYOUTS:
            b = torch.randn(*((k, n) if layout == "kn" else (n, k)), device="cuda", dtype=dtype)
            bt = b if layout == "kn" else b.T  # torch.matmul(a, bt) is the product we compute
            ref = torch.matmul(a.float(), bt.float())
            variants = {"torch": lambda a=a, bt=bt: torch.matmul(a, bt, out=c)}
            for (name, lay), g in configs.items():
                if lay != layout:
                    continue
                try:
                    f = g.prepare(a, b, out=c)[0]
                    c.fill_(float("nan"))
                    f()
                    torch.cuda.synchronize()
                    err = ((c.float() - ref).norm() / ref.norm()).item()
                except Exception as e:
                    err, f = float("inf"), None
                    say(f"  {name} {layout} {m}x{n}x{k}: FAILED: {e}")
                if not err < (2e-3 if dtype == torch.float16 else 1e-2):
                    wrong.append(f"{name} {layout} {str(dtype)[6:]} {m}x{n}x{k}: rel err {err:.2e}")
                    continue
                variants[name] = f
            if k % 64 and layout == "nk" and ("base", "nk") in configs:
                # Odd K: is the row pitch (not a multiple of 128 bytes) what slows TMA?
                kp = -(-k // 64) * 64
                ap, bp = torch.nn.functional.pad(a, (0, kp - k)), torch.nn.functional.pad(b, (0, kp - k))
                variants["base_Kpad"] = configs[("base", "nk")].prepare(ap, bp, out=c)[0]  # pad excluded
            del ref
            flops = 2.0 * m * n * k
            reps = max(3, min(50, int(2e12 / flops)))
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
            samples = {v: [] for v in variants}
            for f in variants.values():
                f()
            torch.cuda.synchronize()
            order = list(variants)
            rng = random.Random(1)
            for _ in range(rounds):
                rng.shuffle(order)
                for v in order:
                    ev[0].record()
                    for _ in range(reps):
                        variants[v]()
                    ev[1].record()
                    ev[1].synchronize()
                    samples[v].append(ev[0].elapsed_time(ev[1]) * 1e3 / reps)
            base = statistics.median(samples["torch"])
            for v, s in samples.items():
                med = statistics.median(s)
                results.append(dict(size=f"{m}x{n}x{k}", dtype=str(dtype)[6:], layout=layout, variant=v,
                                    median_us=med, min_us=min(s), tflops=flops / med / 1e6, ratio=base / med,
                                    samples=s))
            del b, bt
json.dump(dict(device=torch.cuda.get_device_name(0), results=results, wrong=wrong),
          open(os.path.join(out_dir, "gemm.json"), "w"), indent=1)
say(f"correctness on the timing shapes: {'all ok' if not wrong else f'{len(wrong)} WRONG'}")
for w in wrong:
    say(f"  WRONG {w}")
say(f"\nlayout nk: C = A·Bᵀ (B N×K), kn: C = A·B (B K×N); median of {rounds} interleaved rounds; "
    "× cuBLAS = torch.matmul time / ours")
say(f"{'size':<16}{'dtype':<10}{'layout':<7}{'variant':<20}{'median µs':>10}{'TFLOP/s':>9}{'× cuBLAS':>9}")
for r in results:
    say(f"{r['size']:<16}{r['dtype']:<10}{r['layout']:<7}{r['variant']:<20}{r['median_us']:>10.1f}"
        f"{r['tflops']:>9.1f}{r['ratio']:>9.3f}")
say("\nbest variant per cell (× cuBLAS), then the runner-up")
cells = {}
for r in results:
    if r["variant"] != "torch":
        cells.setdefault((r["size"], r["dtype"], r["layout"]), []).append(r)
for (size, dtype, layout), rs in cells.items():
    rs.sort(key=lambda r: r["median_us"])
    say(f"BEST {size:<16}{dtype:<10}{layout:<5}" + "  ".join(f"{r['variant']} {r['ratio']:.3f}" for r in rs[:2]))
