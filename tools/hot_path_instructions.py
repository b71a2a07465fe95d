#!/usr/bin/env python3
"""Instructions per call of every Python hot path on the mock driver (no GPU needed), via
callgrind, counted as tools/launch_instructions.py counts them: for before/after comparisons.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/hot_path_instructions.py /tmp/libcuda_mock.so [PATH...]

PATHs (default: all): launcher, launch, graph_update, node_update, node_update_buffer (its first
argument a Buffer, as in bench graphs), graph_update_floor (a bare native call doing the C++
update loop's work for one node), graph_launch (Graph.launch(stream) replay), tiled, tiled_from_pointer,
allocate_close, explicit_build, explicit_build_cpp, and the foreign-array rows (tensors of
tests/python/fake_torch_abi.c read through the torch C ABI reader, CuPy-shaped arrays with C-level
attributes): smv_tensor_map, tiled_torch, launcher_torch, launch_cupy.

Each figure is the difference between a run with CALLS calls of one path and a run with
none (every path set up in both), divided by CALLS (per node for the explicit_build rows:
GraphDefinition.launch x NODES + instantiate, and the C++ cuGraphAddKernelNode loop), counting
only nanocuda's and the mock driver's instructions (and, in brackets, the whole process's: the
interpreter's share, which the foreign-array rows spend much of theirs in). The kernel is
compiled once outside valgrind (disk cache).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_instructions import KERNEL, self_costs  # noqa: E402  (one callgrind parser)

CALLS = 20000
NODES = 500  # per explicit_build call (the mock models up to 512 nodes a graph); those rows run BUILDS calls and report per node
BUILDS = 5


def workload(name: str, calls: int) -> None:
    """Sets up every path (so the baseline run pays the same start-up), then calls `name`."""
    import nanocuda

    k = nanocuda.compile(KERNEL, arch="90").get_kernel("k")
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    device = nanocuda.Device(0)
    stream = nanocuda.Stream.legacy(device)
    run = k.bind(cfg, stream=stream)
    a, b, c = 0x7F0000001000, 0x7F0000002000, 0x7F0000003000
    from nanocuda.graph import GraphDefinition

    one = GraphDefinition()  # built explicitly: the mock's captured graphs have no nodes
    one.launch(cfg, k, a, b, c, 4)
    graph = one.instantiate()
    mr = device.memory_resource
    tile = nanocuda.Buffer(4 * 64 * 64, stream=stream, dtype="float32", shape=(64, 64))
    tiled, from_pointer = nanocuda.TensorMap.tiled, nanocuda.TensorMap.tiled_from_pointer

    def explicit_build():
        d = GraphDefinition()
        add = d.launch
        for _ in range(NODES):
            add(cfg, k, a, b, c, 4)
        d.instantiate()

    cpp_build = nanocuda._nanocuda._bench.cpp_graph_build_explicit
    bare_update = nanocuda._nanocuda._bench.cpp_graph_update_node  # the C++ loop's per-node work
    paths = {
        "launcher": lambda: run(a, b, c, 4),
        "launch": lambda: nanocuda.launch(stream, cfg, k, a, b, c, 4),
        "graph_update": lambda: graph.update(0, a, b, c, 4),
        "node_update": lambda: node_view.update(args=node_args),
        "node_update_buffer": lambda: node_view.update(args=(tile, b, c, 4)),  # bench graphs' shape: a Buffer
        "graph_update_floor": lambda: bare_update(graph, 0, a),
        "graph_launch": lambda: graph.launch(stream),
        "tiled": lambda: tiled(tile, (16, 16)),
        "tiled_from_pointer": lambda: from_pointer(a, "float32", (64, 64), box=(16, 16)),
        "allocate_close": lambda: mr.allocate(1024, stream=stream).close(stream),
        "explicit_build": explicit_build,
        "explicit_build_cpp": lambda: cpp_build(k, a, NODES),
    }
    node_view, node_args = graph[next(iter(one.nodes()))], (a, b, c, 4)  # graph[node], fetched once
    paths.update(foreign_paths(nanocuda, k, cfg, stream, run))
    for key, call in paths.items():
        try:
            call()  # the first calls decide each slot's argument kind, fill caches
        except Exception:  # noqa: BLE001 - a path this mock cannot run fails only its own row
            if key == name:
                raise
    call = paths.get(name, lambda: None)
    for _ in range(calls):
        call()


def foreign_paths(nanocuda, k, cfg, stream, run) -> dict:
    """The foreign-array rows: 3 fake torch tensors (torch C ABI reader, checked on probes as
    torch_bridge does) and 3 CuPy-shaped arrays (ctypes fields: C getters, as Cython gives CuPy)."""
    folder = os.environ.get("NANOCUDA_HOT_FAKES")
    if not folder:
        return {}
    sys.path.insert(0, folder)
    import ctypes

    import numpy as np
    import fake_torch_abi as ft
    from nanocuda import torch_bridge
    from nanocuda.utils import StridedMemoryView

    class Tensor(ft.Tensor):  # torch.Tensor's Python face, as nanocuda detects it
        data_ptr = get_device = __dlpack__ = lambda self: None

    probes = [Tensor(4096, (6, 5), (5, 1), 6), Tensor(64, (2, 3), (0, 1), 15)]
    if not torch_bridge._try_abi((Tensor,), [ft.__file__], [(t, t._cdata) for t in probes]):
        raise RuntimeError(torch_bridge._abi_why)
    ts = [Tensor(0x7F0000100000 * (i + 1), (512, 512), (512, 1), 5, 1, 0) for i in range(3)]

    class MemoryPointer(ctypes.Structure):  # C fields read by getters that make an int each call
        _fields_ = [("ptr", ctypes.c_uint64), ("device_id", ctypes.c_int32)]

    class _ndarray_base:
        __slots__ = ("data", "__dict__")
        __cuda_array_interface__ = property(lambda self: {
            "data": (self.data.ptr, False), "shape": (4,), "typestr": "<f4", "version": 3})

    _ndarray_base.__module__ = "cupy._core.core"
    cupy_type = type("ndarray", (_ndarray_base,), {"__module__": "cupy"})
    arrays = []
    for i in range(3):
        m = MemoryPointer()
        m.ptr, m.device_id = 0x7F0000001000 + 256 * i, 0
        arrays.append(cupy_type())
        arrays[-1].data = m
    n = np.int32(4)  # the kernel's int n
    from_dlpack, box = StridedMemoryView.from_dlpack, (64, 64)
    tiled = nanocuda.TensorMap.tiled
    return {
        "smv_tensor_map": lambda: [from_dlpack(t, stream_ptr=-1).as_tensor_map(box_dim=box) for t in ts],
        "tiled_torch": lambda: [tiled(t, box) for t in ts],
        "launcher_torch": lambda: run(ts[0], ts[1], ts[2], 4),
        "launch_cupy": lambda: nanocuda.launch(stream, cfg, k, arrays[0], arrays[1], arrays[2], n),
    }


def build_fakes(folder: str) -> str:
    """fake_torch_abi built into `folder`; "" without a C compiler."""
    import shutil
    import sysconfig

    cc = shutil.which("cc") or shutil.which("gcc")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python",
                       "fake_torch_abi.c")
    if not cc:
        return ""
    subprocess.run([cc, "-shared", "-fPIC", "-O2", f"-I{sysconfig.get_paths()['include']}", "-o",
                    os.path.join(folder, "fake_torch_abi.so"), src], check=True)
    return folder


def instructions(mock: str, name: str, calls: int) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0",
                   NANOCUDA_MOCK_GRAPH_NODES="1", OPENBLAS_NUM_THREADS="1")  # no BLAS spinner
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no",
                        sys.executable, os.path.abspath(__file__), "--workload", name, str(calls)],
                       check=True, env=env, cwd=tmp, capture_output=True)
        return self_costs(open(out).read())


LABELS = {
    "launcher": "Launcher call, 4 args",
    "launch": "launch(), 4 args",
    "graph_update": "Graph.update(0, 4 args)",
    "node_update": "graph[node].update(args=4)",
    "node_update_buffer": "graph[node].update(args=Buffer+3)",
    "graph_update_floor": "bare C++ node update (Python floor)",
    "graph_launch": "Graph.launch(stream) (replay)",
    "tiled": "TensorMap.tiled(Buffer)",
    "tiled_from_pointer": "TensorMap.tiled_from_pointer",
    "allocate_close": "allocate() + close()",
    "explicit_build": "explicit build, per node",
    "explicit_build_cpp": "C++ explicit build, per node",
    "smv_tensor_map": "SMV.from_dlpack(t).as_tensor_map x3",
    "tiled_torch": "TensorMap.tiled(torch) x3",
    "launcher_torch": "Launcher call, 3 torch + int",
    "launch_cupy": "launch(), 3 CuPy + np.int32",
}


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(sys.argv[2], int(sys.argv[3]))
        return
    mock = sys.argv[1] if len(sys.argv) > 1 else "/tmp/libcuda_mock.so"
    names = sys.argv[2:] or list(LABELS)
    fakes = tempfile.TemporaryDirectory()  # removed when main() returns
    if build_fakes(fakes.name):
        os.environ["NANOCUDA_HOT_FAKES"] = fakes.name
    subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "none", "0"],
                   check=True, env=dict(os.environ, NANOCUDA_LIBCUDA=mock,
                                        NANOCUDA_MOCK_GRAPH_NODES="1"))  # fills the cache
    base = instructions(mock, "none", 0)
    for name in names:
        calls, per = (BUILDS, BUILDS * NODES) if name.startswith("explicit_build") else (CALLS, CALLS)
        ours, whole = ((a - b) / per for a, b in zip(instructions(mock, name, calls), base))
        print(f"{LABELS[name] + ':':38s} {ours:.0f} instructions ({whole:.0f} whole process)",
              flush=True)


if __name__ == "__main__":
    main()
