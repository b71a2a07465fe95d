"""nanocuda.load on the GPU: a failed edit never runs the kernel from before it, on every
call until the file compiles again (file and included header), and mod["name"] launches a
kernel whose name collides with a CudaModule attribute."""

import os
import warnings

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu

KERNEL = 'extern "C" __global__ void {name}(float* x) {{ x[threadIdx.x] = {value}; }}\n'


def _write(path, text):
    path.write_text(text)
    st = os.stat(path)  # a new time stamp even within the file system's granularity
    os.utime(path, ns=(st.st_mtime_ns + 10**9 * 3, st.st_mtime_ns + 10**9 * 3))


def _run(fn):
    s = nanocuda.Stream()
    buf = nanocuda.Buffer(4 * 32, stream=s)
    nanocuda.memset(buf, 0, stream=s)
    fn(buf, grid=1, block=32, stream=s)
    out = np.zeros(32, np.float32)
    nanocuda.copy(out, buf, stream=s)
    s.sync()
    return float(out[0])


def test_failed_edit_raises_on_every_call_until_fixed(tmp_path):
    p = tmp_path / "k.cu"
    _write(p, KERNEL.format(name="k", value="1.0f"))
    mod = nanocuda.load(p)
    assert _run(mod.k) == 1.0
    _write(p, KERNEL.format(name="k", value="2.0f +"))
    for _ in range(3):
        with pytest.raises(nanocuda.CompileError):
            _run(mod.k)
    _write(p, KERNEL.format(name="k", value="3.0f"))
    assert _run(mod.k) == 3.0


def test_failed_header_edit_raises_on_every_call_until_fixed(tmp_path):
    h = tmp_path / "value.cuh"
    _write(h, "#define VALUE 4.0f\n")
    p = tmp_path / "k.cu"
    _write(p, '#include "value.cuh"\n' + KERNEL.format(name="k", value="VALUE"))
    mod = nanocuda.load(p)
    assert _run(mod.k) == 4.0
    _write(h, "#define VALUE 5.0f +\n")
    for _ in range(3):
        with pytest.raises(nanocuda.CompileError):
            _run(mod.k)
    _write(h, "#define VALUE 6.0f\n")
    assert _run(mod.k) == 6.0


def test_kernel_named_like_an_attribute_is_reached_by_item(tmp_path):
    p = tmp_path / "names.cu"
    _write(p, KERNEL.format(name="path", value="7.0f") + KERNEL.format(name="options", value="8.0f"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mod = nanocuda.load(p)
    assert sorted(str(x.message).split("'")[1] for x in w if issubclass(x.category, UserWarning)) == ["options", "path"]
    assert mod.path == str(p)
    assert _run(mod["path"]) == 7.0
    assert _run(mod["options"]) == 8.0
