"""nanocuda.checkpoint without a GPU: argument checks in-process, and the calls and the CUDA 12.8
driver gate against tools/mock_libcuda.c (a child process per driver version)."""

import os
import subprocess
import sys
import textwrap

import pytest

import mock_run

from nanocuda import checkpoint


@pytest.mark.parametrize(("pid", "kind", "text"), [
    ("7", TypeError, "pid must be an int"), (True, TypeError, "pid must be an int"),
    (0, ValueError, "pid must be a positive int"), (-3, ValueError, "pid must be a positive int")])
def test_pid_is_checked(pid, kind, text):
    with pytest.raises(kind, match=text):
        checkpoint.Process(pid)


def test_process_surface():
    p = checkpoint.Process(4321)
    assert p.pid == 4321 and "4321" in repr(p)
    with pytest.raises(AttributeError):
        p.pid = 1
    assert checkpoint.__all__ == ["Process"] and not hasattr(checkpoint, "ProcessStateType")
    with pytest.raises(TypeError, match="timeout_ms must be an int"):
        p.lock(timeout_ms=1.5)
    with pytest.raises(ValueError, match="timeout_ms must be >= 0"):
        p.lock(timeout_ms=-1)
    with pytest.raises(TypeError, match="gpu_mapping must be a mapping"):
        p.restore(gpu_mapping=[("a", "b")])


def run_on_mock(mock_libcuda, version, code):
    mock_run.run_on_mock(mock_libcuda, code, prelude="from nanocuda import checkpoint\n", version=version)


def test_calls_on_a_new_enough_driver(mock_libcuda):
    run_on_mock(mock_libcuda, "12.8", """
        p = checkpoint.Process(99)
        assert p.state == "running"  # the mock's zeroed CUprocessState
        p.lock(); p.lock(timeout_ms=5000); p.checkpoint(); p.unlock()
        p.restore(); p.restore(gpu_mapping={})
        uuid = "GPU-8ad4f6e1-5cd0-11ee-8c99-f0f1c1ab14aa"
        p.restore(gpu_mapping={uuid: uuid[4:]})  # nvidia-smi's spelling and cuda.core's both parse
        try:
            p.restore(gpu_mapping={uuid: "not-a-uuid"})
        except ValueError as e:
            assert "32 hex characters" in str(e), e
        else:
            raise AssertionError("bad UUID accepted")
        assert isinstance(p.restore_thread_id, int)
        print("ok")
    """)


def test_older_driver_is_cuda_cores_unsupported_error(mock_libcuda):
    run_on_mock(mock_libcuda, "12.4", """
        for call in (lambda: checkpoint._get_driver(), lambda: checkpoint.Process(5).state):
            try:
                call()
            except RuntimeError as e:
                assert str(e).startswith("CUDA checkpointing is not supported by the installed NVIDIA driver."), e
                assert "12.8" in str(e), e
            else:
                raise AssertionError("no error below CUDA 12.8")
        print("ok")
    """)


def test_missing_entry_point_is_the_same_error(mock_libcuda):
    env_code = """
        try:
            checkpoint.Process(5).lock()
        except RuntimeError as e:
            assert str(e).startswith("CUDA checkpointing is not supported"), e
        print("ok")
    """
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda, NANOCUDA_MOCK_MISSING="cuCheckpointProcessLock")
    out = subprocess.run([sys.executable, "-c", "from nanocuda import checkpoint\n" + textwrap.dedent(env_code)],
                         capture_output=True, text=True, env=env, timeout=120, cwd="/tmp")
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout + out.stderr
