"""The launch pipeline's length, counted on the mock driver: the frames on the stack when a
Python launch reaches cuLaunchKernel (tools/mock_libcuda_launch.h records them)."""

import pathlib

import pytest

from mock_run import run_on_mock

# A hop is one call: Python -> the extension's entry, each nanocuda frame -> the next, and the
# last one -> cuLaunchKernel. Inlined code is no hop (it is not a call); packing is done, and
# its frames gone, before the launch is made (docs/design-notes.md lists the hops).
MAX_HOPS = 7

LAUNCHES = r'''
import nanocuda
k = nanocuda.compile(r"""extern "C" __global__ void k(const float* a, const float* b, float* c, int n) {}""",
                     arch="90").get_kernel("k")
s = nanocuda.Stream.legacy(nanocuda.Device(0))
run = k.bind(nanocuda.LaunchConfig(grid=3, block=32), stream=s)
run(0x1000, 0x2000, 0x3000, 4)                                                   # the Launcher
run(0x1100, 0x2000, 0x3000, 4)                                                   # its cached path
one_off = nanocuda.LaunchConfig(grid=5, block=32)
nanocuda.launch(s, one_off, k, 0x1200, 0x2000, 0x3000, 4)                        # one-off
print("ok")
'''


def stacks(mock_libcuda, tmp_path):
    record = tmp_path / "frames.txt"
    run_on_mock(mock_libcuda, LAUNCHES, version="13.0",  # NVRTC 13 cubins, also in test-driver-versions
                NANOCUDA_MOCK_LAUNCH_FRAMES=str(record))
    return [s.splitlines() for s in record.read_text().strip().split("\n\n")]


def hops(stack):
    """Calls from the interpreter to the driver: nanocuda's frames (the extension holds the core)
    under the mock's own frame, plus one."""
    assert not stack[0].startswith("_nanocuda"), stack  # the mock's recording frame
    ours = 0
    for line in stack[1:]:
        if not line.startswith("_nanocuda"):
            break
        ours += 1
    assert ours >= 1 and not any(l.startswith("_nanocuda") for l in stack[1 + ours:]), stack
    return ours + 1


def test_each_python_launch_reaches_the_driver_within_the_hop_budget(mock_libcuda, tmp_path):
    recorded = stacks(mock_libcuda, tmp_path)
    assert len(recorded) == 3, recorded  # one record per launch, none lost
    for stack in recorded:
        assert hops(stack) <= MAX_HOPS, "\n".join(stack)


def test_the_recording_mock_sees_each_launch_s_own_bytes(mock_libcuda, tmp_path):
    # The hook is honest about which launch it saw: grid x and the first pointer of each call.
    code = LAUNCHES.replace('print("ok")', '''
import ctypes
last = (ctypes.c_ulonglong * 2).in_dll(ctypes.CDLL(__import__("os").environ["NANOCUDA_LIBCUDA"]),
                                        "nanocuda_mock_last_launch")
assert (last[0], last[1]) == (5, 0x1200), (last[0], last[1])
print("ok")''')
    run_on_mock(mock_libcuda, code, version="13.0", NANOCUDA_MOCK_LAUNCH_FRAMES=str(tmp_path / "f.txt"))


def test_a_launcher_re_entered_while_packing_launches_both_calls_with_their_own_bytes(
        mock_libcuda, tmp_path):
    # Packing reads __cuda_array_interface__, which here launches the same Launcher again: the
    # nested call packs into a buffer of its own (Launcher::pack_and_launch_unshared), and the
    # outer call's bytes are its own when it launches after it.
    code = LAUNCHES.replace('print("ok")', '''
import ctypes, os
last = (ctypes.c_ulonglong * 2).in_dll(ctypes.CDLL(os.environ["NANOCUDA_LIBCUDA"]),
                                        "nanocuda_mock_last_launch")
seen = []
class Reentrant:
    @property
    def __cuda_array_interface__(self):
        run(0x5000, 0x2000, 0x3000, 4)
        seen.append(last[1])
        return {"shape": (4,), "typestr": "<f4", "data": (0x6000, False), "version": 3}
run(Reentrant(), 0x2000, 0x3000, 4)
# (the property may be read twice: once to classify the argument, once to pack it)
assert seen and set(seen) == {0x5000} and last[1] == 0x6000, (seen, hex(last[1]))
print("ok")''')
    run_on_mock(mock_libcuda, code, version="13.0", NANOCUDA_MOCK_LAUNCH_FRAMES=str(tmp_path / "f.txt"),
                NANOCUDA_MOCK_POINTER="device")  # CAI pointers are on device 0
