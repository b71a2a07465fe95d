"""Memory resources without a GPU: argument checks, options, descriptors, subclassing."""

import pickle

import pytest

import nanocuda
from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


@pytest.mark.parametrize("bad", [-1, -5, -(2**70)])
def test_negative_sizes_are_value_errors(bad):
    with pytest.raises(ValueError, match=r"Buffer: size must be >= 0, got -"):
        nanocuda.Buffer(bad)


@pytest.mark.parametrize("bad", [1.5, "8", True, None])
def test_non_int_sizes_are_type_errors(bad):
    with pytest.raises(TypeError, match="Buffer: size must be an int"):
        nanocuda.Buffer(bad)


def test_sizes_past_64_bits_are_value_errors():
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        nanocuda.Buffer(2**64)


def test_options_are_checked():
    o = nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True, max_size=1 << 30)
    assert (o.ipc_enabled, o.max_size, o.release_threshold) == (True, 1 << 30, 0)
    with pytest.raises(ValueError, match="max_size must be >= 0"):
        nanocuda.DeviceMemoryResourceOptions(max_size=-1)
    with pytest.raises(TypeError, match="release_threshold must be an int"):
        nanocuda.DeviceMemoryResourceOptions(release_threshold=1.0)
    with pytest.raises(ValueError, match="reserve_size must be > 0"):
        nanocuda.VirtualMemoryResourceOptions(reserve_size=0)
    assert nanocuda.VirtualMemoryResourceOptions(peers=(1,)).peers == [1]


@pytest.mark.parametrize("garbage", [b"", b"garbage", b"NCIPCB1\x00" + b"\x00" * 10, b"X" * 96])
def test_garbage_ipc_descriptors_are_value_errors(garbage):
    with pytest.raises(ValueError, match="not a nanocuda IPC buffer descriptor"):
        nanocuda.IPCBufferDescriptor.from_bytes(garbage)


def test_a_zero_size_descriptor_is_refused():
    raw = b"NCIPCB1\x00" + b"\x01" * 64 + b"\x00" * 8 + b"\x02" * 16
    with pytest.raises(ValueError, match="size is 0"):
        nanocuda.IPCBufferDescriptor.from_bytes(raw)


def test_descriptors_round_trip_through_bytes_and_pickle():
    raw = b"NCIPCB1\x00" + b"\x01" * 64 + (4096).to_bytes(8, "little") + b"\x02" * 16
    d = nanocuda.IPCBufferDescriptor.from_bytes(raw)
    assert d.size == 4096 and d.pool_uuid == b"\x02" * 16 and d.to_bytes() == raw
    assert pickle.loads(pickle.dumps(d)).to_bytes() == raw


def test_python_subclass_must_implement_the_interface():
    class Incomplete(nanocuda.MemoryResource):
        pass

    mr = Incomplete()
    assert "Incomplete" in repr(mr)
    with pytest.raises(TypeError, match="must define is_device_accessible"):
        mr.is_device_accessible  # noqa: B018


def test_python_subclass_properties_reach_the_base():
    class Host(nanocuda.MemoryResource):
        is_device_accessible = property(lambda self: False)
        is_host_accessible = property(lambda self: True)
        device_id = property(lambda self: -1)

    mr = Host()
    assert (mr.is_device_accessible, mr.is_host_accessible, mr.device_id) == (False, True, -1)
    assert isinstance(mr, nanocuda.MemoryResource)


def test_ipc_event_handles_must_be_64_bytes():
    # The length check runs before any driver call.
    with pytest.raises((ValueError, nanocuda.DriverNotFoundError)):
        nanocuda.Event.from_ipc_descriptor(b"short")


def test_plain_pickle_of_a_handle_needs_multiprocessing():
    handle = nanocuda.IPCAllocationHandle._adopt(-1, b"\x00" * 16)
    assert handle.is_closed
    with pytest.raises(ValueError, match="closed"):
        handle.fd  # noqa: B018


def test_public_names_are_exported():
    for name in ("MemoryResource", "DeviceMemoryResource", "PinnedMemoryResource", "ManagedMemoryResource",
                 "VirtualMemoryResource", "IPCBufferDescriptor", "IPCAllocationHandle",
                 "DeviceMemoryResourceOptions", "VirtualMemoryResourceOptions"):
        assert name in nanocuda.__all__ and hasattr(nanocuda, name)
    for name in ("memory_resource", "allocate", "can_access_peer", "enable_peer_access", "disable_peer_access"):
        assert getattr(nanocuda.Device, name).__doc__
    for name in ("memory_resource", "from_handle", "get_ipc_descriptor", "from_ipc_descriptor"):
        assert getattr(nanocuda.Buffer, name).__doc__


def test_pool_calls_make_a_context_current_only_for_implicit_streams(mock_libcuda):
    # The mock refuses pool calls on an implicit stream with no current context, as the driver
    # documents (NANOCUDA_MOCK_CTX_STACK); a created stream needs none. In a new thread (nothing
    # current): a created stream's pair makes only its 2 driver calls; the legacy stream's
    # pairs get the device's context for each call, and leave nothing current.
    run_on_mock(mock_libcuda, f"""
    import ctypes, threading
    import nanocuda
    calls = ctypes.c_ulonglong.in_dll(ctypes.CDLL({mock_libcuda!r}), "nanocuda_mock_calls")
    dev = nanocuda.Device(0)
    s = nanocuda.Stream(device=dev)
    mr, seen = dev.memory_resource, []

    def body():
        before = calls.value
        mr.allocate(64, stream=s).close()
        seen.append(calls.value - before)
        mr.allocate(64).close()
        dev.allocate(64, stream=nanocuda.Stream.legacy(dev)).close()
        nanocuda.Buffer(64, stream=nanocuda.Stream.per_thread(dev)).close()
        seen.append(dev.set_current(dev.context))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [2, None], seen
    print("ok")
    """, version="13.0", NANOCUDA_MOCK_CTX_STACK="1", NANOCUDA_MOCK_STREAMS="1")
