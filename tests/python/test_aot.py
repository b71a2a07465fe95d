"""Ahead-of-time kernels on the CPU: `nanocuda build`, the fatbin and manifest, and load()'s choices."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import nanocuda
from nanocuda import _aot, _nanocuda
from nanocuda.cli import main

internal = _nanocuda._internal
TARGETS = ["sm_80", "sm_90a", "sm_100a", "compute_90"]
SOURCE = textwrap.dedent("""\
    #include "common.h"
    struct Pair { int a[5]; char c; };
    extern "C" __global__ void axpy(float* y, const float* x, int n, double a) {
      int i = threadIdx.x; if (i < n) y[i] += SCALE * a * x[i];
    }
    extern "C" __global__ void mixed(Pair p, short s, float4 v) {}
    """)
LAYOUTS = [("axpy", [(0, 8), (8, 8), (16, 4), (24, 8)]), ("mixed", [(0, 24), (24, 2), (32, 16)])]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "common.h").write_text("#define SCALE 2\n")
    (tmp_path / "k.cu").write_text(SOURCE)
    return tmp_path


@pytest.fixture
def built(project):
    fatbin, = _aot.build([project / "k.cu"], TARGETS, project / "prebuilt")
    return project, fatbin


def test_build_writes_a_fatbin_with_every_target(built):
    project, fatbin = built
    assert fatbin == str(project / "prebuilt" / "k.fatbin")
    with open(fatbin, "rb") as f:
        entries = internal.fatbin_entries(f.read())
    assert [t for t, _ in entries] == TARGETS
    source = (project / "k.cu").read_text()
    for target, image in entries:
        kind = "ptx" if target.startswith("compute_") else "cubin"
        code = nanocuda.compile(source, name=str(project / "k.cu"), include_dirs=[str(project)],
                                arch=target.split("_")[1], target=kind)
        expected = code.code.rstrip(b"\0") if kind == "ptx" else code.code
        assert image[:len(expected)] == expected, target  # cubins are padded to 8 bytes


def test_manifest_records_source_options_and_layouts(built):
    project, fatbin = built
    with open(fatbin + ".json") as f:
        m = json.load(f)
    assert m["format"] == "nanocuda-aot-1"
    assert m["source"] == "k.cu"
    assert m["source_hash"] == _aot.source_hash(str(project / "k.cu"), SOURCE)
    assert m["options"] == []
    assert m["nvrtc_version"] == nanocuda.nvrtc_version()
    assert m["targets"] == TARGETS
    assert [(k["name"], [tuple(p) for p in k["params"]]) for k in m["kernels"]] == LAYOUTS
    # The C++ reader agrees, and needs no driver.
    code, manifest = internal.open_prebuilt(fatbin)
    assert code.code_type == "fatbin"
    assert [(n, list(p)) for n, p in manifest["kernels"]] == LAYOUTS


def test_cubin_layouts_match_for_every_arch(built):
    _, fatbin = built
    with open(fatbin, "rb") as f:
        for target, image in internal.fatbin_entries(f.read()):
            if target.startswith("sm_"):
                assert [(n, list(p)) for n, p in internal.cubin_kernels(image)] == LAYOUTS, target


def test_hash_covers_local_headers(project):
    before = _aot.source_hash(str(project / "k.cu"), SOURCE)
    (project / "common.h").write_text("#define SCALE 3\n")
    assert _aot.source_hash(str(project / "k.cu"), SOURCE) != before


def test_same_entries_as_fatbinary(built, tmp_path):
    """The toolkit's fatbinary, given the same images, makes a fatbin our reader sees alike."""
    tool = shutil.which("fatbinary") or "/usr/local/cuda/bin/fatbinary"
    # (a wrapper may outlive a hidden toolkit: it must run, not just exist)
    if not os.path.isfile(tool) or subprocess.run([tool, "--version"], capture_output=True).returncode != 0:
        pytest.skip("needs the toolkit's fatbinary")
    _, fatbin = built
    with open(fatbin, "rb") as f:
        ours = internal.fatbin_entries(f.read())
    args = []
    for i, (target, image) in enumerate(ours):
        path = tmp_path / f"img{i}"
        path.write_bytes(image)
        kind, sm = ("ptx", target[8:]) if target.startswith("compute_") else ("elf", target[3:])
        args.append(f"--image3=kind={kind},sm={sm},file={path}")
    subprocess.run([tool, "--64", "--compress=false", f"--create={tmp_path / 'ref.fatbin'}", *args], check=True)
    theirs = internal.fatbin_entries((tmp_path / "ref.fatbin").read_bytes())
    assert [t for t, _ in theirs] == [t for t, _ in ours]
    for (target, a), (_, b) in zip(ours, theirs):
        if target.startswith("sm_"):
            assert a == b, target  # fatbinary rewrites PTX (drops comments); ELF images are kept


def test_cuobjdump_lists_our_entries(built):
    tool = shutil.which("cuobjdump")
    if tool is None:
        pytest.skip("needs cuobjdump (pip install nvidia-cuda-cuobjdump)")
    _, fatbin = built
    out = subprocess.run([tool, "--list-elf", "--list-ptx", fatbin], capture_output=True, text=True, check=True).stdout
    assert [line.rsplit(".", 2)[-2] for line in out.splitlines() if line.strip()] == ["sm_80", "sm_90a", "sm_100a", "sm_90"]


def test_bad_targets_and_files():
    with pytest.raises(ValueError, match="sm_XY"):
        _aot.build([], ["90a"])
    with pytest.raises(ValueError, match="no targets"):
        _aot.build([], [])
    with pytest.raises(ValueError, match="not a fatbin"):
        internal.fatbin_entries(b"nope" * 8)
    with pytest.raises(ValueError, match="64-bit ELF"):
        internal.cubin_kernels(b"nope" * 32)


def test_cli_build(project, capsys):
    assert main(["build", str(project / "k.cu"), "--arch", "sm_90a,compute_90", "-o", str(project / "out"),
                 "-D", "N=4", "--std", "c++17"]) == 0
    assert "2 kernels" in capsys.readouterr().out
    with open(project / "out" / "k.fatbin.json") as f:
        m = json.load(f)
    # load(defines=..., std=...) must repeat these for the fatbin to be used.
    assert m["options"] == _aot.manifest_options({"defines": {"N": 4}, "std": "c++17"})
    assert main(["build", str(project / "k.cu"), "--arch", "sm_9x", "-o", str(project / "out")]) == 2
    assert "sm_9x" in capsys.readouterr().err


def test_load_uses_the_prebuilt_fatbin(built, monkeypatch):
    project, _ = built
    monkeypatch.setattr(_aot, "_device_arch", lambda: 90)
    mod = nanocuda.load(project / "k.cu", prebuilt=project / "prebuilt")
    assert mod.manifest is not None and mod.code.code_type == "fatbin"
    assert mod.kernel_names == ["axpy", "mixed"]
    with pytest.raises(AttributeError, match="no kernel 'nope'"):
        mod.nope  # noqa: B018
    monkeypatch.setenv("NANOCUDA_PREBUILT", "0")
    assert _aot.find_prebuilt(str(project / "k.cu"), SOURCE, [], {}, project / "prebuilt") is None


def test_stale_or_unfit_fatbins_are_compiled_over_when_nvrtc_is_present(built, monkeypatch):
    project, _ = built
    path = str(project / "k.cu")
    monkeypatch.setattr(_aot, "_device_arch", lambda: 90)
    assert _aot.find_prebuilt(path, SOURCE, [], {}, project / "prebuilt") is not None
    assert _aot.find_prebuilt(path, SOURCE + "\n", [], {}, project / "prebuilt") is None
    assert _aot.find_prebuilt(path, SOURCE, [], {"defines": {"N": 1}}, project / "prebuilt") is None
    assert _aot.find_prebuilt(path, SOURCE, [], {"arch": "90a"}, project / "prebuilt") is None
    monkeypatch.setattr(_aot, "_device_arch", lambda: 75)  # no sm_7x cubin, PTX is compute_90
    assert _aot.find_prebuilt(path, SOURCE, [], {}, project / "prebuilt") is None


def test_wrong_architecture_without_nvrtc(built, monkeypatch):
    project, _ = built
    monkeypatch.setattr(_aot, "_nvrtc_available", lambda: False)
    monkeypatch.setattr(_aot, "_device_arch", lambda: 75)
    with pytest.raises(_aot.PrebuiltError, match=r"holds sm_80, sm_90a, sm_100a, compute_90, none of which "
                                                  r"runs on device 0 \(sm_75\)"):
        nanocuda.load(project / "k.cu", prebuilt=project / "prebuilt")
    monkeypatch.setattr(_aot, "_device_arch", lambda: 86)  # the sm_80 cubin runs on 8.6
    assert nanocuda.load(project / "k.cu", prebuilt=project / "prebuilt").manifest is not None


def _run_without_nvrtc(code: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, NANOCUDA_NVRTC="none", NANOCUDA_CACHE="0")
    if os.environ.get("NANOCUDA_TEST_DRIVER_VERSION"):  # the version run's mock reports no real GPU:
        env.pop("NANOCUDA_LIBCUDA", None)             # run as the plain suite does (real driver or none)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


def test_no_nvrtc_loads_prebuilt_and_reports_stale(built):
    """In a process where NVRTC cannot be found at all ($NANOCUDA_NVRTC=none)."""
    project, _ = built
    load = "import nanocuda; m = nanocuda.load('k.cu', prebuilt='prebuilt'); print(m.kernel_names)"
    r = _run_without_nvrtc("import nanocuda\ntry:\n nanocuda.nvrtc_version()\nexcept nanocuda.ToolkitNotFoundError as e:"
                           "\n print('absent:', e)\n" + load, project)
    assert r.returncode == 0, r.stderr
    assert "not found: disabled by $NANOCUDA_NVRTC=none" in r.stdout
    assert "['axpy', 'mixed']" in r.stdout
    (project / "common.h").write_text("#define SCALE 3\n")  # a header edit makes it stale
    r = _run_without_nvrtc(load, project)
    assert r.returncode != 0
    assert "PrebuiltError" in r.stderr and "is stale (k.cu or a header it includes changed" in r.stderr
    assert "NVRTC is not available" in r.stderr


def test_wrong_architecture_read_from_a_driver(built, mock_libcuda):
    """Device 0's architecture comes from the driver (tools/mock_libcuda.c reports 0.0, which
    no image fits), with NVRTC absent: the error names it and the fatbin's targets."""
    project, _ = built
    env = dict(os.environ, NANOCUDA_NVRTC="none", NANOCUDA_CACHE="0", NANOCUDA_LIBCUDA=mock_libcuda,
               NANOCUDA_MOCK_DRIVER_VERSION="13.0")  # NVRTC 13's cubins: a 13.0 driver
    r = subprocess.run([sys.executable, "-c", "import nanocuda; nanocuda.load('k.cu', prebuilt='prebuilt')"],
                       cwd=project, env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "PrebuiltError" in r.stderr and "none of which runs on device 0 (sm_0)" in r.stderr, r.stderr
    assert "holds sm_80, sm_90a, sm_100a, compute_90" in r.stderr
