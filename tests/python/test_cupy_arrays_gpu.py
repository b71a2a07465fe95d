"""CuPy arrays as launch arguments on a real GPU, read through ndarray.data (fastpath/cupy_array):
results, views with an offset, empty arrays, and agreement with the array interface."""

import numpy as np
import pytest

import nanocuda

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy", reason="needs CuPy")

SOURCE = r"""
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""


@pytest.fixture(scope="module")
def add():
    nanocuda.Device(0).set_current()
    return nanocuda.compile(SOURCE).get_kernel("add")


def test_cupy_arrays_launch_and_match_the_interface(add):
    n = 1000
    a = cp.arange(n, dtype=cp.float32)
    b = cp.full(n, 2.0, dtype=cp.float32)
    c = cp.zeros(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    s = nanocuda.Stream()
    launch = add.bind(nanocuda.LaunchConfig(grid=(n + 255) // 256, block=256), stream=s)
    for _ in range(3):  # the first call classifies the type, the others take the fast path
        launch(a, b, c, n)
    s.sync()
    np.testing.assert_array_equal(cp.asnumpy(c), np.arange(n, dtype=np.float32) + 2)
    assert c.data.ptr == c.__cuda_array_interface__["data"][0]


def test_cupy_views_pass_their_first_element(add):
    n = 256
    a = cp.arange(2 * n, dtype=cp.float32)
    out = cp.zeros(2 * n, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    s = nanocuda.Stream()
    nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=n), add, a[n:], a[n:], out[n:], n)
    s.sync()
    got = cp.asnumpy(out)
    np.testing.assert_array_equal(got[n:], 2 * np.arange(n, 2 * n, dtype=np.float32))
    assert not got[:n].any()


def test_an_empty_cupy_array_is_accepted(add):
    e = cp.zeros(0, dtype=cp.float32)
    s = nanocuda.Stream()
    nanocuda.launch(s, nanocuda.LaunchConfig(grid=1, block=1), add, e, e, e, 0)
    s.sync()


def test_many_cupy_arrays_and_views_pack_their_own_pointers():
    # enough different addresses that MemoryPointer.ptr is read in place from the object
    # (fastpath/cupy_array.cpp's PtrWord), then every pointer against CuPy's own answer
    import struct

    pack = nanocuda._nanocuda._internal.pack_params
    base = cp.zeros(4096, dtype=cp.float32)
    arrays = [cp.zeros(16 + i, dtype=cp.float32) for i in range(20)] + [base[7 * i:] for i in range(20)]
    for _ in range(2):
        got = [struct.unpack("<Q", pack([(0, 8)], "k", a))[0] for a in arrays]
        assert got == [a.data.ptr for a in arrays]
