"""Faults that need no GPU, each in its own process: no driver, a driver missing newer entry
points (tools/mock_libcuda.c), and a compile cache that is unwritable, truncated or garbage."""

import os
import subprocess
import sys
import textwrap

import pytest



def run(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env=full, cwd="/tmp")
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-3000:]}"
    return r


def test_no_driver_message_names_the_call_once():
    r = run("""
        import nanocuda
        try:
            nanocuda.Device(0)
        except nanocuda.DriverNotFoundError as e:
            print("A:" + str(e))
        try:
            nanocuda.ProgramOptions().arch  # default arch needs a device
            nanocuda.compile('__global__ void k() {}')
        except nanocuda.DriverNotFoundError as e:
            print("B:" + str(e))
        """, NANOCUDA_LIBCUDA="/nonexistent/libcuda.so.1")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line[:2] in ("A:", "B:")]
    assert lines and lines[0].startswith("A:load_driver: no NVIDIA driver found"), r.stdout
    for line in lines:
        assert line.count("load_driver:") <= 1, line
    # compiling with no GPU names the option instead of repeating the loader's story
    assert any(line.startswith("B:no GPU to take the target architecture from") and "arch=" in line
               for line in lines), r.stdout


def test_missing_entry_point_is_a_clear_error(mock_libcuda):
    r = run("""
        import nanocuda
        d = nanocuda.Device(0)
        try:
            d.uuid
        except nanocuda.CudaError as e:
            print("ERR", e.name, "|", e)
        print("after", nanocuda.Device.count())
        """, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_MISSING="cuDeviceGetUuid,cuGraphAddNode")
    assert r.returncode == 0, r.stderr
    assert "ERR CUDA_ERROR_NOT_SUPPORTED" in r.stdout, r.stdout
    assert "does not provide cuDeviceGetUuid" in r.stdout and "update the driver" in r.stdout
    assert "after 1" in r.stdout


def test_missing_required_entry_point_refuses_the_driver(mock_libcuda):
    r = run("""
        import nanocuda
        try:
            nanocuda.Device.count()
        except nanocuda.DriverNotFoundError as e:
            print("ERR", e)
        """, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_MISSING="cuLaunchKernel")
    assert r.returncode == 0, r.stderr
    assert "lacks required entry points: cuLaunchKernel" in r.stdout, r.stdout


def test_missing_param_info_entry_point(mock_libcuda):
    r = run("""
        import nanocuda
        code = nanocuda.compile('extern "C" __global__ void k(int* p) { *p = 1; }', arch="sm_90a")
        try:
            code.get_kernel("k")
        except nanocuda.CudaError as e:
            print("ERR", e.name, "|", e)
        except nanocuda.ToolkitNotFoundError as e:
            print("NO-NVRTC", e)
        """, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_MISSING="cuKernelGetParamInfo",
        # a driver that loads what any NVRTC compiles (test_driver_versions.py covers older ones)
        NANOCUDA_MOCK_DRIVER_VERSION="13.0")
    assert r.returncode == 0, r.stderr
    if "NO-NVRTC" in r.stdout:
        pytest.skip("NVRTC not found")
    assert "ERR CUDA_ERROR_NOT_SUPPORTED" in r.stdout and "cuKernelGetParamInfo" in r.stdout, r.stdout


COMPILE = """
import nanocuda, sys, glob, os
src = 'extern "C" __global__ void k(int* p) { *p = %d; }'
def build(i):
    try:
        return nanocuda.compile(src % i, arch="sm_90a")
    except nanocuda.ToolkitNotFoundError:
        print("NO-NVRTC"); sys.exit(0)
"""


def test_cache_unwritable_directory_still_compiles(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run(COMPILE + """
        a = build(1); nanocuda.clear_memory_cache(); b = build(1)
        print("OK", a.code == b.code, nanocuda.compile_cache_info()["disk_entries"])
        """.replace("\n        ", "\n"), NANOCUDA_CACHE_DIR=str(blocker / "cache"))
    assert r.returncode == 0, r.stderr
    if "NO-NVRTC" in r.stdout:
        pytest.skip("NVRTC not found")
    assert "OK True 0" in r.stdout, r.stdout


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip"])
def test_cache_never_loads_a_damaged_entry(tmp_path, damage):
    env = dict(NANOCUDA_CACHE_DIR=str(tmp_path))
    r = run(COMPILE + "a = build(7); print('CODE', a.code.hex()[:64])", **env)
    if "NO-NVRTC" in r.stdout:
        pytest.skip("NVRTC not found")
    assert r.returncode == 0, r.stderr
    entries = list(tmp_path.glob("*.ncc"))
    assert len(entries) == 1
    data = entries[0].read_bytes()
    entries[0].write_bytes({"truncate": data[: len(data) // 2], "garbage": os.urandom(len(data)),
                            "empty": b"", "flip": data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:]}[damage])
    r2 = run(COMPILE + """
        a = build(7)
        info = nanocuda.compile_cache_info()
        print('CODE', a.code.hex()[:64]); print('REJECTED', info['rejected'])
        """.replace("\n        ", "\n"), **env)
    assert r2.returncode == 0, r2.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("CODE")] == \
        [ln for ln in r2.stdout.splitlines() if ln.startswith("CODE")]
    assert "REJECTED 1" in r2.stdout, r2.stdout
    assert entries[0].read_bytes() == data or len(entries[0].read_bytes()) > 0  # rewritten whole


def test_cache_size_limit_evicts(tmp_path):
    r = run(COMPILE + """
        for i in range(12):
            build(100 + i)
        info = nanocuda.compile_cache_info()
        print("INFO", info["disk_bytes"], info["disk_max_bytes"], info["evicted"], info["disk_entries"])
        """.replace("\n        ", "\n"), NANOCUDA_CACHE_DIR=str(tmp_path), NANOCUDA_CACHE_MAX_BYTES="20000")
    assert r.returncode == 0, r.stderr
    if "NO-NVRTC" in r.stdout:
        pytest.skip("NVRTC not found")
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("INFO"))
    disk_bytes, limit, evicted, entries = map(int, line.split()[1:])
    assert limit == 20000 and disk_bytes <= 20000 and evicted > 0 and entries >= 1, line


def test_cache_info_defaults():
    import nanocuda

    info = nanocuda.compile_cache_info()
    assert set(info) >= {"directory", "enabled", "disk_entries", "disk_bytes", "disk_max_bytes",
                         "memory_entries", "memory_bytes", "memory_max_bytes", "evicted", "rejected"}
    if "NANOCUDA_CACHE_MAX_BYTES" not in os.environ:
        assert info["disk_max_bytes"] == 256 << 20


def test_cache_disk_errors_are_reported_not_ignored(tmp_path):
    # A file where the cache folder should be: nothing fails, and the info says why.
    (tmp_path / "blocker").write_text("x")
    env = dict(os.environ, NANOCUDA_CACHE_DIR=str(tmp_path / "blocker" / "cache"))
    code = "import nanocuda; print(nanocuda.compile_cache_info()['last_error'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("cannot list") and str(tmp_path / "blocker" / "cache") in out, out
