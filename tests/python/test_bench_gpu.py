"""Each bench subcommand of the examples issue runs end to end with --quick (GPU)."""

import json
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", ["gemm", "saxpy", "kernels"])
def test_bench_subcommand_quick_runs_and_writes_json(name, tmp_path):
    out = tmp_path / f"{name}.json"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "nanocuda", "bench", name, "--quick", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    elapsed = time.monotonic() - t0
    print(r.stdout)  # the table, for whoever reads the log (pytest -s)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(out.read_text())
    result = data[name]
    if not result["rows"]:  # e.g. no torch, or not an sm_90 device: said why, not failed
        assert result["skipped"], result
        return
    for row in result["rows"]:
        assert row["samples_us"] and all(s > 0 for s in row["samples_us"]), row
    assert not [s for s in result["skipped"] if "wrong result" in s], result["skipped"]
    # --quick is a smoke test: first-run compiles (NVRTC, nvcc) included, it stays short.
    assert elapsed < 60, f"bench {name} --quick took {elapsed:.0f} s"


@pytest.mark.needs_torch
def test_bench_gemm_has_the_seed_paths(tmp_path):
    major_minor = __import__("nanocuda").Device(0).compute_capability
    if major_minor != (9, 0):
        pytest.skip(f"bench gemm needs sm_90; device 0 is {major_minor}")
    from nanocuda.bench import gemm

    result = gemm.run(rounds=2, burst=1)
    names = {r["name"] for r in result["rows"]}
    for path in ("nanocuda Launcher, prebuilt TensorMaps", "nanocuda launch(), 3 TensorMaps rebuilt per call",
                 gemm.BASELINE, "C++ shared library via ctypes (the seed's)", "torch.matmul (cuBLAS), a @ b.T"):
        assert f"{path} [GPU events]" in names and f"{path} [CPU submit]" in names, (path, result["skipped"])
