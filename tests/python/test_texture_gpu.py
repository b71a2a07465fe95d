"""Textures and surfaces on a real GPU: data copied into CUDA arrays comes back out, kernels read
it through texture objects (point and linear filtering, linear and pitch2D memory, mipmap levels)
and write it through surface objects. Checkpointing is exercised by cuda.core's own suite (it
needs a second process to lock)."""

import array

import numpy as np
import pytest

from nanocuda import Device, LaunchConfig, launch
from nanocuda import compile as nc_compile
from nanocuda import copy as nanocopy
from nanocuda.texture import (MipmappedArrayOptions, OpaqueArrayOptions, ResourceDescriptor,
                              TextureObjectOptions)
from nanocuda.typing import ArrayFormatType

pytestmark = pytest.mark.gpu

KERNELS = r"""
extern "C" __global__ void sample2d(unsigned long long tex, float* out, int w, int h, float dx) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>((cudaTextureObject_t)tex, x + 0.5f + dx, y + 0.5f);
}
extern "C" __global__ void fetch1d(unsigned long long tex, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>((cudaTextureObject_t)tex, i);
}
extern "C" __global__ void write_surface(unsigned long long surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(uchar4{(unsigned char)x, (unsigned char)y, 7, 255}, (cudaSurfaceObject_t)surf,
                                  x * 4, y);
}
"""


@pytest.fixture(scope="module")
def kernels():
    Device().set_current()
    lib = nc_compile(KERNELS)
    return {name: lib.get_kernel(name) for name in ("sample2d", "fetch1d", "write_surface")}


@pytest.fixture
def dev():
    d = Device()
    d.set_current()
    return d


def test_array_round_trip_host_and_device(dev):
    s = dev.create_stream()
    arr = dev.create_opaque_array(OpaqueArrayOptions(shape=(16, 8, 2), format=np.uint16, num_channels=2))
    assert arr.handle != 0 and arr.size_bytes == 16 * 8 * 2 * 4
    src = np.arange(arr.size_bytes // 2, dtype=np.uint16)
    arr.copy_from(src, stream=s)
    buf = dev.memory_resource.allocate(arr.size_bytes, stream=s)
    arr.copy_to(buf, stream=s)  # array -> device memory -> second array -> host
    other = dev.create_opaque_array(OpaqueArrayOptions(shape=(16, 8, 2), format="uint16", num_channels=2))
    other.copy_from(buf, stream=s)
    out = np.zeros_like(src)
    assert other.copy_to(out, stream=s) is out
    s.sync()
    np.testing.assert_array_equal(out, src)


def test_texture_point_and_linear_sampling(dev, kernels):
    s = dev.create_stream()
    w, h = 32, 4
    img = np.arange(w * h, dtype=np.float32).reshape(h, w)
    arr = dev.create_opaque_array(OpaqueArrayOptions(shape=(w, h), format=ArrayFormatType.FLOAT32, num_channels=1))
    arr.copy_from(img, stream=s)
    out = dev.memory_resource.allocate(img.nbytes, stream=s)
    res = ResourceDescriptor.from_opaque_array(arr)
    host = np.empty_like(img)
    point = dev.create_texture_object(resource=res, options=TextureObjectOptions())
    launch(s, LaunchConfig(grid=(1, h), block=w), kernels["sample2d"], np.uint64(point.handle), out, w, h,
           np.float32(0))
    nanocopy(host, out, stream=s)  # Buffer.copy_to takes a Buffer (cuda.core); copy() takes arrays
    s.sync()
    np.testing.assert_array_equal(host, img)
    # linear filtering half a texel right: the mean of neighbours (clamped at the right edge)
    linear = dev.create_texture_object(resource=res, options=TextureObjectOptions(filter_mode="linear"))
    launch(s, LaunchConfig(grid=(1, h), block=w), kernels["sample2d"], np.uint64(linear.handle), out, w, h,
           np.float32(0.5))
    nanocopy(host, out, stream=s)  # Buffer.copy_to takes a Buffer (cuda.core); copy() takes arrays
    s.sync()
    want = (img + np.concatenate([img[:, 1:], img[:, -1:]], axis=1)) / 2
    np.testing.assert_allclose(host, want, atol=1e-2)  # 8-bit interpolation weights


def test_linear_and_pitch2d_memory(dev, kernels):
    s = dev.create_stream()
    n = 256
    data = np.linspace(0, 1, n, dtype=np.float32)
    buf = dev.memory_resource.allocate(data.nbytes, stream=s)
    out = dev.memory_resource.allocate(data.nbytes, stream=s)
    staging = dev.create_opaque_array(OpaqueArrayOptions(shape=(n,), format="float32", num_channels=1))
    staging.copy_from(data, stream=s)
    staging.copy_to(buf, stream=s)  # the Buffer now holds `data`
    tex = dev.create_texture_object(
        resource=ResourceDescriptor.from_linear(buf, format="float32", num_channels=1), options=None)
    launch(s, LaunchConfig(grid=1, block=n), kernels["fetch1d"], np.uint64(tex.handle), out, n)
    host = np.empty_like(data)
    nanocopy(host, out, stream=s)  # Buffer.copy_to takes a Buffer (cuda.core); copy() takes arrays
    s.sync()
    np.testing.assert_array_equal(host, data)
    pitch = max(dev.properties.texture_pitch_alignment, 256)
    img = dev.memory_resource.allocate(pitch * 4, stream=s)
    res = ResourceDescriptor.from_pitch2d(img, format="float32", num_channels=1, width=16, height=4,
                                          pitch_bytes=pitch)
    assert dev.create_texture_object(resource=res).handle != 0


def test_surface_writes_and_mipmap_levels(dev, kernels):
    s = dev.create_stream()
    w, h = 16, 8
    arr = dev.create_opaque_array(OpaqueArrayOptions(shape=(w, h), format="uint8", num_channels=4,
                                                     is_surface_load_store=True))
    surf = dev.create_surface_object(resource=ResourceDescriptor.from_opaque_array(arr))
    launch(s, LaunchConfig(grid=(1, h), block=w), kernels["write_surface"], np.uint64(surf.handle), w, h)
    out = np.zeros((h, w, 4), dtype=np.uint8)
    arr.copy_to(out, stream=s)
    s.sync()
    ys, xs = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(out[..., 0], xs)
    np.testing.assert_array_equal(out[..., 1], ys)
    assert (out[..., 2] == 7).all() and (out[..., 3] == 255).all()

    mip = dev.create_mipmapped_array(MipmappedArrayOptions(shape=(16, 16), format="uint32", num_channels=1,
                                                           num_levels=3))
    level = mip.get_level(1)
    del mip  # the level keeps the mipmapped array alive
    src = array.array("I", range(64))
    dst = array.array("I", [0] * 64)
    level.copy_from(src, stream=s)
    level.copy_to(dst, stream=s)
    s.sync()
    assert list(dst) == list(src)
    mip = dev.create_mipmapped_array(MipmappedArrayOptions(shape=(32, 32), format="float32", num_channels=1,
                                                           num_levels=3))
    tex = dev.create_texture_object(resource=ResourceDescriptor.from_mipmapped_array(mip),
                                    options=TextureObjectOptions(normalized_coords=True, mipmap_filter_mode="linear",
                                                                 max_mipmap_level_clamp=2.0))
    assert tex.handle != 0
    tex.close()
    assert tex.handle == 0
