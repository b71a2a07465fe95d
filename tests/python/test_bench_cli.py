"""`nanocuda bench` without a GPU: the subcommand registry, argument handling, JSON and plot output."""

import importlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from nanocuda import cli
from nanocuda.bench import native, registry, report, stats
from nanocuda.bench.runner import Workload

# The subcommands the README names, in the order `nanocuda bench` runs them.
EXPECTED = ["launch", "tma", "gemm", "saxpy", "graphs", "memory", "cuda_core", "kernels", "gemm_shapes", "torch", "jax"]


def recorded_rows():
    """Rows as a run produces them, from fixed samples (µs per operation)."""
    base = Workload("C++ loop", lambda: 0, samples=[2.0, 2.1, 1.9, 2.0])
    ours = Workload("nanocuda path", lambda: 0, baseline="C++ loop", target=1.1, samples=[2.1, 2.0, 2.2, 2.05])
    return stats.summarize([base, ours])


def test_every_subcommand_is_registered_once_in_order():
    table = registry.subcommands()
    assert list(table) == EXPECTED
    owners = [type(s).__module__ for s in table.values()]
    assert len(set(owners)) == len(owners)  # one module, one subcommand
    for module in registry.MODULES:
        mod = importlib.import_module(f"nanocuda.bench.{module}")
        assert mod.__doc__.splitlines()[0]
        assert isinstance(mod.run, registry.Subcommand) and table[mod.run.name] is mod.run
    for name, s in table.items():
        assert s.name == name and s.help and "\n" not in s.help
        assert all(isinstance(t, float) and t >= 1.0 for t in s.targets.values()), name


def test_a_second_subcommand_with_a_taken_name_is_refused():
    class Impostor(registry.Subcommand):
        name, help = "launch", "not the real one"

    with pytest.raises(ValueError, match="'launch' is already registered by nanocuda.bench.launch"):
        registry.register(Impostor())
    assert type(registry.subcommands()["launch"]).__name__ == "Launch"


def test_a_subcommand_without_help_is_refused():
    class Mute(registry.Subcommand):
        name, help = "mute", ""

    with pytest.raises(TypeError, match="Mute has no help"):
        registry.register(Mute())


def test_select_keeps_the_order_given_and_drops_repeats():
    assert [s.name for s in registry.select(["tma", "launch", "tma"])] == ["tma", "launch"]
    assert [s.name for s in registry.select([])] == EXPECTED
    assert [s.name for s in registry.select(["launch", "all"])] == EXPECTED
    with pytest.raises(registry.UnknownSubcommand, match=r"unknown subcommand 'bogus', 'x'; valid: all, launch, tma"):
        registry.select(["launch", "bogus", "x"])


def test_parser_accepts_each_subcommand_and_the_options():
    parser = cli.build_parser()
    for name in EXPECTED:
        args = parser.parse_args(["bench", name, "--quick", "--json", "out.json", "--plot", "p.png"])
        assert (args.which, args.quick, args.json, args.plot) == ([name], True, "out.json", "p.png")
    assert parser.parse_args(["bench", "launch", "tma"]).which == ["launch", "tma"]
    args = parser.parse_args(["bench"])
    assert (args.which, args.quick, args.rounds, args.burst) == ([], False, 0, 0)
    args = parser.parse_args(["bench", "gemm", "--rounds", "7", "--burst", "9"])
    assert (args.rounds, args.burst) == (7, 9)


@pytest.mark.parametrize("argv", [["bench", "nonsense"], ["bench", "launch", "nonsense"],
                                  ["bench", "--rounds", "x"], ["bench", "--bogus"]])
def test_parser_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: nanocuda" in err and "error:" in err


def test_unknown_subcommand_from_the_shell_lists_the_valid_ones():
    r = subprocess.run([sys.executable, "-m", "nanocuda", "bench", "launch", "bogus"],
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 2 and r.stdout == ""
    assert "error: argument WHICH: unknown subcommand 'bogus'; valid: all, " + ", ".join(EXPECTED) in r.stderr
    assert "Traceback" not in r.stderr


def test_help_lists_every_subcommand_with_its_help():
    r = subprocess.run([sys.executable, "-m", "nanocuda", "bench", "--help"], capture_output=True, text=True,
                       cwd="/", env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    listing = r.stdout.split("subcommands (run in this order; default: all):\n")[1]
    names = [line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line[2] != " "]
    assert names == EXPECTED
    for s in registry.subcommands().values():
        assert " ".join(s.help.split()[:4]) in " ".join(listing.split()), s.name
    for option in ("--quick", "--rounds", "--burst", "--json", "--plot", "--no-torch-bridge", "--sweep"):
        assert option in r.stdout


def test_building_the_cli_imports_no_torch_numpy_or_peer():
    code = ("import sys, nanocuda; assert 'nanocuda.bench' not in sys.modules; "
            "import nanocuda.cli as c; c.build_parser(); "
            "print([m for m in ('torch', 'numpy', 'cupy', 'cuda.core', 'triton', 'jax') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_without_a_driver_bench_says_it_needs_a_gpu():
    r = subprocess.run([sys.executable, "-m", "nanocuda", "bench", "launch", "--quick"],
                       capture_output=True, text=True, cwd="/", timeout=120)
    if "device none" not in r.stdout:
        pytest.skip("a driver is present: the bench runs instead (see test_bench_gpu.py)")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == f"nanocuda bench: {cli.NO_GPU}; the benchmarks need one"


def test_summarize_ratios_and_target_on_recorded_samples():
    base, ours = recorded_rows()
    assert base["min_us"] == 1.9 and base["baseline"] is None and "ratio_min" not in base
    assert ours["ratio_min"] == pytest.approx(2.0 / 1.9)
    assert ours["ratio_median"] == pytest.approx(2.075 / 2.0)
    assert ours["ratio_round_median"] == pytest.approx((2.05 / 2.0 + 2.1 / 2.0) / 2)
    assert ours["ratio_round_p10"] == pytest.approx(2.0 / 2.1)
    assert ours["ratio_round_p90"] == pytest.approx(2.1 / 2.0)
    assert ours["meets_target"] is True
    assert ours["samples_us"] == [2.1, 2.0, 2.2, 2.05]


def test_print_table_names_the_baseline(capsys):
    report.print_table("title", recorded_rows(), baseline_label="torch")
    out = capsys.readouterr().out
    assert "× torch (min)" in out and "nanocuda path" in out and "≤1.10 ok" in out
    assert "per-round p10–p90" in out and "0.952–1.050" in out


class Fake(registry.Subcommand):
    """A subcommand on recorded data: records how it was called."""

    def __init__(self, name, calls):
        self.name, self.help, self.calls = name, f"recorded data {name}", calls

    def measure(self, run):
        self.calls.append((self.name, run.rounds, run.burst, run.option("use_bridge", None)))
        run.skip("peer X (not installed)")
        return run.result(recorded_rows(), rounds=run.rounds)


@pytest.fixture
def fakes(monkeypatch):
    calls = []
    for name in ("fake", "fake2"):
        monkeypatch.setitem(registry._registry, name, Fake(name, calls))
    return calls


def test_bench_writes_every_repetition_as_json(fakes, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "fake", "--quick", "--json", str(out)]) == 0
    assert fakes == [("fake", 5, 50, True)]  # --quick's rounds and burst
    data = json.loads(out.read_text())
    assert list(data) == ["environment", "fake"]
    assert data["environment"]["python"]
    assert list(data["fake"]) == ["rows", "skipped", "rounds"]
    assert data["fake"]["rows"][1]["samples_us"] == [2.1, 2.0, 2.2, 2.05]
    assert data["fake"]["skipped"] == ["peer X (not installed)"]
    printed = capsys.readouterr().out
    assert "device" in printed and "peers:" in printed  # the environment is always printed
    assert "  skipped: peer X (not installed)" in printed


def test_several_subcommands_in_one_call_run_in_the_order_given(fakes, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "fake2", "fake", "fake2", "--rounds", "3", "--burst", "11",
                     "--no-torch-bridge", "--json", str(out)]) == 0
    assert fakes == [("fake2", 3, 11, False), ("fake", 3, 11, False)]
    assert list(json.loads(out.read_text())) == ["environment", "fake2", "fake"]
    assert "targets missed" not in capsys.readouterr().out


def test_target_misses_are_listed_at_the_end(fakes, monkeypatch, capsys):
    monkeypatch.setattr(Fake, "measure", lambda self, run: {"rows": [{"name": "slow path", "meets_target": False}]})
    assert cli.main(["bench", "fake"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("targets missed: slow path")


def test_a_subcommand_whose_needs_are_missing_is_skipped_with_the_reason(capsys):
    class NeedsNothingReal(registry.Subcommand):
        name, help, needs = "needy", "needs a module that does not exist", ("no_such_module_xyz",)

    result = NeedsNothingReal()(3, 4)
    assert result == {"rows": [], "skipped": ["bench needy needs no_such_module_xyz (not installed)"]}
    assert "skipped: bench needy needs no_such_module_xyz" in capsys.readouterr().out


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
        symbols = subprocess.run([nm, "-D", "--defined-only", path], capture_output=True, text=True).stdout
        prefix = source.split("_")[0]
        for fn in ("setup", "call", "loop") if prefix == "gemm" else ("setup", "app", "teardown"):
            assert f"{prefix}_{fn}" in symbols


def test_native_build_command_matches_the_seed():
    cmd = native.build_command("gemm_native.cpp", "/tmp/x.so")
    assert cmd[:5] == ["nvcc", "-shared", "-O3", "-Xcompiler", "-fPIC"] and cmd[-1] == "-lcuda"


MOCK_RUN = r"""
import functools, json, sys
import nanocuda
# The mock device reports arch 0: compile for a real one (nothing runs on the mock anyway).
nanocuda.compile = functools.partial(nanocuda.compile, arch="sm_90")
from nanocuda.bench import registry
print("JSON" + json.dumps({s.name: s(3, 4) for s in registry.select(sys.argv[1:])}))
"""


def test_cuda_core_runs_end_to_end_on_the_mock_driver(mock_libcuda):
    """The whole path (workloads, C++ loop, interleaving, table, JSON) against tools/mock_libcuda.c,
    a driver whose calls succeed and do nothing: the shape of the output, not its figures."""

    import nanocuda

    try:
        nanocuda.nvrtc_version()
    except nanocuda.NanocudaError as e:
        pytest.skip(f"needs NVRTC to compile the bench kernel: {e}")
    try:
        real_gpu = nanocuda.Device.count() > 0 and not os.environ.get("NANOCUDA_TEST_DRIVER_VERSION")
    except nanocuda.NanocudaError:
        real_gpu = False
    if real_gpu:  # cuda.core's rows would use the real driver beside nanocuda's mock one
        pytest.skip("a GPU is present: test_bench_gpu.py runs cuda_core on it instead")
    # A 13.0 mock loads what any NVRTC compiles (test_driver_versions.py covers older drivers).
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_PARAMS="8,8,8,8",
               NANOCUDA_MOCK_DRIVER_VERSION="13.0")
    r = subprocess.run([sys.executable, "-c", MOCK_RUN, "cuda_core"], capture_output=True, text=True,
                       cwd="/", env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout.split("JSON", 1)[1])["cuda_core"]
    assert list(result) == ["rows", "skipped", "burst", "rounds"] and (result["burst"], result["rounds"]) == (4, 3)
    rows = {row["name"]: row for row in result["rows"]}
    base = "C++ cuLaunchKernel loop (3 pointers + size_t)"
    seed = rows["nanocuda launch(s, config, ker, 3 ints, np.uint64)"]
    assert rows[base]["baseline"] is None and len(rows[base]["samples_us"]) == 3
    assert seed["baseline"] == base and seed["target"] == 1.15 and "ratio_round_p90" in seed
    assert "cuda.core-shaped calls, bursts of 4, 3 interleaved rounds" in r.stdout
    for skipped in result["skipped"]:  # each absent peer is named in the printed output too
        assert f"  skipped: {skipped}" in r.stdout


def test_subcommands_that_need_torch_say_so_without_it(capsys):
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed: these subcommands run (see the GPU tests)")
    for s in registry.select(["tma", "gemm", "kernels", "torch"]):
        assert s.needs == ("torch",)
        assert s(3, 4) == {"rows": [], "skipped": [f"bench {s.name} needs torch (not installed)"]}
    assert capsys.readouterr().out.count("needs torch (not installed)") == 4
