"""What the bench prints and writes: the environment line, the ratio tables, skips, JSON."""

from __future__ import annotations

import json


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


def print_skipped(skipped: list[str]) -> None:
    for s in skipped:
        print(f"  skipped: {s}")


def target_misses(results: dict) -> list[str]:
    """Names of the rows, over every subcommand's result, whose ratio missed its target."""
    return [r["name"] for res in results.values() if isinstance(res, dict) and "rows" in res
            for r in res["rows"] if r.get("meets_target") is False]


_OWN = ("python", "nanocuda", "device", "arch", "driver_cuda", "built_cuda")
PEERS = ("torch", "cupy", "cuda.core", "cuda.bindings", "triton", "numpy")


def environment() -> dict:
    """Versions of Python, nanocuda, the device and driver, and of each peer (None: absent)."""
    import platform

    import nanocuda

    env = {"python": platform.python_version(), "nanocuda": nanocuda.__version__}
    try:
        d = nanocuda.Device(0)
        v = nanocuda.driver_version()
        env.update(device=d.name, arch=d.arch, driver_cuda=f"{v // 1000}.{v % 1000 // 10}")
    except nanocuda.DriverNotFoundError:  # the loader's full text is `nanocuda info`'s job
        env["device"] = "none (no NVIDIA driver)"
    except nanocuda.CudaError as e:
        env["device"] = f"none ({e.name})"
    b = nanocuda.BUILT_CUDA_VERSION
    env["built_cuda"] = f"{b // 1000}.{b % 1000 // 10}"
    for mod in PEERS:
        try:
            m = __import__(mod, fromlist=["__version__"])
            env[mod] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001 - absent or broken peers are reported, not fatal
            env[mod] = None
    return env


def print_environment(env: dict) -> None:
    peers = ", ".join(f"{k} {v}" for k, v in env.items() if k not in _OWN and v)
    missing = ", ".join(k for k, v in env.items() if v is None)
    gpu = (f"device {env.get('device')} (sm_{env['arch']}), driver CUDA {env.get('driver_cuda', '?')}"
           if "arch" in env else f"device {env.get('device')}")
    print(f"{gpu}, built with CUDA {env['built_cuda']}, Python {env['python']}, nanocuda {env['nanocuda']}")
    print(f"peers: {peers or 'none'}" + (f"; not installed (skipped): {missing}" if missing else ""))


def write_json(path: str, payload: dict) -> None:
    with open(path, "w") as f:
        json.dump(payload, f, indent=1)
