"""utils.copy_batch on the mock driver: what the core hands cuMemcpyBatchAsync, its fallbacks and its errors."""

import pytest

from mock_run import run_on_mock

SETUP = """
import os
import nanocuda
from nanocuda import Device, Host
from nanocuda.utils import CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder, copy_batch
d = Device(0); d.set_current(); s = d.create_stream()
srcs = [nanocuda.Buffer.from_handle(0x1000 * (i + 1), 64) for i in range(3)]
dsts = [nanocuda.Buffer.from_handle(0x10000 * (i + 1), 64) for i in range(3)]
def log():
    path = os.environ["NANOCUDA_MOCK_BATCH"]
    lines = open(path).read().splitlines() if os.path.exists(path) else []
    open(path, "w").close()
    return lines
"""


def test_one_batch_call_with_runs_of_equal_options(mock_libcuda, tmp_path):
    run_on_mock(mock_libcuda, """
        copy_batch(s, srcs, dsts)
        # one entry for all: order STREAM (1), no hints (type 0), no flags
        assert log() == ["batch 3 10000:1000:64 20000:2000:64 30000:3000:64 @0:1:0:0.0:0.0"], log()
        any_ = CopyOptions(src_access_order=MemcpySrcAccessOrder.ANY)
        hinted = CopyOptions(src_location_hint=d, dst_location_hint=Host(),
                             overlap_mode=MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE)
        copy_batch(s, srcs, dsts, options=[any_, any_, hinted])
        # runs: copies 0-1 share ANY (3); copy 2 has device 0 (type 1) -> host (type 2), overlap flag 1
        assert log() == ["batch 3 10000:1000:64 20000:2000:64 30000:3000:64 @0:3:0:0.0:0.0 @2:1:1:1.0:2.0"]
        copy_batch(s, srcs, dsts, options=CopyOptions(src_access_order="during_api_call"))
        assert log()[0].endswith("@0:2:0:0.0:0.0")
        copy_batch(s, [], [])  # nothing to copy: no driver call
        assert log() == []
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1", NANOCUDA_MOCK_BATCH=str(tmp_path / "b.log"))


@pytest.mark.parametrize("case", ["legacy stream", "driver without cuMemcpyBatchAsync"])
def test_falls_back_to_one_copy_each(mock_libcuda, tmp_path, case):
    env = {"NANOCUDA_MOCK_STREAMS": "1", "NANOCUDA_MOCK_BATCH": str(tmp_path / "b.log")}
    if case == "legacy stream":
        stream = "d.default_stream"  # cuMemcpyBatchAsync refuses the legacy default stream
    else:
        stream, env["NANOCUDA_MOCK_MISSING"] = "s", "cuMemcpyBatchAsync"
    run_on_mock(mock_libcuda, f"""
        copy_batch({stream}, srcs[:2], dsts[:2])
        assert log() == ["copy 10000:1000:64", "copy 20000:2000:64"], log()
        print("ok")
    """, prelude=SETUP, version="13.0", **env)


def test_fallback_syncs_for_during_api_call(mock_libcuda):
    # DURING_API_CALL promises the source is read when copy_batch returns: the one-by-one path
    # must synchronize the stream, which this injected failure proves it calls.
    run_on_mock(mock_libcuda, """
        copy_batch(s, srcs, dsts)  # STREAM order: no sync, so no failure
        e = raises(lambda: copy_batch(s, srcs, dsts, options=CopyOptions(src_access_order="during_api_call")),
                   nanocuda.CudaError, "cuStreamSynchronize", "copy_batch")
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1", NANOCUDA_MOCK_MISSING="cuMemcpyBatchAsync",
        NANOCUDA_MOCK_FAIL="cuStreamSynchronize:999")


def test_bad_input_names_the_call_and_the_rule(mock_libcuda):
    run_on_mock(mock_libcuda, """
        raises(lambda: copy_batch(s, srcs[0], dsts), TypeError, "copy_batch: srcs must be a sequence of Buffers",
               "Buffer.copy_to")
        raises(lambda: copy_batch(s, srcs, dsts[0]), TypeError, "copy_batch: dsts must be a sequence")
        raises(lambda: copy_batch(s, srcs, dsts[:2]), ValueError, "3 sources for 2 destinations")
        raises(lambda: copy_batch(s, srcs, dsts, options=[CopyOptions()]), ValueError, "1 options for 3 copies")
        raises(lambda: copy_batch(s, srcs, dsts, options=[1, 2, 3]), TypeError, "options must hold CopyOptions, got int")
        raises(lambda: copy_batch(s, srcs, dsts, options="any"), TypeError, "options must be a CopyOptions")
        small = nanocuda.Buffer.from_handle(0x90000, 32)
        raises(lambda: copy_batch(s, srcs[:1], [small]), ValueError,
               "copy_batch: copy 0 has a 64-byte source and a 32-byte destination; the sizes must match")
        raises(lambda: copy_batch(s, [1], dsts[:1]), TypeError, "copy_batch: expects a nanocuda.Buffer, got int")
        closed = nanocuda.Buffer.from_handle(0x90000, 64); closed.close()
        raises(lambda: copy_batch(s, [closed], dsts[:1]), ValueError, "copy_batch", "is closed")
        raises(lambda: copy_batch(d.create_graph_builder(), srcs, dsts), TypeError,
               "copy_batch: stream cannot be a GraphBuilder")
        raises(lambda: CopyOptions(src_access_order="sideways"), ValueError,
               "CopyOptions: src_access_order must be one of 'stream', 'during_api_call', 'any', got 'sideways'")
        raises(lambda: CopyOptions(overlap_mode="always"), ValueError, "CopyOptions: overlap_mode must be one of")
        raises(lambda: CopyOptions(dst_location_hint=0), TypeError,
               "CopyOptions.dst_location_hint: location must be a Device, Host, or None; got int")
        assert CopyOptions(src_access_order="any").src_access_order is MemcpySrcAccessOrder.ANY
        assert MemcpySrcAccessOrder.STREAM == "stream"
        print("ok")
    """, prelude=SETUP, version="13.0", NANOCUDA_MOCK_STREAMS="1")
