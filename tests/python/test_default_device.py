"""The one default-device rule on the mock driver: wherever no device is given, nanocuda uses
the current context's device (as Device() answers), else device 0, never a fixed device 0."""



from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


# Every call below leaves the device out; the mock has two devices and device 1's context is
# current, so each must land on device 1.
DEFAULTS_ON_DEVICE_1 = """
    import nanocuda
    from nanocuda import Buffer, Device, Kernel, Stream

    assert Device.count() == 2
    assert Device().device_id == 1 and Device() is Device(1)
    assert Device("cuda").device_id == 1            # torch's bare "cuda" is the current device too
    assert Device(0).device_id == 0                 # an explicit ordinal still wins
    assert Buffer(16).device.device_id == 1
    assert Buffer(16, device=0).device.device_id == 0
    assert Stream().device.device_id == 1
    assert Stream.legacy().device.device_id == 1
    assert Stream.per_thread().device.device_id == 1
    assert Device().memory_resource.device_id == 1 and Buffer(8).memory_resource is Device(1).memory_resource
    k = Kernel.from_handle(0x1234)
    assert k.attributes.device.device_id == 1
    assert k.get_attributes(0).device.device_id == 0
    print("ok")
"""


def test_defaults_follow_the_current_device_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, DEFAULTS_ON_DEVICE_1, NANOCUDA_MOCK_DEVICES="2", NANOCUDA_MOCK_CURRENT_DEVICE="1")


def test_no_current_context_means_device_0_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
        from nanocuda import Buffer, Device, Kernel, Stream
        assert Device().device_id == 0
        assert Buffer(16).device.device_id == 0
        assert Stream().device.device_id == 0
        assert Kernel.from_handle(0x1234).attributes.device.device_id == 0
        print("ok")
    """, NANOCUDA_MOCK_DEVICES="2")

