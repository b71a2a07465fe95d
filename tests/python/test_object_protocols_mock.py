"""The object protocols of the public types on the mock driver: == and hash by handle, weak
references, repr in cuda.core's format, pickling (Device, ObjectCode) and its refusals,
Kernel.from_handle, Stream subclass factories, Python MemoryResources that skip
MemoryResource.__init__, and TypeErrors (never std::bad_cast) for values of the wrong type."""


import pytest

import mock_run

import nanocuda


def run_on_mock(mock_libcuda, code):
    mock_run.run_on_mock(mock_libcuda, code, no_leaks=True)


PRELUDE = """
    import gc, pickle, re, weakref, warnings
    import nanocuda
    from nanocuda import Buffer, Device, Kernel, LaunchConfig, MemoryResource, ObjectCode, Stream

    d = Device(0)
    d.set_current()
"""


def test_repr_formats_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    s = d.create_stream()
    e = s.record()
    b = d.allocate(64)
    k = Kernel.from_handle(0x1234)
    cubin = ObjectCode.from_cubin(b"\\x7fELF" + bytes(60), name="mine")
    for obj, pattern in [
        (d, r"<Device 0 \\(.*\\)>"),
        (d.context, r"<Context handle=0x[0-9a-f]+ device=0>"),
        (s, r"<Stream handle=0x[0-9a-f]+ context=0x[0-9a-f]+>"),
        (e, r"<Event handle=0x1000>"),
        (b, r"<Buffer ptr=0x7f0000000000 size=64>"),
        (k, r"<Kernel handle=0x1234>"),
        (cubin, r"<ObjectCode handle=0x0 code_type='cubin'>"),  # not loaded: handle 0, nothing loads
    ]:
        assert re.fullmatch(pattern, repr(obj)), (pattern, repr(obj))
    b.close(); e.close()
    assert repr(b) == "<Buffer ptr=0x0 size=64 (closed)>" and repr(e).endswith("(closed)>")
    print("ok")
    """)


def test_equality_and_hash_by_handle_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    b = d.allocate(64)
    same = Buffer.from_handle(b.handle, 64)
    assert b == same and hash(b) == hash(same) and len({b, same}) == 1
    assert b != Buffer.from_handle(b.handle, 32) and b != b.handle and b != "x"
    assert Buffer.__eq__(b, 3) is NotImplemented
    same.close()
    assert b != same  # a closed Buffer equals only itself
    k1, k2 = Kernel.from_handle(0x1234), Kernel.from_handle(0x1234)
    assert k1 == k2 and hash(k1) == hash(k2) and k1 != Kernel.from_handle(0x5678) and k1 != 0x1234
    b.close()
    print("ok")
    """)


def test_weak_references_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    cubin = ObjectCode.from_cubin(b"\\x7fELF" + bytes(60))
    objs = [d.allocate(16), LaunchConfig(grid=1, block=1), cubin, Kernel.from_handle(0x1234),
            nanocuda.Program('extern "C" __global__ void k() {}', "c++")]
    for obj in objs:
        assert weakref.ref(obj)() is obj, type(obj).__name__
        assert weakref.WeakValueDictionary({"k": obj})["k"] is obj
    for obj in objs[:4]:  # hashable ones
        assert obj in weakref.WeakSet([obj]) and weakref.WeakKeyDictionary({obj: 1})[obj] == 1
    # Buffers go back to the free list: each dead one's weak reference clears and calls back once
    seen = []
    for _ in range(40):
        z = d.allocate(16)
        ref = weakref.ref(z, lambda _: seen.append(1))
        z.close()
        del z
        assert ref() is None
    assert len(seen) == 40
    kept = [d.allocate(8) for _ in range(20)]  # reused instances are fresh, open Buffers
    assert all(not q.is_closed and q.size == 8 for q in kept) and len({id(q) for q in kept}) == 20
    del kept
    gc.collect()
    print("ok")
    """)


def test_pickling_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    assert pickle.loads(pickle.dumps(d)) is d  # by ordinal: the same per-thread Device
    cubin = ObjectCode.from_ptx(".version 8.0\\n.target sm_90\\n", name="p", symbol_mapping={"f<int>": "_Z1fIiEvv"})
    back = pickle.loads(pickle.dumps(cubin))
    assert type(back) is ObjectCode and back.code == cubin.code and back.code_type == "ptx"
    assert back.name == "p" and back.symbol_mapping == {"f<int>": "_Z1fIiEvv"}
    s = d.create_stream()
    raises(lambda: pickle.dumps(s), TypeError, "cannot pickle a nanocuda.Stream", "belongs to the process")
    raises(lambda: pickle.dumps(d.context), TypeError, "cannot pickle a nanocuda.Context")
    raises(lambda: pickle.dumps(Kernel.from_handle(0x1234)), TypeError, "cannot pickle a nanocuda.Kernel")
    print("ok")
    """)


def test_kernel_from_handle_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    class Handle:  # cuda.bindings' CUkernel: int() gives the handle
        def __int__(self):
            return 0x4321
    k = Kernel.from_handle(Handle())
    assert int(k.handle) == 0x4321 and k.num_arguments == 4  # the layout is read from the handle
    cubin = ObjectCode.from_cubin(b"\\x7fELF" + bytes(60))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the mock driver names no library: no mismatch warning
        assert Kernel.from_handle(0x1234, cubin).handle == 0x1234
    for bad in ("1", 2.5, None, [1], b"\\x01", 3j, object()):
        raises(lambda: Kernel.from_handle(bad), TypeError, "Kernel.from_handle: handle must be an int")
    raises(lambda: Kernel.from_handle(0x1234, mod="x"), TypeError, "Kernel.from_handle: mod must be a nanocuda.ObjectCode")
    raises(lambda: Kernel.from_handle(0), ValueError, "Kernel.from_handle: the handle is 0")
    print("ok")
    """)


def test_stream_factories_and_priority_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    class MyStream(Stream):
        pass
    for s in (MyStream._init(device_id=0), MyStream._init(options=nanocuda.StreamOptions(priority=-1)),
              MyStream._legacy_default(), MyStream._per_thread_default()):
        assert isinstance(s, MyStream) and s.device is d
    assert MyStream._legacy_default() == Stream.legacy(d)
    raises(lambda: Stream._init.__func__(int), TypeError, "Stream._init: cls must be nanocuda.Stream")
    # the mock reports an H100's range, [-5, 0]
    assert d.create_stream(options=nanocuda.StreamOptions(priority=-5)) is not None
    raises(lambda: d.create_stream(options=nanocuda.StreamOptions(priority=1)), ValueError,
           "Stream: priority 1 is outside device 0's range [-5, 0]")
    raises(lambda: d.create_stream(options={"priority": 2**40}), ValueError, "Device.create_stream: priority must be in")
    print("ok")
    """)


def test_event_arithmetic_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    s = d.create_stream()
    e = s.record()
    assert e.__isub__(1) is NotImplemented and e.__rsub__(1) is NotImplemented
    raises(lambda: 1 - e, TypeError)
    timed = nanocuda.EventOptions(timing_enabled=True)
    a, b = d.create_event(timed), d.create_event(timed)
    raises(lambda: b - a, RuntimeError, "Both Events must be recorded", "the start Event")
    raises(lambda: b - e, RuntimeError, "Both Events must be created with timing enabled", "timing disabled")
    print("ok")
    """)


def test_python_resource_without_base_init_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    def main():  # in a function: module globals holding a Python resource outlive nanobind's leak check
        freed = []
        class NoInit(MemoryResource):  # cuda.core's base needs no __init__, so this one skips it
            def __init__(self, device, where):
                self.device, self.where = device, where
            def allocate(self, size, *, stream=None):
                return Buffer.from_handle(ptr=0x10000, size=size, mr=self)
            def deallocate(self, ptr, size, *, stream=None):  # stream keyword-only, as cuda.core's
                freed.append((ptr, size))
            @property
            def is_device_accessible(self):
                return True
            @property
            def is_host_accessible(self):
                return self.where == "host"
            @property
            def device_id(self):
                if self.where == "host":
                    raise RuntimeError("not bound to any GPU")  # cuda.core's pinned rule: -1
                return self.device  # a Device, not an int: accepted as its ordinal
        buf = NoInit(d, "device").allocate(64)
        assert buf.device_id == 0 and not buf.is_host_accessible
        buf.close()
        host = NoInit(d, "host").allocate(32)
        assert host.is_host_accessible
        host.close()
        assert freed == [(0x10000, 64), (0x10000, 32)]
        class Wrong(NoInit):
            @property
            def is_host_accessible(self):
                return "yes"
        raises(lambda: Wrong(d, "device").allocate(8).is_host_accessible, TypeError,
               "Wrong.is_host_accessible must be a bool, got str")
        d.memory_resource = NoInit(d, "device")  # the setter initializes it too
        d.memory_resource = None
        raises(lambda: setattr(d, "memory_resource", 3), TypeError, "Device.memory_resource: the resource must be")
    main()
    gc.collect()
    print("ok")
    """)


def test_wrong_types_are_type_errors_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    k = Kernel.from_handle(0x1234)
    raises(lambda: k.occupancy.max_potential_block_size(..., 0), TypeError,
           "KernelOccupancy.max_potential_block_size: the dynamic shared memory is a number of bytes")
    # shape: an int or a sequence of ints (numpy's ints too), each error naming the call
    raises(lambda: Buffer(64, shape="ab"), TypeError, "Buffer: shape must be an int or a sequence of ints, got str")
    raises(lambda: Buffer(64, shape=(2, "a")), TypeError, "Buffer: each dimension of shape must be an int, got 'a'")
    raises(lambda: Buffer(64, shape=(True,)), TypeError, "Buffer: each dimension of shape must be an int")
    raises(lambda: Buffer(64, shape=(2**70,)), ValueError, "too large")
    import numpy as np
    assert Buffer(64, shape=np.int64(8), dtype="float64").shape == (8,)
    assert Buffer(64, shape=[np.int32(4), 4], dtype="float32").shape == (4, 4)
    print("ok")
    """)


@pytest.mark.parametrize("name", ["Buffer", "LaunchConfig", "ObjectCode", "Kernel", "Program", "Device",
                                  "Stream", "Event", "Context", "Linker", "MemoryResource",
                                  "DeviceMemoryResource", "PinnedMemoryResource", "ManagedMemoryResource"])
def test_types_are_weak_referenceable(name):
    assert getattr(nanocuda, name).__weakrefoffset__ > 0
