"""The `nanocuda` command line: `info`, and the subcommands other modules register."""

from __future__ import annotations

import argparse
import platform
import sys


def _cmd_info(args: argparse.Namespace) -> int:
    import nanocuda

    built = nanocuda.BUILT_CUDA_VERSION
    print(f"nanocuda {nanocuda.__version__}  (built against CUDA {built // 1000}.{built % 1000 // 10})")
    print(f"Python   {platform.python_version()} ({sys.executable})")
    try:
        version = nanocuda.driver_version()
    except nanocuda.DriverNotFoundError as e:
        print(f"driver   not available: {e}")
        return 0 if args.allow_missing_driver else 1
    print(f"driver   CUDA {version // 1000}.{version % 1000 // 10} ({nanocuda.driver_library()})")
    count = nanocuda.Device.count()
    print(f"devices  {count}")
    for i in range(count):
        d = nanocuda.Device(i)
        major, minor = d.compute_capability
        print(
            f"  [{i}] {d.name}  sm_{d.arch}  cc {major}.{minor}  "
            f"{d.total_memory / 2**30:.1f} GiB  {d.multiprocessor_count} SMs  {d.uuid}"
        )
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import harness

    env = harness.environment()
    harness.print_environment(env)
    rounds = args.rounds or (5 if args.quick else 30)
    burst = args.burst or (50 if args.quick else 200)
    results = {"environment": env}
    names = ["launch"] if args.which == "all" else [args.which]
    for name in names:
        if name == "launch":
            from .bench import launch

            results["launch"] = launch.run(rounds, burst)
    if args.json:
        harness.write_json(args.json, results)
        print(f"\nraw numbers (every repetition): {args.json}")
    if args.plot:
        from .bench import plot

        plot.ratios(results, args.plot)
        print(f"chart of the ratios: {args.plot}")
    misses = [r["name"] for res in results.values() if isinstance(res, dict) and "rows" in res
              for r in res["rows"] if r.get("meets_target") is False]
    if misses:
        print("\ntargets missed: " + ", ".join(misses))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nanocuda", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="devices, driver and toolkit versions")
    info.add_argument(
        "--allow-missing-driver",
        action="store_true",
        help="exit 0 even when no NVIDIA driver is found (for CI)",
    )
    info.set_defaults(func=_cmd_info)

    bench = sub.add_parser("bench", help="benchmarks against C++ and peers (needs a GPU)")
    bench.add_argument("which", nargs="?", default="all", choices=["all", "launch"],
                       help="which benchmark (default: all)")
    bench.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    bench.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default 30)")
    bench.add_argument("--burst", type=int, default=0, help="launches per timed burst (default 200)")
    bench.add_argument("--json", metavar="FILE", help="write every repetition as JSON")
    bench.add_argument("--plot", metavar="FILE.png", help="chart of the ratios (needs matplotlib)")
    bench.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
