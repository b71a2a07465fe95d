"""Prebuilt fatbins on the GPU: a cubin for the device and PTX only (driver JIT), loaded with NVRTC disabled."""

import os
import subprocess
import sys
import textwrap

import pytest

import nanocuda
from nanocuda import _aot

pytestmark = [pytest.mark.gpu, pytest.mark.needs_torch]

SOURCE = 'extern "C" __global__ void scale(float* x, float a, int n) {\n' \
         '  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a;\n}\n'


@pytest.mark.parametrize("kind", ["cubin", "ptx"])
def test_prebuilt_runs_without_nvrtc(tmp_path, kind):
    arch = nanocuda.Device(0).target_arch  # "90a"
    target = f"sm_{arch}" if kind == "cubin" else "compute_80"
    (tmp_path / "k.cu").write_text(SOURCE)
    _aot.build([tmp_path / "k.cu"], [target], tmp_path / "prebuilt")
    code = textwrap.dedent("""\
        import nanocuda, torch
        m = nanocuda.load("k.cu", prebuilt="prebuilt")
        assert m.manifest is not None
        x = torch.ones(1000, device="cuda")
        m.scale[4, 256](x, 3.0, 1000)
        torch.cuda.synchronize()
        assert torch.all(x == 3), x
        try:
            m.scale[4, 256](x, 3.0)  # one argument short
        except (TypeError, ValueError) as e:
            print("checked:", e)
        """)
    env = dict(os.environ, NANOCUDA_NVRTC="none", NANOCUDA_CACHE="0")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # Arguments are checked against the driver's layout, as for JIT-compiled kernels.
    assert "checked:" in r.stdout, r.stdout
