"""Ahead-of-time kernels: `nanocuda build` writes a fatbin + manifest per .cu file; load() uses them.

    nanocuda build kernels/*.cu --arch sm_80,sm_90a,sm_100a,compute_90 -o mypkg/prebuilt
    mod = nanocuda.load("kernels/scale.cu", prebuilt="mypkg/prebuilt")   # no NVRTC needed

The fatbin container and the manifest (JSON) are written by the C++ core
(nanocuda/compile/fatbin.h, aot_manifest.h); this module picks the targets, compiles with
NVRTC, and decides at load time whether a prebuilt fatbin may stand in for a compile.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping

from ._errors import NanocudaError

# Options that do not change the code a compile makes for one target (arch is per image).
_NOT_IN_MANIFEST = {"arch", "include_dirs", "check_changes", "prebuilt"}


class PrebuiltError(NanocudaError, RuntimeError):
    """A prebuilt fatbin cannot serve a load() and no NVRTC is present to compile instead."""


def manifest_options(options: Mapping[str, object]) -> list[str]:
    """The options a manifest records and a load must repeat: "name=<json>", sorted; no arch."""
    out = []
    for key, value in sorted(options.items()):
        if key in _NOT_IN_MANIFEST:
            continue
        if key == "defines":
            from ._nanocuda import ProgramOptions

            # ProgramOptions' one rule: {"N": 128}, ["N=128"] and "N=128" are the same build.
            value = list(ProgramOptions(defines=value).defines)
        out.append(f"{key}={json.dumps(value, sort_keys=True)}")
    return out


def _search_dirs(path: str, include_dirs: Iterable[str | os.PathLike]) -> list[str]:
    # The include path load() compiles with: the file's folder, the caller's, nanocuda's headers.
    from ._paths import include_dir

    return [os.path.dirname(path), *map(os.fspath, include_dirs), include_dir()]


def source_hash(path: str, source: str, include_dirs: Iterable[str | os.PathLike] = ()) -> str:
    """The manifest's hash of the source at `path` and the local headers it includes."""
    from . import _nanocuda

    return _nanocuda._internal.aot_source_hash(source, os.path.dirname(path), _search_dirs(path, include_dirs))


def build(sources: Iterable[str | os.PathLike], targets: Iterable[str], out_dir: str | os.PathLike | None = None,
          *, include_dirs: Iterable[str | os.PathLike] = (), **options) -> list[str]:
    """Compiles each .cu file for every target ("sm_90a": a cubin, "compute_90": PTX) into
    `<out_dir>/<stem>.fatbin` and its manifest `<stem>.fatbin.json`; returns the fatbin paths.

    `options` are load()'s (defines, std, fast_math, ...); a later load() must pass the same
    ones for the fatbin to be used. Without `out_dir` the files go beside each source.
    """
    import nanocuda
    from . import _nanocuda

    targets = list(targets)
    if not targets:
        raise ValueError("nanocuda build: no targets; pass e.g. --arch sm_80,sm_90a,compute_90")
    for t in targets:
        _nanocuda._internal.fatbin_target_fits(t, 0)  # a bad spelling fails before any compile
    include_dirs = list(include_dirs)
    written = []
    for src in sources:
        path = os.path.abspath(os.fspath(src))
        with open(path, encoding="utf-8") as f:
            source = f.read()
        search = _search_dirs(path, include_dirs)
        images, first_cubin = [], b""
        for t in targets:
            kind = "ptx" if t.startswith("compute_") else "cubin"
            arch = t.split("_", 1)[1]
            code = nanocuda.compile(source, name=path, include_dirs=search, arch=arch, target=kind, **options)
            images.append((t, code.code))
            if kind == "cubin" and not first_cubin:
                first_cubin = code.code
        folder = os.fspath(out_dir) if out_dir is not None else os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        stem = os.path.splitext(os.path.basename(path))[0]
        fatbin = os.path.join(folder, stem + ".fatbin")
        with open(fatbin, "wb") as f:
            f.write(_nanocuda._internal.make_fatbin(images))
        manifest = _nanocuda._internal.aot_manifest_json(
            os.path.basename(path), _nanocuda._internal.aot_source_hash(source, os.path.dirname(path), search),
            manifest_options(options), nanocuda.nvrtc_version(), targets, first_cubin)
        with open(fatbin + ".json", "w", encoding="utf-8") as f:
            f.write(manifest)
        written.append(fatbin)
    return written


def _nvrtc_available() -> bool:
    import nanocuda

    try:
        nanocuda.nvrtc_version()
        return True
    except NanocudaError:
        return False


def _device_arch() -> int | None:
    """The default Device()'s (the current device's) compute capability as major*10 + minor; None without a driver."""
    import nanocuda

    try:
        major, minor = nanocuda.Device().compute_capability
    except nanocuda.CudaError:  # no driver, or no device: the load fails later, saying so
        return None
    return major * 10 + minor


def find_prebuilt(path: str, source: str, include_dirs: Iterable[str | os.PathLike],
                  options: Mapping[str, object], folder: str | os.PathLike | None):
    """(ObjectCode, manifest) of the fatbin that may serve load(path, **options), else None.

    Looked up as `<stem>.fatbin` in `folder` (load's prebuilt=), then beside the source; not
    at all with an explicit arch= or NANOCUDA_PREBUILT=0. A fatbin built from another source
    or other options, or with no image for this device, is passed over for an NVRTC compile,
    or raises PrebuiltError when no NVRTC is present.
    """
    from . import _nanocuda

    if os.environ.get("NANOCUDA_PREBUILT") == "0" or options.get("arch"):
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    folders = [os.fspath(folder)] if folder is not None else []
    folders.append(os.path.dirname(path))
    fatbin = next((p for p in (os.path.join(d, stem + ".fatbin") for d in folders)
                   if os.path.isfile(p) and os.path.isfile(p + ".json")), None)
    if fatbin is None:
        return None
    code, manifest = _nanocuda._internal.open_prebuilt(fatbin)
    wanted = manifest_options(options)
    stale = []
    if manifest["source_hash"] != source_hash(path, source, include_dirs):
        stale.append(f"{os.path.basename(path)} or a header it includes changed since the build")
    if manifest["options"] != wanted:
        stale.append(f"built with options {manifest['options']}, loaded with {wanted}")
    if stale:
        if _nvrtc_available():
            return None
        raise PrebuiltError(f"nanocuda.load({os.path.basename(path)!r}): the prebuilt {fatbin} is stale "
                            f"({'; '.join(stale)}) and NVRTC is not available to compile instead; rebuild "
                            f"it with `nanocuda build` or install NVRTC (pip install \"nanocuda[nvrtc]\")")
    arch = _device_arch()
    if arch is not None and not any(_nanocuda._internal.fatbin_target_fits(t, arch) for t in manifest["targets"]):
        if _nvrtc_available():
            return None
        raise PrebuiltError(f"nanocuda.load({os.path.basename(path)!r}): the prebuilt {fatbin} holds "
                            f"{', '.join(manifest['targets'])}, none of which runs on device 0 (sm_{arch}), "
                            f"and NVRTC is not available to compile for it; rebuild with "
                            f"`nanocuda build --arch ...,sm_{arch}` or add PTX for an older compute_XY")
    return code, manifest


# -- the CLI subcommand --------------------------------------------------------------------
def _cmd_build(args: argparse.Namespace) -> int:
    import nanocuda

    options: dict[str, object] = {}
    if args.define:
        options["defines"] = args.define
    if args.std:
        options["std"] = args.std
    if args.use_fast_math:
        options["fast_math"] = True
    if args.lineinfo:
        options["lineinfo"] = True
    if args.maxrregcount:
        options["max_registers"] = args.maxrregcount
    if args.flag:
        options["extra_flags"] = args.flag
    targets = [t.strip() for t in args.arch.split(",") if t.strip()]
    for src in args.sources:
        start = time.perf_counter()
        try:
            fatbin, = build([src], targets, args.output, include_dirs=args.include, **options)
        except nanocuda.CompileError as e:
            print(e.log or str(e), file=sys.stderr)
            print(f"nanocuda build: {src}: {e.first_error}", file=sys.stderr)
            return 2
        except (ValueError, OSError, NanocudaError) as e:
            print(f"nanocuda build: {src}: {e}", file=sys.stderr)
            return 2
        with open(fatbin + ".json", encoding="utf-8") as f:
            kernels = len(json.load(f)["kernels"])
        print(f"{fatbin}  ({', '.join(targets)}; {kernels} kernels; "
              f"{time.perf_counter() - start:.2f} s)")
    return 0


def add_build_command(sub) -> None:
    """Registers `nanocuda build` on the CLI's subparsers."""
    p = sub.add_parser("build", help="compile .cu files ahead of time into fatbins + manifests")
    p.add_argument("sources", nargs="+", metavar="SRC", help="CUDA C++ files")
    p.add_argument("--arch", required=True, metavar="TARGETS",
                   help="comma-separated: sm_XY[a] for a cubin, compute_XY for PTX the driver "
                        "JIT-compiles on newer GPUs, e.g. sm_80,sm_90a,sm_100a,compute_90")
    p.add_argument("-o", "--output", metavar="DIR", help="output folder (default: beside each source)")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]")
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    p.add_argument("--std", default=None, help="C++ standard (default: load()'s default)")
    p.add_argument("--use-fast-math", action="store_true")
    p.add_argument("--lineinfo", action="store_true")
    p.add_argument("--maxrregcount", type=int, default=0)
    p.add_argument("--flag", action="append", default=[], metavar="FLAG", help="extra raw NVRTC flag")
    p.set_defaults(func=_cmd_build)
