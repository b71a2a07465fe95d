"""cuda.core names a cuda.core test suite's root conftest needs (PinnedMemoryResourceOptions,
nanocuda.typing), weak references to Device/Context/Stream/Event, and cuda.bindings-style
handle objects (anything int() converts) in Buffer/Stream.from_handle: on the CPU, the
object lifecycles against tools/mock_libcuda.c."""

import dataclasses
import subprocess
import sys

import pytest

import nanocuda


# --- PinnedMemoryResourceOptions: cuda.core's fields, checked on creation ---------------------


def test_pinned_options_fields_and_defaults():
    o = nanocuda.PinnedMemoryResourceOptions()
    assert (o.ipc_enabled, o.max_size, o.numa_id) == (False, 0, None)
    assert [f.name for f in dataclasses.fields(o)] == ["ipc_enabled", "max_size", "numa_id"]
    assert "PinnedMemoryResourceOptions" in nanocuda.__all__


@pytest.mark.parametrize("kwargs, error, text", [
    ({"ipc_enabled": 1}, TypeError, "PinnedMemoryResourceOptions: ipc_enabled must be a bool, got int"),
    ({"max_size": -1}, ValueError, "PinnedMemoryResourceOptions: max_size must be >= 0, got -1"),
    ({"max_size": 1.5}, TypeError, "PinnedMemoryResourceOptions: max_size must be an int"),
    ({"numa_id": -2}, ValueError, "PinnedMemoryResourceOptions: numa_id must be >= 0, got -2"),
    ({"numa_id": "0"}, TypeError, "PinnedMemoryResourceOptions: numa_id must be an int"),
])
def test_pinned_options_bad_input(kwargs, error, text):
    with pytest.raises(error, match=text):
        nanocuda.PinnedMemoryResourceOptions(**kwargs)


# --- nanocuda.typing: cuda.core.typing's names ---------------------------------------------


def test_typing_names_and_values():
    import typing

    from nanocuda import typing as nt

    for name in nt.__all__:
        assert getattr(nt, name) is not None, name
    # members equal the strings nanocuda's calls take
    assert nt.ManagedMemoryLocationType.HOST_NUMA == "host_numa"
    assert nt.VirtualMemoryAccessType.READ_WRITE == "rw" and str(nt.VirtualMemoryAccessType.READ) == "r"
    assert nt.SourceCodeType.CXX == "c++" and nt.CompilerBackendType.NVJITLINK == "nvJitLink"
    assert nt.ArrayFormatType("float16") is nt.ArrayFormatType.FLOAT16
    with pytest.raises(ValueError):
        nt.AddressModeType("spiral")
    assert set(typing.get_args(nt.ProcessStateType)) == {"running", "locked", "checkpointed", "failed"}
    assert int in typing.get_args(nt.DevicePointerType) and type(None) in typing.get_args(nt.DevicePointerType)


def test_typing_is_stream_protocol():
    from nanocuda.typing import IsStreamType

    class Foreign:
        def __cuda_stream__(self):
            return (0, 0)

    assert isinstance(Foreign(), IsStreamType)
    assert not isinstance(object(), IsStreamType)


def test_typing_is_not_imported_by_nanocuda():
    out = subprocess.run([sys.executable, "-c", "import sys, nanocuda; print('nanocuda.typing' in sys.modules)"],
                         capture_output=True, text=True, cwd="/tmp", timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# --- On the mock driver: options read by the resource, weak references, handle objects -------


from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


PRELUDE = """
    import gc, weakref
    import nanocuda
    from nanocuda import (Buffer, Device, PinnedMemoryResource, PinnedMemoryResourceOptions,
                          DeviceMemoryResourceOptions, Stream)

    class Handle:  # what cuda.bindings' CUdeviceptr/CUstream look like: int() gives the handle
        def __init__(self, v):
            self.v = v
        def __int__(self):
            return self.v
        def getPtr(self):  # the address of the stored value, never the handle
            return 0xdead
"""


def test_pinned_resource_reads_its_options_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    Device(0).set_current()
    # cuda.core's spelling: the options first, positionally or by keyword; defaults work
    for mr in (PinnedMemoryResource(PinnedMemoryResourceOptions()),
               PinnedMemoryResource(options=PinnedMemoryResourceOptions()), PinnedMemoryResource()):
        b = mr.allocate(64)
        assert b.size == 64 and b.is_host_accessible
        b.close()
    # options make an owned host pool (cuda.core's pool settings are kept, not refused)
    mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True, max_size=1 << 21))
    assert mr.is_ipc_enabled and mr.is_handle_owned and mr.numa_id >= 0
    mr = PinnedMemoryResource(options=PinnedMemoryResourceOptions(numa_id=0))
    assert mr.numa_id == 0 and not mr.is_ipc_enabled
    mr.close()
    assert mr.is_closed
    raises(lambda: mr.allocate(64), ValueError, "PinnedMemoryResource.allocate", "is closed")
    # a dict is cuda.core's spelling of the options; an unknown key is named
    assert PinnedMemoryResource({"max_size": 1 << 21}).is_handle_owned
    raises(lambda: PinnedMemoryResource(options={"ipc_enable": False}), TypeError,
           "PinnedMemoryResource: unknown option 'ipc_enable' for PinnedMemoryResourceOptions")
    # another resource's options is a TypeError naming the class
    raises(lambda: PinnedMemoryResource(options=DeviceMemoryResourceOptions()), TypeError,
           "options must be a nanocuda.PinnedMemoryResourceOptions, a dict of its fields or None, "
           "got DeviceMemoryResourceOptions")
    print("ok")
    """)


def test_weak_references_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    d = Device(0)
    d.set_current()
    s = d.create_stream()
    e = s.record()
    ctx = d.context
    for obj in (d, s, e, ctx):
        r = weakref.ref(obj)
        assert r() is obj, type(obj).__name__
        ws = weakref.WeakSet([obj])
        assert obj in ws
        wv = weakref.WeakValueDictionary({"k": obj})
        assert wv["k"] is obj
    # a dead object's weak reference clears (and its callback runs)
    seen = []
    s2 = d.create_stream()
    r2 = weakref.ref(s2, lambda _: seen.append(1))
    del s2
    gc.collect()
    assert r2() is None and seen == [1]
    e2 = s.record()
    r3 = weakref.ref(e2)
    del e2
    gc.collect()
    assert r3() is None
    print("ok")
    """)


def test_handle_objects_in_from_handle_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, PRELUDE + """
    Device(0).set_current()
    buf = Device(0).allocate(256)
    view = Buffer.from_handle(Handle(int(buf.handle)), 256)
    assert int(view.handle) == int(buf.handle) and view.size == 256  # __int__, not getPtr()
    keep = object()
    owned = Buffer.from_handle(Handle(int(buf.handle)), 128, owner=keep)
    assert owned.owner is keep
    raises(lambda: Buffer.from_handle(1.5, 8), TypeError, "Buffer.from_handle: ptr must be an int or a handle object")
    raises(lambda: Buffer.from_handle(True, 8), TypeError, "Buffer.from_handle: ptr must be an int")
    raises(lambda: Buffer.from_handle(object(), 8), TypeError, "Buffer.from_handle: ptr", "got object")
    raises(lambda: Buffer.from_handle(Handle(-1), 8), ValueError, "Buffer.from_handle: ptr must be >= 0")
    s = Device(0).create_stream()
    t = Stream.from_handle(Handle(int(s.handle)))
    assert t == s and hash(t) == hash(s)
    raises(lambda: Stream.from_handle("abc"), TypeError, "Stream.from_handle: handle must be an int or a handle")
    # cuda.core 1.2 spells the export as a property: the same export, the same refusal
    raises(lambda: buf.ipc_descriptor, ValueError, "not exportable", "ipc_enabled=True")
    raises(lambda: buf.get_ipc_descriptor(), ValueError, "Buffer.get_ipc_descriptor:", "ipc_enabled=True")
    view.close(); owned.close(); buf.close()
    print("ok")
    """)


def test_cuda_bindings_handles_on_mock(mock_libcuda):
    driver = pytest.importorskip("cuda.bindings.driver", reason="needs the cuda-bindings package")
    del driver
    run_on_mock(mock_libcuda, PRELUDE + """
    from cuda.bindings import driver
    Device(0).set_current()
    buf = Device(0).allocate(64)
    view = Buffer.from_handle(driver.CUdeviceptr(int(buf.handle)), 64)
    assert int(view.handle) == int(buf.handle)
    s = Device(0).create_stream()
    assert Stream.from_handle(driver.CUstream(int(s.handle))) == s
    view.close(); buf.close()
    print("ok")
    """)
