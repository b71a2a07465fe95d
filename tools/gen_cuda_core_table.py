#!/usr/bin/env python3
"""Regenerates docs/cuda-core.md: every public name of cuda.core beside nanocuda's status for it.

    pip install "cuda-core==1.2.*" "cuda-bindings>=13,<14"   (no GPU needed)
    python3 tools/gen_cuda_core_table.py [--branch DIR ...]

Names come from the installed cuda.core (its public modules, their classes and each class's
public members). A row is "same" when the installed nanocuda has the name at the matching
place, otherwise the reason below (NOTES, then the class's REASON) says what nanocuda calls it
or why it is missing. --branch DIR also reads an unmerged branch's stubs, Python files and
binding sources, so names it adds count (marked "(branch NAME)").
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import pathlib
import re
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "cuda-core.md"

# cuda.core name -> where nanocuda keeps it (module-level name, or "Class" for a member's owner).
COUNTERPART = {
    "DeviceProperties": "Device",  # Device.properties has the attributes; Device itself has them too
    "TensorMapDescriptor": "TensorMap",
    "ParamInfo": None, "MaxPotentialBlockSizeOccupancyResult": None,
}

# Rows with a fixed text: "=X" means "nanocuda's name: X"; "-why" means missing.
NOTES = {
    "ObjectCode.get_module": "-nanocuda loads libraries (cuLibraryLoadData), not modules; `ObjectCode.handle` is the CUlibrary",
    "Program.handle": "-nanocuda keeps no NVRTC program between calls (compiles are stateless and cached)",
    "Program.pch_status": "-precompiled-header options pass through to NVRTC, but their status is not read back",
    "Linker.handle": "-each `link()` owns its nvJitLink session; none outlives the call",
    "ParamInfo.offset": "+", "ParamInfo.size": "+",
    "MaxPotentialBlockSizeOccupancyResult.min_grid_size": "+",
    "MaxPotentialBlockSizeOccupancyResult.max_block_size": "+",
    "ParamInfo": "+", "MaxPotentialBlockSizeOccupancyResult": "+",
    "DeviceProperties": "=`Device.properties` (cc-runtime); every attribute is also a `Device` property",
    "KernelAttributes": "+", "KernelOccupancy": "+",
    "TensorMapDescriptor.from_tiled": "=`TensorMap.tiled`",
    "TensorMapDescriptor.from_im2col": "=`TensorMap.im2col`",
    "Kernel.attributes": "+",
    "Buffer.ipc_descriptor": "=`Buffer.get_ipc_descriptor()`",
    # Below: a reason only shows while the name is still absent (a "-" note never hides a name
    # nanocuda or a --branch has).
    "utils.StridedMemoryView.copy_from": "-copying between views is not in nanocuda yet; `nanocuda.copy(dst, src, "
                                         "stream=)` copies between any two arrays or Buffers",
    "utils.StridedMemoryView.copy_to": "-copying between views is not in nanocuda yet; `nanocuda.copy(dst, src, "
                                       "stream=)` copies between any two arrays or Buffers",
    "utils.StridedMemoryView.from_any_interface": "-not in nanocuda yet; `StridedMemoryView(obj)` tries DLPack, then "
                                                  "the CUDA array interface",
    "utils.StridedMemoryView.from_array_interface": "-host arrays through numpy's `__array_interface__` are not read; "
                                                    "numpy arrays work through `from_dlpack`",
    "utils.StridedMemoryView.from_buffer": "-not in nanocuda yet; a `Buffer` exports DLPack, so "
                                           "`StridedMemoryView.from_dlpack(buffer)` views it",
    "utils.StridedMemoryView.view": "-re-viewing with another layout (cuda.core's `StridedLayout`) is not in nanocuda",
}

# Why a whole class or module is missing when nanocuda has no counterpart.
REASON = {
    "Context": "explicit (non-green) contexts are outside nanocuda's scope: nanocuda works in each device's primary context",
    "WorkqueueResource": "work-queue resources need CUDA 13.1's driver API; this build uses CUDA 13.0's (green contexts on SM groups work)",
    "GraphicsResource": "OpenGL/Vulkan interop is outside nanocuda's scope",
    "Host": "host NUMA memory locations are outside nanocuda's scope",
    "ManagedBuffer": "managed buffers are `Buffer`s of `ManagedMemoryResource`; prefetch/advice are outside nanocuda's scope",
    "GraphMemoryResource": "not in nanocuda yet: graph allocations come from `GraphDefinition.allocate` / `GraphBuilder` capture",
    "LegacyPinnedMemoryResource": "`PinnedMemoryResource` covers pinned host memory",
    # Members of resources nanocuda has, that only a memory pool can answer honestly.
    "ManagedMemoryResource": "nanocuda's managed memory is cuMemAllocManaged, not a managed memory pool: there is "
                             "no pool handle, counters, uuid, IPC or close to report",
    "PinnedMemoryResource": "not in nanocuda's PinnedMemoryResource (a host pool with PinnedMemoryResourceOptions, "
                            "IPC included; cuMemHostAlloc memory without)",
    "VirtualMemoryResourceOptions": "nanocuda lets the driver place each reservation (no address hint or "
                                    "alignment; allocation_type pinned and location_type device only)",
    "cuda.core.graph": "not in nanocuda's explicit graphs yet (`GraphDefinition` and the node classes cover the rest)",
    "cuda.core.checkpoint": "the CUDA checkpoint API is outside nanocuda's scope",
    "cuda.core.texture": "texture and surface objects are outside nanocuda's scope",
    "cuda.core.system.nvml": "an NVML query nanocuda.system does not make yet (it has devices, memory, PCI, "
                             "affinity, P-states, processes, MIG, InfoROM and device events)",
}
NVML_FREE_SYSTEM = {"get_num_devices", "get_driver_version", "get_driver_version_full", "get_user_mode_driver_version"}


def public(obj) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def cuda_core_rows():
    """(section, name, owner, member, why-if-missing) for every public cuda.core name."""
    import cuda.core as cc
    import cuda.core.graph
    import cuda.core.system
    import cuda.core.texture
    import cuda.core.typing
    import cuda.core.utils
    import cuda.core.checkpoint
    from cuda.core._device import DeviceProperties
    from cuda.core._module import KernelAttributes, KernelOccupancy

    rows = []

    def add_class(section, qual, cls, counterpart, skip=()):
        rows.append((section, qual, None, counterpart, None))
        if inspect.isclass(cls) and not hasattr(cls, "__members__"):
            for m in public(cls):
                if m not in skip:
                    rows.append((section, f"{qual}.{m}", counterpart, m, None))

    for name in cc.__all__:
        obj = getattr(cc, name)
        if inspect.isclass(obj):
            add_class("cuda.core", name, obj, COUNTERPART.get(name, name))
        else:
            rows.append(("cuda.core", name, None, name, None))
    for qual, cls in (("DeviceProperties", DeviceProperties), ("KernelAttributes", KernelAttributes),
                      ("KernelOccupancy", KernelOccupancy)):
        add_class("cuda.core (objects returned by the classes above)", qual, cls, COUNTERPART.get(qual, qual))
    for qual, fields in (("ParamInfo", ("offset", "size")),
                         ("MaxPotentialBlockSizeOccupancyResult", ("min_grid_size", "max_block_size"))):
        rows.append(("cuda.core (objects returned by the classes above)", qual, None, None, None))
        for f in fields:
            rows.append(("cuda.core (objects returned by the classes above)", f"{qual}.{f}", None, f, None))
    for name in public(cuda.core.utils):
        obj = getattr(cuda.core.utils, name)
        why = None
        if inspect.isclass(obj) and name == "StridedMemoryView":
            add_class("cuda.core.utils", f"utils.{name}", obj, "utils.StridedMemoryView")
        else:
            rows.append(("cuda.core.utils", f"utils.{name}", None, f"utils.{name}", why))
    for name in public(cuda.core.system):
        obj = getattr(cuda.core.system, name)
        if isinstance(obj, types.ModuleType) or name in ("TYPE_CHECKING", "typing", "exceptions"):
            continue
        why = None if name in NVML_FREE_SYSTEM else REASON["cuda.core.system.nvml"]
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            rows.append(("cuda.core.system", f"system.{name}", None, f"system.{name}", why))
            for m in public(obj):
                rows.append(("cuda.core.system", f"system.{name}.{m}", None, f"system.{name}.{m}", why))
        else:
            rows.append(("cuda.core.system", f"system.{name}", None, f"system.{name}", why))
    for mod, key in ((cuda.core.graph, "cuda.core.graph"), (cuda.core.checkpoint, "cuda.core.checkpoint"),
                     (cuda.core.texture, "cuda.core.texture"), (cuda.core.typing, "cuda.core.typing")):
        names = getattr(mod, "__all__", None) or public(mod)
        for name in names:
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or name in ("TYPE_CHECKING", "driver", "sys"):
                continue
            short = key.split(".")[-1]
            if key == "cuda.core.graph" and name in ("Graph", "GraphBuilder", "GraphCompleteOptions",
                                                     "GraphDebugPrintOptions"):
                add_class(key, f"{short}.{name}", obj, name)
                continue
            if key == "cuda.core.graph":  # explicit graphs: looked up in nanocuda.graph
                add_class(key, f"{short}.{name}", obj, f"graph.{name}")
                continue
            # nanocuda.typing, .texture and .checkpoint have cuda.core's names: those rows resolve like any other.
            resolves = key in ("cuda.core.typing", "cuda.core.texture", "cuda.core.checkpoint")
            member = f"{short}.{name}" if resolves else None
            rows.append((key, f"{short}.{name}", None, member, None if member else REASON[key]))
            if inspect.isclass(obj) and not hasattr(obj, "__members__"):
                for m in public(obj):
                    owner = f"{short}.{name}" if resolves else None
                    rows.append((key, f"{short}.{name}.{m}", owner, m if resolves else None,
                                 None if resolves else REASON[key]))
    return rows


def branch_names(dirs):
    """{class or module name: {member, ...}} defined in other branches' stubs, Python and bindings."""
    found: dict[str, set[str]] = {}
    for d in dirs:
        d = pathlib.Path(d)
        files = [d / "python/nanocuda/_nanocuda.pyi"] + sorted((d / "python/nanocuda").glob("*.py"))
        for f in files:
            if not f.is_file():
                continue
            tree = ast.parse(f.read_text())
            mod = "" if f.name in ("_nanocuda.pyi", "__init__.py") or f.name.startswith("_") else f.stem + "."
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    members = found.setdefault(mod + node.name, set())
                    for sub in node.body:
                        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            members.add(sub.name)
                        elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                            members.add(sub.target.id)
                        elif isinstance(sub, ast.Assign):
                            members.update(t.id for t in sub.targets if isinstance(t, ast.Name))
                            for t in sub.targets:  # __slots__ = ("ptr", "shape", ...)
                                if isinstance(t, ast.Name) and t.id == "__slots__" and isinstance(sub.value, (ast.Tuple, ast.List)):
                                    members.update(e.value for e in sub.value.elts if isinstance(e, ast.Constant))
                    for sub in ast.walk(node):  # self.x = ... in methods
                        if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                            targets = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
                            for t in targets:
                                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                                    members.add(t.attr.lstrip("_") if not t.attr.startswith("__") else t.attr)
                    found.setdefault("", set()).add(mod + node.name)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.setdefault("", set()).add(mod + node.name)
                elif isinstance(node, ast.Assign):
                    found.setdefault("", set()).update(mod + t.id for t in node.targets if isinstance(t, ast.Name))
                elif isinstance(node, ast.ImportFrom) and mod:
                    found.setdefault("", set()).update(mod + (a.asname or a.name) for a in node.names)
        for src, cls in (("core/bind_device.cpp", "Device"), ("core/bind_stream.cpp", "Stream"),
                         ("core/bind_stream.cpp", "Event"), ("core/bind_buffer.cpp", "Buffer"),
                         ("launch/bind_launch.cpp", "LaunchConfig")):
            f = d / "python/ext" / src
            if f.is_file():
                names = re.findall(r'\.def(?:_prop_ro|_prop_rw|_rw|_ro|_static)?\(\s*"([A-Za-z_][A-Za-z0-9_]*)"', f.read_text())
                found.setdefault(cls, set()).update(names)
    return found


ISSUE_SCOPE = ("Device", "Stream", "StreamOptions", "Event", "EventOptions", "Program", "ProgramOptions",
               "ObjectCode", "Linker", "LinkerOptions", "Kernel", "LaunchConfig", "launch", "Buffer")
SCOPE_RETURNED = ("DeviceProperties", "KernelAttributes", "KernelOccupancy", "ParamInfo",
                  "MaxPotentialBlockSizeOccupancyResult", "utils.StridedMemoryView",
                  "utils.args_viewable_as_strided_memory")


def in_issue_scope(qual: str) -> bool:
    head = qual.split(".")[0]
    if head in ISSUE_SCOPE or head in SCOPE_RETURNED:
        return True
    if any(qual == s or qual.startswith(s + ".") for s in SCOPE_RETURNED):
        return True
    return qual.startswith("system.") and qual.split(".")[1] in NVML_FREE_SYSTEM


def resolve(path: str):
    import nanocuda

    obj = nanocuda
    for part in path.split("."):
        if part == "utils" and obj is nanocuda:
            try:
                import nanocuda.utils as obj  # noqa: F811
                continue
            except ImportError:
                return None
        if part == "system" and obj is nanocuda:
            try:
                import nanocuda.system as obj  # noqa: F811
                continue
            except ImportError:
                return None
        if part == "typing" and obj is nanocuda:
            import nanocuda.typing as obj  # noqa: F811
            continue
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None
        except Exception:  # noqa: BLE001 - it exists, but reading it needs a GPU (LEGACY_DEFAULT_STREAM)
            return True
    return obj


def has(owner: str | None, member: str, extra) -> str | None:
    """'' when installed nanocuda has it, 'branch' when only a branch does, None otherwise."""
    import nanocuda

    if owner is None:
        if resolve(member) is not None:
            return ""
        return "branch" if member in extra.get("", set()) else None
    target = resolve(owner)
    if owner == "ProgramOptions" and member in nanocuda.ProgramOptions.option_names():
        return ""
    if owner == "LinkerOptions" and member in nanocuda.LinkerOptions.option_names():
        return ""
    if target is not None and hasattr(target, member):
        return ""
    bare = owner.split(".")[-1]
    return "branch" if member in extra.get(owner, set()) | extra.get(bare, set()) else None


def status(qual, owner, member, why, extra, branch_label):
    note = NOTES.get(qual)
    if note == "+":
        return "same in nanocuda", True
    if note and note.startswith("="):
        return f"nanocuda's name: {note[1:]}", True
    if why and not (qual.startswith("system.") and has(owner, member, extra) == ""):
        return f"missing: {why}", False
    if member is None:
        if note and note.startswith("-"):
            return f"missing: {note[1:]}", False
        return "missing: " + REASON.get(qual, "not in nanocuda"), False
    found = has(owner, member, extra)
    if found == "":
        return "same in nanocuda", True
    if found == "branch":
        return f"same in nanocuda ({branch_label})", True
    if note and note.startswith("-"):
        return f"missing: {note[1:]}", False
    cls = qual.split(".")[0]
    return "missing: " + REASON.get(cls, "not in nanocuda yet"), False


PRIVATE_HEADING = "## cuda.core tests out of scope: private modules and packaging"
# Hand-written (the results of running cuda.core's examples on the GPU): kept as it is, last.
EXAMPLES_HEADING = "## cuda.core's examples"


def kept_examples_section() -> str:
    text = OUT.read_text() if OUT.exists() else ""
    at = text.find("\n" + EXAMPLES_HEADING + "\n")
    return text[at:].rstrip("\n") + "\n" if at >= 0 else ""


def private_tests_section() -> list[str]:
    """The conformance tests that check cuda.core's private modules or packaging, by reason."""
    spec = importlib.util.spec_from_file_location("cuda_core_private_tests", ROOT / "tools" / "cuda_core_private_tests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    groups = module.PRIVATE_TESTS
    total = sum(len(v) for v in groups.values())
    lines = ["", PRIVATE_HEADING, "",
             f"{total} tests of cuda.core's suite check cuda.core itself rather than its public API: its private "
             "modules (`cuda.core._...`) or its packaging. Code written for cuda.core's public API never "
             "meets them, so nanocuda does not reproduce them (data: `tools/cuda_core_private_tests.py`)."]
    for reason, tests in groups.items():
        lines += ["", f"**{reason}** ({len(tests)}):", ""]
        lines += [f"- `{t}`" for t in tests]
    deliberate = getattr(module, "DELIBERATE", {})
    if deliberate:
        lines += ["", "### Deliberate differences", "",
                  "Tests that fail on nanocuda by design: nanocuda accepts more there, so code written "
                  "for cuda.core still runs.", ""]
        lines += [f"- `{t}`: {why}" for t, why in deliberate.items()]
    return lines


def write_private_section_only() -> None:
    """Replaces (or appends) just the private-tests section, leaving the name table as it is."""
    text = OUT.read_text()
    head = text.split("\n" + PRIVATE_HEADING + "\n")[0].rstrip("\n")
    OUT.write_text(head + "\n" + "\n".join(private_tests_section()) + "\n" + kept_examples_section())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--branch", action="append", default=[], help="an unmerged worktree whose names count")
    ap.add_argument("--private-only", action="store_true",
                    help="rewrite only the section of private-module/packaging tests (needs no cuda.core)")
    args = ap.parse_args()
    if args.private_only:
        write_private_section_only()
        return
    extra = branch_names(args.branch)
    label = "branch " + ", ".join(pathlib.Path(b).name for b in args.branch) if args.branch else ""
    import cuda.core

    rows = [(s, q, *status(q, o, m, w, extra, label)) for s, q, o, m, w in cuda_core_rows()]
    present = sum(1 for r in rows if r[3])
    scoped = [r for r in rows if in_issue_scope(r[1])]
    scoped_present = sum(1 for r in scoped if r[3])
    lines = [
        "# cuda.core 1.2 names in nanocuda",
        "",
        f"{present} of {len(rows)} public names present ({100 * present / len(rows):.1f}%).",
        "",
        f"In the areas nanocuda covers: {scoped_present} of {len(scoped)} present "
        f"({100 * scoped_present / len(scoped):.1f}%).",
        "",
        "The areas nanocuda covers are " + ", ".join(f"`{a}`" for a in ISSUE_SCOPE) + ", the objects they return "
        "(`DeviceProperties`, `KernelAttributes`, `KernelOccupancy`, `ParamInfo`, "
        "`MaxPotentialBlockSizeOccupancyResult`), `utils.StridedMemoryView`, "
        "`utils.args_viewable_as_strided_memory` and the `system` functions that need no NVML. The rest "
        "(work-queue resources, some NVML queries, graphics interop, memory-pool "
        "details) is listed too, with why it is missing.",
        "",
        "Code that stays within the covered areas usually runs on nanocuda with the import changed (the rows below say what is missing or different):",
        "`from cuda.core.experimental import Device, Program, ...` (or `from cuda.core import ...`)",
        "becomes `from nanocuda import Device, Program, ...`. Every public name of cuda.core "
        f"{cuda.core.__version__} is below, one row each: its modules' classes and functions, and each class's",
        "public methods, properties and option fields. \"same in nanocuda\" means the same name does the",
        "same job; \"nanocuda's name\" gives nanocuda's spelling; \"missing\" says why. Generated by",
        "`tools/gen_cuda_core_table.py` from the installed cuda.core and nanocuda; "
        "`tests/python/test_cuda_core_table.py` checks the count line against the rows.",
        "",
    ]
    section = None
    for s, q, text, _ in rows:
        if s != section:
            lines += ["", f"## {s}", "", "| name | nanocuda |", "|---|---|"]
            section = s
        lines.append(f"| `{q}` | {text} |")
    lines += private_tests_section()
    OUT.write_text("\n".join(lines) + "\n" + kept_examples_section())
    print(f"{OUT}: {present}/{len(rows)}")


if __name__ == "__main__":
    main()
