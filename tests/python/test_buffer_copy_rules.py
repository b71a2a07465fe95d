"""The core's Buffer copy and default-stream rules as Python sees them, on the mock driver."""

from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)

# Two devices with distinct stream handles; the mock counts peer copies and remembers the stream
# of the last copy.
COPIES = """
    import ctypes, os
    import nanocuda
    from nanocuda import Buffer, Device, Stream

    lib = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
    peer = ctypes.c_ulonglong.in_dll(lib, "nanocuda_mock_peer_copies")
    last = ctypes.c_void_p.in_dll(lib, "nanocuda_mock_last_stream")
    s0, s1 = Device(0).create_stream(), Device(1).create_stream()
    a, b, c = Buffer(64, stream=s0), Buffer(64, stream=s0), Buffer(64, stream=s1)
    small = Buffer(32, stream=s0)

    raises(lambda: a.copy_from(small), ValueError, "Buffer.copy_from: the buffers differ in size (32 bytes to 64)")
    raises(lambda: a.copy_to(small), ValueError, "Buffer.copy_to: the buffers differ in size (64 bytes to 32)")
    raises(lambda: a.copy_from(bytearray(64)), TypeError, "Buffer.copy_from: src must be a nanocuda.Buffer")
    a.copy_from(b)                                   # one device: a plain copy on a's stream
    assert peer.value == 0 and last.value == int(s0.handle)
    b.copy_to(c)                                     # two devices: a peer copy, on dst's stream
    assert peer.value == 1 and last.value == int(s1.handle)
    c.copy_from(a, stream=s0)
    assert peer.value == 2 and last.value == int(s0.handle)
    out = c.copy_to()                                # a new buffer, from c's resource
    assert out.size == 64 and peer.value == 2 and last.value == int(s1.handle)

    # nanocuda.copy between Buffers: the same choice, for a prefix too
    nanocuda.copy(c, a, stream=s0)
    assert peer.value == 3
    nanocuda.copy(b, a, stream=s1)
    assert peer.value == 3 and last.value == int(s1.handle)
    nanocuda.copy(c, small, size=16, stream=s0)
    assert peer.value == 4
    raises(lambda: nanocuda.copy(a, small), ValueError, "copy: dst has 64 bytes but src has 32; pass size=")
    raises(lambda: nanocuda.copy(a, small, size=48), ValueError, "copy: size 48 exceeds dst (64 bytes) or src (32 bytes)")
    a.close()
    raises(lambda: a.copy_from(b), ValueError, "closed")

    # No stream given: the legacy default stream of the current device (device 1 here)
    legacy = Stream.legacy()
    assert legacy.device.device_id == 1
    assert Buffer(16).stream == legacy and Buffer(16).stream.device.device_id == 1
    assert Buffer(16, device=0).stream == Stream.legacy(0)
    assert Buffer.from_handle(0x7000, 16).stream == legacy
    assert nanocuda.Device(0).allocate(8).stream == Stream.legacy(0)
    print("ok")
"""


def test_buffer_copies_and_default_streams_follow_the_core_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, COPIES, NANOCUDA_MOCK_DEVICES="2", NANOCUDA_MOCK_CURRENT_DEVICE="1",
                NANOCUDA_MOCK_STREAMS="1")
