"""The stubs (and so the docs' signatures) give parameters the types the converters accept.

Bindings take many arguments as nb::object to check them with a clear error, which nanobind's
stubgen writes as `object | None`; tools/gen_stubs.py's PARAM_TYPES says what each accepts.
These tests fail when a parameter falls back to a bare `object` again.
"""

import ast
import builtins
import pathlib

import nanocuda

STUB = pathlib.Path(nanocuda.__file__).with_name("_nanocuda.pyi")
OPEN = {"object", "object | None"}

# Parameters that stay `object`, each with why: they accept any object, or a duck-typed set
# too wide to name. A new entry needs a reason; a narrower converter belongs in PARAM_TYPES.
ALLOWED_OPEN = {
    ("Device.create_stream", "options"): "StreamOptions, a dict, or any object with its attributes",
    ("Device.create_event", "options"): "EventOptions, a dict, or any object with its attributes",
    ("Stream.record", "options"): "EventOptions, a dict, or any object with its attributes",
    ("VirtualMemoryResource.__init__", "config"): "VirtualMemoryResourceOptions or a dict (cuda.core's keyword)",
    ("VirtualMemoryResource.modify_allocation", "config"): "VirtualMemoryResourceOptions or a dict",
    ("Buffer.__init__", "dtype"): "any dtype spelling the dtype reader knows (str, numpy, torch)",
    ("Buffer.from_ipc_descriptor", "dtype"): "as Buffer.__init__",
    ("Buffer.from_ipc_descriptor", "shape"): "as Buffer.__init__ (left to the IPC code's reader)",
    ("Buffer.from_handle", "owner"): "any object, kept alive with the buffer",
    ("ProgramOptions.__setattr__", "value"): "the attribute protocol: a field's value or a replacement method",
    ("Graph.__exit__", "exc_type"): "the context-manager protocol",
    ("Graph.__exit__", "exc"): "the context-manager protocol",
    ("Graph.__exit__", "traceback"): "the context-manager protocol",
    ("Graph.update", "target"): "an int node index or a Graph/GraphBuilder (overloaded by hand)",
    ("Graph.__getitem__", "node"): "a nanocuda.graph.GraphNode (a Python class the stub cannot name)",
    ("GraphBuilder.callback", "fn"): "any callable",
    ("GraphBuilder.if_cond", "handle"): "a conditional handle (an int subclass) or a condition",
    ("GraphBuilder.if_else", "handle"): "as if_cond",
    ("GraphBuilder.while_loop", "handle"): "as if_cond",
    ("GraphBuilder.switch", "handle"): "as if_cond",
    ("GraphBuilder.if_then", "condition"): "as if_cond",
    ("GraphBuilder.create_condition", "default_value"): "a bool or int, or None",
    ("DeviceMemoryResource.__init__", "options"): "DeviceMemoryResourceOptions or any object with its attributes",
    ("ManagedMemoryResource.__init__", "options"): "ManagedMemoryResourceOptions or any object with its attributes",
    ("VirtualMemoryResource.__init__", "options"): "VirtualMemoryResourceOptions or any object with its attributes",
    ("PinnedMemoryResource.__init__", "options"): "PinnedMemoryResourceOptions (a Python dataclass, checked by class)",
    ("Kernel.bind", "tensor_maps"): "TensorMaps by parameter, read by the launch code",
    ("KernelOccupancy.max_active_clusters", "block"): "not narrowed yet (compile bindings)",
    ("KernelOccupancy.max_active_clusters", "cluster"): "not narrowed yet (compile bindings)",
    ("KernelOccupancy.max_active_clusters", "config"): "not narrowed yet (compile bindings)",
    ("KernelOccupancy.max_potential_cluster_size", "config"): "not narrowed yet (compile bindings)",
    ("Linker.__init__", "options"): "not narrowed yet (compile bindings)",
}
# Whatever the function, a parameter of one of these names must say this (a substring of its
# annotation), so the commonest arguments cannot regress to `object`.
NAMED = {"size": "int", "nbytes": "int", "count": "int", "priority": "int", "non_blocking": "bool",
         "stream": "Stream", "device": "DeviceLike", "device_id": "DeviceLike"}


def _params():
    """(qualified function name, parameter name, annotation text) for every stub parameter."""
    out = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.FunctionDef):
                a = node.args
                for arg in a.posonlyargs + a.args + a.kwonlyargs:
                    if arg.annotation is not None:
                        out.append((prefix + node.name, arg.arg, ast.unparse(arg.annotation)))

    visit(ast.parse(STUB.read_text()).body, "")
    return out


def _public(qual: str) -> bool:
    """Public API, less the comparison dunders (they take any object by protocol) and the
    typing-only protocol classes of the aliases."""
    if qual.rsplit(".", 1)[-1] in ("__eq__", "__ne__") or qual.startswith(("Supports", "Has")):
        return False
    return not any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
                   for part in qual.split("."))


def test_no_parameter_is_left_untyped():
    untyped = {(q, p) for q, p, t in _params() if t in OPEN and _public(q)} - set(ALLOWED_OPEN)
    assert not untyped, ("these stub parameters say only `object`: give them their accepted types in "
                         f"tools/gen_stubs.py PARAM_TYPES (or a reason in ALLOWED_OPEN): {sorted(untyped)}")


def test_the_allowlist_is_not_stale():
    open_now = {(q, p) for q, p, t in _params() if t in OPEN}
    assert not set(ALLOWED_OPEN) - open_now, sorted(set(ALLOWED_OPEN) - open_now)


def test_common_parameters_carry_their_types():
    wrong = [(q, p, t) for q, p, t in _params() if p in NAMED and _public(q) and NAMED[p] not in t]
    assert not wrong, wrong


def test_examples_from_the_api():
    sig = {(q, p): t for q, p, t in _params()}
    assert sig[("memset", "size")] == "int | None"
    assert sig[("memset", "dst")] == "DevicePointer"
    assert sig[("Stream.__init__", "non_blocking")] == "bool"
    assert sig[("Stream.__init__", "priority")] == "int"
    assert sig[("Buffer.__init__", "stream")] == "StreamLike | None"
    assert sig[("Buffer.__dlpack__", "stream")] == "int | Stream | SupportsCudaStream | None"


def test_get_all_devices_takes_no_arguments():
    tree = ast.parse(STUB.read_text())
    device = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Device")
    fn = next(n for n in device.body if isinstance(n, ast.FunctionDef) and n.name == "get_all_devices")
    a = fn.args
    assert not (a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)


def test_every_annotation_name_is_defined():
    """The aliases (StreamLike, DeviceLike, ...) and classes an annotation names exist in the stub."""
    tree = ast.parse(STUB.read_text())
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            used.update(n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name))
    assert not used - defined, sorted(used - defined)
