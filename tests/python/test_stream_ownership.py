"""nanocuda.Stream keeps cuda.core's one type for made and adopted streams while the core keeps
them apart (an owning Stream or a foreign StreamRef): ownership, close, ==/hash, lifetimes, on the mock."""

from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)

PRELUDE = """
import ctypes, gc, os, pickle, weakref
import nanocuda
from nanocuda import Buffer, Device, Stream
_lib = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
def destroys():
    return ctypes.c_ulonglong.in_dll(_lib, "nanocuda_mock_stream_destroys").value
"""


def test_made_streams_are_owned_and_destroyed_once_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        before = destroys()
        s = Stream()
        assert s.is_owned and not s.is_closed
        b = Buffer(64, stream=s)
        assert b.stream == s and b.stream.is_owned   # the Buffer's stream is the same owned stream
        del s
        gc.collect()
        assert destroys() == before                  # the Buffer keeps the stream alive
        b.close()
        del b
        gc.collect()
        assert destroys() == before + 1              # its last holder destroyed it, once
        s = Device().create_stream()
        s.close()
        assert s.is_closed and destroys() == before + 2
        s.close()                                    # closing twice is a no-op
        assert destroys() == before + 2
        raises(lambda: s.handle, ValueError, "closed")
        print("ok")
    """, prelude=PRELUDE, version="13.0")


def test_adopted_streams_are_never_destroyed_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        before = destroys()
        owner = Stream()
        for s in (Stream.from_handle(owner.handle), Stream.legacy(), Stream.per_thread(),
                  Device().default_stream, Stream._legacy_default(), Stream._per_thread_default()):
            assert not s.is_owned, s
            s.sync()
            s.close()                                        # never destroys a stream nanocuda did not make
        foreign = Stream.from_handle(owner.handle)
        assert not foreign.is_owned and not Stream.legacy().is_owned and not Stream.per_thread().is_owned
        assert Stream.adopt(owner).is_owned                  # adopting a nanocuda Stream keeps it as it is
        assert foreign == owner and hash(foreign) == hash(owner)  # same CUstream: equal, as cuda.core
        assert foreign.device == owner.device
        b = Buffer(64, stream=foreign)
        assert not b.stream.is_owned and b.stream == owner
        b.close()
        foreign.close()                                      # drops this object's use only
        assert foreign.is_closed and not owner.is_closed
        raises(lambda: foreign.handle, ValueError, "Stream.handle: ", "closed")  # names the call
        raises(lambda: Buffer(64, stream=foreign), ValueError, "Buffer: ", "closed")
        raises(lambda: Device().allocate(64, stream=foreign), ValueError, "Device.allocate: ", "closed")
        owner.sync()                                         # the stream itself is untouched
        assert destroys() == before
        ref = weakref.ref(foreign)
        raises(lambda: pickle.dumps(foreign), TypeError, "stream")
        del foreign
        gc.collect()
        assert ref() is None
        owner.close()
        assert destroys() == before + 1
        print("ok")
    """, prelude=PRELUDE, version="13.0")


def test_closed_owned_stream_is_a_clear_error_through_every_use_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        s = Stream()
        k = nanocuda.Kernel.from_handle(0x1000)
        cfg = nanocuda.LaunchConfig(grid=1, block=32)
        s.close()
        raises(lambda: Buffer(64, stream=s), ValueError, "closed")
        raises(lambda: nanocuda.launch(s, cfg, k, 0, 0, 0, 1), ValueError, "closed")
        raises(lambda: s.sync(), ValueError, "closed")
        # Every call that takes the closed Stream names itself (the exact-Stream fast paths too),
        # and a Buffer is not freed on a stream named closed (its handle may be another's now).
        dev = nanocuda.Device()
        raises(lambda: dev.allocate(64, stream=s), ValueError, "Device.allocate: ", "closed")
        raises(lambda: dev.memory_resource.allocate(64, stream=s), ValueError, "MemoryResource.allocate: ", "closed")
        raises(lambda: nanocuda.PinnedMemoryResource().allocate(64, stream=s), ValueError, "allocate: ", "closed")
        live = Stream()
        b = Buffer(64, stream=live)
        raises(lambda: b.close(s), ValueError, "Buffer.close: ", "closed")
        assert not b.is_closed  # refused before freeing anything
        live.close()
        b.close()  # the allocating stream is closed now: freed on the legacy stream, as documented
        assert b.is_closed
        print("ok")
    """, prelude=PRELUDE, version="13.0")


def test_every_stream_property_returns_a_python_stream_on_mock(mock_libcuda):
    # The bindings hand the core's StreamRef/KeptStream back as nanocuda.Stream everywhere
    # (a missed one would be nanobind's "cannot convert" TypeError at run time, not at build).
    run_on_mock(mock_libcuda, """
        before = destroys()
        s = Stream()
        b = s.create_graph_builder()
        assert type(b.stream) is Stream and b.stream == s and b.stream.is_owned
        o = nanocuda.GraphCompleteOptions(upload_stream=s)
        assert type(o.upload_stream) is Stream and o.upload_stream == s
        assert nanocuda.GraphCompleteOptions().upload_stream is None
        g = nanocuda.Graph()
        g.capture(s)
        assert type(g.stream) is Stream and g.stream == s
        legacy_builder_options = nanocuda.GraphCompleteOptions(upload_stream=Stream.legacy())
        assert not legacy_builder_options.upload_stream.is_owned
        buf = Buffer(16, stream=Stream.per_thread())
        assert type(buf.stream) is Stream and not buf.stream.is_owned
        del s, b, o, g
        gc.collect()
        assert destroys() == before + 1  # the builder, options and graph held the stream, then let it go
        print("ok")
    """, prelude=PRELUDE, version="13.0")
