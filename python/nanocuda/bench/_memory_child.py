"""The spawned child of `nanocuda bench memory`'s IPC row: import, run a kernel, reply."""


def serve(inbox, outbox) -> None:
    import nanocuda

    k = nanocuda.compile(r'''
extern "C" __global__ void touch(unsigned char* x, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}''').get_kernel("touch")
    stream = None
    while True:
        buf = inbox.get()
        if buf is None:
            return
        stream = stream or nanocuda.Stream(device=buf.device)
        n = buf.size
        nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), k, buf.ptr, n)
        stream.sync()
        buf.close()
        outbox.put(True)
