"""GPU-machine probe driver (scripts/gpu-torchcalls): per-tensor cost of each torch C ABI reading variant, with launches."""
import os
import statistics
import sys

import torch
from torch.utils.cpp_extension import load

here = os.path.dirname(os.path.abspath(__file__))
probe = load(name="nanocuda_abi_probe", sources=[os.path.join(here, "torch_abi_calls.cpp")],
             extra_cflags=["-O2"], verbose=False)
ts = tuple(torch.zeros(1024, device="cuda") for _ in range(3))
torch.cuda.synchronize()
print("torch", torch.__version__, "at::Tensor offset in THPVariable:",
      probe.setup(ts[0], type(ts[0]).__dlpack_c_exchange_api__,
                  os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")))
names = probe.names()
rounds = int(os.environ.get("ROUNDS", "30"))
for launch, n in ((1, 20000), (0, 200000)):
    res = {v: [] for v in range(len(names))}
    for r in range(rounds):
        order = list(range(len(names)))
        order = order[r % len(order):] + order[:r % len(order)]  # rotate: no fixed neighbour
        for v in order:
            res[v].append(probe.run(ts, v, n, launch))
    base_min = min(res[0])
    base_med = statistics.median(res[0])
    title = "with one cuLaunchKernel per iteration" if launch else "hot loop, no launch"
    print(f"\n== 3 tensors per iteration, {title}; {rounds} rounds x {n}")
    print(f"{'variant':80s} {'min ns':>8s} {'med ns':>8s} {'+min/tensor':>11s} {'+med/tensor':>11s} {'min x none':>10s}")
    for v, name in enumerate(names):
        mn, md = min(res[v]), statistics.median(res[v])
        print(f"{name:80s} {mn:8.1f} {md:8.1f} {(mn - base_min) / 3:11.2f} {(md - base_med) / 3:11.2f} {mn / base_min:10.3f}")
sys.stdout.flush()
