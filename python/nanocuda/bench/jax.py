"""`nanocuda bench jax`: the dispatch cost of a jitted JAX function that calls one nanocuda
op, against the same function calling JAX's own `x + y`; and the examples/jax_ops training
step (jitted) with the nanocuda bias+GELU op against the same model in plain JAX.

Method: as `bench launch` (bursts of calls, all paths interleaved round by round in a
shuffled order after a warm-up; min and median per call, ratios against the baseline measured
in the same rounds). A burst times the Python calls only (JAX dispatches asynchronously); the
wait for the last result comes after it, untimed. Training rows time whole steps, GPU included.
"""

from __future__ import annotations

import importlib.util
import os
import time

from .registry import Subcommand, register
from .runner import Run, Workload

SOURCE = r"""
extern "C" __global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""
N = 4096
PLAIN = "jax.jit(lambda x, y: x + y)"
OP = "jax.jit(nanocuda op add(x, y))"
TARGET = 1.2  # the issue's: within 1.2x of the built-in op's dispatch
TRAIN_PLAIN = "training step, plain JAX (jitted)"
_last: list = [None]


def _burst(f, args, count):
    def run() -> int:
        clock = time.perf_counter_ns
        t0 = clock()
        for _ in range(count):
            r = f(*args)
        _last[0] = r
        return clock() - t0

    return run


def _sync() -> None:
    if _last[0] is not None:
        import jax

        jax.block_until_ready(_last[0])


def call_workloads(jax, run: Run) -> list[Workload]:
    import nanocuda
    from nanocuda import jax_ops

    jnp = jax.numpy
    kernel = nanocuda.compile(SOURCE).get_kernel("add")
    add = jax_ops.op_from_kernel(kernel, "add", grid=lambda a, b: (a.size + 255) // 256, block=256,
                                 args=lambda a, b, o: (a, b, o, a.size), dtypes="float32")
    x = jax.random.normal(jax.random.PRNGKey(0), (N,))
    y = jax.random.normal(jax.random.PRNGKey(1), (N,))
    plain, fused = jax.jit(lambda x, y: x + y), jax.jit(add)
    assert bool(jnp.array_equal(fused(x, y), plain(x, y)))
    return [Workload(PLAIN, _burst(plain, (x, y), run.burst)),
            Workload(OP, _burst(fused, (x, y), run.burst), PLAIN, TARGET)]


def load_example():
    """examples/jax_ops/train.py of the checkout: NANOCUDA_EXAMPLES, the current folder or a parent."""
    here = os.environ.get("NANOCUDA_EXAMPLES") or os.getcwd()
    for folder in (here, *(os.path.join(here, *[os.pardir] * k) for k in (1, 2, 3))):
        for path in (os.path.join(folder, "examples", "jax_ops", "train.py"),
                     os.path.join(folder, "jax_ops", "train.py")):
            path = os.path.normpath(path)
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location("nanocuda_example_jax_train", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module
    return None


def train_workloads(steps: int, run: Run) -> list[Workload]:
    train = load_example()
    if train is None:
        run.skip("training step: examples/jax_ops not found (run from the checkout, or set "
                 "NANOCUDA_EXAMPLES to its examples folder)")
        return []
    x, y = train.batches(1)[0]
    workloads = []
    for name, fused in ((TRAIN_PLAIN, False), ("training step, nanocuda bias_gelu op (jitted)", True)):
        step, params = train.make_step(fused), train.init_params()
        step(params, x, y)[1].block_until_ready()  # compiles outside the timing

        def burst(step=step, params=params) -> int:
            t = time.perf_counter_ns()
            p = params
            for _ in range(steps):
                p, value = step(p, x, y)
            value.block_until_ready()
            return time.perf_counter_ns() - t

        workloads.append(Workload(name, burst, None if fused is False else TRAIN_PLAIN))
    return workloads


class JaxOps(Subcommand):
    name = "jax"
    help = ("a jitted call of a nanocuda JAX op vs JAX's own x + y (dispatch cost); the "
            "examples/jax_ops training step with the op vs plain JAX")
    needs = ("jax",)
    targets = {OP: TARGET}

    def measure(self, run: Run) -> dict:
        """Both comparisons; the JSON also has "call_rows" and "train_rows" apart."""
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax

        rows = run.measure(call_workloads(jax, run), _sync)
        run.table(f"A jitted JAX function on {N} floats: CPU dispatch cost per call (µs), bursts of "
                  f"{run.burst}, {run.rounds} interleaved rounds; × = ratio to {PLAIN}", rows,
                  baseline_label="x + y")
        steps = 5
        train_rounds = max(3, min(run.rounds, 30))
        tv = train_workloads(steps, run) if run.option("train", True) else []
        train_rows = []
        if tv:
            train_rows = run.measure(tv, None, rounds=train_rounds, per_sample=steps, label="bench jax (train)")
            run.table(f"examples/jax_ops MLP (batch 128, 64-256-10): one jitted SGD step (µs, GPU "
                      f"included), {steps} steps per sample, {train_rounds} rounds", train_rows,
                      baseline_label="plain")
        return run.result(rows + train_rows, call_rows=rows, train_rows=train_rows,
                          burst=run.burst, rounds=run.rounds)


run = register(JaxOps())
