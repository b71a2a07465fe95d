"""nanocuda.system over NVML, against tools/mock_libnvml.c (two fake GPUs with known answers)."""

import array
import os
import subprocess
import sys
import warnings

import pytest

import nanocuda
from nanocuda import system
from nanocuda.system import _device, _nvml_context, typing
from testing_hooks import hooks

@pytest.fixture
def no_nvml(monkeypatch):
    monkeypatch.setenv("NANOCUDA_LIBNVML", "/nonexistent/libnvidia-ml.so.1")
    hooks.nvml_reset()
    yield
    hooks.nvml_reset()


def test_import_loads_no_nvml():
    code = ("import nanocuda, nanocuda.system as s; from nanocuda.system import _nvml_context as c; "
            "import nanocuda.system._device, nanocuda.system.typing; print(c._get_nvml_state())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "0"


def test_nvml_missing_is_a_clear_error(no_nvml):
    assert system.CUDA_BINDINGS_NVML_IS_COMPATIBLE is False
    assert _nvml_context._get_nvml_state() == _nvml_context.DISABLED_LIBRARY_NOT_FOUND
    with pytest.raises(RuntimeError, match="requires NVML support.*libnvidia-ml.so.1") as info:
        system.get_kernel_mode_driver_version()
    assert isinstance(info.value, system.LibraryNotFoundError) and info.value.code == 12
    with pytest.raises(system.LibraryNotFoundError, match="NANOCUDA_LIBNVML"):
        system.Device(index=0)


def test_versions_and_state(nvml):
    assert _nvml_context._get_nvml_state() == _nvml_context.UNINITIALIZED
    assert not _nvml_context.is_initialized()
    with pytest.raises(system.UninitializedError):
        _nvml_context.validate()
    assert system.CUDA_BINDINGS_NVML_IS_COMPATIBLE is True
    assert _nvml_context.is_initialized() and _nvml_context.validate() is None
    assert system.get_kernel_mode_driver_version() == (580, 65, 6)
    assert system.get_driver_version(kernel_mode=True) == (580, 65)
    assert system.get_driver_version_full(kernel_mode=True) == (580, 65, 6)
    assert system.get_nvml_version() == (13, 580, 65, 6)
    assert system.get_driver_branch() == "r580_00"
    assert "python" in system.get_process_name(os.getpid())
    with pytest.raises(system.NotFoundError, match="no process"):
        system.get_process_name(2**30)


def test_device_identity(nvml):
    devices = list(system.Device.get_all_devices())
    assert system.Device.get_device_count() == len(devices) == 2
    d0, d1 = devices
    assert [d.index for d in devices] == [0, 1]
    assert d0.name == "Mock H100" and d0.brand == "NVIDIA"
    assert d0.arch is typing.DeviceArch.HOPPER and d0.arch.name == "HOPPER"
    assert d0.uuid == "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    assert d0.uuid_without_prefix == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    assert d0.cuda_compute_capability == (9, 0)
    assert (d0.minor_number, d1.module_id, d1.numa_node_id) == (0, 2, 1)
    assert d0.serial == "1650123456789"
    assert system.Device(uuid=d1.uuid) == d1 and system.Device(uuid=d1.uuid.encode()) == d1
    assert system.Device(pci_bus_id=d1.pci_info.bus_id).index == 1
    assert d0 != d1 and len({d0, system.Device(index=0)}) == 1
    assert "NVML device 1" in repr(d1)


def test_device_bad_input(nvml):
    with pytest.raises(ValueError, match="exactly one of index=, uuid= or pci_bus_id="):
        system.Device()
    with pytest.raises(ValueError, match="exactly one"):
        system.Device(index=0, uuid="GPU-x")
    with pytest.raises(TypeError, match="non-negative int"):
        system.Device(index=-1)
    with pytest.raises(TypeError, match="uuid must be a str"):
        system.Device(uuid=5)
    # A device NVML cannot see: NVML's own error, naming the call and what was asked for.
    with pytest.raises(system.InvalidArgumentError, match=r"nvmlDeviceGetHandleByIndex_v2\(index 7\)"):
        system.Device(index=7)
    with pytest.raises(system.NotFoundError, match="uuid 'GPU-nope'"):
        system.Device(uuid="GPU-nope")
    with pytest.raises(system.NotSupportedError, match=r"nvmlDeviceGetSerial\(NVML device 1\).*NOT_SUPPORTED"):
        system.Device(index=1).serial
    with pytest.raises(system.FunctionNotFoundError, match="has no nvmlDeviceGetRepairStatus"):
        system.Device(index=0).repair_status
    with pytest.raises(ValueError, match="'sideways' is not a valid AffinityScope"):
        system.Device(index=0).get_cpu_affinity("sideways")
    with pytest.raises(TypeError, match="register_events: events must be"):
        system.Device(index=0).register_events(0)
    with pytest.raises(ValueError, match="not a valid EventType"):
        system.Device(index=0).register_events(["nope"])
    with pytest.raises(system.NoPermissionError, match="nvmlDeviceSetPersistenceMode"):
        system.Device(index=0).is_persistence_mode_enabled = False
    with pytest.raises(TypeError, match="expected a bool"):
        system.Device(index=0).is_persistence_mode_enabled = 1


def test_memory_pci_and_load(nvml):
    d = system.Device(index=0)
    m = d.memory_info
    assert isinstance(m, _device.MemoryInfo) and m.free + m.used + m.reserved == m.total == 80 << 30
    b = d.bar1_memory_info
    assert b.free + b.used == b.total == 128 << 30
    p = d.pci_info
    assert (p.bus_id, p.domain, p.bus, p.device) == ("00000000:01:00.0", 0, 1, 0)
    assert (p.vendor_id, p.device_id, p.subsystem_id) == (0x10DE, 0x2330, 0x16C110DE)
    assert (p.base_class, p.sub_class) == (3, 2)
    assert (p.link_generation, p.max_link_generation, p.current_link_generation) == (5, 5, 5)
    assert (p.max_link_width, p.current_link_width, p.replay_counter) == (16, 16, 0)
    assert (p.tx_throughput, p.rx_throughput) == (100, 200)
    assert d.pci_bus_id == p.bus_id
    u = d.utilization
    assert (u.gpu, u.memory) == (7, 3)
    assert d.performance_state == 0 and d.supported_pstates == [0, 2]
    pst = d.dynamic_pstates_info
    assert len(pst) == 8 and pst[0].is_present and pst[0].percentage == 42 and not pst[1].is_present
    assert d.current_clock_event_reasons == [typing.ClocksEventReasons.GPU_IDLE]
    assert len(d.supported_clock_event_reasons) == 9
    assert d.addressing_mode is typing.AddressingMode.HMM
    assert system.Device(index=1).addressing_mode is None
    assert d.is_c2c_enabled is False and d.is_display_connected is False and d.is_display_active is False
    assert d.is_persistence_mode_enabled is True


def test_processes_mig_topology(nvml):
    d0, d1 = system.Device.get_all_devices()
    (proc,) = d0.compute_running_processes
    assert (proc.pid, proc.used_gpu_memory) == (4242, 1 << 20)
    with pytest.raises(system.NotSupportedError, match="not a MIG device"):
        proc.gpu_instance_id
    assert d1.compute_running_processes == []
    assert d0.mig.is_mig_device is False and d0.mig.mode is False and d0.mig.pending_mode is False
    assert d0.mig.device_count == 0 and list(d0.mig.get_all_devices()) == []
    assert list(d0.get_topology_nearest_gpus(typing.GpuTopologyLevel.SINGLE)) == [d1]
    assert list(system.Device.get_all_devices_with_cpu_affinity(5)) == [d1]
    assert d0.get_cpu_affinity() == [0, 1, 2, 3] and d1.get_cpu_affinity("node") == [4, 5, 6, 7]
    assert d0.get_cpu_affinity(typing.AffinityScope.SOCKET) == list(range(8))
    assert d1.get_memory_affinity() == [1]
    link = d0.get_nvlink(0)
    assert link.state is True and link.version == (4, 0)


def test_events(nvml):
    d = system.Device(index=0)
    assert d.get_supported_event_types() == [typing.EventType.PSTATE, typing.EventType.XID_CRITICAL_ERROR]
    for events in (["xid_critical_error"], [typing.EventType.XID_CRITICAL_ERROR], "pstate", []):
        with pytest.raises(system.TimeoutError, match="nvmlEventSetWait_v2"):
            d.register_events(events).wait(timeout_ms=1)
    with pytest.raises(system.NotSupportedError, match="nvmlDeviceRegisterEvents"):
        d.register_events(["clock"])


def test_unpack_bitmask_and_nvlink_max_links():
    assert _device._unpack_bitmask(array.array("Q", [0b1011, 1])) == [0, 1, 3, 64]
    assert _device._unpack_bitmask(array.array("Q", [0, 0])) == []
    with pytest.raises(TypeError, match="sequence of 64-bit words"):
        _device._unpack_bitmask(1)
    with pytest.warns(DeprecationWarning, match="max_links"):
        assert _device.NvlinkInfo.max_links == 18
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert issubclass(system.TimeoutError, system.NvmlError)


def test_to_cuda_device_needs_a_matching_uuid(nvml):
    try:
        count = nanocuda.Device.count()
    except nanocuda.CudaError:
        pytest.skip("no CUDA driver to map to")
    if count == 0:
        pytest.skip("no CUDA device")
    with pytest.raises(RuntimeError, match="no CUDA device has UUID GPU-aaaaaaaa"):
        system.Device(index=0).to_cuda_device()


def test_inforom(nvml):
    d0, d1 = system.Device.get_all_devices()
    rom = d0.inforom
    assert rom.image_version == "G520.0200.00.05"
    assert rom.get_version(typing.InforomObject.OEM) == "2.1" == rom.get_version("oem")
    with pytest.raises(system.NotSupportedError, match="nvmlDeviceGetInforomVersion"):
        rom.get_version("ecc")
    with pytest.raises(ValueError, match="not a valid InforomObject"):
        rom.get_version("rom")
    assert rom.configuration_checksum == 0xC0FFEE
    assert rom.bbx_flush_time == (1700000000, 250)
    assert rom.board_part_number == "692-2G520-0200-000"
    assert rom.validate() is None
    with pytest.raises(system.CorruptedInforomError, match=r"nvmlDeviceValidateInforom\(NVML device 1\)"):
        d1.inforom.validate()


def test_to_system_device_goes_by_uuid(mock_libnvml, mock_libcuda):
    # The mock driver's device has an all-zero UUID, which the mock NVML does not know: the
    # error names the UUID that was looked up (a CUDA device NVML cannot see).
    code = ("import nanocuda, nanocuda.system as s\n"
            "d = nanocuda.Device(0)\n"
            "try:\n    d.to_system_device()\n"
            "except s.NotFoundError as e:\n    print('NotFound', e)\n")
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_LIBNVML=mock_libnvml)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("NotFound nanocuda.system.Device(uuid='GPU-00000000-0000-0000-0000-000000000000'): "
                               "NVML has no such device"), r.stdout
    assert "nvmlDeviceGetHandleByUUID(uuid 'GPU-00000000-0000-0000-0000-000000000000')" in r.stdout


def test_field_values(nvml):
    d = system.Device(index=0)
    assert len(d.get_field_values([])) == 0
    ids = [typing.FieldId.DEV_TOTAL_ENERGY_CONSUMPTION, (typing.FieldId.DEV_PCIE_REPLAY_COUNTER, 0), 186]
    values = d.get_field_values(ids)
    values.validate()
    assert isinstance(values, _device.FieldValues) and len(values) == 3
    assert [v.field_id for v in values] == [83, 94, 186]
    assert values[0].field_id is typing.FieldId.DEV_TOTAL_ENERGY_CONSUMPTION
    assert values.get_all_values() == [123456789, 7, 71.5] and type(values[2].value) is float
    assert values[1].timestamp == 1001 and values[1].latency_usec == 2
    with pytest.raises(TypeError, match="indices are ints"):
        values["energy"]
    with pytest.raises(system.NotSupportedError, match="field 999"):
        d.get_field_values([999]).validate()
    d.clear_field_values([typing.FieldId.DEV_PCIE_REPLAY_COUNTER])
    assert d.get_field_values([94])[0].value == 0
    with pytest.raises(TypeError, match="field_ids must be a list"):
        d.get_field_values(94)
    with pytest.raises(TypeError, match="non-negative int or an"):
        d.get_field_values([(1, 2, 3)])


def test_errors_are_cuda_bindings_classes_where_it_is_imported(nvml):
    nvml_mod = pytest.importorskip("cuda.bindings.nvml", reason="cuda.bindings not installed")
    with pytest.raises(nvml_mod.NotSupportedError) as info:
        system.Device(index=1).serial
    assert isinstance(info.value, system.NotSupportedError) and isinstance(info.value, RuntimeError)
    (proc,) = system.Device(index=0).compute_running_processes
    with pytest.raises(nvml_mod.NotSupportedError):
        proc.compute_instance_id
    with pytest.raises(nvml_mod.NoPermissionError):
        system.Device(index=0).is_persistence_mode_enabled = False
