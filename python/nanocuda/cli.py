"""The `nanocuda` command line: the devices and toolkit (info), compiling .cu files (compile), benchmarks (bench)."""

from __future__ import annotations

import argparse
import platform
import sys
from typing import Callable

# Each entry adds one subcommand to the parser (`add(subparsers)`), in `--help`'s order. A new
# subcommand is one function decorated with @subcommand; it sets `func` (args -> exit code).
_SUBCOMMANDS: list[Callable] = []

# User mistakes (a missing file, a bad option value, code that does not compile) exit with 2,
# like argparse's own usage errors; a missing GPU or driver exits with 1.
USAGE_ERROR = 2
NO_GPU = "no NVIDIA GPU found (no driver); `nanocuda info` says why"


def subcommand(add: Callable) -> Callable:
    """Registers `add(subparsers)`, which adds one subcommand to `nanocuda`'s parser."""
    _SUBCOMMANDS.append(add)
    return add


class UserError(Exception):
    """A mistake in what the user asked for: printed as one line, exit code 2."""


def _cmd_info(args: argparse.Namespace) -> int:
    import nanocuda

    built = nanocuda.BUILT_CUDA_VERSION
    print(f"nanocuda {nanocuda.__version__}  (built against CUDA {built // 1000}.{built % 1000 // 10})")
    print(f"Python   {platform.python_version()} ({sys.executable})")
    _print_toolkit(nanocuda)
    _print_torch_bridge()
    try:
        version = nanocuda.driver_version()
    except nanocuda.DriverNotFoundError as e:
        print(f"driver   not available: {e}")
        return 0 if args.allow_missing_driver else 1
    try:
        where = nanocuda.driver_library()
    except nanocuda.DriverTooOldError as e:  # below the floor: the version still shows
        where = "libcuda.so.1"
        too_old = e
    else:
        too_old = None
    print(f"driver   CUDA {version // 1000}.{version % 1000 // 10} ({where})")
    _print_fit(nanocuda, version)
    if too_old is not None:
        print(f"  too old: {too_old}")
        return 1
    count = nanocuda.Device.count()
    print(f"devices  {count}")
    for i in range(count):
        d = nanocuda.Device(i)
        major, minor = d.compute_capability
        print(
            f"  [{i}] {d.name}  sm_{d.target_arch}  cc {major}.{minor}  "
            f"{d.total_memory / 2**30:.1f} GiB  {d.multiprocessor_count} SMs  {d.uuid}"
        )
    return 0


def _print_fit(nanocuda, driver: int) -> None:
    # Whether this driver loads what this NVRTC compiles (the rule is the C++ core's).
    from . import _nanocuda

    try:
        nvrtc = nanocuda.nvrtc_version()
    except nanocuda.NanocudaError:
        return
    why = _nanocuda._internal.nvrtc_driver_mismatch(nvrtc, driver)
    print(f"  fit     NVRTC {nvrtc // 1000}.{nvrtc % 1000 // 10} with this driver: " + (why or "ok"))


def _print_toolkit(nanocuda) -> None:
    # Where run-time compilation's pieces come from: the toolkit, a pip package, or $NANOCUDA_*.
    from ._compile import toolkit_sources

    try:
        v = nanocuda.nvrtc_version()
        print(f"NVRTC    {v // 1000}.{v % 1000 // 10}")
    except nanocuda.NanocudaError as e:
        print(f"NVRTC    not available: {e}")
        return
    for piece, path, origin in toolkit_sources():
        print(f"  {piece:<9} {path or '-'}  ({origin})")
    print(f"  {'device':<9} {nanocuda.include_dir()}  (nanocuda's kernel-side headers)")


def _print_torch_bridge() -> None:
    import importlib.util
    import os

    if importlib.util.find_spec("torch") is None:
        return
    from . import torch_bridge

    try:
        directory = torch_bridge.build_directory()
    except Exception as e:  # noqa: BLE001 - a broken torch install is reported, not fatal
        print(f"torch    bridge unavailable: {type(e).__name__}: {e}")
        return
    if os.path.isfile(os.path.join(directory, os.path.basename(directory) + ".so")):
        print(f"torch    bridge built, loaded at the first torch tensor ({directory})")
    else:
        print("torch    bridge not built: torch tensors are read through torch's stable C ABI "
              "(no setup; nanocuda.torch_bridge.status() after the first one says which reader)")


def _cmd_compile(args: argparse.Namespace) -> int:
    import os

    import nanocuda

    if not os.path.isfile(args.source):
        raise UserError(f"{args.source}: no such file")
    target = "ptx" if args.ptx else ("ltoir" if args.ltoir else "cubin")
    output = args.output or os.path.splitext(args.source)[0] + "." + target
    try:
        options = nanocuda.ProgramOptions(
            arch=args.arch or "",
            std=args.std,
            defines=args.define,
            include_dirs=args.include,
            fast_math=args.use_fast_math,
            lineinfo=args.lineinfo,
            debug=args.debug,
            max_registers=args.maxrregcount,
            relocatable_device_code=args.rdc,
            extra_flags=args.flag,
        )
        program = nanocuda.Program.from_file(args.source, options)
        code = program.compile(target, name_expressions=args.name_expression)
    except ValueError as e:  # a bad --arch, --std or flag
        raise UserError(str(e)) from None
    except nanocuda.CompileError as e:
        print(e.log or str(e), file=sys.stderr)
        raise UserError(f"{args.source}: {e.first_error or 'compilation failed'}") from None
    except nanocuda.DriverNotFoundError:
        if args.arch:
            raise
        raise UserError("no GPU to take the target architecture from: pass --arch "
                        "(e.g. --arch sm_90a)") from None
    try:
        with open(output, "wb") as f:
            f.write(code.code)
    except OSError as e:
        raise UserError(f"cannot write {output}: {e.strerror}") from None
    for expr, lowered in code.lowered_names.items():
        print(f"{expr} -> {lowered}")
    print(f"wrote {output} ({len(code.code)} bytes, {target})")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import DriverNotFoundError
    from .bench import registry, report

    # `nanocuda bench launch tma` runs both, in the order given; no name (or "all") runs all.
    chosen = registry.select(args.which)
    env = report.environment()
    report.print_environment(env)
    rounds = args.rounds or (5 if args.quick else 300)
    burst = args.burst or (50 if args.quick else 200)
    results = {"environment": env}
    for bench in chosen:
        try:
            results[bench.name] = bench(rounds, burst, use_bridge=not args.no_torch_bridge, sweep=args.sweep)
        except DriverNotFoundError:  # every later subcommand needs one too: say it once, stop
            print(f"nanocuda bench: {NO_GPU}; the benchmarks need one", file=sys.stderr)
            return 1
    if args.json:
        report.write_json(args.json, results)
        print(f"\nraw numbers (every repetition): {args.json}")
    if args.plot:
        from .bench import plot

        plot.ratios(results, args.plot)
        print(f"chart of the ratios: {args.plot}")
    misses = report.target_misses(results)
    if misses:
        print("\ntargets missed: " + ", ".join(misses))
    return 0


@subcommand
def _add_info(sub) -> None:
    info = sub.add_parser("info", help="devices, driver and toolkit versions")
    info.add_argument(
        "--allow-missing-driver",
        action="store_true",
        help="exit 0 even when no NVIDIA driver is found (for CI)",
    )
    info.set_defaults(func=_cmd_info)


@subcommand
def _add_bench(sub) -> None:
    from .bench import registry

    import textwrap

    table = registry.subcommands()
    w = max(len(n) for n in table)
    listing = "\n".join(textwrap.fill(s.help, 96, initial_indent=f"  {name:<{w}}  ",
                                       subsequent_indent=" " * (w + 4)) for name, s in table.items())
    bench = sub.add_parser(
        "bench", help="benchmarks against C++ and peers (needs a GPU)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Times Python paths against native C++ loops in the same process, interleaved "
                    "round by round; prints a table per subcommand.",
        epilog=f"subcommands (run in this order; default: all):\n{listing}")
    bench.add_argument("which", nargs="*", default=[], type=registry.checked_name, metavar="WHICH",
                       help="one or more subcommands (listed below), or all")
    bench.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    bench.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default 300)")
    bench.add_argument("--no-torch-bridge", action="store_true",
                       help="skip the rows that read torch tensors through nanocuda.torch_bridge "
                            "(building it once per torch version takes ~15-60 s)")
    bench.add_argument("--burst", type=int, default=0, help="launches per timed burst (default 200)")
    bench.add_argument("--json", metavar="FILE", help="write every repetition as JSON")
    bench.add_argument("--plot", metavar="FILE.png", help="chart of the ratios (needs matplotlib)")
    bench.add_argument("--sweep", action="store_true",
                       help="gemm_shapes: also time every candidate GEMM configuration per shape")
    bench.set_defaults(func=_cmd_bench)


@subcommand
def _add_compile(sub) -> None:
    comp = sub.add_parser(
        "compile", help="compile a .cu file with NVRTC to cubin (default), PTX or LTO-IR",
        description="Compiles SOURCE with NVRTC and writes the result (and says where). "
                    "Without a GPU, --arch is required.")
    comp.add_argument("source", help="the CUDA C++ file")
    comp.add_argument("-o", "--output", help="output file (default: SOURCE with .cubin/.ptx/.ltoir)")
    comp.add_argument("--arch", help="target, e.g. sm_90a (default: the current device's; required without a GPU)")
    kind = comp.add_mutually_exclusive_group()
    kind.add_argument("--ptx", action="store_true", help="emit PTX instead of cubin")
    kind.add_argument("--ltoir", action="store_true", help="emit LTO-IR instead of cubin")
    comp.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]")
    comp.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    comp.add_argument("--std", default="c++17", help="C++ standard (default c++17)")
    comp.add_argument("--use-fast-math", action="store_true")
    comp.add_argument("--lineinfo", action="store_true")
    comp.add_argument("-G", "--debug", action="store_true")
    comp.add_argument("--maxrregcount", type=int, default=0)
    comp.add_argument("--rdc", action="store_true", help="relocatable device code")
    comp.add_argument(
        "--name-expression", action="append", default=[], metavar="EXPR",
        help="instantiate a template, e.g. 'gemm<128, 64>'; its lowered name is printed",
    )
    comp.add_argument(
        "--flag", action="append", default=[], metavar="FLAG", help="extra raw NVRTC flag"
    )
    comp.add_argument("-v", "--verbose", action="store_true", help="accepted for compatibility "
                      "(the output file is always printed)")
    comp.set_defaults(func=_cmd_compile)


@subcommand
def _add_build(sub) -> None:
    from ._aot import add_build_command  # `nanocuda build`: ahead-of-time fatbins

    add_build_command(sub)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="nanocuda", description=__doc__)
    parser.add_argument("--version", action="version", version=f"nanocuda {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from . import DriverNotFoundError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `nanocuda`: the help, as a usage error
        parser.print_help()
        return USAGE_ERROR
    try:
        return args.func(args)
    except UserError as e:
        print(f"nanocuda {args.command}: {e}", file=sys.stderr)
        return USAGE_ERROR
    except DriverNotFoundError:
        print(f"nanocuda {args.command}: {NO_GPU}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
