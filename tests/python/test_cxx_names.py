"""Core errors name C++ calls (Buffer::adopt) and Python still reads its own names (Buffer.from_handle):
the extension's one rename table, checked on the mock driver."""

import mock_run

PRELUDE = """
    import nanocuda
    from nanocuda import Device, Kernel

    def message(fn, kind):
        try:
            fn()
        except kind as e:
            text = str(e)
            assert "::" not in text, text  # no C++ spelling reaches Python
            return text
        raise AssertionError(f"{fn} did not raise {kind.__name__}")

    d = Device(0)
    d.set_current()
"""


def test_core_errors_read_python_names(mock_libcuda):
    mock_run.run_on_mock(mock_libcuda, PRELUDE + """
    # A rename from the table (C++ Buffer::adopt, nanocuda::enable_peer_access).
    m = message(lambda: Kernel.from_handle(0), ValueError)
    assert m.startswith("Kernel.from_handle: the handle is 0"), m
    m = message(lambda: d.enable_peer_access(d), ValueError)
    assert m.startswith("Device.enable_peer_access: device 0 is the same device"), m
    # The generic rule, A::b -> A.b (C++ Event::sync, Stream::wait).
    s = d.create_stream()
    e = s.record()
    e.close()
    m = message(e.sync, ValueError)
    assert m.startswith("Event.sync: ") and "is closed" in m, m
    m = message(lambda: s.wait(e), ValueError)
    assert m.startswith("Stream.wait: "), m
    # A user's own text in quotes keeps its "::" (C++ ManagedMemoryResource::advise renamed around it).
    mr = nanocuda.ManagedMemoryResource()
    b = mr.allocate(64)
    try:
        mr.advise(b, "Ns::set_read_mostly")
    except ValueError as e:
        assert str(e).startswith("ManagedMemoryResource.advise: unknown advice 'Ns::set_read_mostly'"), str(e)
    else:
        raise AssertionError("no ValueError")
    print("ok")
    """, NANOCUDA_MOCK_DEVICES="2")


def test_driver_error_objects_read_python_names(mock_libcuda):
    # The object of a failed driver call ("Kernel::from_handle(0x1234)" in C++) is renamed too;
    # the failed call itself keeps its driver name.
    mock_run.run_on_mock(mock_libcuda, PRELUDE + """
    try:
        Kernel.from_handle(0x1234)
    except nanocuda.CudaError as e:
        assert e.call == "cuKernelGetName", e.call
        assert e.object.startswith("Kernel.from_handle("), e.object
        assert str(e).startswith("cuKernelGetName(Kernel.from_handle("), str(e)
        assert "::" not in str(e), str(e)
    else:
        raise AssertionError("no CudaError")
    print("ok")
    """, NANOCUDA_MOCK_FAIL="cuKernelGetName:1")
