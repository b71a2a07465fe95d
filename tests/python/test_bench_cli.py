"""`nanocuda bench` without a GPU: argument handling, JSON and plot output on recorded data."""

import json
import shutil
import sys
import types

import pytest

from nanocuda import cli
from nanocuda.bench import SUBCOMMANDS, harness, native

ISSUE_SUBCOMMANDS = {"launch", "gemm", "saxpy", "kernels"}


def recorded_rows():
    """Rows as a run produces them, from fixed samples (µs per operation)."""
    base = harness.Variant("C++ loop", lambda: 0, samples=[2.0, 2.1, 1.9, 2.0])
    ours = harness.Variant("nanocuda path", lambda: 0, baseline="C++ loop", target=1.1,
                           samples=[2.1, 2.0, 2.2, 2.05])
    return harness.summarize([base, ours])


def test_every_issue_subcommand_is_registered_with_a_description():
    assert ISSUE_SUBCOMMANDS <= set(SUBCOMMANDS)
    for name, (module, description) in SUBCOMMANDS.items():
        assert module.startswith("nanocuda.bench.") and description


@pytest.mark.parametrize("name", sorted(ISSUE_SUBCOMMANDS))
def test_subcommand_modules_import_without_a_gpu_and_have_run(name):
    import importlib

    module = importlib.import_module(SUBCOMMANDS[name][0])
    assert callable(module.run)
    assert module.__doc__.splitlines()[0]


def test_parser_accepts_each_subcommand_and_the_options():
    parser = cli.build_parser()
    for name in SUBCOMMANDS:
        args = parser.parse_args(["bench", name, "--quick", "--json", "out.json", "--plot", "p.png"])
        assert (args.which, args.quick, args.json, args.plot) == ([name], True, "out.json", "p.png")
    assert parser.parse_args(["bench", "launch", "tma"]).which == ["launch", "tma"]
    args = parser.parse_args(["bench"])
    assert (args.which, args.quick, args.rounds, args.burst) == ("all", False, 0, 0)
    args = parser.parse_args(["bench", "gemm", "--rounds", "7", "--burst", "9"])
    assert (args.rounds, args.burst) == (7, 9)


@pytest.mark.parametrize("argv", [["bench", "nonsense"], ["bench", "launch", "nonsense"], ["bench", "--rounds", "x"], ["bench", "--bogus"]])
def test_parser_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: nanocuda" in err and "error:" in err


def test_summarize_ratios_and_target_on_recorded_samples():
    base, ours = recorded_rows()
    assert base["min_us"] == 1.9 and base["baseline"] is None
    assert ours["ratio_min"] == pytest.approx(2.0 / 1.9)
    assert ours["ratio_median"] == pytest.approx(2.075 / 2.0)
    assert ours["meets_target"] is True
    assert ours["samples_us"] == [2.1, 2.0, 2.2, 2.05]


def test_print_table_names_the_baseline(capsys):
    harness.print_table("title", recorded_rows(), baseline_label="torch")
    out = capsys.readouterr().out
    assert "× torch (min)" in out and "nanocuda path" in out and "≤1.10 ok" in out


def fake_subcommand(monkeypatch, seen):
    module = types.ModuleType("nanocuda.bench._fake")

    def run(rounds, burst):
        seen.append((rounds, burst))
        return {"rows": recorded_rows(), "skipped": ["peer X (not installed)"]}

    module.run = run
    monkeypatch.setitem(sys.modules, "nanocuda.bench._fake", module)
    monkeypatch.setitem(SUBCOMMANDS, "fake", ("nanocuda.bench._fake", "recorded data"))


def test_bench_writes_every_repetition_as_json(monkeypatch, tmp_path, capsys):
    seen = []
    fake_subcommand(monkeypatch, seen)
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "fake", "--quick", "--json", str(out)]) == 0
    assert seen == [(5, 50)]  # --quick's rounds and burst
    data = json.loads(out.read_text())
    assert set(data) == {"environment", "fake"}
    assert data["environment"]["python"]
    assert data["fake"]["rows"][1]["samples_us"] == [2.1, 2.0, 2.2, 2.05]
    assert data["fake"]["skipped"] == ["peer X (not installed)"]
    printed = capsys.readouterr().out
    assert "device" in printed and "peers:" in printed  # the environment is always printed


def test_bench_rounds_and_burst_override_quick(monkeypatch):
    seen = []
    fake_subcommand(monkeypatch, seen)
    assert cli.main(["bench", "fake", "--quick", "--rounds", "3", "--burst", "11"]) == 0
    assert seen == [(3, 11)]


def test_plot_of_recorded_data(tmp_path):
    pytest.importorskip("matplotlib", reason="needs matplotlib for --plot")
    from nanocuda.bench import plot

    out = tmp_path / "ratios.png"
    plot.ratios({"environment": {}, "fake": {"rows": recorded_rows()}}, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_ratios_says_so(tmp_path):
    pytest.importorskip("matplotlib", reason="needs matplotlib for --plot")
    from nanocuda.bench import plot

    with pytest.raises(SystemExit, match="no ratios"):
        plot.ratios({"x": {"rows": []}}, str(tmp_path / "p.png"))


@pytest.mark.skipif(native.nvcc_path() is None, reason="nvcc not found")
@pytest.mark.parametrize("source", ["gemm_native.cpp", "saxpy_native.cpp"])
def test_bench_cpp_sides_build_with_nvcc(source, tmp_path):
    path = native.build(source, str(tmp_path))
    assert open(path, "rb").read(4) == b"\x7fELF"
    nm = shutil.which("nm")
    if nm:
        import subprocess

        symbols = subprocess.run([nm, "-D", "--defined-only", path], capture_output=True, text=True).stdout
        prefix = source.split("_")[0]
        for fn in ("setup", "call", "loop") if prefix == "gemm" else ("setup", "app", "teardown"):
            assert f"{prefix}_{fn}" in symbols


def test_native_build_command_matches_the_seed():
    cmd = native.build_command("gemm_native.cpp", "/tmp/x.so")
    assert cmd[:5] == ["nvcc", "-shared", "-O3", "-Xcompiler", "-fPIC"] and cmd[-1] == "-lcuda"
