"""Graph builder pieces that need no GPU: options, handles, and the device header under
NVRTC and nvcc (the conditional setter must compile to the driver-resolved builtin)."""

import shutil
import subprocess
from pathlib import Path

import pytest

import nanocuda

ROOT = Path(__file__).resolve().parents[2]
KERNEL = r"""
#include <nanocuda/device/graph.cuh>
extern "C" __global__ void step(nanocuda::conditional_handle h, int* counter, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) nanocuda::set_conditional(h, ++*counter < n);
}
"""


def undefined_symbols(cubin: bytes) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run(["readelf", "-sW", f.name], capture_output=True, text=True).stdout


def test_device_header_compiles_under_nvrtc_to_the_driver_builtin():
    code = nanocuda.compile(KERNEL, arch="sm_90")
    assert code.code[:4] == b"\x7fELF"
    if shutil.which("readelf"):
        syms = undefined_symbols(code.code)
        line = [ln for ln in syms.splitlines() if "cudaGraphSetConditional" in ln]
        assert line and "UND" in line[0], syms  # bound by the driver at load, no cudadevrt


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
def test_device_header_compiles_with_nvcc(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(KERNEL)
    out = tmp_path / "k.cubin"
    r = subprocess.run(["nvcc", "--cubin", "-arch=sm_90", f"-I{ROOT / 'include'}", "-o", str(out),
                        str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_complete_options_reject_illegal_combination():
    with pytest.raises(ValueError, match="auto_free_on_launch and device_launch"):
        nanocuda.GraphCompleteOptions(auto_free_on_launch=True, device_launch=True)
    o = nanocuda.GraphCompleteOptions(use_node_priority=True)
    assert o.use_node_priority and not o.auto_free_on_launch and o.upload_stream is None


def test_debug_print_options_fields():
    o = nanocuda.GraphDebugPrintOptions(verbose=True, conditional_node_params=True)
    assert o.verbose and o.conditional_node_params and not o.handles
    with pytest.raises(TypeError, match="no option 'verbos'"):
        nanocuda.GraphDebugPrintOptions(verbos=True)


def test_conditional_handle_is_an_int():
    h = nanocuda.ConditionalHandle(42)
    assert isinstance(h, int) and h == 42
    assert nanocuda.ConditionalHandle.__doc__


def test_builder_lifecycle_cases_against_the_mock_driver(mock_libcuda, tmp_path):
    # graph_builder_cases.py in a process of its own, so the mock is the driver it loads.
    import os
    import sys

    cases = Path(__file__).with_name("graph_builder_cases.py")
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(cases)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-2000:]
