"""`nanocuda bench torch`: the CPU cost of calling a custom CUDA kernel from eager PyTorch
through a nanocuda torch op, against the raw Launcher, torch's dispatcher and Triton; and
the example model's training step (examples/torch_ops) compiled, eager and in plain PyTorch.

Method: as `bench launch` (bursts of calls on a 4096-float add, a sync after each, all paths
interleaved round by round in a shuffled order; min and median per call, ratios against a
baseline measured in the same rounds). Two baselines: the Launcher writing a preallocated
output, and the Launcher after `torch.empty_like` (what a functional op must also do).
The training rows time whole steps (forward, loss, backward, SGD) including the GPU.
"""

import importlib.util
import os
import time

from .registry import Subcommand, register
from .runner import Run, Workload
from .workloads import calls

SOURCE = r"""
extern "C" __global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""
N = 4096
LAUNCHER = "nanocuda Launcher: add(a, b, out, n)"
LAUNCHER_ALLOC = "nanocuda Launcher + torch.empty_like"
OP_OUT = "nanocuda op, eager: add_out(a, b, out)"
OP_NEW = "nanocuda op, eager: add(a, b) -> new tensor"
TARGET = 1.5  # the issue's: within 1.5x of calling the Launcher directly
PLAIN = "plain PyTorch ops, eager"
_ns = [0]


def _namespace() -> str:
    _ns[0] += 1  # a fresh op namespace per run, so run() can be called twice in one process
    return f"nanocuda_bench{os.getpid()}_{_ns[0]}"


def call_workloads(torch, run: Run) -> list[Workload]:
    import nanocuda
    from nanocuda import torch_ops

    burst = run.burst
    ns = _namespace()
    a, b, out = (torch.rand(N, device="cuda") for _ in range(3))
    kernel = nanocuda.compile(SOURCE).get_kernel("add")
    grid = (N + 255) // 256
    launcher = kernel.bind(nanocuda.LaunchConfig(grid=grid, block=256), stream=torch_ops.stream(a))
    empty_like = torch.empty_like

    def raw_alloc(a, b):
        out = empty_like(a)
        launcher(a, b, out, N)
        return out

    add = torch_ops.op_from_kernel(kernel, f"{ns}::add", "(Tensor a, Tensor b) -> Tensor",
                                   grid=lambda a, b: (a.numel() + 255) // 256, block=256,
                                   args=lambda a, b, out: (a, b, out, a.numel()), dtypes="float32")
    add_out = torch_ops.op_from_kernel(kernel, f"{ns}::add_out", "(Tensor a, Tensor b, Tensor(a!) out) -> ()",
                                       grid=lambda a, b, out: (a.numel() + 255) // 256, block=256,
                                       args=lambda a, b, out: (a, b, out, a.numel()), dtypes="float32")

    def noop_body(a):
        return None

    noop = torch.library.custom_op(f"{ns}::noop", noop_body, mutates_args=(), schema="(Tensor a) -> ()")

    assert torch.equal(add(a, b), a + b) and torch.equal(add.default(a, b), a + b)
    workloads = [
        calls(LAUNCHER, launcher, (a, b, out, N), burst),
        calls(OP_OUT, add_out, (a, b, out), burst, LAUNCHER, TARGET),
        calls(LAUNCHER_ALLOC, raw_alloc, (a, b), burst),
        calls(OP_NEW, add, (a, b), burst, LAUNCHER_ALLOC, TARGET),
        calls("nanocuda op via torch's dispatcher (op.default)", add.default, (a, b), burst, LAUNCHER_ALLOC),
        calls("torch dispatcher alone: custom_op with an empty body", noop, (a,), burst, LAUNCHER),
        calls("torch.add(a, b, out=out) (built-in op)", lambda a, b, o: torch.add(a, b, out=o),
              (a, b, out), burst, LAUNCHER),
    ]
    workloads += _triton_workloads(torch, run, ns, a, b, out)
    return workloads


def _triton_workloads(torch, run: Run, ns, a, b, out) -> list[Workload]:
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # noqa: BLE001 - absent peers are reported, not fatal
        run.skip("Triton", e)
        return []

    @triton.jit
    def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)

    burst = run.burst
    out_list: list[Workload] = []
    try:
        from torch.library import triton_op, wrap_triton

        # Real annotations (this module has no `from __future__ import annotations`):
        # triton_op infers its schema from them.
        @triton_op(f"{ns}::triton_add", mutates_args=())
        def triton_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            o = torch.empty_like(a)
            n = a.numel()
            wrap_triton(add_kernel)[((n + 255) // 256,)](a, b, o, n, BLOCK=256)
            return o

        assert torch.equal(triton_add(a, b), a + b)
        out_list.append(calls("torch.library.triton_op add (Triton kernel), eager", triton_add, (a, b), burst,
                              LAUNCHER_ALLOC))
    except Exception as e:  # noqa: BLE001
        run.skip("triton_op", e)
    grid = ((N + 255) // 256,)
    add_kernel[grid](a, b, out, N, BLOCK=256)
    out_list.append(calls("Triton @jit add, launched directly (preallocated out)",
                          lambda a, b, o: add_kernel[grid](a, b, o, N, BLOCK=256), (a, b, out), burst, LAUNCHER))
    return out_list


def find_example() -> str | None:
    """examples/torch_ops of the checkout: NANOCUDA_EXAMPLES, the current folder or a parent."""
    here = os.environ.get("NANOCUDA_EXAMPLES") or os.getcwd()
    for folder in (here, *(os.path.join(here, *[os.pardir] * k) for k in (1, 2, 3))):
        path = os.path.normpath(os.path.join(folder, "examples", "torch_ops", "train.py"))
        if os.path.isfile(path):
            return path
        path = os.path.normpath(os.path.join(folder, "torch_ops", "train.py"))
        if os.path.isfile(path):
            return path
    return None


def load_example():
    path = find_example()
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location("nanocuda_example_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_workloads(torch, steps: int, run: Run) -> list[Workload]:
    train = load_example()
    if train is None:
        run.skip("training step: examples/torch_ops not found (run from the checkout, or set "
                 "NANOCUDA_EXAMPLES to its examples folder)")
        return []
    x, y = train.batches(1)[0]
    base = PLAIN
    paths = [(base, False, None), ("plain PyTorch ops, torch.compile", False, "default"),
             ("nanocuda ln_gelu op, eager", True, None),
             ("nanocuda ln_gelu op, torch.compile", True, "default"),
             ("nanocuda ln_gelu op, torch.compile reduce-overhead", True, "reduce-overhead")]
    workloads = []
    for name, fused, mode in paths:
        fused_model, plain_model = train.make_pair()
        step = train.make_step(fused_model if fused else plain_model, mode)
        t0 = time.perf_counter()
        for _ in range(3):  # compiles (and records CUDA graphs) outside the timing
            step(x, y)
        torch.cuda.synchronize()
        print(f"  {name}: warm-up (compile) {time.perf_counter() - t0:.1f} s")

        def burst(step=step) -> int:
            t = time.perf_counter_ns()
            for _ in range(steps):
                step(x, y)
            torch.cuda.synchronize()
            return time.perf_counter_ns() - t

        workloads.append(Workload(name, burst, None if name == base else base))
    return workloads


class TorchOps(Subcommand):
    name = "torch"
    help = ("a nanocuda torch op's eager call cost vs Launcher/dispatcher/Triton; "
            "the example model's training step compiled vs eager vs plain PyTorch")
    needs = ("torch",)
    targets = {OP_OUT: TARGET, OP_NEW: TARGET}

    def measure(self, run: Run) -> dict:
        """Both comparisons (`train=False`: the call rows only); the JSON also has
        "call_rows" and "train_rows" apart."""
        import torch

        rows = run.measure(call_workloads(torch, run), torch.cuda.synchronize)
        run.table(f"Calling a custom CUDA kernel from eager PyTorch: CPU cost per call (µs), bursts of "
                  f"{run.burst}, {run.rounds} interleaved rounds; × = ratio to the row's baseline "
                  f"(the Launcher, or the Launcher + torch.empty_like)", rows, baseline_label="base")
        steps = 5
        train_rounds = max(3, min(run.rounds, 30))
        tv = train_workloads(torch, steps, run) if run.option("train", True) else []
        train_rows = []
        if tv:
            train_rows = run.measure(tv, torch.cuda.synchronize, rounds=train_rounds, per_sample=steps,
                                     label="bench torch (train)")
            run.table(f"examples/torch_ops MLP (batch 128, 64-256-256-10): one training step (µs, GPU "
                      f"included), {steps} steps per sample, {train_rounds} rounds", train_rows,
                      baseline_label="plain")
        return run.result(rows + train_rows, call_rows=rows, train_rows=train_rows,
                          burst=run.burst, rounds=run.rounds)


run = register(TorchOps())
