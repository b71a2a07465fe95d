#!/usr/bin/env python3
"""Instructions per call of every Python hot path on the mock driver (no GPU needed), via
callgrind, counted as tools/launch_instructions.py counts them: for before/after comparisons.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/hot_path_instructions.py /tmp/libcuda_mock.so [PATH...]

PATHs (default: all): launcher, launch, graph_update, node_update, tiled, tiled_from_pointer,
allocate_close, explicit_build, explicit_build_cpp.

Each figure is the difference between a run with CALLS calls of one path and a run with
none (every path set up in both), divided by CALLS (per node for the explicit_build rows:
GraphDefinition.launch x NODES + instantiate, and the C++ cuGraphAddKernelNode loop), counting only nanocuda's and the mock
driver's instructions. The kernel is compiled once outside valgrind (disk cache).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_instructions import KERNEL, nanocuda_cost  # noqa: E402  (one callgrind parser)

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
    paths = {
        "launcher": lambda: run(a, b, c, 4),
        "launch": lambda: nanocuda.launch(stream, cfg, k, a, b, c, 4),
        "graph_update": lambda: graph.update(0, a, b, c, 4),
        "node_update": lambda: node_view.update(args=node_args),
        "tiled": lambda: tiled(tile, (16, 16)),
        "tiled_from_pointer": lambda: from_pointer(a, "float32", (64, 64), box=(16, 16)),
        "allocate_close": lambda: mr.allocate(1024, stream=stream).close(stream),
        "explicit_build": explicit_build,
        "explicit_build_cpp": lambda: cpp_build(k, a, NODES),
    }
    node_view, node_args = graph[next(iter(one.nodes()))], (a, b, c, 4)  # graph[node], fetched once
    for call in paths.values():
        call()  # the first calls decide each slot's argument kind, fill caches
    call = paths.get(name, lambda: None)
    for _ in range(calls):
        call()


def instructions(mock: str, name: str, calls: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0",
                   NANOCUDA_MOCK_GRAPH_NODES="1")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no",
                        sys.executable, os.path.abspath(__file__), "--workload", name, str(calls)],
                       check=True, env=env, cwd=tmp, capture_output=True)
        return nanocuda_cost(open(out).read())


LABELS = {
    "launcher": "Launcher call, 4 args",
    "launch": "launch(), 4 args",
    "graph_update": "Graph.update(0, 4 args)",
    "node_update": "graph[node].update(args=4)",
    "tiled": "TensorMap.tiled(Buffer)",
    "tiled_from_pointer": "TensorMap.tiled_from_pointer",
    "allocate_close": "allocate() + close()",
    "explicit_build": "explicit build, per node",
    "explicit_build_cpp": "C++ explicit build, per node",
}


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(sys.argv[2], int(sys.argv[3]))
        return
    mock = sys.argv[1] if len(sys.argv) > 1 else "/tmp/libcuda_mock.so"
    names = sys.argv[2:] or list(LABELS)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "none", "0"],
                   check=True, env=dict(os.environ, NANOCUDA_LIBCUDA=mock,
                                        NANOCUDA_MOCK_GRAPH_NODES="1"))  # fills the cache
    base = instructions(mock, "none", 0)
    for name in names:
        calls, per = (BUILDS, BUILDS * NODES) if name.startswith("explicit_build") else (CALLS, CALLS)
        per_call = (instructions(mock, name, calls) - base) / per
        print(f"{LABELS[name] + ':':32s} {per_call:.0f} instructions", flush=True)


if __name__ == "__main__":
    main()
