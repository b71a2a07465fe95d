"""utils.copy_batch on a real GPU: the bytes arrive, for every access order, with hints on managed
memory, on the legacy default stream (one copy each) and on a created stream (one batch call)."""

import ctypes

import pytest

import nanocuda
from nanocuda import Host, LegacyPinnedMemoryResource, ManagedMemoryResource
from nanocuda.utils import CopyOptions, MemcpySrcAccessOrder, copy_batch

pytestmark = pytest.mark.gpu

SIZE = 1024


@pytest.fixture
def dev():
    d = nanocuda.Device(0)
    d.set_current()
    return d


def read(buf, stream):
    host = LegacyPinnedMemoryResource().allocate(buf.size)
    buf.copy_to(host, stream=stream)
    stream.sync()
    data = ctypes.string_at(int(host.handle), host.size)
    host.close()
    return data


def filled(mr, values, stream):
    bufs = []
    for v in values:
        b = mr.allocate(SIZE, stream=stream)
        b.fill(v, stream=stream)
        bufs.append(b)
    return bufs


@pytest.mark.parametrize("order", list(MemcpySrcAccessOrder))
def test_pinned_to_device_every_access_order(dev, order):
    s = dev.create_stream()
    srcs = filled(LegacyPinnedMemoryResource(), (3, 5, 7), s)
    dsts = [dev.allocate(SIZE, stream=s) for _ in srcs]
    copy_batch(s, srcs, dsts, options=CopyOptions(src_access_order=order))
    assert [read(d, s) for d in dsts] == [bytes([v]) * SIZE for v in (3, 5, 7)]


def test_per_copy_options_and_managed_hints(dev):
    s = dev.create_stream()
    mr = ManagedMemoryResource()
    srcs = filled(mr, (11, 12), s)
    dsts = [mr.allocate(SIZE, stream=s) for _ in srcs]
    copy_batch(s, srcs, dsts, options=[CopyOptions(src_location_hint=dev, dst_location_hint=Host()),
                                       CopyOptions(src_access_order="any")])
    assert [read(d, s) for d in dsts] == [bytes([11]) * SIZE, bytes([12]) * SIZE]


def test_legacy_default_stream_copies_one_by_one(dev):
    s = dev.default_stream
    srcs = filled(LegacyPinnedMemoryResource(), (21, 22), s)
    dsts = [dev.allocate(SIZE, stream=s) for _ in srcs]
    copy_batch(s, srcs, dsts, options=CopyOptions(src_access_order="during_api_call"))
    assert [read(d, s) for d in dsts] == [bytes([21]) * SIZE, bytes([22]) * SIZE]


def test_capturing_stream_is_refused(dev):
    b = dev.create_graph_builder().begin_building()
    src, dst = dev.allocate(SIZE), dev.allocate(SIZE)
    with pytest.raises(TypeError, match="copy_batch: stream cannot be a GraphBuilder"):
        copy_batch(b, [src], [dst])
    b.end_building()
