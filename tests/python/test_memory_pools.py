"""cuda.core's memory behaviour on the mock driver: pool-backed pinned/managed resources, pool
attributes, dict options, Python resources without super().__init__(), Buffer.fill patterns,
foreign memory from Buffer.from_handle, and Host."""

import copy
import ctypes
import os
import pickle
import re
import subprocess
import sys
import textwrap

import pytest

import nanocuda
from nanocuda import (Buffer, Device, DeviceMemoryResource, Host, ManagedMemoryResource,
                      ManagedMemoryResourceOptions, MemoryResource, PinnedMemoryResource,
                      PinnedMemoryResourceOptions)

np = pytest.importorskip("numpy")

# The driver-backed cases run in a child pytest of this file on tools/mock_libcuda.c (the
# session's own process has no driver, and must keep having none for the other files).
ON_MOCK = os.environ.get("NANOCUDA_POOLS_ON_MOCK") == "1"
on_mock = pytest.mark.skipif(not ON_MOCK, reason="runs in test_driver_cases_on_the_mock")


def test_driver_cases_on_the_mock(mock_libcuda):
    if ON_MOCK:
        pytest.skip("this is the child run")
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_POOLS_ON_MOCK="1")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", __file__],
                         capture_output=True, text=True, env=env, cwd="/tmp", timeout=600)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout, out.stdout[-2000:]


@pytest.fixture
def dev():
    d = Device(0)
    d.set_current()
    return d


class HostOnly(MemoryResource):
    """Pageable host memory; never calls super().__init__(), as cuda.core's examples do."""

    def __init__(self):
        self.freed = []
        self.arrays = {}

    def allocate(self, size, *, stream=None):
        a = (ctypes.c_byte * size)()
        self.arrays[ctypes.addressof(a)] = a
        return Buffer.from_handle(ptr=ctypes.addressof(a), size=size, mr=self)

    def deallocate(self, ptr, size, *, stream=None):  # keyword-only stream, as cuda.core declares it
        self.freed.append((int(ptr), size, stream))
        self.arrays.pop(int(ptr), None)

    @property
    def is_device_accessible(self):
        return False

    @property
    def is_host_accessible(self):
        return True

    @property
    def device_id(self):
        raise RuntimeError("not bound to a GPU")


class Neither(HostOnly):
    @property
    def is_host_accessible(self):
        return False


class CallsSuper(MemoryResource):
    def __init__(self, tag):
        super().__init__()
        self.tag = tag

    def allocate(self, size, *, stream=None):
        return Buffer.from_handle(0x7f0000000000, size, mr=self)

    def deallocate(self, ptr, size, *, stream=None):
        pass

    is_device_accessible = property(lambda self: True)
    is_host_accessible = property(lambda self: False)
    device_id = property(lambda self: 0)


@on_mock
def test_buffers_keep_their_resource_whoever_made_it(dev):
    # allocate takes the owner of a resource wrapped from C++ (Device.memory_resource) with
    # shared_from_this, and makes one for a resource made in Python when it has none.
    import gc

    cur = dev.memory_resource
    bufs = [cur.allocate(64) for _ in range(3)]
    del cur
    gc.collect()
    assert all(b.memory_resource is dev.memory_resource for b in bufs)
    for b in bufs:
        b.close()
    own = DeviceMemoryResource(dev, nanocuda.DeviceMemoryResourceOptions())
    for _ in range(3):  # no Buffer open between pairs: a new owner each time
        own.allocate(64).close()
    b = own.allocate(64)
    del own
    gc.collect()
    assert not b.memory_resource.is_closed and b.handle  # the Buffer keeps its resource alive
    b.close()
    assert b.is_closed


@on_mock
def test_python_resource_needs_no_super_init(dev):
    mr = HostOnly()
    b = mr.allocate(64)
    assert b.memory_resource is mr and b.size == 64
    assert b.is_host_accessible and not b.is_device_accessible and b.device_id == -1
    assert b.__dlpack_device__() == (1, 0)  # kDLCPU
    address = b.handle
    b.close()
    assert b.handle == 0 and b.memory_resource is None
    assert mr.freed and mr.freed[0][:2] == (address, 64) and mr.freed[0][2] is not None
    # a subclass that does call super().__init__() is made once, not twice
    c = CallsSuper("x")
    assert c.tag == "x" and c.allocate(8).memory_resource is c


class UnifiedLike(CallsSuper):
    """Answers device_id with a Device, as cuda.core's own test resources do."""

    is_host_accessible = property(lambda self: True)
    device_id = property(lambda self: Device(0))


@on_mock
def test_python_resource_answers_are_checked(dev):
    b = UnifiedLike("u").allocate(64)
    assert b.device_id == 0 and b.is_host_accessible and b.is_device_accessible
    with pytest.raises(TypeError, match=r"MemoryResource.*: a MemoryResource subclass must define"):
        MemoryResource().allocate(64)
    holder = bytearray(8)
    before = sys.getrefcount(holder)
    v = Buffer.from_handle(0x7f0000000000, 8, owner=holder)
    assert sys.getrefcount(holder) > before
    v.close()
    assert sys.getrefcount(holder) == before and v.owner is None


@on_mock
def test_memory_neither_side_reaches_is_a_buffer_error(dev):
    b = Neither().allocate(16)
    with pytest.raises(BufferError, match=r"^buffer is neither device-accessible nor host-accessible$"):
        b.__dlpack_device__()
    with pytest.raises(BufferError, match="neither device-accessible nor host-accessible"):
        b.__dlpack__()


@on_mock
def test_dlpack_argument_errors_use_the_protocol_wording(dev):
    b = dev.allocate(64)
    with pytest.raises(BufferError, match=r"^Sorry, not supported: dl_device other than None$"):
        b.__dlpack__(dl_device=())
    with pytest.raises(BufferError, match=r"^Sorry, not supported: copy=True$"):
        b.__dlpack__(copy=True)
    with pytest.raises(BufferError, match=r"^Expected max_version tuple\[int, int\], got \(9, 8, 7\)$"):
        b.__dlpack__(max_version=(9, 8, 7))


@on_mock
@pytest.mark.parametrize("value,width", [
    (0x42, None), (b"\x7f", None), (b"\x34\x12", None), (b"\xef\xbe\xad\xde", None),
    (np.uint8(255), None), (np.int8(-1), None), (np.int16(-32768), None), (np.uint32(0xDEADBEEF), None),
    (np.float32(1.0), None), (0x01020304, 4), (1.0, 4),
])
def test_fill_accepts_cuda_core_patterns(dev, value, width):
    b = dev.allocate(64)
    if width is None:
        b.fill(value, stream=dev.default_stream)
    else:
        b.fill(value, width, stream=dev.default_stream)


@on_mock
@pytest.mark.parametrize("value,size,exc,match", [
    (-1, 64, OverflowError, r"Buffer.fill: value -1 does not fit in 1 byte"),
    (256, 64, OverflowError, r"does not fit in 1 byte \(0..255\)"),
    ("invalid", 64, TypeError, r"Buffer.fill: value must be an int .* got str"),
    (b"", 64, ValueError, r"Buffer.fill: a pattern of 0 bytes"),
    (b"\x01\x02\x03", 64, ValueError, r"a pattern of 3 bytes; it must be 1, 2 or 4"),
    (b"\x34\x12", 65, ValueError, r"Buffer.fill: the size \(65 bytes\) is not a multiple"),
    (np.uint64(0), 64, ValueError, r"a pattern of 8 bytes"),
    (np.float64(0), 64, ValueError, r"a pattern of 8 bytes"),
])
def test_fill_rejects_bad_patterns_by_name(dev, value, size, exc, match):
    with pytest.raises(exc, match=match):
        dev.allocate(size).fill(value, stream=dev.default_stream)


@on_mock
def test_pinned_options_make_a_pool(dev):
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=1 << 21))
    assert mr.is_handle_owned and not mr.is_ipc_enabled and mr.numa_id == -1 and mr.handle != 0
    assert mr.device_id == -1 and mr.is_host_accessible and mr.is_device_accessible
    b = mr.allocate(1024, stream=dev.default_stream)
    assert b.device_id == -1 and b.memory_resource is mr and b.is_host_accessible
    assert b.__dlpack_device__() == (3, 0)  # kDLCUDAHost
    b.close()
    a = mr.attributes
    assert isinstance(a.reuse_allow_opportunistic, bool) and isinstance(a.used_mem_high, int)
    assert re.match(r"MemoryPoolAttributes\(release_threshold=\d+, reserved_mem_current=\d+, reserved_mem_high=\d+, "
                    r"reuse_allow_internal_dependencies=(True|False), reuse_allow_opportunistic=(True|False), "
                    r"reuse_follow_event_dependencies=(True|False), used_mem_current=\d+, used_mem_high=\d+\)$",
                    repr(a))
    ipc = PinnedMemoryResource({"ipc_enabled": True, "max_size": 1 << 21})
    assert ipc.is_ipc_enabled and ipc.numa_id >= 0
    mr.close()
    assert mr.is_closed
    with pytest.raises(ValueError, match=r"PinnedMemoryResource.allocate: .* is closed"):
        mr.allocate(64, stream=dev.default_stream)
    _ = a.used_mem_high  # the attributes read before close stay readable


@on_mock
def test_pinned_without_options_is_not_a_pool(dev):
    mr = PinnedMemoryResource()
    assert not mr.is_handle_owned and not mr.is_ipc_enabled and mr.numa_id == -1
    with pytest.raises(ValueError, match=r"PinnedMemoryResource.attributes: .*not a pool"):
        mr.attributes
    with pytest.raises(ValueError, match=r"numa_id must be >= 0"):
        PinnedMemoryResource(PinnedMemoryResourceOptions(numa_id=-1))


@on_mock
def test_managed_options_make_a_pool(dev):
    mr = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location=0))
    assert mr.is_handle_owned and not mr.is_ipc_enabled and mr.preferred_location == ("device", 0)
    assert isinstance(mr.attributes.reuse_follow_event_dependencies, bool)
    b = mr.allocate(4096, stream=dev.default_stream)
    assert b.is_managed and b.__dlpack_device__() == (13, 0)  # kDLCUDAManaged
    from nanocuda.utils import StridedMemoryView  # a view of it stays managed (cuda.core)
    assert StridedMemoryView.from_any_interface(b, stream_ptr=-1).__dlpack_device__() == (13, 0)
    b.close()
    mr.close()
    assert mr.is_closed
    plain = ManagedMemoryResource()
    assert not plain.is_handle_owned
    with pytest.raises(ValueError, match=r"ManagedMemoryResource.attributes: .*not a pool"):
        plain.attributes
    assert ManagedMemoryResource({}).is_handle_owned
    numa = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location_type="host_numa"))
    assert numa.preferred_location == ("host_numa", 0)  # the device's nearest node (the mock says 0)
    assert ManagedMemoryResource({"preferred_location": 2, "preferred_location_type": "host_numa"}
                                 ).preferred_location == ("host_numa", 2)
    with pytest.raises(ValueError, match=r"must be a NUMA node ID \(>= 0\)"):
        ManagedMemoryResourceOptions(preferred_location=-1, preferred_location_type="host_numa")
    with pytest.raises(ValueError, match=r"'invalid' is not a valid ManagedMemoryLocationType"):
        ManagedMemoryResourceOptions(preferred_location_type="invalid")


@on_mock
def test_dict_options_are_converted_and_checked(dev):
    mr = DeviceMemoryResource(dev, {"max_size": 1 << 21})
    assert mr.is_handle_owned and isinstance(mr.attributes.reuse_allow_internal_dependencies, bool)
    with pytest.raises(TypeError, match=r"DeviceMemoryResource: unknown option 'max' for DeviceMemoryResourceOptions"):
        DeviceMemoryResource(dev, options={"max": 1})
    with pytest.raises(TypeError, match=r"ManagedMemoryResourceOptions: preferred_location must be an int"):
        ManagedMemoryResource(options={"preferred_location": "0"})
    with pytest.raises(TypeError, match=r"ManagedMemoryResource: options must be a nanocuda.ManagedMemoryResourceOptions"):
        ManagedMemoryResource(options=[1])


def test_buffer_from_handle_asks_the_driver_where_foreign_memory_lives(mock_libcuda):
    code = textwrap.dedent("""
        import ctypes, nanocuda
        nanocuda.Device(0).set_current()
        a = (ctypes.c_byte * 20)()
        b = nanocuda.Buffer.from_handle(ctypes.addressof(a), 20, owner=a)
        print(b.is_host_accessible, b.is_device_accessible, b.device_id, b.__dlpack_device__())
    """)
    seen = {}
    for kind in ("pageable", "pinned", "managed", "device"):
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_POINTER=kind)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/tmp",
                             timeout=120)
        assert out.returncode == 0, out.stderr
        seen[kind] = out.stdout.strip()
    assert seen == {"pageable": "True False -1 (1, 0)", "pinned": "True True 0 (3, 0)",
                    "managed": "True True 0 (13, 0)", "device": "False True 0 (2, 0)"}


def test_host_locations():
    assert Host() is Host() and Host(numa_id=1) is Host(numa_id=1)
    assert Host().numa_id is None and Host().is_numa_current is False
    assert Host.numa_current() is Host(is_numa_current=True) and Host.numa_current().numa_id is None
    assert Host() != Host(numa_id=0) and Host.numa_current() != Host()
    assert hash(Host(numa_id=2)) == hash(Host(numa_id=2))
    assert [repr(h) for h in (Host(), Host(numa_id=2), Host.numa_current())] == [
        "Host()", "Host(numa_id=2)", "Host.numa_current()"]
    for h in (Host(), Host(numa_id=4), Host.numa_current()):
        assert pickle.loads(pickle.dumps(h)) is h and copy.copy(h) is h and copy.deepcopy(h) is h
    for bad in (-1, True, 1.0):
        with pytest.raises(ValueError, match="Host: numa_id must be a non-negative int"):
            Host(numa_id=bad)
    with pytest.raises(ValueError, match="mutually exclusive"):
        Host(numa_id=0, is_numa_current=True)
    with pytest.raises(AttributeError, match="Host is immutable"):
        Host(numa_id=2).numa_id = 3


@on_mock
def test_managed_buffers_take_advice_and_prefetch(dev):
    from nanocuda import ManagedBuffer
    s = dev.create_stream()
    mr = ManagedMemoryResource()
    b = mr.allocate(4096, stream=s)
    assert isinstance(b, ManagedBuffer) and isinstance(b, Buffer) and b.is_managed and b.size == 4096
    assert b.read_mostly is False and b.preferred_location is None and len(b.accessed_by) == 0
    b.read_mostly = True
    b.preferred_location = dev
    b.preferred_location = Host()
    b.preferred_location = None
    b.accessed_by.add(dev)
    b.accessed_by = {dev, Host()}
    b.prefetch(dev, stream=s)
    b.prefetch(Host(), stream=s)
    b.discard(stream=s)
    b.discard_prefetch(dev, stream=s)
    with pytest.raises(ValueError, match=r"ManagedBuffer.prefetch: location is required"):
        b.prefetch(None, stream=s)
    with pytest.raises(TypeError, match=r"location must be a Device, Host, or None; got int"):
        b.prefetch(0, stream=s)
    with pytest.raises(ValueError, match=r"does not support location_type='host_numa'"):
        b.accessed_by.add(Host(numa_id=0))
    with pytest.raises(ValueError, match=r"does not support location_type='host_numa_current'"):
        b.accessed_by = {dev, Host.numa_current()}
    b.close()
    with pytest.raises(ValueError, match=r"ManagedBuffer.read_mostly: .* is closed"):
        b.read_mostly
    ext = ManagedBuffer.from_handle(0x7f0000000000, 64)
    assert isinstance(ext, ManagedBuffer) and ext.size == 64 and ext.memory_resource is None


@on_mock
def test_batched_managed_operations_check_their_arguments(dev):
    from nanocuda import utils
    s = dev.create_stream()
    mr = ManagedMemoryResource()
    bufs = [mr.allocate(4096, stream=s) for _ in range(3)]
    utils.prefetch_batch(s, bufs, dev)
    utils.prefetch_batch(s, bufs, [Host(), dev, Host()])
    utils.discard_batch(s, bufs)
    utils.discard_prefetch_batch(s, bufs, dev)
    for fn, args in ((utils.prefetch_batch, (s, bufs[0], dev)), (utils.discard_batch, (s, bufs[0])),
                     (utils.discard_prefetch_batch, (s, bufs[0], Host()))):
        with pytest.raises(TypeError, match=r"buffers must be a sequence of Buffers, got ManagedBuffer"):
            fn(*args)
    for fn in (utils.prefetch_batch, utils.discard_prefetch_batch):
        with pytest.raises(ValueError, match=r"1 locations for 3 buffers; the length must match"):
            fn(s, bufs, [Host()])
    with pytest.raises(TypeError, match=r"prefetch_batch: expects a nanocuda.Buffer, got int"):
        utils.prefetch_batch(s, [1, 2], dev)


def test_managed_operations_refuse_other_memory(mock_libcuda):
    code = textwrap.dedent("""
        import nanocuda
        from nanocuda import Device, ManagedBuffer
        d = Device(0); d.set_current(); s = d.create_stream()
        b = ManagedBuffer.from_handle(0x7f0000000000, 4096)
        for op in (lambda: setattr(b, "read_mostly", True), lambda: b.prefetch(d, stream=s),
                   lambda: b.discard_prefetch(d, stream=s), lambda: nanocuda.utils.prefetch_batch(s, [b], d)):
            try:
                op()
            except ValueError as e:
                assert "is not a managed-memory allocation" in str(e), e
            else:
                raise AssertionError("accepted device memory")
        print("ok")
    """)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_POINTER="device")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/tmp", timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
