"""Device.allocate's lock-free memo of the device's resource follows every replacement (mock driver)."""

from mock_run import run_on_mock


def test_device_allocate_follows_the_resource_set_for_the_device(mock_libcuda):
    # Device.allocate and Buffer(n) read MemoryResource::for_device through a memo checked
    # against the table's version: a resource set (here or from another thread) is used by the
    # next call, and one replaced is not kept alive by the memo.
    run_on_mock(mock_libcuda, """
    import gc, threading, weakref
    import nanocuda
    dev = nanocuda.Device(0)
    s = nanocuda.Stream(device=dev)

    class PyMR(nanocuda.MemoryResource):
        def __init__(self):
            super().__init__(); self.calls = 0
        def allocate(self, size, stream=None):
            self.calls += 1
            return nanocuda.Buffer.from_handle(0x10000, size, mr=self)
        def deallocate(self, ptr, size, stream=None):
            pass
        is_device_accessible = True
        is_host_accessible = False
        device_id = 0

    assert type(dev.allocate(64, s).memory_resource) is nanocuda.DeviceMemoryResource
    mr = PyMR()
    dev.memory_resource = mr
    dev.allocate(64, s).close()
    nanocuda.Buffer(64, stream=s).close()
    assert mr.calls == 2, mr.calls
    t = threading.Thread(target=lambda: setattr(dev, "memory_resource", None))
    t.start(); t.join()
    b = dev.allocate(64, s)
    assert type(b.memory_resource) is nanocuda.DeviceMemoryResource and mr.calls == 2, mr.calls
    b.close()
    nanocuda.Buffer(64, stream=s).close()
    assert mr.calls == 2, mr.calls
    gone = weakref.ref(mr)
    del mr; gc.collect()
    assert gone() is None, "the replaced resource is kept alive"
    print("ok")
    """, version="13.0", NANOCUDA_MOCK_STREAMS="1")
