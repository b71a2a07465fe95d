"""cuda.core 1.2's names for events, launch configs, devices, default streams, graph builders
and the program cache key, written the way a cuda.core user writes them, on the CPU: option
objects, validation and error messages, and (against tools/mock_libcuda.c, a driver that
does nothing) the object lifecycles. The GPU half is test_cuda_core_names_gpu.py."""


import pytest

import nanocuda
from nanocuda import EventOptions, LaunchConfig

# --- EventOptions: cuda.core 1.2's field names, the older ones as aliases ----------------------


def test_event_options_new_names_are_the_fields():
    o = EventOptions(timing_enabled=True, blocking_sync=True)
    assert (o.timing_enabled, o.blocking_sync, o.ipc_enabled) == (True, True, False)
    # the older names read (and write) the same fields
    assert o.enable_timing is True and o.busy_waited_sync is True
    o.enable_timing = False
    assert o.timing_enabled is False
    assert EventOptions(True, False, False) == EventOptions(enable_timing=True)
    assert EventOptions() == EventOptions(timing_enabled=False, blocking_sync=False, ipc_enabled=False)


def test_event_options_bad_input():
    with pytest.raises(ValueError, match="timing_enabled=True and its older name enable_timing=False disagree"):
        EventOptions(timing_enabled=True, enable_timing=False)
    with pytest.raises(TypeError, match=r"unknown option 'timing' \(known: timing_enabled, blocking_sync"):
        EventOptions(timing=True)
    with pytest.raises(TypeError, match="blocking_sync must be a bool, got str"):
        EventOptions(blocking_sync="yes")
    with pytest.raises(TypeError, match="busy_waited_sync must be a bool, got list"):
        EventOptions(busy_waited_sync=[])
    # cuda.core refuses ipc_enabled with timing where the event is made (Stream.record), not
    # here: the options object is only data (test_ipc_mock checks the refusal).
    assert EventOptions(timing_enabled=True, ipc_enabled=True).ipc_enabled is True


def test_event_option_aliases_come_from_one_table():
    assert nanocuda._nanocuda._internal.event_option_aliases == {
        "enable_timing": "timing_enabled", "busy_waited_sync": "blocking_sync"}


# --- LaunchConfig: is_cooperative, programmatic_stream_serialization ---------------------------


def test_launch_config_cuda_core_12_names():
    c = LaunchConfig(grid=8, block=128, is_cooperative=True, programmatic_stream_serialization=True)
    assert c.is_cooperative and c.cooperative and c.cooperative_launch
    assert c.programmatic_stream_serialization and c.pdl
    plain = LaunchConfig(grid=1, block=32)
    assert plain.is_cooperative is False and plain.programmatic_stream_serialization is False
    assert LaunchConfig(grid=1, block=32, pdl=True).programmatic_stream_serialization


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(is_cooperative=True, cooperative=True), TypeError, "give cooperative or is_cooperative"),
    (dict(is_cooperative=True, cooperative_launch=False), TypeError, "give is_cooperative or cooperative_launch"),
    (dict(pdl=True, programmatic_stream_serialization=True), TypeError,
     "give pdl or programmatic_stream_serialization"),
    (dict(is_cooperative="yes"), TypeError, "is_cooperative must be a bool"),
    (dict(programmatic_stream_serialization=1.0), TypeError, "programmatic_stream_serialization must be a bool"),
])
def test_launch_config_bad_aliases(kwargs, error, text):
    with pytest.raises(error, match=text):
        LaunchConfig(grid=1, block=32, **kwargs)


# --- program cache key -----------------------------------------------------------------------

SRC = 'extern "C" __global__ void k(int* a) { *a = 1; }'


def _nvrtc_missing() -> str:
    try:
        nanocuda.nvrtc_version()
        return ""
    except Exception as e:  # noqa: BLE001 - any load failure means: no NVRTC here
        return str(e)


@pytest.mark.skipif(bool(_nvrtc_missing()), reason="needs NVRTC")
def test_make_program_cache_key():
    from nanocuda import ProgramOptions
    from nanocuda.utils import make_program_cache_key

    def key(**kw):
        args = dict(code=SRC, code_type="c++", options=ProgramOptions(arch="sm_90"), target_type="cubin")
        args.update(kw)
        return make_program_cache_key(**args)

    k = key()
    assert isinstance(k, bytes) and len(k) == 32 and key() == k
    with pytest.raises(TypeError, match="code must be str for code_type 'c\\+\\+'"):
        key(code=SRC.encode())  # bytes are NVVM's (cuda.core's rule)
    assert key(code=SRC + " ") != k
    assert key(options=ProgramOptions(arch="sm_80")) != k
    assert key(options=ProgramOptions(arch="sm_90", use_fast_math=True)) != k
    assert key(target_type="ptx") != k
    assert key(name_expressions=("k",)) != k
    assert key(name_expressions=("a", "b")) == key(name_expressions=("b", "a"))  # order is not significant
    assert key(extra_digest=b"headers v1") not in (k, key(extra_digest=b"headers v2"))
    assert key(code_type="ptx", code=".version 8.0") != key(code_type="ptx", code=".version 8.1")  # PTX keys too
    with pytest.raises(ValueError, match="make_program_cache_key: target_type 'elf' is not valid for code_type"):
        key(target_type="elf")
    with pytest.raises(ValueError, match="make_program_cache_key: .*'fortran'"):
        key(code_type="fortran")
    with pytest.raises(TypeError, match="extra_digest must be bytes"):
        key(extra_digest="v1")
    with pytest.raises(TypeError):
        make_program_cache_key(SRC, "c++")  # keyword-only, as in cuda.core


# --- lifecycles against a driver that does nothing ----------------------------------------------


from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


def test_event_close_and_options_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        import nanocuda
        from nanocuda import Device, EventOptions

        dev = Device()
        assert Device.get_all_devices() == (dev,) and Device.get_all_devices()[0] is dev
        s = dev.create_stream()
        e = dev.create_event(EventOptions(timing_enabled=True, blocking_sync=True))
        assert e.is_timing_enabled and e.is_blocking_sync and not e.is_closed
        old = dev.create_event({"enable_timing": True, "busy_waited_sync": True})  # older names, as a dict
        assert old.is_timing_enabled and old.is_blocking_sync
        plain = s.record(options={"timing_enabled": False})
        assert not plain.is_timing_enabled and not plain.is_blocking_sync
        raises(lambda: dev.create_event({"timing_enabled": True, "enable_timing": False}), ValueError,
               "Device.create_event", "timing_enabled and its older name enable_timing different values")
        raises(lambda: dev.create_event({"timing": True}), ValueError, "unknown option 'timing'")
        err = raises(lambda: e.ipc_descriptor, RuntimeError, "is not IPC-enabled", "Event.create_ipc()")
        assert "::" not in str(err), err  # the core's C++ names respelled in Python's

        s.record(e)
        e.close()
        e.close()  # twice is fine
        assert e.is_closed and "closed" in repr(e)
        raises(e.sync, ValueError, "Event.sync", "closed")
        raises(e.query, ValueError, "Event.query", "closed")
        raises(lambda: e.handle, ValueError, "Event.handle", "closed")
        raises(lambda: s.record(e), ValueError, "Event.record", "closed")
        raises(lambda: s.wait(e), ValueError, "Stream.wait", "closed")
        raises(lambda: e - old, ValueError, "Event.elapsed_time", "closed")
        with dev.create_event() as scoped:
            assert not scoped.is_closed
        assert scoped.is_closed

        try:  # cuda.core's own options objects work too (read by attribute)
            import cuda.core as cc
        except ImportError:
            pass
        else:
            assert dev.create_event(cc.EventOptions(timing_enabled=True)).is_timing_enabled
            assert not dev.create_event(cc.EventOptions()).is_timing_enabled

        legacy, per_thread = nanocuda.LEGACY_DEFAULT_STREAM, nanocuda.PER_THREAD_DEFAULT_STREAM
        assert legacy.handle == 1 and per_thread.handle == 2  # CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
        assert legacy.device is dev and legacy == nanocuda.Stream.legacy(dev)
        assert nanocuda.Stream.per_thread().device is dev
        raises(lambda: nanocuda.Stream.per_thread("zero"), ValueError, "Stream.per_thread: device 'zero' is not a device")
        raises(lambda: nanocuda.NO_SUCH_NAME, AttributeError, "NO_SUCH_NAME")
        print("ok")
    """)


def test_graph_builder_and_graph_close_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        from nanocuda import Device

        dev = Device()
        b = dev.create_graph_builder()
        b.begin_building()
        b.close()  # ends the capture, discards it
        assert b.is_closed and not b.is_building and "closed" in repr(b)
        b.close()
        raises(b.end_building, ValueError, "GraphBuilder.end_building", "closed")
        raises(b.begin_building, ValueError, "GraphBuilder.begin_building", "closed")
        raises(lambda: b.split(2), ValueError, "GraphBuilder.split", "closed")
        raises(b.complete, ValueError, "GraphBuilder.complete", "closed")

        # (conditional nodes, embed and if_then need a real capture: test_cuda_core_names_gpu.py)
        b = dev.create_graph_builder().begin_building()
        raises(lambda: b.if_then("x"), TypeError, "GraphBuilder.if_then: expected a handle")
        forked = b.split(2)[1]
        raises(forked.close, ValueError, "GraphBuilder.close", "join it")
        b.join(b, forked)
        assert forked.is_closed  # join() consumed it
        b.end_building()
        g = b.complete()
        b.close()  # the Graph keeps working
        assert not g.is_closed and isinstance(g.handle, int)
        g.launch()
        g.close()
        g.close()
        assert g.is_closed
        raises(g.launch, ValueError, "Graph.launch", "closed")
        assert g.handle == 0  # cuda.core: a closed graph's handle reads 0
        print("ok")
    """)
