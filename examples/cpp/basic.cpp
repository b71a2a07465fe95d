// The C++ API without Python: device -> stream -> buffer -> copy -> event timing.
//
//   ./nanocuda_example_basic            (prints "no NVIDIA driver found" without a GPU)
#include <cstdio>
#include <vector>

#include "nanocuda/nanocuda.h"

int main() try {
  nanocuda::Device device(0);
  std::printf("%s (sm_%s), %zu MiB\n", device.name().c_str(), device.arch().c_str(),
              device.total_memory() >> 20);

  auto stream = nanocuda::Stream::create(device);
  const std::size_t n = 1 << 24;  // 16 MiB each way
  std::vector<unsigned char> host(n, 7), back(n, 0);
  nanocuda::PinnedBuffer pinned(n, device);
  nanocuda::Buffer a(n, stream), b(n, stream);

  nanocuda::Event start(device), stop(device);
  start.record(stream);
  nanocuda::copy_async(a.ptr(), reinterpret_cast<CUdeviceptr>(host.data()), n, stream);
  nanocuda::copy_async(b.ptr(), a.ptr(), n, stream);
  nanocuda::copy_async(reinterpret_cast<CUdeviceptr>(back.data()), b.ptr(), n, stream);
  stop.record(stream);
  stop.sync();

  bool same = back == host;
  std::printf("round trip of %zu bytes: %s, %.3f ms\n", n, same ? "identical" : "DIFFERENT",
              stop.elapsed_time_since(start));
  return same ? 0 : 1;
} catch (const nanocuda::Error& e) {
  std::fprintf(stderr, "nanocuda: %s\n", e.what());
  return 2;
}
