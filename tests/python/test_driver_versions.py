"""Driver versions without a GPU: tools/mock_libcuda.c reports CUDA 12.4, 12.8 or 13.0 (or an
unsupported 12.2), and each version-gated feature raises DriverTooOldError below its version
while the rest works; NVRTC and header choice by CUDA major; `nanocuda info` on every driver."""

import os
import subprocess
import sys

import pytest

import mock_run

import nanocuda

VERSIONS = ["12.4", "12.8", "13.0"]


def run_on_mock(mock_libcuda, version, code, **env):
    return mock_run.run_on_mock(mock_libcuda, code, version=version, **env)


PRELUDE = """
    import nanocuda
    from nanocuda import DriverTooOldError
"""


def test_driver_too_old_error_is_a_cuda_error():
    assert issubclass(nanocuda.DriverTooOldError, nanocuda.CudaError)
    assert not issubclass(nanocuda.DriverTooOldError, nanocuda.DriverNotFoundError)
    assert "DriverTooOldError" in nanocuda.__all__


@pytest.mark.parametrize("version", ["11.8", "12.2"])
def test_below_the_floor_is_a_clear_error_at_first_use(mock_libcuda, version):
    found = int(version.split(".")[0]) * 1000 + int(version.split(".")[1]) * 10
    run_on_mock(mock_libcuda, version, PRELUDE + f"""
    assert nanocuda.driver_version() == {found}  # answers without loading the table
    e = raises(nanocuda.Device.count, DriverTooOldError, "CUDA 12.4 or newer", "r550",
               "the installed driver is CUDA {version}")
    assert (e.driver_version, e.required_version, e.feature) == ({found}, 12040, "nanocuda")
    # remembered: the next call says the same, never a crash
    raises(lambda: nanocuda.Device(0).name, DriverTooOldError, "CUDA {version}")
    print("ok")
    """)


def test_info_on_a_too_old_driver(mock_libcuda):
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_DRIVER_VERSION="12.2")
    out = subprocess.run([sys.executable, "-m", "nanocuda", "info"], capture_output=True, text=True,
                         env=env, timeout=120, cwd="/tmp")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "driver   CUDA 12.2" in out.stdout and "too old" in out.stdout, out.stdout
    assert "Traceback" not in out.stderr, out.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_info_shows_driver_nvrtc_and_fit(mock_libcuda, version):
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_DRIVER_VERSION=version)
    out = subprocess.run([sys.executable, "-m", "nanocuda", "info"], capture_output=True, text=True,
                         env=env, timeout=120, cwd="/tmp")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"driver   CUDA {version}" in out.stdout, out.stdout
    try:
        nvrtc = nanocuda.nvrtc_version()
    except nanocuda.ToolkitNotFoundError:
        return
    fit = [line for line in out.stdout.splitlines() if "fit " in line]
    assert len(fit) == 1, out.stdout
    fits = nvrtc // 1000 <= int(version.split(".")[0])
    assert fit[0].endswith(": ok") == (fits and nvrtc <= int(version[:2]) * 1000 + int(version[3:]) * 10), fit
    if not fits:
        assert 'pip install "nanocuda[cu12]"' in fit[0], fit


@pytest.mark.parametrize("version", VERSIONS)
def test_conditional_node_gates(mock_libcuda, version):
    gated = version == "12.4"
    run_on_mock(mock_libcuda, version, PRELUDE + f"""
    b = nanocuda.Device().create_graph_builder().begin_building()
    for call, feature in ((lambda: b.switch(0x1234, 3), "GraphBuilder.switch"),
                          (lambda: b.if_else(0x1234), "GraphBuilder.if_else")):
        if {gated}:
            e = raises(call, DriverTooOldError, feature, "CUDA 12.8 or newer", "installed driver is CUDA 12.4")
            assert e.required_version == 12080 and e.driver_version == 12040 and feature in e.feature
        else:  # past the gate: the handle check speaks
            raises(call, ValueError, "was not made by create_conditional_handle")
    # if/while nodes are older than the floor: never gated
    raises(lambda: b.if_then(0x1234), ValueError, "was not made by create_conditional_handle")
    raises(lambda: b.while_loop(0x1234), ValueError, "was not made by create_conditional_handle")
    print("ok")
    """)


@pytest.mark.parametrize("version", VERSIONS)
def test_blackwell_tma_gates(mock_libcuda, version):
    gated = version == "12.4"
    run_on_mock(mock_libcuda, version, PRELUDE + f"""
    from nanocuda import TensorMap
    ptr = 0x7f0000000000
    TensorMap.tiled_from_pointer(ptr, "float16", (512, 512), box=(64, 64))  # works everywhere
    for kw, what in ((dict(dtype="16u4_align8b", box=(64, 128)), "dtype 16u4_align8b"),
                     (dict(dtype="float16", box=(64, 64), swizzle="128B_atom_32B"), "swizzle 128B_atom_32B")):
        dtype = kw.pop("dtype")
        call = lambda: TensorMap.tiled_from_pointer(ptr, dtype, (512, 512), **kw)
        if {gated}:
            e = raises(call, DriverTooOldError, "TensorMap.tiled with " + what, "CUDA 12.8 or newer")
            assert e.required_version == 12080
        else:
            assert isinstance(call(), TensorMap)
    print("ok")
    """)


def test_library_search_prefers_the_drivers_major(tmp_path, mock_libcuda):
    """libnvrtc.so.12 and .so.13 in one folder (stand-ins that export only nvrtcVersion, so
    loading stops with an error naming the file picked): a 12.x driver gets CUDA 12's."""
    lib = tmp_path / "lib"
    lib.mkdir()
    src = tmp_path / "fake_nvrtc.c"
    src.write_text("int nvrtcVersion(int* major, int* minor) { *major = MAJOR; *minor = 0; return 0; }\n")
    for major in (12, 13):
        subprocess.run(["cc", "-shared", "-fPIC", f"-DMAJOR={major}", "-o", str(lib / f"libnvrtc.so.{major}"),
                        str(src)], check=True)
    code = PRELUDE + f"""
    from nanocuda import _nanocuda
    _nanocuda.add_library_search_dirs([{str(lib)!r}])
    try:
        print("loaded", nanocuda.nvrtc_library())
    except nanocuda.ToolkitNotFoundError as e:
        print("picked", str(e).split(" lacks ")[0])
    print("ok")
    """
    env = {"NANOCUDA_NVRTC": ""}
    out = run_on_mock(mock_libcuda, "12.8", code, **env)  # ours, or a CUDA 12 wheel's found first
    assert out.split()[1].endswith("libnvrtc.so.12"), out
    out = run_on_mock(mock_libcuda, "13.0", code, **env)  # the toolkit's 13, if any, comes first
    assert out.split()[1].endswith("libnvrtc.so.13"), out


@pytest.mark.parametrize("version", VERSIONS)
def test_code_from_a_newer_nvrtc_is_refused_at_load(mock_libcuda, version, tmp_path):
    """NVRTC 13's cubin on a 12.x driver: DriverTooOldError naming the package, before any
    launch; on 13.0 it loads. PTX needs the NVRTC's full version."""
    try:
        nvrtc = nanocuda.nvrtc_version()
    except nanocuda.ToolkitNotFoundError:
        pytest.skip("needs an NVRTC")
    driver = int(version[:2]) * 1000 + int(version[3:]) * 10
    cubin_ok = nvrtc // 1000 <= driver // 1000
    ptx_ok = nvrtc <= driver
    run_on_mock(mock_libcuda, version, PRELUDE + f"""
    src = 'extern "C" __global__ void k(float* x) {{ x[threadIdx.x] = 1.0f; }}'
    for target, ok in (("cubin", {cubin_ok}), ("ptx", {ptx_ok})):
        code = nanocuda.compile(src, arch="90", target=target)
        if ok:
            code.get_kernel("k")
        else:
            e = raises(lambda: code.get_kernel("k"), DriverTooOldError, "compiled by NVRTC",
                       "installed driver is CUDA {version}",
                       'pip install "nanocuda[cu12]"' if {driver // 1000} == 12 else "NANOCUDA_NVRTC")
            assert e.driver_version == {driver}
    # code given as bytes is the user's business: no NVRTC version to compare
    nanocuda.ObjectCode.from_cubin(b"\\x7fELF" + bytes(60)).get_kernel("k")
    print("ok")
    """, NANOCUDA_CACHE_DIR=str(tmp_path / "cache"))
