"""Per-node graph attachment lifetimes without a GPU: graph_lifetime_cases.py run against
tools/mock_libcuda.c in a process of its own (the mock is the driver it loads)."""

import os
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).with_name("graph_lifetime_cases.py")


def test_graph_lifetime_cases_against_the_mock_driver(mock_libcuda, tmp_path):
    env = dict(os.environ, NANOCUDA_LIBCUDA=mock_libcuda)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout, r.stdout[-2000:]
