"""The `nanocuda` command and a machine without a GPU: --version, help, compile -o, one-line
errors with exit code 2, one "no GPU" line per run, help(nanocuda) and compiling with no driver.

Each check runs in its own process with NANOCUDA_LIBCUDA pointing nowhere, so it sees "no
driver" on GPU machines too.
"""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import nanocuda
from nanocuda import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
NO_DRIVER = {"NANOCUDA_LIBCUDA": "/nonexistent/libcuda.so.1"}
KERNEL = 'extern "C" __global__ void square(float* x) { x[threadIdx.x] *= x[threadIdx.x]; }\n'


def _nvrtc_missing() -> bool:
    try:
        nanocuda.nvrtc_version()
        return False
    except nanocuda.NanocudaError:
        return True


needs_nvrtc = pytest.mark.skipif(_nvrtc_missing(), reason="needs NVRTC")


def nanocuda_cmd(*argv, cwd="/", **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanocuda", *map(str, argv)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env=dict(os.environ, **NO_DRIVER, **env))


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd="/tmp", timeout=300, env=dict(os.environ, **NO_DRIVER))


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def subcommand_names() -> list[str]:
    parser = cli.build_parser()
    return list(parser._subparsers._group_actions[0].choices)


# --- the command line ---------------------------------------------------------------------

def test_version():
    r = nanocuda_cmd("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"nanocuda {nanocuda.__version__}"


def test_bare_nanocuda_prints_the_help_with_every_subcommand():
    r = nanocuda_cmd()
    assert r.returncode == 2 and "usage: nanocuda" in r.stdout and "Traceback" not in r.stderr
    for name in subcommand_names():
        assert re.search(rf"^\s+{name}\s", r.stdout, re.M), (name, r.stdout)
    assert "--version" in r.stdout


def test_every_subcommand_is_in_the_readme():
    names = subcommand_names()
    assert {"info", "compile", "bench"} <= set(names)
    readme = (ROOT / "README.md").read_text()
    for name in names:
        assert f"nanocuda {name}" in readme, name


def test_a_new_subcommand_is_one_decorated_function(monkeypatch):
    monkeypatch.setattr(cli, "_SUBCOMMANDS", list(cli._SUBCOMMANDS))

    @cli.subcommand
    def _add_hello(sub):
        sub.add_parser("hello", help="says hello").set_defaults(func=lambda args: 7)

    assert "hello" in subcommand_names()
    assert cli.main(["hello"]) == 7


@needs_nvrtc
def test_compile_writes_to_dash_o_and_says_where(tmp_path):
    src = tmp_path / "square.cu"
    src.write_text(KERNEL)
    out = tmp_path / "out" / "k.cubin"
    out.parent.mkdir()
    r = nanocuda_cmd("compile", src, "-o", out, "--arch", "sm_90a")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"
    assert f"wrote {out} (" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "square.cu"]  # nothing beside the source


@needs_nvrtc
def test_compile_without_dash_o_says_where_it_wrote(tmp_path):
    src = tmp_path / "square.cu"
    src.write_text(KERNEL)
    r = nanocuda_cmd("compile", src, "--arch", "sm_90a", "--ptx")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "square.ptx").is_file()
    assert f"wrote {tmp_path / 'square.ptx'} (" in r.stdout


def test_compile_of_a_missing_file_is_one_line_and_exit_2(tmp_path):
    r = nanocuda_cmd("compile", tmp_path / "nope.cu", "--arch", "sm_90a")
    assert r.returncode == 2
    assert one_line(r.stderr) == f"nanocuda compile: {tmp_path / 'nope.cu'}: no such file"


@needs_nvrtc
def test_compile_with_a_bad_arch_is_one_line_and_exit_2(tmp_path):
    src = tmp_path / "square.cu"
    src.write_text(KERNEL)
    r = nanocuda_cmd("compile", src, "--arch", "hopper")
    assert r.returncode == 2
    assert "invalid arch 'hopper'" in one_line(r.stderr)
    assert not (tmp_path / "square.cubin").exists()


@needs_nvrtc
def test_a_compile_error_prints_the_log_then_one_line_and_exit_2(tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text('extern "C" __global__ void k() { undeclared_name = 1; }\n')
    r = nanocuda_cmd("compile", src, "--arch", "sm_90a")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert any("undeclared_name" in line for line in lines[:-1]), r.stderr  # the log
    assert lines[-1].startswith(f"nanocuda compile: {src}: ") and "error" in lines[-1]


@needs_nvrtc
def test_compile_without_a_gpu_or_arch_names_the_option(tmp_path):
    src = tmp_path / "square.cu"
    src.write_text(KERNEL)
    r = nanocuda_cmd("compile", src)
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert line.startswith("nanocuda compile: no GPU") and "--arch" in line and "arch=" not in line


def test_bench_without_a_gpu_says_so_once():
    r = nanocuda_cmd("bench", "--quick", "--no-torch-bridge")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert one_line(r.stderr) == f"nanocuda bench: {cli.NO_GPU}; the benchmarks need one"
    header = r.stdout.splitlines()[0]
    assert header.startswith("device none (no NVIDIA driver)") and "libcuda" not in header


def test_info_without_a_driver_exits_1_without_a_traceback():
    r = nanocuda_cmd("info")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "driver   not available: " in r.stdout
    assert nanocuda_cmd("info", "--allow-missing-driver").returncode == 0


def test_bench_help_and_readme_agree_on_the_torch_bridge_build_time():
    r = nanocuda_cmd("bench", "--help", COLUMNS="200")
    said = re.search(r"takes (~[\d-]+ s)", r.stdout).group(1)
    readme = (ROOT / "README.md").read_text()
    assert f"once per torch version ({said}," in readme


# --- Python without a driver ----------------------------------------------------------------

def test_help_dir_getmembers_and_pydoc_need_no_driver():
    r = python("""
        import inspect, pydoc, nanocuda
        text = pydoc.render_doc(nanocuda)
        names = dict(inspect.getmembers(nanocuda))
        assert "Device" in names and "LEGACY_DEFAULT_STREAM" not in names
        assert "LEGACY_DEFAULT_STREAM" in dir(nanocuda) and not hasattr(nanocuda, "PER_THREAD_DEFAULT_STREAM")
        try:
            nanocuda.LEGACY_DEFAULT_STREAM
        except nanocuda.DriverNotFoundError as e:
            print("raised:", str(e)[:60])
        for module in (nanocuda.graph, nanocuda.utils, nanocuda.system):
            pydoc.render_doc(module)
            inspect.getmembers(module)
        print("help ok", len(text))
        """)
    assert r.returncode == 0, r.stderr
    assert "help ok" in r.stdout
    assert "raised: nanocuda.LEGACY_DEFAULT_STREAM needs an NVIDIA driver" in r.stdout


def test_pydoc_command_needs_no_driver():
    r = subprocess.run([sys.executable, "-m", "pydoc", "nanocuda"], capture_output=True, text=True,
                       cwd="/tmp", timeout=300, env=dict(os.environ, **NO_DRIVER, PAGER="cat"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "DriverNotFoundError" in r.stdout and "Device" in r.stdout


@needs_nvrtc
def test_compiling_without_a_gpu_names_arch_for_each_entry_point(tmp_path):
    (tmp_path / "square.cu").write_text(KERNEL)
    r = python(f"""
        import nanocuda
        calls = [lambda: nanocuda.compile({KERNEL!r}),
                 lambda: nanocuda.Program({KERNEL!r}).compile("cubin"),
                 lambda: nanocuda.load({str(tmp_path / "square.cu")!r})]
        for call in calls:
            try:
                call()
                print("compiled?!")
            except nanocuda.DriverNotFoundError as e:
                print("E:" + str(e))
        """)
    assert r.returncode == 0, r.stderr
    errors = [line[2:] for line in r.stdout.splitlines() if line.startswith("E:")]
    assert len(errors) == 3, r.stdout
    for e in errors:
        assert "no GPU to take the target architecture from" in e
        assert 'arch="sm_90a"' in e and "ProgramOptions(arch=...)" in e and "--arch" in e
        assert "libcuda" not in e and len(e) < 300  # the option, not the loader's story


@needs_nvrtc
def test_kernel_names_need_no_driver():
    r = python(f"""
        import nanocuda
        src = {KERNEL!r} + 'extern "C" __global__ void other() {{}}\\n'
        code = nanocuda.compile(src, arch="sm_90a")
        print(code.kernel_names)
        print(nanocuda.ObjectCode.from_cubin(code.code).kernel_names)
        print(nanocuda.workflow.cubin_kernel_names(code.code))
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["['other', 'square']"] * 3


def test_gpu_skip_reason_is_short():
    r = subprocess.run([sys.executable, "-c", "import conftest; print(conftest.gpu_unavailable_reason())"],
                       capture_output=True, text=True, cwd=str(ROOT / "tests" / "python"), timeout=300,
                       env={**{k: v for k, v in os.environ.items() if k != "NANOCUDA_TEST_DRIVER_VERSION"},
                            **NO_DRIVER})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "no NVIDIA driver"


# --- the repository -----------------------------------------------------------------------

def test_license_and_project_metadata():
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    pyproject = (ROOT / "pyproject.toml").read_text()
    for field in ("authors", "classifiers", "keywords"):
        assert re.search(rf"^{field} = ", pyproject, re.M), field
    assert not list(ROOT.glob("*.whl"))


def test_the_installed_wheel_carries_the_license():
    import importlib.metadata

    dist = importlib.metadata.distribution("nanocuda")
    files = [str(f) for f in dist.files or ()]
    licenses = [f for f in files if f.endswith(".dist-info/licenses/LICENSE") or f.endswith(".dist-info/LICENSE")]
    assert licenses, files[:20]
    assert "Apache License" in dist.locate_file(licenses[0]).read_text()[:200]
    assert dist.metadata["Author"] == "nanocuda developers"
