"""IPC objects sent to other processes the ways cuda.core's IPC tests send them (an allocation
handle as a Process argument, a resource whose pickling fails midway, pickled Buffers in a
worker pool), against tools/mock_libcuda.c, whose exported pools are real file descriptors:
no GPU needed. Each scenario runs in its own process, so a crash fails the test. The GPU
side (real pools): test_ipc_gpu.py."""

import os
import subprocess
import sys
import textwrap


# Spawned children import their targets from this module, written next to the scenario.
CHILDREN = '''
def child_main(obj, *rest):
    pass


def touch_buffer(raw):
    import pickle
    buf = pickle.loads(raw)
    assert buf.size == 64 and buf.is_mapped, (buf.size, buf.is_mapped)
    buf.close()
    return "mapped"


def touch_sent_buffer(buf):
    assert buf.size == 64
    buf.close()
    return "sent"


class Irreducible:
    def __reduce__(self):
        raise RuntimeError("Irreducible")
'''


def run_scenario(mock: str, tmp_path, body: str) -> str:
    (tmp_path / "ipc_mock_children.py").write_text(CHILDREN)
    code = ("import multiprocessing as mp, pickle, gc, sys\nimport nanocuda\n"
            "from ipc_mock_children import *\n"
            "if __name__ == '__main__':\n    mp.set_start_method('spawn')\n" +
            textwrap.indent(POOL + textwrap.dedent(body), "    ") + "\n    print('ok')\n")
    script = tmp_path / "scenario.py"
    script.write_text(code)
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONPATH=str(tmp_path))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.returncode, out.stdout + out.stderr)
    return out.stdout


POOL = "mr = nanocuda.DeviceMemoryResource(0, nanocuda.DeviceMemoryResourceOptions(max_size=1 << 21, ipc_enabled=True))\n"


def test_allocation_handle_as_a_process_argument(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        h = mr.allocation_handle
        for _ in range(2):
            p = mp.Process(target=child_main, args=(h,))
            p.start(); p.join(120)
            assert p.exitcode == 0, p.exitcode
        del h
        gc.collect()
        mr.close()
        assert mr.is_closed
    """)


def test_a_resource_whose_process_start_fails_is_left_usable(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        for obj in (mr, mr.allocation_handle, mr.allocate(64)):
            for _ in range(2):
                try:
                    mp.Process(target=child_main, args=(obj, Irreducible())).start()
                except (RuntimeError, TypeError) as e:
                    assert "Irreducible" in str(e) or "pickle" in str(e), e
                else:
                    raise AssertionError("the start should fail")
        gc.collect()
        b = mr.allocate(64)
        b.close()
        mr.close()
    """)


def test_buffers_pickled_into_a_worker_pool(mock_libcuda, tmp_path):
    out = run_scenario(mock_libcuda, tmp_path, """
        bufs = [mr.allocate(64) for _ in range(6)]
        with mp.Pool(2) as pool:
            got = pool.map(touch_buffer, [pickle.dumps(b) for b in bufs])
            sent = pool.map(touch_sent_buffer, bufs)
        assert got == ["mapped"] * 6 and sent == ["sent"] * 6, (got, sent)
        for b in bufs:
            b.close()
        mr.close()
        print("pool done")
    """)
    assert "pool done" in out


def test_a_closed_pool_cannot_be_exported(mock_libcuda, tmp_path):
    run_scenario(mock_libcuda, tmp_path, """
        b = mr.allocate(64)
        mr.close()
        for call in (lambda: mr.allocation_handle, lambda: pickle.dumps(b)):
            try:
                call()
            except (ValueError, TypeError) as e:
                assert "closed" in str(e), e
            else:
                raise AssertionError("a closed pool must refuse")
    """)
