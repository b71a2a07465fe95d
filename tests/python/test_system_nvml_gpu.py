"""nanocuda.system against the real NVML of the GPU machine, checked against the CUDA driver."""

import os

import pytest

import nanocuda
from nanocuda import system
from nanocuda.system import typing

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def need_nvml():
    if not system.CUDA_BINDINGS_NVML_IS_COMPATIBLE:
        pytest.skip("needs NVML (libnvidia-ml.so.1 did not load)")


def test_versions():
    kmd = system.get_kernel_mode_driver_version()
    assert 400 <= kmd[0] < 1000 and len(kmd) in (2, 3)
    nvml_version = system.get_nvml_version()
    assert nvml_version[1:3] == kmd[:2] and nvml_version[0] >= 12
    assert system.get_driver_branch()
    assert "python" in system.get_process_name(os.getpid())


def test_devices_match_cuda():
    devices = list(system.Device.get_all_devices())
    assert len(devices) == system.Device.get_device_count() >= nanocuda.Device.count()
    for d in devices:
        cuda = d.to_cuda_device()
        assert cuda.name == d.name
        assert d.cuda_compute_capability == tuple(cuda.compute_capability)
        m = d.memory_info
        assert m.free + m.used + m.reserved == m.total
        assert abs(m.total - cuda.total_memory) < (4 << 30)  # NVML counts what CUDA reserves too
        assert isinstance(d.arch, typing.DeviceArch) and d.arch is not typing.DeviceArch.UNKNOWN
        assert d.pci_info.vendor_id == 0x10DE
        assert system.Device(pci_bus_id=d.pci_info.bus_id) == d
        assert system.Device(uuid=d.uuid) == d
        assert d.get_cpu_affinity(), "a GPU is near some CPU"
        b = d.bar1_memory_info
        assert b.free + b.used == b.total
        assert 0 <= d.utilization.gpu <= 100
        assert d.performance_state in d.supported_pstates or d.performance_state == 32
        assert all(isinstance(r, typing.ClocksEventReasons) for r in d.current_clock_event_reasons)
        assert isinstance(d.compute_running_processes, list)
        assert isinstance(d.mig.mode, bool)


def test_process_shows_up_after_cuda_work():
    dev = nanocuda.Device(0)
    dev.set_current()
    buf = dev.allocate(1 << 20)
    nvml_dev = next(d for d in system.Device.get_all_devices() if d.to_cuda_device() == dev)
    pids = [p.pid for p in nvml_dev.compute_running_processes]
    buf.close()
    # Inside a container NVML may not map PIDs into our namespace; then the list is empty.
    assert os.getpid() in pids or pids == [] or all(isinstance(p, int) for p in pids)


def test_events_time_out():
    d = next(iter(system.Device.get_all_devices()))
    with pytest.raises(system.TimeoutError):
        d.register_events([]).wait(timeout_ms=100)


def test_to_system_device_round_trips():
    for i in range(nanocuda.Device.count()):
        dev = nanocuda.Device(i)
        sys_dev = dev.to_system_device()
        assert isinstance(sys_dev, system.Device)
        assert sys_dev.to_cuda_device() == dev
        assert sys_dev.uuid_without_prefix == dev.uuid


def test_field_values_and_inforom():
    d = next(iter(system.Device.get_all_devices()))
    values = d.get_field_values([typing.FieldId.DEV_PCIE_REPLAY_COUNTER, typing.FieldId.DEV_TOTAL_ENERGY_CONSUMPTION])
    assert len(values) == 2 and values[0].field_id == typing.FieldId.DEV_PCIE_REPLAY_COUNTER
    values.validate()
    assert all(isinstance(v, int) and v >= 0 for v in values.get_all_values())
    try:
        assert d.inforom.image_version
    except system.NotSupportedError:
        pass  # boards without an InfoROM
