"""Checks and times hopper_gemm_fast.cu configurations against torch.matmul (cuBLAS) on one GPU.

    python examples/kernels/tune_hopper_gemm.py OUT_DIR [--quick]
Correctness first (fresh random inputs, NaN-poisoned outputs, odd shapes), then interleaved
timing: each sample is a burst of launches between CUDA events, variants in a shuffled order
every round, median over rounds. Full numbers go to OUT_DIR/gemm.json; a table is printed last.
"""
import json
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_hopper_gemm_fast import HopperGemm  # noqa: E402

out_dir = sys.argv[1] if len(sys.argv) > 1 else "gemm-results"
quick = "--quick" in sys.argv
os.makedirs(out_dir, exist_ok=True)
log = open(os.path.join(out_dir, "gemm.log"), "w")


def say(*a):
    print(*a, flush=True)
    print(*a, file=log, flush=True)


t0 = time.perf_counter()
configs = {"bn256": HopperGemm(256)}
say(f"compile bn256 (both kernels, cache as found): {time.perf_counter() - t0:.2f} s")
for name, kw in (("bn256_g16", dict(bn=256, group_m=16)), ("bn256_g4", dict(bn=256, group_m=4)),
                 ("bn256_l2", dict(bn=256, l2_promotion=256))):
    t0 = time.perf_counter()
    try:
        configs[name] = HopperGemm(**kw)
    except Exception as e:  # one broken variant must not cost the run
        say(f"compile {name} FAILED: {e}")
        continue
    say(f"compile {name}: {time.perf_counter() - t0:.2f} s")
say(torch.cuda.get_device_name(0))

# ---- correctness -------------------------------------------------------------------------
shapes = [(128, 256, 64), (1000, 333, 100), (257, 129, 4104), (1, 1, 8), (300, 520, 13),
          (4097, 3001, 1032), (2048, 2048, 2048)]
bad = 0
for name, g in configs.items():
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(n, k, device="cuda", dtype=dtype)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            g(a, b, out=c)
            torch.cuda.synchronize()
            ref = a.double() @ b.double().T
            err = ((c.double() - ref).norm() / ref.norm()).item()
            ok = err < (2e-3 if dtype == torch.float16 else 1e-2) and not torch.isnan(c).any().item()
            bad += not ok
            if not ok or (m, n, k) == shapes[-1]:
                say(f"  {name} {str(dtype)[6:]} {m}x{n}x{k}: rel err {err:.2e} {'ok' if ok else 'WRONG'}")
say(f"correctness: {'all ok' if bad == 0 else f'{bad} WRONG'}")

# ---- timing --------------------------------------------------------------------------------
sizes = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4000, 3000, 5000),
         (8192, 1000, 3000)]
rounds = 8 if quick else 15
results = []
for m, n, k in sizes:
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype)
        c = torch.empty(m, n, device="cuda", dtype=dtype)
        bt = b.T
        variants = {"torch": lambda: torch.matmul(a, bt, out=c)}
        for name, g in configs.items():
            variants[name] = g.prepare(a, b, out=c)[0]
        if k % 64:  # odd K: is the row pitch (not a multiple of 128 bytes) what slows TMA?
            kp = -(-k // 64) * 64
            ap, bp = torch.nn.functional.pad(a, (0, kp - k)), torch.nn.functional.pad(b, (0, kp - k))
            variants["bn256_Kpad"] = configs["bn256"].prepare(ap, bp, out=c)[0]  # pad excluded

            def with_pad(f=variants["bn256_Kpad"], ap=ap, bp=bp, a=a, b=b, k=k):
                ap[:, :k].copy_(a)  # the copies a caller would pay (pad columns stay zero)
                bp[:, :k].copy_(b)
                f()
            variants["bn256_Kpad+copy"] = with_pad
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
            results.append(dict(size=f"{m}x{n}x{k}", dtype=str(dtype)[6:], variant=v, median_us=med,
                                min_us=min(s), tflops=flops / med / 1e6, ratio=base / med,
                                samples=s))
json.dump(results, open(os.path.join(out_dir, "gemm.json"), "w"), indent=1)
say(f"\n{'size':<16}{'dtype':<10}{'variant':<11}{'median µs':>10}{'TFLOP/s':>9}{'× cuBLAS':>9}")
for r in results:
    say(f"{r['size']:<16}{r['dtype']:<10}{r['variant']:<11}{r['median_us']:>10.1f}{r['tflops']:>9.1f}"
        f"{r['ratio']:>9.3f}")
