"""VirtualMemoryResource's allocation policy (cuda.core's VirtualMemoryResourceOptions fields, config=,
modify_allocation(config=)) on the mock driver, which records what cuMemCreate/cuMemSetAccess were asked."""

import pytest

from nanocuda import VirtualMemoryResourceOptions
from nanocuda.typing import VirtualMemoryAccessType, VirtualMemoryGranularityType, VirtualMemoryHandleType

from mock_run import run_on_mock  # noqa: E402  (tests/python is on sys.path)


def test_options_take_cuda_cores_fields_and_check_them():
    o = VirtualMemoryResourceOptions(handle_type="posix_fd", granularity="minimum", self_access="r",
                                     peer_access=None, gpu_direct_rdma=True, peers=())
    assert o.handle_type is VirtualMemoryHandleType.POSIX_FD and o.granularity == "minimum"
    assert o.self_access is VirtualMemoryAccessType.READ and o.peer_access is None and o.peers == []
    assert VirtualMemoryResourceOptions().handle_type == "posix_fd"  # cuda.core's default
    assert VirtualMemoryResourceOptions(handle_type=None).handle_type is None
    assert VirtualMemoryResourceOptions(granularity=VirtualMemoryGranularityType.RECOMMENDED) == \
        VirtualMemoryResourceOptions()
    with pytest.raises(ValueError, match=r"VirtualMemoryResourceOptions: handle_type='nfs' is not one of"):
        VirtualMemoryResourceOptions(handle_type="nfs")
    with pytest.raises(ValueError, match=r"granularity=None is not one of \['minimum', 'recommended'\]$"):
        VirtualMemoryResourceOptions(granularity=None)
    with pytest.raises(TypeError, match="gpu_direct_rdma must be a bool"):
        VirtualMemoryResourceOptions(gpu_direct_rdma=1)


def test_policy_reaches_the_driver_on_mock(mock_libcuda):
    run_on_mock(mock_libcuda, """
    import ctypes
    import nanocuda
    from nanocuda import Device, VirtualMemoryResource, VirtualMemoryResourceOptions

    import os
    mock = ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"])
    seen = (ctypes.c_int * 7).in_dll(mock, "nanocuda_mock_vmm")
    d = Device(0)
    d.set_current()
    cfg = VirtualMemoryResourceOptions(handle_type="posix_fd", granularity="minimum", gpu_direct_rdma=True)
    mr = VirtualMemoryResource(d, config=cfg)
    assert mr.config == cfg and mr.config.granularity == "minimum"
    b = mr.allocate(4096)
    assert b.size == 4096 and b.memory_resource == mr and b.device_id == 0
    # pinned (1), POSIX fd (1), device location (1), RDMA, read-write (3), MINIMUM granularity (0)
    assert list(seen)[:5] == [1, 1, 1, 1, 3] and seen[6] == 0, list(seen)
    new = VirtualMemoryResourceOptions(handle_type=None, self_access="r", peers=())
    assert mr.modify_allocation(b, 4 << 20, config=new) is b and b.size == 4 << 20
    assert seen[1] == 0 and seen[3] == 0 and seen[4] == 1 and seen[6] == 1, list(seen)  # the new policy
    assert mr.config == new and mr.config.self_access == "r"
    assert mr.modify_allocation(b, 1024) is b and b.size == 4 << 20  # never shrinks (cuda.core)
    b.close()
    try:
        VirtualMemoryResource(d, config=VirtualMemoryResourceOptions(allocation_type="managed"))
    except ValueError as e:
        assert "allocation_type must be pinned" in str(e), e
    else:
        raise AssertionError("managed VMM was accepted")
    try:
        VirtualMemoryResource(d, cfg, config=cfg)
    except TypeError as e:
        assert "config= or options=" in str(e)
    else:
        raise AssertionError("two option objects were accepted")
    print("ok")
    """)
