"""The object protocols on a real GPU: Kernel.from_handle on a compiled kernel, ObjectCode
pickled and loaded again, repr of loaded objects, stream priorities against the device's
range, Event timing errors, and a cuda.core-style MemoryResource that skips the base
__init__. The CPU half is test_object_protocols_mock.py."""

import pickle
import re
import warnings

import numpy as np
import pytest

import nanocuda
from nanocuda import Buffer, Device, EventOptions, Kernel, MemoryResource, Program, StreamOptions

pytestmark = pytest.mark.gpu

SOURCE = 'extern "C" __global__ void fill7(int* p) { p[threadIdx.x] = 7; }'


def compiled():
    Device(0).set_current()
    return Program(SOURCE, "c++").compile("cubin")


def test_kernel_from_handle_runs_and_compares_equal():
    code = compiled()
    k = code.get_kernel("fill7")
    again = Kernel.from_handle(int(k.handle))
    assert again == k and hash(again) == hash(k) and again.attributes.max_threads_per_block > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Kernel.from_handle(int(k.handle), code) == k  # the kernel's own library: no warning
    other = compiled()
    other.get_kernel("fill7")
    with pytest.warns(UserWarning, match="does not match"):
        Kernel.from_handle(int(k.handle), other)
    dev = Device(0)
    s = dev.create_stream()
    buf = dev.allocate(4 * 32, stream=s)
    nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=32), again, buf)
    out = np.empty(32, np.int32)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    assert (out == 7).all()
    buf.close()


def test_object_code_pickles_and_loads_again():
    code = compiled()
    back = pickle.loads(pickle.dumps(code))
    assert back.code == code.code and back.code_type == "cubin"
    assert back.get_kernel("fill7").num_arguments == 1
    assert re.fullmatch(r"<ObjectCode handle=0x[0-9a-f]+ code_type='cubin'>", repr(back))
    assert repr(back) != "<ObjectCode handle=0x0 code_type='cubin'>"  # loaded now


def test_reprs_name_real_handles():
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    assert re.fullmatch(r"<Device 0 \(.+\)>", repr(dev)) and dev.name in repr(dev)
    assert repr(s) == f"<Stream handle={int(s.handle):#x} context={int(dev.context.handle):#x}>"
    assert re.fullmatch(r"<Program backend='NVRTC'>", repr(Program(SOURCE, "c++")))


def test_stream_priority_range():
    dev = Device(0)
    dev.set_current()
    assert dev.create_stream(options=StreamOptions(priority=-1)).priority == -1
    with pytest.raises(ValueError, match="outside device 0's range"):
        dev.create_stream(options=StreamOptions(priority=1))


def test_event_timing_errors_open_with_cuda_cores_words():
    dev = Device(0)
    dev.set_current()
    s = dev.create_stream()
    timed, plain = s.record(options=EventOptions(timing_enabled=True)), s.record(options=EventOptions())
    s.sync()
    with pytest.raises(RuntimeError, match="^Both Events must be created with timing enabled"):
        plain - timed
    never = dev.create_event(options=EventOptions(timing_enabled=True))
    with pytest.raises(RuntimeError, match="^Both Events must be recorded"):
        never - timed


def test_resource_without_base_init_gives_buffers():
    dev = Device(0)
    dev.set_current()
    backing = dev.allocate(1 << 16)

    class Slab(MemoryResource):  # cuda.core's base needs no __init__: this one never calls it
        def __init__(self, device):
            self.device, self.freed = device, []

        def allocate(self, size, *, stream=None):
            return Buffer.from_handle(ptr=int(backing.handle), size=size, mr=self)

        def deallocate(self, ptr, size, *, stream=None):
            self.freed.append(size)

        @property
        def is_device_accessible(self):
            return True

        @property
        def is_host_accessible(self):
            return False

        @property
        def device_id(self):
            return self.device

    mr = Slab(dev)
    buf = mr.allocate(256)
    assert buf.device_id == 0 and buf.memory_resource is mr
    buf.fill(3, stream=dev.default_stream)
    out = np.empty(256, np.uint8)
    nanocuda.copy(out, buf, stream=dev.default_stream)
    dev.sync()
    assert (out == 3).all()
    buf.close()
    assert mr.freed == [256]
    backing.close()
