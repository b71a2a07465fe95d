"""cuda.core 1.2's names for events, launch configs, devices, default streams and graph
builders on a real GPU, written the way a cuda.core user writes them (only the import
differs). The CPU half is test_cuda_core_names.py."""

import numpy as np
import pytest

import nanocuda
from nanocuda import Device, EventOptions, LaunchConfig, Program, ProgramOptions, launch, system

pytestmark = pytest.mark.gpu

SOURCE = r"""
#include <cooperative_groups.h>
#include <nanocuda/device/graph.cuh>
namespace cg = cooperative_groups;
extern "C" __global__ void add1(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
extern "C" __global__ void grid_sum(int* partial, int* total) {
  cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) partial[blockIdx.x] = blockIdx.x + 1;
  grid.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int s = 0;
    for (int k = 0; k < gridDim.x; ++k) s += partial[k];
    *total = s;
  }
}
extern "C" __global__ void set_value(nanocuda::conditional_handle h, unsigned v) {
  nanocuda::set_conditional(h, v);
}
"""


@pytest.fixture(scope="module")
def mod():
    dev = Device()
    dev.set_current()
    return Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{dev.arch}")).compile("cubin")


def ints(buf, s, n):
    out = np.zeros(n, np.int32)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    return out


def zeros(dev, s, n):
    buf = dev.allocate(4 * n, stream=s)
    nanocuda.memset(buf, 0, stream=s)
    return buf


def test_events_with_cuda_core_12_options(mod):
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    x = zeros(dev, s, 1024)
    start = s.record(options=EventOptions(timing_enabled=True))
    for _ in range(5):
        launch(s, LaunchConfig(grid=4, block=256), mod.get_kernel("add1"), x, 1024)
    end = s.record(options=EventOptions(timing_enabled=True, blocking_sync=True))
    assert end.is_timing_enabled and end.is_blocking_sync and not start.is_blocking_sync
    end.sync()
    assert end - start >= 0 and (ints(x, s, 1024) == 5).all()
    end.close()
    assert end.is_closed
    with pytest.raises(ValueError, match="Event.sync.*closed"):
        end.sync()
    with pytest.raises(ValueError, match="Stream.wait.*closed"):
        s.wait(end)
    ipc = dev.create_stream().record(options=EventOptions(ipc_enabled=True))
    assert ipc.ipc_descriptor == ipc.get_ipc_descriptor() and len(ipc.ipc_descriptor) == 64
    ipc.close()
    with pytest.raises(ValueError, match="closed"):
        ipc.ipc_descriptor


def test_devices_and_default_streams(mod):
    devices = Device.get_all_devices()
    assert len(devices) == system.get_num_devices() and devices[0] is Device(0)
    dev = Device()
    dev.set_current()
    x = zeros(dev, nanocuda.LEGACY_DEFAULT_STREAM, 256)
    for s in (nanocuda.LEGACY_DEFAULT_STREAM, nanocuda.PER_THREAD_DEFAULT_STREAM):
        launch(s, LaunchConfig(grid=1, block=256), mod.get_kernel("add1"), x, 256)
        s.sync()
    assert (ints(x, dev.create_stream(), 256) == 2).all()


def test_cooperative_and_pdl_through_cuda_core_names(mod):
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    blocks = min(32, dev.properties.multiprocessor_count)
    partial, total = zeros(dev, s, 64), zeros(dev, s, 1)
    launch(s, LaunchConfig(grid=blocks, block=64, is_cooperative=True), mod.get_kernel("grid_sum"), partial, total)
    assert ints(total, s, 1)[0] == blocks * (blocks + 1) // 2
    x = zeros(dev, s, 256)
    config = LaunchConfig(grid=1, block=256, programmatic_stream_serialization=True)
    for _ in range(3):
        launch(s, config, mod.get_kernel("add1"), x, 256)
    assert (ints(x, s, 256) == 3).all()


@pytest.mark.parametrize("taken", [0, 1])
def test_graph_builder_cuda_core_names(mod, taken):
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    x = zeros(dev, s, 256)
    one = LaunchConfig(grid=1, block=256)
    child = dev.create_graph_builder().begin_building()
    launch(child, one, mod.get_kernel("add1"), x, 256)
    child.end_building()
    b = dev.create_graph_builder().begin_building()
    b.embed(child)  # +1
    cond = b.create_condition()
    launch(b, LaunchConfig(grid=1, block=1), mod.get_kernel("set_value"), cond, taken)
    body = b.if_then(cond).begin_building()
    launch(body, one, mod.get_kernel("add1"), x, 256)  # +1 when taken
    body.end_building()
    graph = b.end_building().complete()
    b.close()
    assert b.is_closed and graph.handle != 0
    graph.launch(s)
    s.sync()
    assert (ints(x, s, 256) == 1 + taken).all()
    graph.close()
    assert graph.is_closed
    with pytest.raises(ValueError, match="Graph.launch.*closed"):
        graph.launch(s)


def test_graph_builder_close_while_building_frees_the_stream(mod):
    dev = Device()
    dev.set_current()
    b = dev.create_graph_builder().begin_building()
    launch(b, LaunchConfig(grid=1, block=1), mod.get_kernel("add1"), 0, 0)
    b.close()  # the capture ends and is discarded; the stream takes ordinary work again
    x = zeros(dev, b.stream, 32)
    launch(b.stream, LaunchConfig(grid=1, block=32), mod.get_kernel("add1"), x, 32)
    assert (ints(x, b.stream, 32) == 1).all()
