"""`nanocuda bench graphs`: CUDA graphs from Python vs the same work in C++, one process.

Sections (each Python row has the C++ row it is divided by, and a target):
  - a device-side while_loop running a tiny kernel until a counter reaches N (1000, 10000),
    per iteration: the nanocuda-built conditional graph vs one built with the driver API in
    C++ (target 1.05); for scale, a Python loop of Launcher calls and a C++ cuLaunchKernel
    loop doing the same steps from the host;
  - building and instantiating a 1000-node graph (capture + complete) (target 1.3);
  - updating the arguments of all 100 kernel nodes of a graph (target 1.2);
  - replaying a 1-node and a 200-node graph (target 1.05).
Variants run interleaved in a shuffled order each round; the table gives min and median.
"""

from __future__ import annotations

import random
import time

from .harness import Variant, print_table, progress, summarize

SOURCE = r"""
#include <nanocuda/device/graph.cuh>
extern "C" __global__ void step(int* counter) { ++*counter; }
extern "C" __global__ void count_to(nanocuda::conditional_handle h, int* counter, int n) {
  nanocuda::set_conditional(h, ++*counter < n);
}
"""


def run(rounds: int, burst: int) -> dict:
    """Runs every section; returns {"rows": [...]} and prints the tables."""
    import numpy as np

    import nanocuda
    from nanocuda._nanocuda import _testing as ext

    dev = nanocuda.Device(0)
    code = nanocuda.compile(SOURCE)
    step, count_to = code.get_kernel("step"), code.get_kernel("count_to")
    one = nanocuda.LaunchConfig(grid=1, block=1)
    stream = nanocuda.Stream()
    counter = nanocuda.Buffer(4, stream=stream)
    clock = time.perf_counter_ns

    def read_counter() -> int:
        out = np.zeros(1, np.int32)
        nanocuda.copy(out, counter, stream=stream)
        stream.sync()
        return int(out[0])

    def reset() -> None:
        nanocuda.memset(counter, 0, stream=stream)
        stream.sync()

    variants: list[Variant] = []
    loops = {}
    loop_rounds = max(3, min(rounds, 20))
    for n in (1000, 10000):
        b = dev.create_graph_builder().begin_building()
        h = b.create_conditional_handle(default_value=1)
        body = b.while_loop(h).begin_building()
        nanocuda.launch(body, one, count_to, h, counter, n)
        body.end_building()
        graph = b.end_building().complete()
        launcher = step.bind(one, stream=stream)

        def py_graph(graph=graph, n=n) -> float:
            reset()
            t0 = clock()
            graph.launch(stream)
            stream.sync()
            t = clock() - t0
            assert read_counter() == n, "while_loop stopped at the wrong count"
            return t / n

        def cpp_graph(n=n) -> float:
            reset()
            t = ext.cpp_graph_while(count_to, counter.ptr, n, 1, stream)
            assert read_counter() == n
            return t / n

        def py_loop(launcher=launcher, n=n) -> float:
            reset()
            t0 = clock()
            for _ in range(n):
                launcher(counter)
            stream.sync()
            return (clock() - t0) / n

        def cpp_loop(n=n) -> float:
            reset()
            return ext.cpp_graph_launch_loop(step, counter.ptr, n, stream) / n

        c = Variant(f"while_loop N={n}: C++ conditional graph", lambda: 0)
        p = Variant(f"while_loop N={n}: nanocuda GraphBuilder", lambda: 0, c.name, 1.05)
        cl = Variant(f"host loop N={n}: C++ cuLaunchKernel", lambda: 0)
        pl = Variant(f"host loop N={n}: Python Launcher", lambda: 0, cl.name, None)
        loops[n] = [(c, cpp_graph), (p, py_graph), (cl, cpp_loop), (pl, py_loop)]
        variants += [c, p, cl, pl]

    # Build + instantiate 1000 nodes; update 100 nodes; replay 1 and 200 nodes.
    build_stream = nanocuda.Stream()

    def py_build() -> float:
        t0 = clock()
        b = build_stream.create_graph_builder().begin_building()
        launch = step.bind(one, stream=b)
        for _ in range(1000):
            launch(counter)
        graph = b.end_building().complete()
        t = clock() - t0
        del graph  # destroyed outside the timed region, as in C++
        return t / 1000.0

    def cpp_build() -> float:
        return ext.cpp_graph_build(step, counter.ptr, 1000) / 1000.0

    def graph_of(count: int):
        b = dev.create_graph_builder().begin_building()
        launch = step.bind(one, stream=b)
        for _ in range(count):
            launch(counter)
        return b.end_building().complete()

    g100, g1, g200 = graph_of(100), graph_of(1), graph_of(200)
    g100.update(0, counter)  # sizes the argument caches

    def py_update() -> float:
        upd = g100.update
        t0 = clock()
        for i in range(100):
            upd(i, counter)
        return (clock() - t0) / 100.0

    def cpp_update() -> float:
        return ext.cpp_graph_update(g100, counter.ptr) / 100.0

    def replay(g, count):
        def py() -> float:
            launch = g.launch
            t0 = clock()
            for _ in range(count):
                launch()
            t = clock() - t0
            g.stream.sync()
            return t / count

        def cpp() -> float:
            t = ext.cpp_graph_burst(g, count)
            g.stream.sync()
            return t / count

        return py, cpp

    r1 = replay(g1, burst)
    r200 = replay(g200, min(burst, 50))  # 200 kernels each: keep the GPU queue short
    pairs = [
        ("build+instantiate 1000 nodes", cpp_build, py_build, 1.3),
        ("update args of 100 kernel nodes", cpp_update, py_update, 1.2),
        ("replay 1-node graph", r1[1], r1[0], 1.05),
        ("replay 200-node graph", r200[1], r200[0], 1.05),
    ]
    others = []
    for label, cpp, py, target in pairs:
        c = Variant(f"{label}: C++", lambda: 0)
        p = Variant(f"{label}: Python", lambda: 0, c.name, target)
        others += [(c, cpp), (p, py)]
        variants += [c, p]

    shuffle = random.Random(1).shuffle
    for _, fn in [x for v in loops.values() for x in v] + others:  # warm-up
        fn()
    for r in range(rounds):
        order = list(others)
        if r < loop_rounds:
            for v in loops.values():
                order += v
        shuffle(order)
        for v, fn in order:
            v.samples.append(fn() / 1000.0)
        stream.sync()
        progress(r + 1, rounds, "bench graphs")
    rows = summarize(variants)
    print_table(f"CUDA graphs, µs per iteration / node / launch ({rounds} rounds; while loops "
                f"{loop_rounds}); targets on the ratio of minimums", rows)
    return {"rows": rows, "rounds": rounds, "loop_rounds": loop_rounds}
