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


# Rows the README quotes, and the JSON keys each subcommand writes: a restructure must keep both.
README_ROWS = {
    "launch": ["C++ cuLaunchKernel loop (4 args)", "nanocuda Launcher: 3 pointers (int) + int",
               "nanocuda Launcher: 16 mixed arguments", "nanocuda launch(): 3 pointers (int) + int",
               "nanocuda Graph.launch(), 1-kernel graph"],
    "tma": ["C++ cuTensorMapEncodeTiled loop, 3 descriptors", "nanocuda TensorMap.tiled_from_pointer x3",
            "nanocuda TensorMap.tiled(torch) x3", "nanocuda 3x TensorMap.tiled(torch) + Launcher"],
    "graphs": ["while_loop N=1000: nanocuda GraphBuilder", "update args of 100 kernel nodes: Python",
               "replay 1-node graph: Python"],
    "cuda_core": ["nanocuda launch(s, config, ker, 3 ints, np.uint64)"],
}
KEYS = {"launch": ["rows", "skipped", "burst", "rounds"], "tma": ["rows", "skipped", "burst", "rounds"],
        "graphs": ["rows", "rounds", "loop_rounds"], "cuda_core": ["rows", "skipped", "burst", "rounds"]}


def test_several_subcommands_in_one_call_keep_their_rows_and_json(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "nanocuda", "bench", *README_ROWS, "--quick", "--no-torch-bridge",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(out.read_text())
    assert list(data) == ["environment", *README_ROWS]
    for name, rows in README_ROWS.items():
        if data[name]["rows"] == [] and "tma" == name:  # no torch: said why
            assert data[name]["skipped"], data[name]
            continue
        assert list(data[name]) == KEYS[name], name
        names = [row["name"] for row in data[name]["rows"]]
        assert set(rows) <= set(names), (name, names)
        assert all(len(row["samples_us"]) > 0 for row in data[name]["rows"])
