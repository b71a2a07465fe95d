"""IPC of pinned (host) pools the ways cuda.core's memory_ipc tests use them, against tools/mock_libcuda.c
(whose exported pools are real file descriptors and whose imported host pools count their device
grants): no GPU needed. Each scenario runs in its own process, so a crash fails the test. The GPU
side: test_ipc_pinned_gpu.py."""

from mock_run import run_on_mock, run_spawn_scenario

# Spawned children import their targets from this module, written next to the scenario.
CHILDREN = '''
import ctypes, os


def host_grants():
    lib = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
    return ctypes.c_ulonglong.in_dll(lib, "nanocuda_mock_imported_host_access").value


def keep(*objs):
    pass  # a Pool initializer: the worker keeps its arguments (the mapped resources) alive


def pinned_child(mr, buf, handle, desc, queue):
    import nanocuda
    assert type(mr) is nanocuda.PinnedMemoryResource and mr.is_mapped and mr.is_ipc_enabled, mr
    assert host_grants() == nanocuda.Device.count(), host_grants()  # the import opened it to each device
    assert buf.is_mapped and buf.memory_resource is mr and buf.is_host_accessible and buf.size == 64
    assert nanocuda.PinnedMemoryResource.from_allocation_handle(handle) is mr  # the registry's
    assert nanocuda.PinnedMemoryResource.from_registry(mr.uuid) is mr
    again = nanocuda.Buffer.from_ipc_descriptor(mr, desc)
    assert again.handle == buf.handle  # one buffer imported twice: one mapping, counted
    again.close()
    buf.close()
    try:
        mr.allocate(64)
    except TypeError as e:
        assert str(e) == "Cannot allocate from a mapped IPC-enabled memory resource", e
    else:
        raise AssertionError("a mapped resource must not allocate")
    queue.put(("done", str(mr.uuid)))


def other_kind_refused(handle, mr, other_class_name):
    import nanocuda
    other = getattr(nanocuda, other_class_name)
    try:
        if other is nanocuda.DeviceMemoryResource:
            other.from_allocation_handle(0, handle)
        else:
            other.from_allocation_handle(handle)
    except TypeError as e:
        assert "from_allocation_handle" in str(e) and type(mr).__name__ in str(e), e
    else:
        raise AssertionError(f"{other_class_name} took a {type(mr).__name__}'s handle")
    assert type(mr).from_allocation_handle(*((0, handle) if other_class_name == "PinnedMemoryResource" else (handle,))) is mr


def map_as_device_then_take(handle, queue, out):
    import nanocuda
    dmr = nanocuda.DeviceMemoryResource.from_allocation_handle(0, handle)  # a pinned pool, mapped as cuda.core allows
    buf = queue.get(timeout=60)  # a pinned pool's Buffer: its pool is mapped here already
    out.put((buf.memory_resource is dmr, buf.size))
    buf.close()


def from_queue(queue, out):
    import nanocuda
    mr, desc = queue.get(timeout=60)
    try:
        nanocuda.Buffer.from_ipc_descriptor(mr, desc)
    except Exception as e:
        out.put((type(e).__name__, str(e)))
    else:
        out.put((None, None))


def touch_buffer(raw):
    import pickle
    buf = pickle.loads(raw)
    assert buf.size == 64 and buf.is_mapped and buf.is_host_accessible, (buf.size, buf.is_mapped)
    assert type(buf.memory_resource).__name__ == "PinnedMemoryResource", buf.memory_resource
    buf.close()
    return "mapped"


def unpickle_error(raw):
    import pickle
    try:
        pickle.loads(raw)
    except RuntimeError as e:
        return str(e)
    return "no error"
'''

PINNED = ("mr = nanocuda.PinnedMemoryResource(options=nanocuda.PinnedMemoryResourceOptions("
          "max_size=1 << 21, ipc_enabled=True))\n")


def run_scenario(mock: str, tmp_path, body: str, **env: str) -> str:
    return run_spawn_scenario(mock, tmp_path, ("ipc_pinned_children", CHILDREN), PINNED, body, **env)


def test_an_ipc_pinned_pool_exports_itself_and_its_buffers(mock_libcuda):
    run_on_mock(mock_libcuda, """
        import uuid
        import nanocuda
        from nanocuda import Buffer, PinnedMemoryResource, PinnedMemoryResourceOptions
        mr = PinnedMemoryResource(options=PinnedMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))
        assert mr.is_ipc_enabled and not mr.is_mapped and mr.numa_id >= 0 and mr.device_id == -1
        assert isinstance(mr.uuid, uuid.UUID)
        h = mr.allocation_handle
        assert isinstance(h, nanocuda.IPCAllocationHandle) and h.uuid == mr.uuid and h.handle >= 0
        assert mr.get_allocation_handle().fd == h.fd  # exported once, kept
        buf = mr.allocate(1024)
        assert buf.is_host_accessible and buf.is_device_accessible
        d = buf.ipc_descriptor
        assert d.size == 1024 and d.pool_uuid == mr.uuid.bytes
        assert buf.get_ipc_descriptor() == d
        try:
            Buffer.from_ipc_descriptor(mr, d)  # the exporter's own pool is not a mapping
        except ValueError as e:
            assert "must be mapped from the exporting process" in str(e) and "PinnedMemoryResource" in str(e), e
        else:
            raise AssertionError("imported into the exporting pool")
        # cuda.core lets DeviceMemoryResource map a host pool's bare fd (no uuid, no registry):
        # the import is opened to its device, so its kernels can use the buffers.
        import ctypes, os
        lib = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
        grants = lambda: ctypes.c_ulonglong.in_dll(lib, "nanocuda_mock_imported_host_access").value
        as_device = nanocuda.DeviceMemoryResource.from_allocation_handle(0, h.handle)
        assert as_device.is_mapped and grants() == 1, grants()
        view = Buffer.from_ipc_descriptor(as_device, d)
        assert view.size == 1024 and view.is_mapped
        view.close()
        as_device.close()
        buf.close()
        mr.close()
        assert h.is_closed
        print("ok")
    """)


def test_pools_without_ipc_say_so_in_cuda_cores_words(mock_libcuda):
    run_on_mock(mock_libcuda, """
        import pickle
        import nanocuda
        from nanocuda import (Buffer, DeviceMemoryResource, DeviceMemoryResourceOptions, IPCBufferDescriptor,
                              PinnedMemoryResource, PinnedMemoryResourceOptions)
        pools = [PinnedMemoryResource(options=PinnedMemoryResourceOptions(max_size=1 << 21)),
                 DeviceMemoryResource(0, DeviceMemoryResourceOptions(max_size=1 << 21))]
        for mr in pools:
            name = type(mr).__name__
            assert not mr.is_ipc_enabled and mr.uuid is None
            buf = mr.allocate(64)
            empty = IPCBufferDescriptor._init(b"", 0)
            for call, where in ((lambda: mr.allocation_handle, name + ".get_allocation_handle"),
                                (lambda: buf.ipc_descriptor, "Buffer.get_ipc_descriptor"),
                                (lambda: Buffer.from_ipc_descriptor(mr, empty), "Buffer.from_ipc_descriptor")):
                try:
                    call()
                except RuntimeError as e:  # cuda.core's type; nanocuda's StateError is a ValueError too
                    assert isinstance(e, ValueError), type(e)
                    assert where + ": Memory resource is not IPC-enabled" in str(e), e
                    assert "(ipc_enabled=True)" in str(e) or "from_allocation_handle" in str(e), e
                else:
                    raise AssertionError(f"{name}: no error")
            try:
                pickle.dumps(mr)
            except TypeError as e:
                assert "only an IPC-enabled DeviceMemoryResource or PinnedMemoryResource" in str(e), e
            else:
                raise AssertionError(f"{name} without IPC pickled")
            buf.close()
            mr.close()
        legacy = PinnedMemoryResource()  # cuMemHostAlloc memory: no pool to share
        b = legacy.allocate(64)
        try:
            b.ipc_descriptor
        except RuntimeError as e:
            assert "Memory resource is not IPC-enabled" in str(e), e
        else:
            raise AssertionError("cuMemHostAlloc memory exported")
        b.close()
        print("ok")
    """)


def test_a_child_maps_the_pinned_pool_once_and_imports_its_buffers(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        buf = mr.allocate(64)
        q = mp.Queue()
        p = mp.Process(target=pinned_child, args=(mr, buf, mr.allocation_handle, buf.ipc_descriptor, q))
        p.start()
        assert q.get(timeout=120) == ("done", str(mr.uuid))
        p.join(120)
        assert p.exitcode == 0, p.exitcode
        assert host_grants() == 0  # the exporter's own pool is no import
        buf.close()
        mr.close()
    """)


def test_pinned_buffers_through_a_worker_pool_and_plain_pickle(mock_libcuda, tmp_path):
    out = run_scenario(mock_libcuda, tmp_path, """
        bufs = [mr.allocate(64) for _ in range(4)]
        other = nanocuda.PinnedMemoryResource(options=nanocuda.PinnedMemoryResourceOptions(ipc_enabled=True))
        with mp.Pool(2, initializer=keep, initargs=(mr,)) as pool:
            got = pool.map(touch_buffer, [pickle.dumps(b) for b in bufs])  # by uuid: the worker has mr
            print(pool.apply(unpickle_error, (pickle.dumps(other.allocate(64)),)))
        assert got == ["mapped"] * 4, got
        for b in bufs:
            b.close()
        other.close()
        mr.close()
    """)
    assert "was not found" in out, out


def test_a_descriptor_of_another_pool_is_refused_by_name(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        dev = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
        buf = dev.allocate(64)
        q, out = mp.Queue(), mp.Queue()
        p = mp.Process(target=from_queue, args=(q, out))
        p.start()
        q.put([mr, buf.ipc_descriptor])  # mr did not make this buffer
        kind, msg = out.get(timeout=120)
        p.join(120)
        assert kind == "CudaError" and "CUDA_ERROR_INVALID_VALUE" in msg and "PinnedMemoryResource" in msg, (kind, msg)
        buf.close()
        dev.close()
        mr.close()
    """)


def test_a_handle_mapped_as_one_kind_is_refused_by_the_other(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        dev = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(ipc_enabled=True))
        for pool, other in ((mr, "DeviceMemoryResource"), (dev, "PinnedMemoryResource")):
            p = mp.Process(target=other_kind_refused, args=(pool.allocation_handle, pool, other))
            p.start(); p.join(120)
            assert p.exitcode == 0, (other, p.exitcode)
        dev.close()
        mr.close()
    """)


def test_a_buffer_reuses_its_pool_mapped_here_through_the_other_class(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        q, out = mp.Queue(), mp.Queue()
        p = mp.Process(target=map_as_device_then_take, args=(mr.allocation_handle, q, out))
        p.start()
        b = mr.allocate(64)
        q.put(b)
        assert out.get(timeout=120) == (True, 64)
        p.join(120)
        assert p.exitcode == 0, p.exitcode
        b.close()
        mr.close()
    """)


def test_an_oversized_descriptor_is_refused_in_the_child_with_or_without_range_attributes(mock_libcuda, tmp_path):
    # A host pool's imported pointer may answer no range attributes, or the pool's whole chunk:
    # cuMemGetAddressRange's answer then bounds it (tools/mock_libcuda_ipc.h's NANOCUDA_MOCK_IPC_RANGE).
    for how in ("attribute", "address_range", "chunk"):
        run_scenario(mock_libcuda, tmp_path, """
            buf = mr.allocate(64)
            payload, _ = buf.ipc_descriptor.__reduce__()[1]
            q, out = mp.Queue(), mp.Queue()
            p = mp.Process(target=from_queue, args=(q, out))
            p.start()
            q.put([mr, nanocuda.IPCBufferDescriptor._init(payload, 64 * 100)])
            kind, msg = out.get(timeout=120)
            p.join(120)
            assert p.exitcode == 0 and kind == "ValueError", (kind, msg)
            assert "exceeds the mapped allocation extent (4096 bytes)" in msg and "from_ipc_descriptor" in msg, msg
            buf.close()
            mr.close()
        """, NANOCUDA_MOCK_IPC_RANGE=how)
