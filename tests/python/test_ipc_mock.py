"""IPC objects sent to other processes the ways cuda.core's IPC tests send them (an allocation
handle as a Process argument, a resource whose pickling fails midway, pickled Buffers in a
worker pool), against tools/mock_libcuda.c, whose exported pools are real file descriptors:
no GPU needed. Each scenario runs in its own process, so a crash fails the test. The GPU
side (real pools): test_ipc_gpu.py."""

from mock_run import run_spawn_scenario

# Spawned children import their targets from this module, written next to the scenario.
CHILDREN = '''
def child_main(obj, *rest):
    pass


def keep(*objs):
    pass  # a Pool initializer: the worker keeps its arguments (the mapped resources) alive


def touch_buffer(raw):
    import pickle
    buf = pickle.loads(raw)
    assert buf.size == 64 and buf.is_mapped, (buf.size, buf.is_mapped)
    buf.close()
    return "mapped"


def touch_sent_buffer(buf):
    assert buf.size == 64
    buf.close()
    return "sent"


def unpickle_error(raw):
    import pickle
    try:
        pickle.loads(raw)
    except RuntimeError as e:
        return str(e)
    return "no error"


def child_checks(mr, buf, handle, desc, event):
    import nanocuda
    assert mr.is_mapped and buf.is_mapped and buf.memory_resource is mr, (mr, buf)
    assert nanocuda.DeviceMemoryResource.from_allocation_handle(0, handle) is mr  # the registry's
    again = nanocuda.Buffer.from_ipc_descriptor(mr, desc)
    assert again.handle == buf.handle  # the same buffer imported twice: one mapping, counted
    again.close()
    buf.close()
    try:
        mr.allocate(64)
    except TypeError as e:
        assert str(e) == "Cannot allocate from a mapped IPC-enabled memory resource", e
    else:
        raise AssertionError("a mapped resource must not allocate")
    assert event.is_ipc_enabled and event.is_blocking_sync and event.device is None and event.context is None
    assert event.ipc_descriptor == bytes(64)  # what the mock driver exports


def close_mapped_first(mr, buf, trace):
    import os
    os.environ["NANOCUDA_MOCK_TRACE"] = trace
    mr.close()
    assert mr.is_closed and not buf.is_closed
    buf.close()
    mr.close()  # idempotent


class IPCBufferDescriptor:
    """Stands for cuda.core's own descriptor class: only its pickled form is public."""

    def __init__(self, payload, size):
        self.payload, self.size = payload, size

    def __reduce__(self):
        return IPCBufferDescriptor, (self.payload, self.size)


class Irreducible:
    def __reduce__(self):
        raise RuntimeError("Irreducible")
'''


def run_scenario(mock: str, tmp_path, body: str, **env: str) -> str:
    return run_spawn_scenario(mock, tmp_path, ("ipc_mock_children", CHILDREN), POOL, body, **env)


POOL = "mr = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))\n"


def test_allocation_handle_as_a_process_argument(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        h = mr.allocation_handle
        for _ in range(2):
            p = mp.Process(target=child_main, args=(h,))
            p.start(); p.join(120)
            assert p.exitcode == 0, p.exitcode
        del h
        gc.collect()
        mr.close()
        assert mr.is_closed
    """)


def test_a_resource_whose_process_start_fails_is_left_usable(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        for obj in (mr, mr.allocation_handle, mr.allocate(64)):
            for _ in range(2):
                try:
                    mp.Process(target=child_main, args=(obj, Irreducible())).start()
                except (RuntimeError, TypeError) as e:
                    assert "Irreducible" in str(e) or "pickle" in str(e), e
                else:
                    raise AssertionError("the start should fail")
        gc.collect()
        b = mr.allocate(64)
        b.close()
        mr.close()
    """)


def test_buffers_pickled_into_a_worker_pool(mock_libcuda, tmp_path):
    out = run_scenario(mock_libcuda, tmp_path, """
        bufs = [mr.allocate(64) for _ in range(6)]
        with mp.Pool(2, initializer=keep, initargs=(mr,)) as pool:
            got = pool.map(touch_buffer, [pickle.dumps(b) for b in bufs])
            sent = pool.map(touch_sent_buffer, bufs)
        assert got == ["mapped"] * 6 and sent == ["sent"] * 6, (got, sent)
        for b in bufs:
            b.close()
        mr.close()
        print("pool done")
    """)
    assert "pool done" in out


def test_a_closed_pool_cannot_be_exported(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        b = mr.allocate(64)
        mr.close()
        for call in (lambda: mr.allocation_handle, lambda: pickle.dumps(b)):
            try:
                call()
            except (ValueError, TypeError) as e:
                assert "closed" in str(e), e
            else:
                raise AssertionError("a closed pool must refuse")
    """)


def test_plain_pickle_finds_the_resource_by_uuid_or_says_it_was_not_found(mock_libcuda, tmp_path):
    out = run_scenario(mock_libcuda, tmp_path, """
        import uuid
        assert isinstance(mr.uuid, uuid.UUID) and mr.allocation_handle.uuid == mr.uuid
        other = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
        raw = pickle.dumps(other.allocate(64))
        with mp.Pool(1, initializer=keep, initargs=(mr,)) as pool:
            print(pool.apply(unpickle_error, (raw,)))
            print(pool.apply(unpickle_error, (pickle.dumps(mr.allocate(64)),)))
        other.close(); other.close()
        mr.close(); mr.close()
    """)
    assert "was not found" in out and "no error" in out, out


def test_a_child_gets_mapped_resources_buffers_and_ipc_events(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        buf = mr.allocate(64)
        s = nanocuda.Device(0).create_stream()
        e = s.record(options={"ipc_enabled": True, "blocking_sync": True})
        p = mp.Process(target=child_checks, args=(mr, buf, mr.allocation_handle, buf.ipc_descriptor, e))
        p.start(); p.join(120)
        assert p.exitcode == 0, p.exitcode
        buf.close()
        mr.close()
    """)


def test_descriptors_are_checked_before_and_after_the_driver(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        from ipc_mock_children import IPCBufferDescriptor as ForeignDescriptor
        from nanocuda import Buffer, DeviceMemoryResource, IPCBufferDescriptor, IPCAllocationHandle
        buf = mr.allocate(64)
        desc = buf.ipc_descriptor
        payload, size = desc.__reduce__()[1]
        assert size == 64 and len(payload) >= 64 and pickle.loads(pickle.dumps(desc)) == desc
        mapped = DeviceMemoryResource.from_allocation_handle(0, mr.allocation_handle.handle)  # a bare fd
        assert mapped.is_mapped and mapped.uuid is None
        cases = [(IPCBufferDescriptor._init(b"\\0" * 8, 64), ValueError, "payload is 8 bytes; expected at least 64"),
                 (IPCBufferDescriptor._init(payload, 64 * 100), ValueError, "exceeds the mapped allocation extent"),
                 (buf, TypeError, "Argument 'ipc_descriptor' has incorrect type")]
        for d, kind, text in cases:
            try:
                Buffer.from_ipc_descriptor(mapped, d)
            except kind as e:
                assert text in str(e), e
            else:
                raise AssertionError(text)
        try:
            IPCAllocationHandle._init(-1, None)
        except ValueError as e:
            assert "Invalid allocation handle (fd) -1: must be non-negative" in str(e), e
        try:
            pickle.dumps(mr.allocation_handle)
        except TypeError as e:
            assert "multiprocessing" in str(e), e
        foreign = Buffer.from_ipc_descriptor(mapped, ForeignDescriptor(payload, 64))  # cuda.core's object
        assert foreign.size == 64
        foreign.close()
        ok = Buffer.from_ipc_descriptor(mapped, desc)  # the refused imports left nothing behind
        ok.close()
        mapped.close(); mapped.close()
        buf.close()
        mr.close()
    """)


def test_ipc_events_are_made_once_bound_and_never_timed(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        dev = nanocuda.Device(0)
        s = dev.create_stream()
        opts = nanocuda.EventOptions(ipc_enabled=True, timing_enabled=True)  # only data
        checks = [(lambda: s.record(options=opts), "IPC-enabled events cannot use timing."),
                  (lambda: s.record(options={"ipc_enabled": True, "timing_enabled": True}),
                   "IPC-enabled events cannot use timing."),
                  (lambda: dev.create_event({"ipc_enabled": True}),
                   "IPC-enabled events must be bound; use Stream.record for creation."),
                  (lambda: s.record(s.record(options={"ipc_enabled": True})),
                   "IPC-enabled events should not be re-recorded, instead create a new event by supplying options.")]
        for call, text in checks:
            try:
                call()
            except TypeError as e:
                assert str(e) == text, e
            else:
                raise AssertionError(text)
        e = nanocuda.Event.create_ipc(dev)
        s.record(e)  # nanocuda's own way: made unrecorded, recorded once
        assert e.is_ipc_enabled and not e.is_timing_enabled and e.device == dev
    """)


def test_bad_ipc_input_names_the_call_and_the_rule(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        from nanocuda import Buffer, DeviceMemoryResource, IPCBufferDescriptor
        desc = mr.allocate(64).ipc_descriptor
        plain = DeviceMemoryResource(0)
        cases = [
            (lambda: DeviceMemoryResource.from_allocation_handle(0, "3"), TypeError,
             "from_allocation_handle: alloc_handle must be an IPCAllocationHandle"),
            (lambda: DeviceMemoryResource.from_allocation_handle(0, -1), ValueError, "must be non-negative"),
            (lambda: DeviceMemoryResource.from_registry(5), TypeError, "from_registry: uuid must be a uuid.UUID"),
            (lambda: DeviceMemoryResource.from_registry(b"short"), ValueError, "16 bytes"),
            (lambda: mr.register(mr.uuid), ValueError, "only a mapped resource"),
            (lambda: Buffer.from_ipc_descriptor(object(), desc), TypeError, "Argument 'mr' has incorrect type"),
            (lambda: Buffer.from_ipc_descriptor(mr, desc), ValueError, "must be mapped from the exporting process"),
            (lambda: IPCBufferDescriptor._init(b"x" * 64, -1), ValueError, "IPCBufferDescriptor._init"),
            (lambda: pickle.dumps(plain.allocate(64)), TypeError, "only an IPC-enabled DeviceMemoryResource"),
            (lambda: pickle.dumps(plain), TypeError, "only an IPC-enabled DeviceMemoryResource"),
            (lambda: pickle.dumps(nanocuda.Device(0).create_event()), TypeError, "only IPC-enabled events"),
        ]
        for call, kind, text in cases:
            try:
                call()
            except kind as e:
                assert text in str(e), (text, e)
            else:
                raise AssertionError(text)
    """)


def _trace(path):
    return path.read_text().split() if path.exists() else []


def test_a_closed_pool_waits_for_its_open_buffers(mock_libcuda, tmp_path):
    trace = tmp_path / "trace"
    run_scenario(mock_libcuda, tmp_path, f"""
        import os
        os.environ["NANOCUDA_MOCK_TRACE"] = {str(trace)!r}
        read = lambda: open({str(trace)!r}).read().split() if os.path.exists({str(trace)!r}) else []
        b1, b2 = mr.allocate(64), mr.allocate(64)
        mr.close()
        mr.close()
        assert mr.is_closed and read() == [], read()  # the buffers still hold the pool
        try:
            mr.allocate(64)
        except ValueError as e:
            assert "closed" in str(e), e
        else:
            raise AssertionError("a closed resource must not allocate")
        b1.close()
        assert "destroy" not in read(), read()
        b2.close()
        assert read()[-2:] == ["destroy", "1000"], read()  # destroyed by the last buffer, after its free
        assert read().count("free") == 2, read()
        m2 = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
        m2.close()  # no buffers: destroyed at once
        assert read().count("destroy") == 2, read()
        pinned = nanocuda.PinnedMemoryResource(options=nanocuda.PinnedMemoryResourceOptions(max_size=1 << 21))
        pb = pinned.allocate(64)
        pinned.close()
        pinned.close()
        assert pinned.is_closed and read().count("destroy") == 2, read()  # the same rule for pinned pools
        pb.close()
        assert read()[-4:] == ["free", "7f0000000000", "destroy", "1200"], read()  # a HOST pool (mock: 0x1200)
        cur = nanocuda.Device(0).memory_resource  # the device's current pool: never destroyed,
        assert "current pool" in repr(cur), repr(cur)  # so its Buffers are not counted
        held = cur.allocate(64)
        cur.close()
        assert not cur.is_closed, cur
        held.close()
        cur.allocate(64).close()
        assert read().count("free") == 5 and read().count("destroy") == 3, read()
        os.environ.pop("NANOCUDA_MOCK_TRACE")
    """)


def test_a_mapped_pool_closed_before_its_buffer_is_freed_first(mock_libcuda, tmp_path):
    trace = tmp_path / "child-trace"
    run_scenario(mock_libcuda, tmp_path, f"""
        buf = mr.allocate(64)
        p = mp.Process(target=close_mapped_first, args=(mr, buf, {str(trace)!r}))
        p.start(); p.join(120)
        assert p.exitcode == 0, p.exitcode
        buf.close(); mr.close()
    """)
    words = _trace(trace)
    assert words[0::2] == ["free", "destroy"], words  # the import is freed before its pool goes
