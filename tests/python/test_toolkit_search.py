"""Where NVRTC and the CUDA headers are found: the toolkit or NVIDIA's pip packages (no GPU needed).

scripts/test-no-toolkit runs this with the toolkit hidden and NANOCUDA_EXPECT_PIP_TOOLKIT=1:
then every piece must come from a pip package, so nothing leaks in from a toolkit.
"""

import os
import subprocess
import sys

import pytest

import nanocuda
from nanocuda import _compile

EXPECT_PIP = os.environ.get("NANOCUDA_EXPECT_PIP_TOOLKIT") == "1"

# Every header family a kernel commonly includes, each used so it is really parsed.
KERNEL = r"""
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda/std/cstdint>
extern "C" __global__ void convert(const float* x, __half* h, __nv_bfloat16* b,
                                   cuda::std::uint32_t n, CUdeviceptr unused) {
  cuda::std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { h[i] = __float2half(x[i]); b[i] = __float2bfloat16(x[i]); }
}
"""


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NANOCUDA_CACHE_DIR", str(tmp_path / "cache"))
    nanocuda.clear_memory_cache()
    yield
    nanocuda.clear_memory_cache()


def test_fp16_bf16_cstdint_and_cuda_h_compile_with_no_include_paths():
    code = nanocuda.compile(KERNEL, arch="90")
    assert code.code[:4] == b"\x7fELF"
    flags = nanocuda.Program(KERNEL, nanocuda.ProgramOptions(arch="90")).flags()
    includes = [f[2:] for f in flags if f.startswith("-I")]
    assert any(os.path.isfile(os.path.join(d, "cuda_fp16.h")) for d in includes), includes
    assert any(os.path.isfile(os.path.join(d, "cuda", "std", "cstdint")) for d in includes), includes


def test_every_piece_is_found_and_says_where_from():
    rows = {piece: (path, origin) for piece, path, origin in _compile.toolkit_sources()}
    assert set(rows) == {"NVRTC", "nvJitLink", "cuda.h", "cuda/std"}
    for piece, (path, origin) in rows.items():
        assert path, f"{piece}: {origin}"
        assert os.path.exists(path), path
        if EXPECT_PIP:
            assert origin.startswith("pip package " + _compile.PIP_PACKAGES[piece]), (piece, path, origin)
        else:
            assert origin, piece


def test_info_lists_each_piece():
    out = subprocess.run([sys.executable, "-m", "nanocuda", "info", "--allow-missing-driver"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    for piece in ("NVRTC", "nvJitLink", "cuda.h", "cuda/std"):
        assert f"  {piece} " in out.stdout, out.stdout
    if EXPECT_PIP:
        assert "pip package nvidia-cuda-nvrtc" in out.stdout, out.stdout


def test_wheel_include_folders_on_sys_path_are_found(tmp_path, monkeypatch):
    include = tmp_path / "nvidia" / "cu13" / "include"
    (include / "cccl" / "cuda" / "std").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _compile.wheel_include_dirs()[0] == str(include)
    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir()
    assert _compile.wheel_library_dirs()[0] == str(lib)


@pytest.mark.gpu
def test_fp16_bf16_kernel_runs_with_the_found_headers():
    # Compiled for the device at hand with whatever headers were found (pip or toolkit),
    # then run: the conversions must match numpy's float16 and a bfloat16 rounding.
    import numpy as np

    n = 1000
    x = np.linspace(-3, 3, n, dtype=np.float32)
    kernel = nanocuda.compile(KERNEL).get_kernel("convert")
    stream = nanocuda.Stream()
    dx = nanocuda.Buffer(4 * n, stream=stream)
    dh, db = (nanocuda.Buffer(2 * n, stream=stream) for _ in range(2))
    nanocuda.copy(dx, x, stream=stream)
    nanocuda.launch(stream, nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), kernel,
                    dx, dh, db, n, 0)
    h = np.empty(n, np.float16)
    b = np.empty(n, np.uint16)
    nanocuda.copy(h, dh, stream=stream)
    nanocuda.copy(b, db, stream=stream)
    stream.sync()
    assert np.array_equal(h, x.astype(np.float16))
    bits = x.view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    assert np.array_equal(b, rounded)


# scripts/gpu-cu12 and test-no-toolkit's [cu12] run set this to the CUDA major they installed.
EXPECT_MAJOR = os.environ.get("NANOCUDA_EXPECT_CUDA_MAJOR", "")


def _define(path, macro):
    with open(path) as f:
        for line in f:
            if line.startswith(f"#define {macro} "):
                return int(line.split()[2])
    return 0


def test_headers_come_from_the_nvrtcs_cuda_major():
    major = nanocuda.nvrtc_version() // 1000
    if EXPECT_MAJOR:
        assert major == int(EXPECT_MAJOR), (major, nanocuda.nvrtc_library())
    include, cccl = nanocuda._nanocuda._internal.cuda_include_dirs()
    assert _define(os.path.join(include, "cuda.h"), "CUDA_VERSION") // 1000 == major, include
    cccl_version = _define(os.path.join(cccl, "cuda", "std", "__cccl", "version.h"), "CCCL_VERSION")
    assert cccl_version // 1000000 + 10 == major, (cccl, cccl_version)  # CCCL 2 with 12, 3 with 13
    # and no folder of the other major is on a compile's include path
    flags = nanocuda.Program(KERNEL, nanocuda.ProgramOptions(arch="90")).flags()
    for d in (f[2:] for f in flags if f.startswith("-I")):
        if os.path.isfile(os.path.join(d, "cuda.h")):
            assert _define(os.path.join(d, "cuda.h"), "CUDA_VERSION") // 1000 == major, (d, flags)
