"""Interleaved, repeated burst timing with ratios against a same-process C++ baseline."""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Variant:
    """One timed path. `burst()` runs `burst_size` operations and returns nanoseconds."""

    name: str
    burst: Callable[[], int]
    baseline: str | None = None  # name of the C++ variant this one is compared with
    target: float | None = None  # the ratio it must not exceed, if any
    samples: list[float] = field(default_factory=list)  # µs per operation, one per round


def python_burst(fn: Callable[[], None], count: int) -> Callable[[], int]:
    """A burst of `count` calls of `fn` from a Python loop, timed with perf_counter_ns."""

    def run() -> int:
        clock = time.perf_counter_ns
        t0 = clock()
        for _ in range(count):
            fn()
        return clock() - t0

    return run


def progress(done: int, total: int, label: str) -> None:
    if not sys.stderr.isatty():
        return
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<30}")
    if done == total:
        sys.stderr.write("\r" + " " * (width + 50) + "\r")
    sys.stderr.flush()


def run_interleaved(variants: list[Variant], rounds: int, burst_size: int, sync: Callable[[], None],
                    label: str = "") -> None:
    """Runs every variant's burst once per round, in a shuffled order, syncing (untimed) after
    each; per-round ratios pair each variant with its baseline from the same round."""
    for v in variants:  # warm-up: first-call costs (type caches, lazy loading) stay out
        v.burst()
        sync()
    # A fresh order every round (seeded, so runs repeat): a variant's cost depends on what ran
    # just before it (caches, the GPU's idle state), and a fixed order made the first variant
    # of each round — the 4-argument C++ loop — read 5-10% slower than its 16-argument twin.
    order = list(variants)
    shuffle = random.Random(1).shuffle
    for r in range(rounds):
        shuffle(order)
        for v in order:
            ns = v.burst()
            sync()
            v.samples.append(ns / burst_size / 1000.0)
        progress(r + 1, rounds, label)


def summarize(variants: list[Variant]) -> list[dict]:
    by_name = {v.name: v for v in variants}
    rows = []
    for v in variants:
        row = {
            "name": v.name,
            "min_us": min(v.samples),
            "median_us": statistics.median(v.samples),
            "p90_us": sorted(v.samples)[int(0.9 * (len(v.samples) - 1))],
            "samples_us": v.samples,
            "baseline": v.baseline,
            "target": v.target,
        }
        if v.baseline:
            base = by_name[v.baseline]
            row["ratio_min"] = row["min_us"] / min(base.samples)
            row["ratio_median"] = row["median_us"] / statistics.median(base.samples)
            # Per-round ratios (interleaved neighbours) show the spread honestly.
            per_round = sorted(a / b for a, b in zip(v.samples, base.samples))
            row["ratio_round_median"] = statistics.median(per_round)
            row["ratio_round_p10"] = per_round[int(0.1 * (len(per_round) - 1))]
            row["ratio_round_p90"] = per_round[int(0.9 * (len(per_round) - 1))]
            if v.target is not None:
                row["meets_target"] = row["ratio_min"] <= v.target
        rows.append(row)
    return rows


def print_table(title: str, rows: list[dict], baseline_label: str = "C++") -> None:
    """Prints rows; ratios are headed "× <baseline_label>" (what each row is divided by)."""
    print(f"\n{title}")
    x_min, x_med = f"× {baseline_label} (min)", f"× {baseline_label} (med)"
    w = max([52, *(len(r["name"]) for r in rows)])
    spread = "per-round p10–p90"
    header = (f"  {'path':<{w}} {'min µs':>8} {'median µs':>10} {x_min:>12} {x_med:>12} "
              f"{spread:>17} {'target':>10}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for r in rows:
        ratio = f"{r['ratio_min']:.3f}" if "ratio_min" in r else "1.000" if r["baseline"] is None else ""
        ratio_med = f"{r['ratio_median']:.3f}" if "ratio_median" in r else ""
        target = ""
        if r.get("target") is not None:
            target = f"≤{r['target']:.2f} " + ("ok" if r.get("meets_target") else "MISS")
        rounds = f"{r['ratio_round_p10']:.3f}–{r['ratio_round_p90']:.3f}" if "ratio_round_p10" in r else ""
        print(f"  {r['name']:<{w}} {r['min_us']:>8.3f} {r['median_us']:>10.3f} {ratio:>12} "
              f"{ratio_med:>12} {rounds:>17} {target:>10}")


def environment() -> dict:
    import platform

    import nanocuda

    env = {"python": platform.python_version(), "nanocuda": nanocuda.__version__}
    try:
        d = nanocuda.Device(0)
        v = nanocuda.driver_version()
        env.update(device=d.name, arch=d.arch, driver_cuda=f"{v // 1000}.{v % 1000 // 10}")
    except nanocuda.CudaError as e:
        env["device"] = f"none ({e})"
    b = nanocuda.BUILT_CUDA_VERSION
    env["built_cuda"] = f"{b // 1000}.{b % 1000 // 10}"
    for mod in ("torch", "cupy", "cuda.core", "cuda.bindings", "triton", "numpy"):
        try:
            m = __import__(mod, fromlist=["__version__"])
            env[mod] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001 - absent or broken peers are reported, not fatal
            env[mod] = None
    return env


def print_environment(env: dict) -> None:
    peers = ", ".join(f"{k} {v}" for k, v in env.items() if k not in ("python", "nanocuda", "device", "arch", "driver_cuda", "built_cuda") and v)
    missing = ", ".join(k for k, v in env.items() if v is None)
    print(f"device {env.get('device')} (sm_{env.get('arch', '?')}), driver CUDA {env.get('driver_cuda', '?')}, "
          f"built with CUDA {env['built_cuda']}, Python {env['python']}, nanocuda {env['nanocuda']}")
    print(f"peers: {peers or 'none'}" + (f"; not installed (skipped): {missing}" if missing else ""))


def write_json(path: str, payload: dict) -> None:
    with open(path, "w") as f:
        json.dump(payload, f, indent=1)
