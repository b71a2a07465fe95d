"""One process per GPU: fill nanocuda Buffers with a nanocuda kernel, all-reduce them with NCCL.

The documented way past one GPU and one host: nanocuda for the kernels and the memory,
torch.distributed (NCCL) for the collectives, sharing the memory zero-copy through DLPack.

    python examples/multi_gpu/allreduce.py                  # every GPU of this host
    torchrun --nproc-per-node=2 examples/multi_gpu/allreduce.py   # or under torchrun
    torchrun --nnodes=2 --node-rank=R --master-addr=HOST --nproc-per-node=8 allreduce.py

On hosts whose GPUs must not use NVLink multicast, export NCCL_NVLS_ENABLE=0 first.
"""

from __future__ import annotations

import os

FILL = r'''
extern "C" __global__ void fill(float* x, float value, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = value + (float)(i % 7);
}'''
N = 1 << 22


def worker(rank: int, world: int) -> None:
    import torch
    import torch.distributed as dist

    import nanocuda

    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    device = nanocuda.Device(local)
    # nanocuda work on torch's current stream, so NCCL (on torch's streams) is ordered after it.
    # (device= matters: torch's default stream is handle 0 on every device.)
    stream = nanocuda.Stream.from_handle(torch.cuda.current_stream().cuda_stream, device=local)
    buf = device.allocate(4 * N, stream=stream)
    fill = nanocuda.compile(FILL).get_kernel("fill")
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(N + 255) // 256, block=256), fill, buf, float(rank), N)
    stream.sync()
    tensor = torch.from_dlpack(buf).view(torch.float32)  # the same memory, no copy
    dist.all_reduce(tensor)
    torch.cuda.synchronize()
    expected = sum(range(world)) + world * (torch.arange(N, device=tensor.device) % 7).float()
    ok = torch.equal(tensor, expected)
    print(f"rank {rank}/{world} on {torch.cuda.get_device_name(local)}: all_reduce "
          f"{'matches' if ok else 'DIFFERS'} (x[:3] = {tensor[:3].tolist()})", flush=True)
    dist.destroy_process_group()
    if not ok:
        raise SystemExit(1)


def _spawned(rank: int, world: int, port: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, LOCAL_RANK=str(rank))
    worker(rank, world)


def main() -> None:
    if "RANK" in os.environ:  # under torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
        return
    import multiprocessing as mp
    import socket

    import nanocuda

    world = nanocuda.Device.count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_spawned, args=(r, world, port)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    codes = [p.exitcode for p in procs]
    print(f"{world} processes, exit codes {codes}")
    raise SystemExit(0 if all(c == 0 for c in codes) else 1)


if __name__ == "__main__":
    main()
