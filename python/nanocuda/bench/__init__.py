"""`nanocuda bench`: one module per subcommand, each with `run(rounds, burst) -> dict`.

A subcommand is added by listing its module here; the CLI, --json and --plot pick it up.
"""

# name -> (module, one-line description), in the order `nanocuda bench` runs them.
SUBCOMMANDS = {
    "launch": ("nanocuda.bench.launch", "launch CPU cost vs a C++ cuLaunchKernel loop (seed 000)"),
    "tma": ("nanocuda.bench.tma", "TMA descriptor creation vs C++ (seed 001), and seed 000's loop"),
    "gemm": ("nanocuda.bench.gemm", "512x512 fp16 TMA GEMM, 100 calls per path vs C++ (seed 000's method)"),
    "saxpy": ("nanocuda.bench.saxpy", "SAXPY kernel and application time, C++ vs Python (CUDA Python overview)"),
    "graphs": ("nanocuda.bench.graphs", "CUDA graphs: device while_loop, build, update, replay vs C++"),
    "memory": ("nanocuda.bench.memory", "allocate+free, pinned and peer copies vs C++ loops, IPC handoffs"),
    "cuda_core": ("nanocuda.bench.cuda_core", "cuda.core-shaped launch() and StridedMemoryView.as_tensor_map "
                  "vs C++ and vs cuda.core itself"),
    "kernels": ("nanocuda.bench.kernels", "each example kernel's GPU time vs its torch equivalent (template)"),
    "torch": ("nanocuda.bench.torch_ops", "a nanocuda torch op's eager call cost vs Launcher/dispatcher/Triton; "
              "the example model's training step compiled vs eager vs plain PyTorch"),
}
