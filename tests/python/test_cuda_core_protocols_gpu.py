"""PinnedMemoryResource with its options, cuda.bindings handles in from_handle and weak
references on a real GPU, written the way a cuda.core user writes them. The CPU half is
test_cuda_core_protocols.py."""

import gc
import weakref

import numpy as np
import pytest

from nanocuda import Buffer, Device, PinnedMemoryResource, PinnedMemoryResourceOptions, Stream

pytestmark = pytest.mark.gpu


def test_pinned_resource_with_options_round_trip():
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    host = PinnedMemoryResource(PinnedMemoryResourceOptions()).allocate(1024, stream=s)
    dmem = dev.allocate(1024, stream=s)
    src = np.from_dlpack(host).view(np.uint8)
    src[:] = np.arange(1024) % 251
    dmem.copy_from(host, stream=s)
    back = PinnedMemoryResource(options=PinnedMemoryResourceOptions()).allocate(1024, stream=s)
    back.copy_from(dmem, stream=s)
    s.sync()
    assert (np.from_dlpack(back).view(np.uint8) == src).all()
    for b in (host, dmem, back):
        b.close()


def test_cuda_bindings_handles_name_the_same_memory_and_stream():
    driver = pytest.importorskip("cuda.bindings.driver", reason="needs the cuda-bindings package")
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    buf = dev.allocate(64, stream=s)
    buf.fill(7, stream=s)
    view = Buffer.from_handle(driver.CUdeviceptr(int(buf.handle)), 64, owner=buf)
    out = PinnedMemoryResource().allocate(64, stream=s)
    out.copy_from(view, stream=Stream.from_handle(driver.CUstream(int(s.handle))))
    s.sync()
    assert (np.from_dlpack(out).view(np.uint8) == 7).all()
    view.close()
    out.close()
    buf.close()


def test_weak_references_follow_the_objects():
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    e = s.record()
    refs = [weakref.ref(o) for o in (dev, dev.context, s, e)]
    assert [r() for r in refs[2:]] == [s, e]
    del s, e
    gc.collect()
    assert refs[2]() is None and refs[3]() is None
    assert refs[0]() is dev
