"""Per-node graph attachment lifetimes on a real driver: graph_lifetime_cases.py and
graph_release_cases.py (the cases the mock runs) in a process of their own, a launched graph whose callback node was destroyed after
instantiation, and Kernel.from_handle keeping the kernel's library loaded."""

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

import nanocuda
from nanocuda.graph import GraphDefinition

pytestmark = pytest.mark.gpu

CASES = [str(Path(__file__).with_name(f)) for f in ("graph_lifetime_cases.py", "graph_release_cases.py")]


def test_graph_lifetime_cases_on_the_driver(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NANOCUDA_LIBCUDA"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *CASES],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_an_executable_runs_a_callback_whose_node_was_destroyed():
    calls = []

    def cb():
        calls.append(1)

    ref = weakref.ref(cb)
    g = GraphDefinition()
    node = g.callback(cb)
    graph = g.instantiate()
    node.destroy()
    del cb, node, g
    gc.collect()
    s = nanocuda.Stream()
    graph.launch(s)
    s.sync()
    assert calls == [1] and ref() is not None
    del graph
    for _ in range(200):
        gc.collect()
        if ref() is None:
            break
        s.sync()
    assert ref() is None


def test_kernel_from_handle_keeps_its_library_loaded():
    code = nanocuda.compile('extern "C" __global__ void nothing() {}')
    kernel = code.get_kernel("nothing")
    adopted = nanocuda.Kernel.from_handle(int(kernel.handle))
    del kernel, code
    gc.collect()
    assert adopted.attributes.max_threads_per_block > 0
    s = nanocuda.Stream()
    nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=1), adopted)
    s.sync()
