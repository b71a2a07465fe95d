"""Builds a bench's C++ side (a .cpp next to this file) into a shared library with nvcc."""

from __future__ import annotations

import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def nvcc_path() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc") or (candidate if os.path.isfile(candidate) else None)


def build_command(source: str, out: str, nvcc: str = "nvcc") -> list[str]:
    """The seed's command for its wrapper library, for host code that calls the driver API."""
    return [nvcc, "-shared", "-O3", "-Xcompiler", "-fPIC", "-std=c++17", "-o", out,
            os.path.join(HERE, source), "-lcuda"]


def build(source: str, out_dir: str) -> str:
    """Compiles `source` (e.g. "gemm_native.cpp") into out_dir; returns the library's path."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (put it on PATH or set CUDA_HOME)")
    out = os.path.join(out_dir, "lib" + os.path.splitext(source)[0] + ".so")
    cmd = build_command(source, out, nvcc)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return out
