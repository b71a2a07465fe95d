"""Green contexts on the mock driver (tools/mock_libcuda.c: an H100's 132 SMs, groups of 8):
Device.resources, SMResource.split and its option checks, Device.create_context, streams on a
green context, Context/Stream.resources. The options' checks run without any driver."""


import pytest

import nanocuda
from nanocuda import ContextOptions, SMResourceOptions, WorkqueueResourceOptions
from nanocuda.typing import WorkqueueSharingScopeType


from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


PRELUDE = """
    import nanocuda
    from nanocuda import ContextOptions, Device, SMResourceOptions, StreamOptions

    d = Device(0)
    d.set_current()
    sm = d.resources.sm
"""


def test_not_constructible():
    for cls in (nanocuda.DeviceResources, nanocuda.SMResource, nanocuda.WorkqueueResource):
        with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
            cls()


def test_workqueue_options_checked_on_construction():
    assert WorkqueueResourceOptions(sharing_scope="device_ctx").sharing_scope is WorkqueueSharingScopeType.DEVICE_CTX
    with pytest.raises(ValueError, match="'bogus' is not a valid WorkqueueSharingScopeType"):
        WorkqueueResourceOptions(sharing_scope="bogus")
    for bad in (0, -2):
        with pytest.raises(ValueError, match="concurrency_limit must be >= 1"):
            WorkqueueResourceOptions(concurrency_limit=bad)
    with pytest.raises(TypeError, match="concurrency_limit must be an int"):
        WorkqueueResourceOptions(concurrency_limit=2.5)


def test_split_request_rules():
    from nanocuda._green_context import split_request

    assert split_request(SMResourceOptions()) == (1, 0, 0)
    assert split_request(SMResourceOptions(count=16)) == (1, 16, 0)
    assert split_request({"count": (24, 24), "backfill": True}) == (2, 24, 1)
    with pytest.raises(ValueError, match="count must be non-negative"):
        split_request(SMResourceOptions(count=-1))
    with pytest.raises(ValueError, match="count is scalar"):
        split_request(SMResourceOptions(count=8, coscheduled_sm_count=(8, 8)))
    with pytest.raises(ValueError, match="expected 2"):
        split_request(SMResourceOptions(count=(8, 8), coscheduled_sm_count=(8, 8, 8)))
    with pytest.raises(ValueError, match="different sizes"):
        split_request(SMResourceOptions(count=(8, 16)))
    with pytest.raises(TypeError, match="count must be an int"):
        split_request(SMResourceOptions(count="8"))
    with pytest.raises(TypeError, match="unknown option 'cnt'"):
        split_request({"cnt": 8})
    with pytest.raises(TypeError, match="options must be a SMResourceOptions or a dict"):
        split_request(8)


def test_resources_and_split_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    assert (sm.sm_count, sm.min_partition_size, sm.coscheduled_alignment, sm.flags) == (132, 8, 8, 0)
    assert sm.handle != 0
    groups, rest = sm.split(SMResourceOptions(count=None))
    assert [g.sm_count for g in groups] == [8] and rest.sm_count == 124
    groups, rest = sm.split(SMResourceOptions(count=(20, 20)))  # rounded up to multiples of 8
    assert [g.sm_count for g in groups] == [24, 24] and rest.sm_count == 84
    groups, rest = sm.split({"count": 66, "backfill": True})   # co-scheduling relaxed: multiples of 2
    assert [g.sm_count for g in groups] == [66] and rest.sm_count == 66
    dry, _ = sm.split(SMResourceOptions(count=16), dry_run=True)
    assert dry[0].sm_count == 16
    raises(lambda: sm.split(SMResourceOptions(count=140)), ValueError, "SMResource.split", "140", "132 SMs")
    raises(lambda: sm.split(SMResourceOptions(count=(64, 64, 64))), nanocuda.CudaError,
           "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "do not fit", "132 SMs")
    raises(lambda: sm.split(SMResourceOptions(count=(66, 66))), nanocuda.CudaError, "72 after rounding")
    groups, rest = sm.split(SMResourceOptions(count=(66, 66), backfill=True))  # fits without co-scheduling
    assert [g.sm_count for g in groups] == [66, 66] and rest.sm_count == 0
    raises(lambda: sm.split(SMResourceOptions(count=-1)), ValueError, "count must be non-negative")
    raises(lambda: sm.split(SMResourceOptions(count=0.5)), TypeError, "count must be an int")
    raises(lambda: d.resources.workqueue, RuntimeError, "CUDA 13.1")
    raises(lambda: d.create_context(ContextOptions(resources=[dry[0]])), ValueError, "dry-run SMResource")
    print("ok")
    """)


def test_green_context_and_streams_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    raises(lambda: d.create_context(), ValueError, "resources must be provided")
    raises(lambda: d.create_context(ContextOptions(resources=None)), ValueError, "resources must be provided")
    raises(lambda: d.create_context(object()), TypeError, "Device.create_context")
    raises(lambda: d.create_context({"resources": [1]}), TypeError, "SMResource")
    raises(lambda: d.create_context({"resource": []}), TypeError, "unknown option 'resource'")
    raises(lambda: d.context.create_stream(), RuntimeError, "only supported on green contexts")
    assert not d.context.is_green and not d.context.is_closed

    groups, _ = sm.split(SMResourceOptions(count=(16, 16)))
    ctx = d.create_context(ContextOptions(resources=[groups[0]]))
    assert ctx.is_green and not ctx.is_closed and ctx.handle != d.context.handle
    assert ctx.resources.sm.sm_count == 8  # the mock's green partition
    raises(lambda: ctx.create_stream(StreamOptions(nonblocking=False)), ValueError,  # the core's rule, Python words
           "Context.create_stream: streams of a green context must be non-blocking (StreamOptions(nonblocking=True))")
    s = ctx.create_stream()
    assert s.context == ctx and s.context.is_green
    assert s.resources.sm.sm_count == ctx.resources.sm.sm_count
    s.close()
    ctx.close()
    assert ctx.is_closed
    ctx.close()  # twice: a no-op
    raises(lambda: ctx.create_stream(), RuntimeError, "is closed")
    raises(lambda: ctx.resources, RuntimeError, "closed")
    d.context.close()  # the primary context stays: a no-op
    assert not d.context.is_closed
    print("ok")
    """)


def test_set_current_with_a_green_context_on_mock(mock_libcuda):
    # The mock keeps each thread's context stack here, as the driver does.
    run_on_mock(mock_libcuda, PRELUDE + """
    groups, _ = sm.split(SMResourceOptions(count=(16, 16)))
    ctx = d.create_context(ContextOptions(resources=[groups[0]]))
    assert d.set_current() is None  # the primary context, as before
    prev = d.set_current(ctx)
    assert prev is not None and prev == d.context and not prev.is_green
    raises(lambda: ctx.close(), RuntimeError, "while it is current")
    s = ctx.create_stream()
    assert s.context == ctx and s.record().context == ctx
    restored = d.set_current(prev)
    assert restored is ctx and restored.is_green  # the same object comes back
    again = d.set_current(ctx)
    assert again == d.context
    assert d.set_current(again) is ctx
    raises(lambda: d.set_current("ctx"), TypeError, "Device.set_current: ctx must be a nanocuda.Context")
    s.close()
    ctx.close()
    raises(lambda: d.set_current(ctx), ValueError, "Device.set_current(ctx) on device 0", "closed")
    print("ok")
    """, NANOCUDA_MOCK_CTX_STACK="1")


def test_green_stream_without_cuGreenCtxStreamCreate_on_mock(mock_libcuda):
    # A driver that does not hand out cuGreenCtxStreamCreate: the stream is made in the green
    # context's CUcontext instead, and still belongs to that green context.
    run_on_mock(mock_libcuda, PRELUDE + """
    groups, _ = sm.split(SMResourceOptions(count=(16, 16)))
    ctx = d.create_context(ContextOptions(resources=[groups[0]]))
    s = ctx.create_stream()
    assert s.context == ctx and s.context.is_green
    assert s.resources.sm.sm_count == ctx.resources.sm.sm_count
    s.close()
    ctx.close()
    print("ok")
    """, NANOCUDA_MOCK_MISSING="cuGreenCtxStreamCreate")
