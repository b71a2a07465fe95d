"""Per-node graph attachment lifetimes without a GPU: graph_lifetime_cases.py and
graph_release_cases.py run against tools/mock_libcuda.c in a process of their own (the mock is
the driver it loads)."""

import os
import subprocess
import sys
from pathlib import Path

CASES = [str(Path(__file__).with_name(f)) for f in ("graph_lifetime_cases.py", "graph_release_cases.py")]


def test_graph_lifetime_cases_against_the_mock_driver(mock_libcuda, tmp_path):
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CASES],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-2000:]


def test_a_release_that_cannot_be_queued_is_reported_and_waits_for_the_graph(mock_libcuda):
    # cuLaunchHostFunc fails: the update still succeeds, the failure is a deferred error, and
    # the old set stays with the Graph (never freed under a launch still running it).
    from mock_run import run_on_mock

    run_on_mock(mock_libcuda, """
        import gc, weakref
        import nanocuda
        from nanocuda.graph import GraphDefinition

        class Held:
            def __call__(self):
                pass

        old = Held()
        ref = weakref.ref(old)
        first, second = GraphDefinition(), GraphDefinition()
        first.callback(old)
        second.callback(Held())
        graph = first.instantiate()
        del old
        s = nanocuda.Stream()
        graph.launch(s)
        graph.update(second)
        errors = nanocuda.take_deferred_errors()
        assert len(errors) == 1 and "cuLaunchHostFunc" in errors[0] and "Graph.update" in errors[0], errors
        del first, second
        s.sync()
        gc.collect()
        assert ref() is not None
        del graph
        for _ in range(100):
            gc.collect()
            if ref() is None:
                break
        assert ref() is None
        print("ok")
    """, NANOCUDA_MOCK_FAIL="cuLaunchHostFunc:2")
