#!/usr/bin/env python3
"""Regenerates python/nanocuda/_nanocuda.pyi: nanobind's stubgen for the nanobind bindings,
plus hand-written stubs for the raw CPython types (TensorMap, Launcher) it cannot read, and the
parameter types of PARAM_TYPES: arguments the bindings take as nb::object (to check them with a
clear error: core/py_size.h, interop to_stream, device_ordinal_arg) come out of stubgen as
`object | None`; the table says what the converters really accept.

    python3 tools/gen_stubs.py      (with nanocuda installed in this interpreter)
"""
import ast
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
HANDWRITTEN = ROOT / "tools" / "stubs_raw_types.pyi"
ALIASES = ROOT / "tools" / "stubs_aliases.pyi"

# What each nb::object parameter accepts, by name everywhere ("*") or by "Class.method"/"function"
# (which wins). Applied only where stubgen wrote `object` or `object | None`, so a binding that
# declares a real C++ type keeps it; "| None" is added where the default is None. The aliases
# (StreamLike, DeviceLike, DevicePointer, ...) are defined in tools/stubs_aliases.pyi.
PARAM_TYPES: dict[str, dict[str, str]] = {
    "*": {  # one meaning wherever the name appears
        "size": "int", "nbytes": "int", "new_size": "int", "min_bytes_to_keep": "int", "width": "int",
        "count": "int", "element_size": "int", "priority": "int", "non_blocking": "bool",
        "stream": "StreamLike", "upload_stream": "StreamLike",
        "device": "DeviceLike", "device_id": "DeviceLike", "peer": "DeviceLike",
        "dynamic_shared_memory": "int", "dynamic_shared_memory_size": "int",
        "dynamic_shared_memory_needed": "int",
        "auto_free_on_launch": "bool", "device_launch": "bool", "use_node_priority": "bool",
    },
    "Stream.from_handle": {"handle": "int"},
    "Stream.adopt": {"obj": "StreamLike"},
    "Device.create_stream": {"obj": "StreamLike | None"},
    "Stream.wait": {"event_or_stream": "Event | StreamLike"},
    "Stream.record": {"event": "Event"},
    "Event.record": {"stream": "StreamLike"},
    "Buffer.__init__": {"shape": "int | Sequence[int]"},
    "Buffer.copy_to": {"dst": "Buffer"},
    "Buffer.copy_from": {"src": "Buffer"},
    "Buffer.fill": {"value": "int | float | bytes | bytearray | memoryview"},
    "Buffer.from_handle": {"ptr": "int", "mr": "MemoryResource"},
    "Buffer.__dlpack__": {"stream": "int | Stream | SupportsCudaStream",
                          "max_version": "tuple[int, int]", "dl_device": "tuple[int, int]",
                          "copy": "bool"},
    "copy": {"dst": "DevicePointer", "src": "DevicePointer"},
    "result_name": {"code": "int"},
    "result_description": {"code": "int"},
    "Device.attribute": {"attribute": "int"},
    "DeviceMemoryResource.release_threshold": {"arg": "int"},
    **{f"GraphMemoryResourceAttributes.{a}": {"arg": "int"}  # the marks take 0; the others refuse
       for a in ("reserved_mem_current", "reserved_mem_high", "used_mem_current", "used_mem_high")},
    "DeviceMemoryResource.peer_accessible_by": {"arg": "Sequence[DeviceLike]"},
    **{f"ObjectCode.from_{kind}": {"module": "bytes | bytearray | memoryview | str | os.PathLike[str]",
                                   "name": "str", "symbol_mapping": "dict[str, str]"}
       for kind in ("cubin", "fatbin", "ptx", "ltoir", "object", "library")},
    "ObjectCode.get_kernel": {"name": "str | bytes"},
    "Kernel.from_handle": {"handle": "int", "mod": "ObjectCode"},
    "Device.memory_resource": {"resource": "MemoryResource | None"},
    "Program.__init__": {"code": "str | bytes | bytearray",
                         "code_type": "Literal['c++', 'ptx', 'nvvm'] | ProgramOptions",
                         "options": "ProgramOptions", "name": "str"},
    "Program.from_file": {"path": "str | os.PathLike[str]", "options": "ProgramOptions"},
    "Program.compile": {"target_type": "CodeTarget", "name_expressions": "str | Sequence[str]",
                        "logs": "SupportsWrite", "cache": "ProgramCacheResource"},
    "Kernel.from_handle": {"handle": "int", "mod": "ObjectCode"},
    "Program.cache_key": {"target_type": "CodeTarget", "name_expressions": "str | Sequence[str]"},
    "Program.flags": {"target": "CodeTarget"},
    "ProgramOptions.as_bytes": {"target_type": "CodeTarget"},
    "memset": {"dst": "DevicePointer", "value": "int"},
    "MemoryResource.deallocate": {"buffer": "Buffer | int"},
    "ManagedMemoryResource.prefetch": {"buffer": "Buffer", "location": "Device | int | Literal['cpu', 'host']"},
    "ManagedMemoryResource.advise": {"buffer": "Buffer", "location": "Device | int | Literal['cpu', 'host']"},
    "VirtualMemoryResource.modify_allocation": {"buffer": "Buffer"},
    "VirtualMemoryResource.add_peer": {"device": "DeviceLike"},
    "LaunchConfig.__init__": {"grid": "int | Sequence[int]", "block": "int | Sequence[int]",
                              "cluster": "int | Sequence[int]", "shared_mem": "int", "shmem_size": "int",
                              "cooperative": "bool", "cooperative_launch": "bool", "is_cooperative": "bool",
                              "pdl": "bool", "programmatic_stream_serialization": "bool"},
    "Graph.debug_dot_print": {"options": "GraphDebugPrintOptions"},
    "GraphBuilder.debug_dot_print": {"options": "GraphDebugPrintOptions"},
    "GraphBuilder.complete": {"options": "GraphCompleteOptions"},
    "GraphBuilder.create_conditional_handle": {"default_value": "int"},
    "GraphBuilder.memset": {"dst": "DevicePointer", "value": "int"},
    "GraphBuilder.memcpy": {"dst": "DevicePointer", "src": "DevicePointer"},
    "GraphBuilder.record_event": {"event": "Event"},
    "GraphBuilder.wait_event": {"event": "Event"},
    "GraphBuilder.free": {"ptr": "int"},
    "GraphBuilder.begin_building": {"mode": "str"},
    "GraphBuilder.split": {"count": "int"},
    "Device.create_opaque_array": {"options": "_texture.OpaqueArrayOptions | dict[str, Any]"},
    "Device.create_mipmapped_array": {"options": "_texture.MipmappedArrayOptions | dict[str, Any]"},
    "Device.create_texture_object": {"resource": "_texture.ResourceDescriptor",
                                     "options": "_texture.TextureObjectOptions | dict[str, Any]"},
    "Device.create_surface_object": {"resource": "_texture.ResourceDescriptor"},
    "Device.create_context": {"options": "_green_context.ContextOptions | dict[str, Any]"},
    "SMResource.split": {"options": "_green_context.SMResourceOptions | dict[str, Any]", "dry_run": "bool"},
    "Context.create_stream": {"options": "_cuda_core.StreamOptions | dict[str, Any]"},
    "Event.__rsub__": {"arg": "Any"},
    "Event.__isub__": {"arg": "Any"},
    "Buffer.from_ipc_descriptor": {"mr": "DeviceMemoryResource | PinnedMemoryResource",
                                   "ipc_descriptor": "IPCBufferDescriptor"},
    "DeviceMemoryResource.from_allocation_handle": {"alloc_handle": "IPCAllocationHandle | int"},
    "DeviceMemoryResource.register": {"uuid": "uuid.UUID | bytes"},
    "DeviceMemoryResource.from_registry": {"uuid": "uuid.UUID | bytes"},
    "PinnedMemoryResource.from_allocation_handle": {"alloc_handle": "IPCAllocationHandle | int"},
    "PinnedMemoryResource.register": {"uuid": "uuid.UUID | bytes"},
    "PinnedMemoryResource.from_registry": {"uuid": "uuid.UUID | bytes"},
    "GraphBuilder.callback": {"user_data": "bytes | bytearray | memoryview | int"},
}
# Bindings that return an object of the nanocuda.texture package: their return types.
TEXTURE_RETURNS = {"create_opaque_array": "OpaqueArray", "create_mipmapped_array": "MipmappedArray",
                   "create_texture_object": "TextureObject", "create_surface_object": "SurfaceObject"}
_OPEN = {"object", "object | None"}


def apply_param_types(text: str) -> str:
    """Rewrites the `object` annotations PARAM_TYPES covers; warns about a qualified entry that
    matched nothing (a renamed function or parameter), so the table cannot silently stop applying."""
    lines = text.encode().split(b"\n")  # ast columns count UTF-8 bytes
    used: set[tuple[str, str]] = set()
    edits = []  # (line, start col, end col, new annotation)

    def visit(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.FunctionDef):
                qual = prefix + node.name
                a = node.args
                positional = a.posonlyargs + a.args
                defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
                for arg, default in list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
                    ann = arg.annotation
                    if ann is None or ast.unparse(ann) not in _OPEN:
                        continue
                    new = PARAM_TYPES.get(qual, {}).get(arg.arg)
                    if new is not None:
                        used.add((qual, arg.arg))
                    else:
                        new = PARAM_TYPES["*"].get(arg.arg)
                    if new is None:
                        continue
                    if isinstance(default, ast.Constant) and default.value is None and "None" not in new:
                        new += " | None"
                    assert ann.lineno == ann.end_lineno
                    edits.append((ann.lineno - 1, ann.col_offset, ann.end_col_offset, new))

    visit(ast.parse(text).body, "")
    # Right to left within a line, so earlier columns stay valid.
    for line, start, end, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        lines[line] = lines[line][:start] + new.encode() + lines[line][end:]
    stale = {(q, p) for q, params in PARAM_TYPES.items() if q != "*" for p in params} - used
    if stale:  # a warning, not a failure: a binding that now declares its type needs no entry
        print(f"gen_stubs.py: warning: PARAM_TYPES entries match no `object` parameter: {sorted(stale)}",
              file=sys.stderr)
    return b"\n".join(lines).decode()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "stub.pyi"
        subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "nanocuda._nanocuda",
                        "-o", str(out)], check=True, cwd=tmp)
        text = out.read_text()
    text = re.sub(r"^from nanocuda import (\([^)]*\)|.*)\n", "", text, flags=re.M)
    # A Python-side hook on a bound class (MemoryResource.__init_subclass__) is not part of
    # the extension's stub.
    text = re.sub(r"^from nanocuda\._(managed_buffer|memory_resource) import (\([^)]*\)|.*)\n", "", text, flags=re.M)
    text = text.replace("    launch: types.MethodDescriptorType = ...\n",
                        "    def launch(self, stream: object | None = None) -> None:\n"
                        '        """Replay on `stream` (default: the captured one)."""\n')
    text = text.replace("    update: types.MethodDescriptorType = ...\n",
                        "    def update(self, target: object, *args: object) -> None:\n"
                        '        """\n'
                        "        update(index, *args): give kernel node `index` new arguments (checked like a launch).\n"
                        "        update(source): make this instantiated graph run `source` (a finished GraphBuilder or\n"
                        "        a Graph of the same shape) through cuGraphExecUpdate, without instantiating again;\n"
                        "        raises ValueError naming the node that prevents it.\n"
                        '        """\n')
    # Raw fast paths (bench memory): Device.allocate gets its signature; the resources inherit
    # MemoryResource.allocate's stub.
    device = text.index("class Device:")
    text = text[:device] + text[device:].replace(
        "    allocate: types.MethodDescriptorType = ...\n",
        "    def allocate(self, size: object, stream: object | None = None) -> Buffer:\n"
        '        """\n'
        "        A Buffer of `size` bytes from Device.memory_resource, in the order of `stream`. Example: "
        "``buf = nanocuda.Device(0).allocate(1 << 20)``.\n"
        '        """\n', 1)
    text = text.replace("    allocate: types.MethodDescriptorType = ...\n", "")
    text = text.replace("    close: types.MethodDescriptorType = ...\n",
                        "    def close(self, stream: object | None = None) -> None:\n"
                        '        """\n'
                        "        Free the memory in the order of `stream` (default: the allocating stream).\n"
                        '        """\n')
    text = text.replace("def launch(stream, config, kernel, *args):",
                        "def launch(stream: object, config: LaunchConfig, kernel: Kernel, *args: object) -> None:")
    text = re.sub(r"(def bind\(self, config: LaunchConfig, \*, stream: object \| None = None, "
                  r"tensor_maps: object \| None = None\)) -> object:", r"\1 -> Launcher:", text)
    for method, cls in TEXTURE_RETURNS.items():
        text = re.sub(rf"(    def {method}\(self, [^)]*\)) -> object:", rf"\1 -> _texture.{cls}:", text)
    # Takes nb::args only to refuse arguments with its own message: the stub says it takes none.
    text = text.replace("    def get_all_devices(*args, **kwargs) -> tuple:",
                        "    def get_all_devices() -> tuple[Device, ...]:")
    # LaunchConfig's (*args, **kwargs) overload exists only to word the error for arguments the
    # keyword overload does not take: the stub keeps the one real signature.
    text = text.replace("    @overload\n    def __init__(self, *args, **kwargs) -> None: ...\n\n", "")
    text = text.replace("    @overload\n    def __init__(self, *, grid:", "    def __init__(self, *, grid:")
    if "@overload" not in text:
        text = text.replace("from typing import overload\n", "")
    # The aliases go after stubgen's imports, before the first class.
    first = re.search(r"^class ", text, flags=re.M).start()
    text = text[:first] + ALIASES.read_text() + "\n" + text[first:] + "\n" + HANDWRITTEN.read_text()
    text = apply_param_types(text)
    header = ("# Generated by tools/gen_stubs.py; edit tools/stubs_raw_types.pyi for TensorMap/Launcher,\n"
              "# tools/stubs_aliases.pyi and gen_stubs.PARAM_TYPES for parameter types.\n")
    (ROOT / "python/nanocuda/_nanocuda.pyi").write_text(header + text)


if __name__ == "__main__":
    main()
