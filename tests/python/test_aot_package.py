"""examples/aot_package builds into a wheel carrying fatbins + manifests, usable without NVRTC (CPU)."""

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

from nanocuda import _nanocuda

PACKAGE = ROOT / "examples" / "aot_package"


def _can_build_wheels() -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools

    return tuple(int(p) for p in setuptools.__version__.split(".")[:2]) >= (70, 1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if not _can_build_wheels():
        pytest.skip("needs setuptools>=70.1 (or the wheel package) to build the example wheel")
    out = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, AOT_DEMO_ARCH="sm_80,sm_90a,compute_80")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
                        "-w", str(out), str(PACKAGE)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list(out.glob("aot_demo-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_holds_sources_fatbins_and_manifests(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"aot_demo/kernels/vec.cu", "aot_demo/kernels/vec_common.h", "aot_demo/prebuilt/vec.fatbin",
                "aot_demo/prebuilt/vec.fatbin.json"} <= names
        manifest = json.loads(z.read("aot_demo/prebuilt/vec.fatbin.json"))
        entries = _nanocuda._internal.fatbin_entries(z.read("aot_demo/prebuilt/vec.fatbin"))
    assert manifest["targets"] == ["sm_80", "sm_90a", "compute_80"] == [t for t, _ in entries]
    # Kernel names and parameter layouts, read without a driver.
    assert manifest["kernels"] == [
        {"name": "axpy", "params": [[0, 8], [8, 8], [16, 8], [24, 4], [28, 4]]},
        {"name": "scale", "params": [[0, 8], [8, 4], [12, 4]]},
    ]


def test_installed_wheel_loads_without_nvrtc_or_cache(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    env = dict(os.environ, NANOCUDA_NVRTC="none", NANOCUDA_CACHE="0", PYTHONPATH=str(target))
    if os.environ.get("NANOCUDA_TEST_DRIVER_VERSION"):  # the version run's mock has no real GPU to pick
        env.pop("NANOCUDA_LIBCUDA", None)             # a cubin for: run as the plain suite does
    code = ("import aot_demo, nanocuda\n"
            "m = aot_demo.kernels()\n"
            "assert m.manifest is not None, 'compiled instead of prebuilt'\n"
            "print(m.code.code_type, m.kernel_names)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "fatbin ['axpy', 'scale']"
