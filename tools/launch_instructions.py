#!/usr/bin/env python3
"""Instructions per Python launch call on the mock driver (no GPU needed), via callgrind:
a stable measure of the host-side cost, for before/after comparisons of the hot path.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/launch_instructions.py /tmp/libcuda_mock.so

Each figure is the difference between a run with CALLS calls and one with none, divided by
CALLS: it includes the Python loop's own few instructions per iteration (the same before and
after a change), not start-up. The kernel is compiled once outside valgrind (disk cache).
"""
import os
import re
import subprocess
import sys
import tempfile

CALLS = 20000
KERNEL = r'''extern "C" __global__ void k(const float* a, const float* b, float* c, int n) {}'''


def workload(launcher_calls: int, launch_calls: int) -> None:
    import nanocuda

    k = nanocuda.compile(KERNEL, arch="90").get_kernel("k")
    cfg = nanocuda.LaunchConfig(grid=1, block=32)
    stream = nanocuda.Stream.legacy(nanocuda.Device(0))
    run = k.bind(cfg, stream=stream)
    a, b, c = 0x7F0000001000, 0x7F0000002000, 0x7F0000003000
    run(a, b, c, 4)  # the first calls decide each slot's argument kind
    nanocuda.launch(stream, cfg, k, a, b, c, 4)
    for _ in range(launcher_calls):
        run(a, b, c, 4)
    for _ in range(launch_calls):
        nanocuda.launch(stream, cfg, k, a, b, c, 4)


def instructions(mock: str, launcher_calls: int, launch_calls: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        sys.executable, os.path.abspath(__file__), "--workload",
                        str(launcher_calls), str(launch_calls)],
                       check=True, env=env, cwd=tmp, capture_output=True)
        text = open(out).read()
    return int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))


def main() -> None:
    if sys.argv[1:2] == ["--workload"]:
        workload(int(sys.argv[2]), int(sys.argv[3]))
        return
    mock = sys.argv[1] if len(sys.argv) > 1 else "/tmp/libcuda_mock.so"
    subprocess.run([sys.executable, os.path.abspath(__file__), "--workload", "0", "0"],
                   check=True, env=dict(os.environ, NANOCUDA_LIBCUDA=mock))  # fills the cache
    base = instructions(mock, 0, 0)
    print(f"Launcher call, 4 args: {(instructions(mock, CALLS, 0) - base) / CALLS:.0f} instructions")
    print(f"launch(), 4 args:      {(instructions(mock, 0, CALLS) - base) / CALLS:.0f} instructions")


if __name__ == "__main__":
    main()
