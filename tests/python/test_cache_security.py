"""Code is loaded only from a cache folder and files the user owns and nobody else can write:
cubins (through a compile) and the torch bridge's library (its check, without torch). Each
check runs in a fresh process so the per-process "warn once" state starts empty."""

import os
import stat
import subprocess
import sys
import textwrap

import pytest

import nanocuda

SRC = 'extern "C" __global__ void k(float* x) { x[0] = 2.0f; }'
ROOT = os.geteuid() == 0


def _py(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.pop("NANOCUDA_CACHE_MAX_BYTES", None)
    full.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env=full, cwd="/tmp")


def _nvrtc() -> bool:
    try:
        nanocuda.nvrtc_version()
        return True
    except Exception:
        return False


needs_nvrtc = pytest.mark.skipif(not _nvrtc(), reason="needs NVRTC (CUDA toolkit or nvidia-cuda-nvrtc)")

# Compiles twice (the second a would-be cache hit) and reports warnings and the entries seen.
COMPILE_TWICE = f"""
import os, warnings, json, nanocuda
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    a = nanocuda.compile({SRC!r}, arch="sm_90a")
    nanocuda.clear_memory_cache()
    b = nanocuda.compile({SRC!r}, arch="sm_90a")
assert a.code == b.code
d = nanocuda.compile_cache_dir()
print(json.dumps({{"warnings": [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)],
                  "entries": sorted(f for f in os.listdir(d) if f.endswith(".ncc")),
                  "info": nanocuda.compile_cache_info()["last_error"]}}))
"""


def _compile_twice(cache: str) -> dict:
    import json

    r = _py(COMPILE_TWICE, NANOCUDA_CACHE_DIR=cache)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@needs_nvrtc
def test_cache_folder_is_created_private(tmp_path):
    cache = tmp_path / "home" / "nanocuda"
    got = _compile_twice(str(cache))
    assert got["warnings"] == []
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert len(got["entries"]) == 1
    assert stat.S_IMODE((cache / got["entries"][0]).stat().st_mode) == 0o600


@needs_nvrtc
def test_loose_folder_is_not_used_and_warned_once(tmp_path):
    cache = tmp_path / "loose"
    cache.mkdir()
    cache.chmod(0o777)
    got = _compile_twice(str(cache))
    assert len(got["warnings"]) == 1, got  # once, though both compiles met it
    assert "writable by group or others (mode 0777)" in got["warnings"][0]
    assert "compiling without it" in got["warnings"][0]
    assert got["entries"] == []  # nothing written into it
    assert "mode 0777" in got["info"]


@needs_nvrtc
def test_loose_entry_is_not_loaded(tmp_path):
    cache = tmp_path / "c"
    first = _compile_twice(str(cache))
    entry = cache / first["entries"][0]
    entry.chmod(0o666)
    got = _compile_twice(str(cache))
    assert len(got["warnings"]) == 1 and "mode 0666" in got["warnings"][0], got


@needs_nvrtc
@pytest.mark.skipif(not ROOT, reason="giving a folder to another uid needs root")
def test_folder_owned_by_another_user_is_not_used(tmp_path):
    cache = tmp_path / "theirs"
    first = _compile_twice(str(cache))  # a valid entry, then the folder changes hands
    os.chown(cache, 65534, 65534)
    got = _compile_twice(str(cache))
    assert len(got["warnings"]) == 1 and "owned by uid 65534" in got["warnings"][0], got
    assert got["entries"] == first["entries"]  # untouched: neither read nor written


@needs_nvrtc
@pytest.mark.skipif(not ROOT, reason="giving a file to another uid needs root")
def test_entry_owned_by_another_user_is_not_loaded(tmp_path):
    cache = tmp_path / "c"
    first = _compile_twice(str(cache))
    os.chown(cache / first["entries"][0], 65534, 65534)
    got = _compile_twice(str(cache))
    assert len(got["warnings"]) == 1 and "owned by uid 65534" in got["warnings"][0], got


def test_no_tmp_fallback_without_home():
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "NANOCUDA_CACHE_DIR")}
    r = subprocess.run([sys.executable, "-c", "import nanocuda; print(repr(nanocuda.compile_cache_dir()))"],
                       capture_output=True, text=True, env=env, cwd="/tmp", timeout=120)
    assert r.returncode == 0, r.stderr
    got = eval(r.stdout.strip())
    assert not got.startswith("/tmp"), got
    import pwd

    home = pwd.getpwuid(os.geteuid()).pw_dir
    assert got == (os.path.join(home, ".cache", "nanocuda") if home not in ("", "/") else "")


# --- the torch bridge's library: the same rule, checked before anything is loaded ---
def _bridge(monkeypatch, cache):
    from nanocuda import torch_bridge

    monkeypatch.setattr(torch_bridge, "_module_name", lambda: "nanocuda_torch_bridge_test")
    monkeypatch.setenv("NANOCUDA_CACHE_DIR", str(cache))
    directory = torch_bridge.build_directory()
    os.makedirs(directory, mode=0o700)
    os.chmod(cache, 0o700)
    library = os.path.join(directory, "nanocuda_torch_bridge_test.so")
    with open(library, "wb") as f:
        f.write(b"\x7fELF not really")
    os.chmod(library, 0o755)
    return torch_bridge, directory, library


def test_bridge_library_trusted_when_private(tmp_path, monkeypatch):
    torch_bridge, directory, _ = _bridge(monkeypatch, tmp_path / "cache")
    assert torch_bridge._trust_problem(directory) == ""


@pytest.mark.parametrize("which", ["root", "bridge", "build", "library"])
def test_bridge_library_refused_when_loose(tmp_path, monkeypatch, which):
    torch_bridge, directory, library = _bridge(monkeypatch, tmp_path / "cache")
    path = {"root": str(tmp_path / "cache"), "bridge": os.path.dirname(directory), "build": directory,
            "library": library}[which]
    os.chmod(path, 0o666 if which == "library" else 0o777)
    problem = torch_bridge._trust_problem(directory)
    assert path in problem and "writable by group or others" in problem


@pytest.mark.skipif(not ROOT, reason="giving files to another uid needs root")
@pytest.mark.parametrize("which", ["build", "library"])
def test_bridge_library_refused_when_owned_by_another_user(tmp_path, monkeypatch, which):
    torch_bridge, directory, library = _bridge(monkeypatch, tmp_path / "cache")
    os.chown(directory if which == "build" else library, 65534, 65534)
    assert "owned by uid 65534" in torch_bridge._trust_problem(directory)


def test_bridge_library_refused_when_a_link(tmp_path, monkeypatch):
    torch_bridge, directory, library = _bridge(monkeypatch, tmp_path / "cache")
    os.rename(library, str(tmp_path / "elsewhere.so"))
    os.symlink(str(tmp_path / "elsewhere.so"), library)
    assert "symbolic link" in torch_bridge._trust_problem(directory)


def test_bridge_autoload_never_loads_an_untrusted_library(tmp_path, monkeypatch):
    """_autoload with a loose folder warns and returns before loading (a fake torch type)."""
    torch_bridge, directory, _ = _bridge(monkeypatch, tmp_path / "cache")
    os.chmod(directory, 0o777)
    fake_torch = type(sys)("torch")
    FakeTensor = type("Tensor", (), {"__module__": "torch"})
    fake_torch.Tensor = FakeTensor
    fake_torch.nn = type(sys)("torch.nn")
    fake_torch.nn.Parameter = FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(torch_bridge, "_warned", set())
    monkeypatch.delenv("NANOCUDA_TORCH_BRIDGE", raising=False)
    monkeypatch.setattr(torch_bridge, "_disabled_by_user", False)
    monkeypatch.setattr(torch_bridge, "_module", None)
    monkeypatch.setattr(torch_bridge, "_abi_failed", False)  # restored after: the C ABI reader's
    monkeypatch.setattr(torch_bridge, "_abi_why", "")  # attempt on the fake torch fails
    with pytest.warns(RuntimeWarning, match=r"not loading the cached bridge library: .*writable by group"):
        torch_bridge._autoload(FakeTensor)  # loading the fake .so would raise ImportError
    assert torch_bridge._module is None
    assert "could not make the probe tensors" in torch_bridge._abi_why  # recorded, not raised


def test_bridge_without_cache_folder(monkeypatch):
    from nanocuda import torch_bridge

    assert torch_bridge._trust_problem("") == "there is no cache folder (no home folder)"
