"""`run_on_mock`: runs a snippet in a fresh interpreter whose only driver is tools/mock_libcuda.c."""

import os
import subprocess
import sys
import textwrap

# Defined in every snippet run_on_mock runs: raises(fn, kind, *texts) calls fn, asserts it raised
# `kind` with every one of `texts` in its message, and returns the exception.
RAISES = """def raises(fn, kind, *texts):
    try:
        fn()
    except kind as e:
        for t in texts:
            assert t in str(e), (t, str(e))
        return e
    raise AssertionError(f"{fn} did not raise {kind.__name__}")
"""


def run_on_mock(mock_libcuda: str, code: str, *, prelude: str = "", version: str | None = None,
                no_leaks: bool = False, **env: str) -> str:
    """Runs `RAISES + prelude + dedent(code)` in a child process (so the mock is the only driver it sees) and
    asserts it exited cleanly having printed "ok"; returns its stdout. `version` is the CUDA version
    the mock reports ("12.4", ...); `no_leaks` also asserts nanobind reported no leaked instances."""
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, **env)
    if version is not None:
        env["NANOCUDA_MOCK_DRIVER_VERSION"] = version
    out = subprocess.run([sys.executable, "-c", RAISES + prelude + textwrap.dedent(code)], capture_output=True,
                         text=True, env=env, timeout=120, cwd="/tmp")
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
    if no_leaks:
        assert "leaked" not in out.stderr, out.stderr
    return out.stdout


def run_spawn_scenario(mock_libcuda: str, tmp_path, children: tuple[str, str], setup: str, body: str,
                       **env: str) -> str:
    """Runs `setup + dedent(body)` as the __main__ of a script under multiprocessing's spawn, against
    the mock: `children` is (module name, source), written next to the script and star-imported, so
    spawned children can import their targets. Asserts it exited cleanly having printed "ok"."""
    name, source = children
    (tmp_path / f"{name}.py").write_text(source)
    code = ("import multiprocessing as mp, pickle, gc, sys\nimport nanocuda\n"
            f"from {name} import *\n"
            "if __name__ == '__main__':\n    mp.set_start_method('spawn')\n" +
            textwrap.indent(setup + textwrap.dedent(body), "    ") + "\n    print('ok')\n")
    script = tmp_path / "scenario.py"
    script.write_text(code)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, PYTHONPATH=str(tmp_path), **env)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.returncode, out.stdout + out.stderr)
    return out.stdout
