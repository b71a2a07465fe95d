"""The bad-input catalogue's newer surfaces (cases in bad_input_cases_surfaces.py): textures,
checkpoint, nanocuda.system, green contexts, program caches, StridedMemoryView, the batched
managed-memory calls and pickling. Each case runs in its own process through
test_bad_inputs.py's runner (runtime cases on tools/mock_libcuda.c, NVML ones on
tools/mock_libnvml.c); its summary prints the counts by outcome at the end."""

import concurrent.futures

import pytest

import test_bad_inputs as catalogue
from bad_input_cases_surfaces import CASES, MOCK_ONLY, PRELUDE

SURFACE_CASES = [catalogue.Case(i, PRELUDE + code, exc, match, rt=rt) for i, code, exc, match, rt in CASES]


@pytest.fixture(scope="module")
def results(mock_libcuda, mock_libnvml):
    """Every case at once, 8 processes at a time; NVML calls see the mock's two fake GPUs."""
    gpu = catalogue._has_gpu()
    todo = [c for c in SURFACE_CASES if not (gpu and c.id in MOCK_ONLY)]
    with pytest.MonkeyPatch.context() as mp:
        if not gpu:
            mp.setenv("NANOCUDA_LIBNVML", mock_libnvml)
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            by_id = dict(zip((c.id for c in todo), pool.map(lambda c: catalogue._run(c, gpu, mock_libcuda), todo)))
    return {"gpu": gpu, "by_id": by_id}


def test_cases_are_unique_and_new():
    ids = [c.id for c in SURFACE_CASES]
    assert len(ids) == len(set(ids)) and not set(ids) & {c.id for c in catalogue.CASES}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in SURFACE_CASES])
def test_bad_input(case, results):
    if case.id not in results["by_id"]:
        pytest.skip("a mock-only case: a real GPU and NVML answer it differently")
    res = results["by_id"][case.id]
    assert res["outcome"] not in ("crash", "hang"), res
    assert res["outcome"] == "clear", res


def test_catalogue_summary(results, capsys):
    # test_bad_inputs.py's counts line (crash, hang, silent, unclear, clear), for these cases
    catalogue.test_catalogue_summary(results, capsys)
