"""Owned and foreign streams on a real GPU: adopted torch/raw streams work and are never destroyed."""

import gc

import pytest

import nanocuda

pytestmark = pytest.mark.gpu

SRC = 'extern "C" __global__ void inc(int* p) { atomicAdd(p, 1); }'


def _inc():
    return nanocuda.Program(SRC, code_type="c++").compile("cubin").get_kernel("inc")


def test_foreign_handle_works_and_outlives_its_nanocuda_object():
    owner = nanocuda.Stream()
    foreign = nanocuda.Stream.from_handle(owner.handle)  # device read from the stream's context
    assert not foreign.is_owned and foreign == owner and foreign.device == owner.device
    out = nanocuda.Buffer(4, stream=foreign)
    out.fill(0, stream=foreign)
    nanocuda.launch(foreign, nanocuda.LaunchConfig(grid=1, block=32), _inc(), out)
    foreign.close()  # drops this object's use only
    del foreign
    gc.collect()
    host = bytearray(4)
    nanocuda.copy(host, out, stream=owner)
    owner.sync()  # the stream is still alive: nanocuda did not destroy it
    assert int.from_bytes(host, "little") == 32
    # A foreign stream must outlive what was queued on it, the Buffer's free included (nothing
    # of nanocuda's keeps it alive): free the Buffer before its stream's creator destroys it.
    out.close()
    owner.close()


def test_a_buffer_keeps_its_owned_stream_alive():
    s = nanocuda.Stream()
    b = nanocuda.Buffer(1 << 20, stream=s)
    del s
    gc.collect()
    assert b.stream.is_owned
    b.stream.sync()
    b.close()


@pytest.mark.needs_torch
def test_torch_stream_is_adopted_not_owned():
    import torch

    ts = torch.cuda.Stream()
    s = nanocuda.Stream.adopt(ts)
    assert not s.is_owned and s.handle == ts.cuda_stream
    t = torch.zeros(1, dtype=torch.int32, device="cuda")
    nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=8), _inc(), t)
    s.close()
    ts.synchronize()  # torch's stream survives nanocuda's close
    assert int(t.item()) == 8
