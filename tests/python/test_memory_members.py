"""Buffer and memory-resource members from cuda.core (owner, is_managed, is_mapped,
set_deallocation_stream, allocation_handle) and the reused Buffer instances of the allocate
fast path, run against tools/mock_libcuda.c (a driver that does nothing), so no GPU is
needed. GPU behaviour: test_memory_members_gpu.py."""

import os
import subprocess
import sys
import textwrap

import pytest

import mock_run

import nanocuda


def run_on_mock(mock: str, body: str) -> None:
    # The kept instances go back through nanobind at exit: no leak report.
    mock_run.run_on_mock(mock, textwrap.dedent(body) + "\nprint('ok')\n",
                         prelude="import gc, weakref\nimport nanocuda\n", no_leaks=True)


def test_names_exist_without_a_driver():
    assert isinstance(nanocuda.MemoryResource.__dict__["is_managed"], property)
    for name in ("owner", "is_managed", "is_mapped", "set_deallocation_stream"):
        assert hasattr(nanocuda.Buffer, name), name
    assert isinstance(nanocuda.DeviceMemoryResource.allocation_handle, property)


def test_reused_buffers_are_fresh_independent_objects(mock_libcuda):
    run_on_mock(mock_libcuda, """
        dev = nanocuda.Device(0)
        s = nanocuda.Stream(device=dev)
        mr = dev.memory_resource
        a = mr.allocate(100, s)
        a.close()
        del a                                  # goes to the free list
        b = mr.allocate(300, stream=s)         # may be the same instance, rebuilt
        assert not b.is_closed and b.size == 300 and b.shape == (300,) and b.dtype == "uint8"
        assert b.owner is None and b.memory_resource is mr and b.stream == s
        kept = [mr.allocate(n + 1, s) for n in range(40)]   # more than the list holds
        assert len({id(k) for k in kept}) == 40
        assert [k.size for k in kept] == list(range(1, 41)) and not any(k.is_closed for k in kept)
        held = kept[5]
        del kept
        gc.collect()
        assert held.size == 6 and not held.is_closed   # a held buffer is never handed out again
        fresh = [dev.allocate(7, s) for _ in range(20)]
        assert all(f is not held and f.size == 7 for f in fresh)
        held.close()
        assert held.is_closed
        # A subclass instance is never kept (its type is not Buffer).
        class Sub(nanocuda.Buffer):
            pass
        x = Sub(64, stream=s)
        del x
        y = mr.allocate(8, s)
        assert type(y) is nanocuda.Buffer
    """)


def test_dropped_buffers_are_freed_once_and_their_instances_reused(mock_libcuda):
    run_on_mock(mock_libcuda, """
        freed = []
        class Counting(nanocuda.MemoryResource):
            def __init__(self):
                super().__init__()
                self.next = 0x10000
            def allocate(self, size, stream=None):
                self.next += 0x1000
                return nanocuda.Buffer.from_handle(self.next, size, mr=self)
            def deallocate(self, ptr, size, stream=None):
                freed.append((ptr, size))
            is_device_accessible = True
            is_host_accessible = False
            device_id = 0
        mr = Counting()
        b = mr.allocate(16)
        ptr = b.ptr
        del b                                  # not closed: freed by the destructor, once
        assert freed == [(ptr, 16)], freed
        c = mr.allocate(32)
        c.close(); c.close()                   # the second close does nothing
        assert freed[-1] == (c.handle if not c.is_closed else freed[-1][0], 32) and len(freed) == 2
        del c
        assert len(freed) == 2                 # a closed buffer is not freed again
        d = nanocuda.Device(0).allocate(64)    # the C++ pool, after Python-made instances went back
        assert not d.is_closed and d.size == 64 and d.memory_resource is not mr
    """)


def test_kept_closed_buffers_hold_nothing_alive_and_come_back_plain(mock_libcuda):
    # A closed Buffer dropped goes to the free list still constructed (Buffer::forget): it must
    # keep neither its resource nor its stream alive, and come back as a plain uint8 1-D Buffer.
    run_on_mock(mock_libcuda, """
        import ctypes, os
        destroys = ctypes.c_ulonglong.in_dll(ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"]), "nanocuda_mock_stream_destroys")
        dev = nanocuda.Device(0)
        class Pool(nanocuda.DeviceMemoryResource):  # a subclass, for weakref
            pass
        mr = Pool(0)
        s = nanocuda.Stream(device=dev)
        bufs = [mr.allocate(64, s) for _ in range(3)]
        for b in bufs:
            b.close()
        ref, before = weakref.ref(mr), destroys.value
        del bufs, b, mr
        gc.collect()
        assert ref() is None                    # the kept instances let their resource go
        del s
        gc.collect()
        assert destroys.value == before + 1     # and their stream
        s2 = nanocuda.Stream(device=dev)
        d = nanocuda.Buffer(16, stream=s2, dtype="float32", shape=(4,))
        d.close()
        del d
        e = dev.allocate(12, s2)
        assert e.dtype == "uint8" and e.shape == (12,) and e.size == 12 and e.owner is None
        w = weakref.ref(e)
        e.close()
        del e
        assert w() is None
        f = dev.allocate(5, stream=s2)
        assert f.shape == (5,) and weakref.ref(f)() is f and f.stream == s2
        pool = nanocuda.DeviceMemoryResource(dev, nanocuda.DeviceMemoryResourceOptions())
        pool.close()
        f.close()
        del f                                   # on top of the list, constructed
        try:
            pool.allocate(8, s2)                # refused inside the kept instance
        except ValueError as e:
            assert "closed" in str(e), e
        else:
            raise AssertionError("a closed pool allocated")
        g = dev.allocate(7, s2)                 # the instance went back and is reused
        assert g.size == 7 and not g.is_closed and g.memory_resource is dev.memory_resource
    """)


def test_resource_owner_is_shared_and_released(mock_libcuda):
    run_on_mock(mock_libcuda, """
        s = nanocuda.Stream(device=nanocuda.Device(0))
        class Pool(nanocuda.DeviceMemoryResource):  # a subclass, for weakref
            pass
        mr = Pool(0)
        bufs = [mr.allocate(10, s) for _ in range(3)]
        assert all(b.memory_resource is mr for b in bufs)
        ref = weakref.ref(mr)
        del mr
        gc.collect()
        assert ref() is not None               # the buffers keep their resource
        del bufs
        gc.collect()
        assert ref() is None                   # and release it with the last one
    """)


def test_owner_and_from_handle_rules(mock_libcuda):
    run_on_mock(mock_libcuda, """
        class Holder:
            pass
        h = Holder()
        ref = weakref.ref(h)
        b = nanocuda.Buffer.from_handle(0x7f0000001000, 256, owner=h)
        assert b.owner is h and b.memory_resource is None
        del h
        gc.collect()
        assert ref() is not None
        del b
        gc.collect()
        assert ref() is None
        mr = nanocuda.Device(0).memory_resource
        try:
            nanocuda.Buffer.from_handle(0x7f0000001000, 256, mr=mr, owner=Holder())
        except ValueError as e:
            assert "Buffer.from_handle" in str(e) and "cannot be both specified" in str(e), e
        else:
            raise AssertionError("mr and owner together accepted")
        s = nanocuda.Stream(device=nanocuda.Device(0))
        v = nanocuda.Buffer.from_handle(0x7f0000002000, 8, mr=mr, stream=s)
        assert v.stream == s and v.owner is None
    """)


def test_set_deallocation_stream(mock_libcuda):
    run_on_mock(mock_libcuda, """
        dev = nanocuda.Device(0)
        s1, s2 = nanocuda.Stream(device=dev), nanocuda.Stream(device=dev)
        b = dev.allocate(1024, s1)
        b.set_deallocation_stream(s2)
        assert b.stream == s2 and not b.is_closed
        def refused(exc, text, call):
            try:
                call()
            except exc as e:
                assert "Buffer.set_deallocation_stream" in str(e) and text in str(e), e
            else:
                raise AssertionError(text)
        refused(TypeError, "got None", lambda: b.set_deallocation_stream(None))
        refused(TypeError, "", lambda: b.set_deallocation_stream("s2"))
        s3 = nanocuda.Stream(device=dev)
        s3.close()
        refused(ValueError, "is closed", lambda: b.set_deallocation_stream(s3))
        b.close()
        refused(ValueError, "is closed", lambda: b.set_deallocation_stream(s1))
    """)


def test_is_managed_and_is_mapped(mock_libcuda):
    run_on_mock(mock_libcuda, """
        s = nanocuda.Stream(device=nanocuda.Device(0))
        managed = nanocuda.ManagedMemoryResource(0)
        assert managed.is_managed and not nanocuda.DeviceMemoryResource(0).is_managed
        assert not nanocuda.PinnedMemoryResource().is_managed
        m = managed.allocate(64, s)
        assert m.is_managed and not m.is_mapped
        d = nanocuda.Device(0).allocate(64, s)
        assert not d.is_managed and not d.is_mapped
        assert not nanocuda.Buffer.from_handle(0x7f0000003000, 4).is_managed
        class Unified(nanocuda.MemoryResource):
            def allocate(self, size, stream=None):
                return nanocuda.Buffer.from_handle(0x7f0000004000, size, mr=self)
            def deallocate(self, ptr, size, stream=None):
                pass
            is_device_accessible = True
            is_host_accessible = True
            device_id = 0
            is_managed = True
        class Plain(Unified):
            is_managed = nanocuda.MemoryResource.is_managed   # the default: False
        assert Unified().allocate(8).is_managed
        assert not Plain().allocate(8).is_managed
    """)


def test_allocation_handle_property(mock_libcuda):
    run_on_mock(mock_libcuda, """
        mr = nanocuda.DeviceMemoryResource(0)   # the current pool: never exportable
        try:
            mr.allocation_handle
        except ValueError as e:
            assert "not exportable" in str(e) and "ipc_enabled=True" in str(e), e
        else:
            raise AssertionError("a pool without IPC exported")
    """)


@pytest.mark.parametrize("call", ["allocate(-1)", "allocate(1.5)", "allocate(2**64)", "allocate()",
                                  "allocate(1, strem=None)", "allocate(1, 2, 3)"])
def test_device_allocate_argument_errors(mock_libcuda, call):
    run_on_mock(mock_libcuda, f"""
        try:
            nanocuda.Device(0).{call}
        except (TypeError, ValueError) as e:
            assert "Device.allocate" in str(e), e
        else:
            raise AssertionError("accepted")
    """)


def test_managed_options_follow_cuda_core_rules():
    M = nanocuda.ManagedMemoryResourceOptions
    assert M().preferred_location is None and M(0, "device").preferred_location == 0
    M(-1), M(None, "host"), M(3)
    for args, exc, text in [((-2,), ValueError, "device ordinal, -1"), ((None, "device"), ValueError, ">= 0"),
                            ((0, "host"), ValueError, "must be None"),
                            ((-1, "host_numa"), ValueError, "NUMA node ID"), ((0, "gpu"), ValueError, "'gpu'"),
                            ((True,), TypeError, "must be an int"), (("0",), TypeError, "must be an int")]:
        with pytest.raises(exc, match="ManagedMemoryResourceOptions") as e:
            M(*args)
        assert text in str(e.value)


def test_managed_preferred_location(mock_libcuda):
    run_on_mock(mock_libcuda, """
        O = nanocuda.ManagedMemoryResourceOptions
        assert nanocuda.ManagedMemoryResource(0).preferred_location is None
        r = nanocuda.ManagedMemoryResource(0, O(preferred_location=0))
        assert r.preferred_location == ("device", 0) and "prefers device 0" in repr(r)
        assert nanocuda.ManagedMemoryResource(O(None, "host")).preferred_location == ("host", None)
        assert nanocuda.ManagedMemoryResource(options=O(-1)).preferred_location == ("host", None)
        b = r.allocate(4096)                   # advised on allocation (the mock accepts it)
        assert b.is_managed and b.size == 4096
        try:
            nanocuda.ManagedMemoryResource(0, O(preferred_location=5))
        except ValueError as e:
            assert "ManagedMemoryResource(preferred_location)" in str(e) and "not a device" in str(e), e
        else:
            raise AssertionError("a missing device accepted")
        # a dict is cuda.core's spelling of the options; an unknown key is named
        assert nanocuda.ManagedMemoryResource(0, {"preferred_location": 0}).preferred_location == ("device", 0)
        try:
            nanocuda.ManagedMemoryResource(0, {"location": 0})
        except TypeError as e:
            assert "unknown option 'location' for ManagedMemoryResourceOptions" in str(e), e
        else:
            raise AssertionError("an unknown key accepted")
    """)


def test_no_leak_report_for_objects_kept_until_exit():
    # cuda.core programs keep options and resources alive until exit; nanobind then printed
    # "leaked N instances" for them. That list is off unless NANOCUDA_LEAK_WARNINGS is set.
    code = ("import ctypes, nanocuda\nKEPT = nanocuda.ProgramOptions()\n"
            "ctypes.pythonapi.Py_IncRef(ctypes.py_object(KEPT))\n")  # never released: alive at exit
    env = {k: v for k, v in os.environ.items() if k != "NANOCUDA_LEAK_WARNINGS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, cwd="/tmp")
    assert out.returncode == 0 and "leaked" not in out.stderr, out.stderr
    env["NANOCUDA_LEAK_WARNINGS"] = "1"  # the switch reaches nanobind: now it is reported
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, cwd="/tmp")
    assert "leaked" in out.stderr, out.stderr
