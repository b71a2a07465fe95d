"""On a GPU: the cubin reader agrees with the driver's kernel list; `nanocuda compile` without --arch targets device 0."""

import os
import subprocess
import sys

import pytest

import nanocuda

pytestmark = pytest.mark.gpu

SOURCE = r"""
__device__ float helper(float x) { return x + 1; }
extern "C" __global__ void first(float* x) { x[0] = helper(x[0]); }
extern "C" __global__ void second(float* x) { x[1] = 2; }
template <int N> __global__ void fill(int* p) { p[threadIdx.x] = N; }
"""


def test_cubin_kernel_names_match_the_drivers_list(device):
    cubin = nanocuda.Program(SOURCE).compile("cubin", name_expressions=["fill<3>"])
    ptx = nanocuda.Program(SOURCE).compile("ptx", name_expressions=["fill<3>"])
    from_elf = cubin.kernel_names                    # the ELF reader, no driver
    from_driver = sorted(ptx.kernel_names)           # PTX is loaded: the driver enumerates
    assert from_elf == from_driver
    assert {"first", "second"} <= set(from_elf) and len(from_elf) == 3


def test_cli_compile_without_arch_targets_device_0(tmp_path, device):
    src = tmp_path / "k.cu"
    src.write_text(SOURCE)
    r = subprocess.run([sys.executable, "-m", "nanocuda", "compile", str(src), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True, cwd="/tmp", timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert f"wrote {tmp_path / 'k.cubin'} (" in r.stdout
    kernel = nanocuda.ObjectCode.from_cubin((tmp_path / "k.cubin").read_bytes()).get_kernel("first")
    assert kernel.num_arguments == 1
