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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
