#!/usr/bin/env python3
"""Instructions per Python launch call on the mock driver (no GPU needed), via callgrind:
a stable measure of the host-side cost, for before/after comparisons of the hot path.

    cc -shared -fPIC -O2 -o /tmp/libcuda_mock.so tools/mock_libcuda.c
    python3 tools/launch_instructions.py /tmp/libcuda_mock.so

Each figure is the difference between a run with CALLS calls and one with none, divided by
CALLS, counting only instructions executed in nanocuda's extension (which holds libnanocuda)
and the mock driver: the interpreter's share varies with hash seeds and start-up, nanocuda's
does not. The kernel is compiled once outside valgrind (disk cache).
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


def nanocuda_cost(callgrind_out: str) -> int:
    """Self cost (Ir) of the objects named _nanocuda* or *mock*, from callgrind's output file."""
    names: dict[str, str] = {}

    def resolve(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    ob, total, after_call = "", 0, False
    for line in callgrind_out.splitlines():
        if line.startswith("ob="):
            ob = resolve(line[3:])
        elif line.startswith("cob="):
            resolve(line[4:])
        elif line.startswith("calls="):
            after_call = True  # the next cost line is the callee's inclusive cost
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
                continue
            parts = line.split()
            if len(parts) > 1 and ("_nanocuda" in ob or "mock" in ob):
                total += int(parts[1])
    return total


def instructions(mock: str, launcher_calls: int, launch_calls: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, NANOCUDA_LIBCUDA=mock, PYTHONHASHSEED="0")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--compress-strings=no", "--compress-pos=no",
                        sys.executable, os.path.abspath(__file__), "--workload",
                        str(launcher_calls), str(launch_calls)],
                       check=True, env=env, cwd=tmp, capture_output=True)
        return nanocuda_cost(open(out).read())


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
