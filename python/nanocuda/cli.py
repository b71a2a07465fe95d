"""The `nanocuda` command line: `info`, `compile`, and the subcommands other modules register."""

from __future__ import annotations

import argparse
import platform
import sys


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
            f"  [{i}] {d.name}  sm_{d.arch}  cc {major}.{minor}  "
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
        print("torch    bridge not built: nanocuda.torch_bridge.enable() builds it once (~15 s), "
              "for faster torch tensor arguments")


def _cmd_compile(args: argparse.Namespace) -> int:
    import os

    import nanocuda

    target = "ptx" if args.ptx else ("ltoir" if args.ltoir else "cubin")
    output = args.output or os.path.splitext(args.source)[0] + "." + target
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
    try:
        program = nanocuda.Program.from_file(args.source, options)
        code = program.compile(target, name_expressions=args.name_expression)
    except nanocuda.CompileError as e:
        print(e.log or str(e), file=sys.stderr)
        print(f"nanocuda compile: {args.source}: {e.first_error}", file=sys.stderr)
        return 1
    with open(output, "wb") as f:
        f.write(code.code)
    for expr, lowered in code.lowered_names.items():
        print(f"{expr} -> {lowered}")
    if args.verbose:
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
    for subcommand in chosen:
        try:
            results[subcommand.name] = subcommand(rounds, burst, use_bridge=not args.no_torch_bridge)
        except DriverNotFoundError as e:  # every subcommand needs one: say so, not a traceback
            print(f"nanocuda bench {subcommand.name}: needs an NVIDIA GPU and driver: {e}", file=sys.stderr)
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
                            "(building it once takes ~20-60 s)")
    bench.add_argument("--burst", type=int, default=0, help="launches per timed burst (default 200)")
    bench.add_argument("--json", metavar="FILE", help="write every repetition as JSON")
    bench.add_argument("--plot", metavar="FILE.png", help="chart of the ratios (needs matplotlib)")
    bench.set_defaults(func=_cmd_bench)


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

    _add_bench(sub)

    comp = sub.add_parser(
        "compile", help="compile a .cu file with NVRTC to cubin (default), PTX or LTO-IR"
    )
    comp.add_argument("source", help="the CUDA C++ file")
    comp.add_argument("-o", "--output", help="output file (default: SOURCE with .cubin/.ptx/.ltoir)")
    comp.add_argument("--arch", help="target, e.g. sm_90a (default: device 0's)")
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
    comp.add_argument("-v", "--verbose", action="store_true")
    comp.set_defaults(func=_cmd_compile)

    from ._aot import add_build_command  # `nanocuda build`: ahead-of-time fatbins (issue 29)
    add_build_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
