"""The bench's shared statistics and interleaved runner, on made-up samples (no GPU)."""

import statistics

import pytest

from nanocuda.bench import runner, stats
from nanocuda.bench.runner import Workload
from nanocuda.bench.workloads import call_loop, calls, python_burst


def test_quantile_is_a_measured_sample_at_rank_floor_q_n_minus_1():
    values = list(range(100, 0, -1))  # 1..100, unsorted on purpose
    assert stats.quantile(values, 0.0) == 1 and stats.quantile(values, 1.0) == 100
    assert stats.quantile(values, 0.1) == 10  # int(0.1 * 99) = 9 -> the 10th smallest
    assert stats.quantile(values, 0.9) == 90  # int(0.9 * 99) = 89
    assert stats.quantile([3.0], 0.9) == 3.0
    assert stats.quantile([1.0, 2.0], 0.9) == 1.0  # never interpolated
    with pytest.raises(ValueError, match="no samples"):
        stats.quantile([], 0.5)


def test_round_ratios_pair_each_round_and_sort():
    assert stats.round_ratios([2.0, 3.0, 1.0], [1.0, 1.0, 2.0]) == [0.5, 2.0, 3.0]
    assert stats.spread([0.5, 2.0, 3.0]) == (0.5, 2.0)
    with pytest.raises(ValueError, match="3 samples against 2 baseline samples"):
        stats.round_ratios([1.0, 2.0, 3.0], [1.0, 2.0])


def test_summarize_on_300_rounds_matches_a_direct_computation():
    base = [1.0 + (i % 7) * 0.01 for i in range(300)]
    ours = [1.1 + (i % 11) * 0.02 for i in range(300)]
    b = Workload("base", lambda: 0, samples=base)
    o = Workload("ours", lambda: 0, baseline="base", target=1.05, samples=ours)
    row = stats.summarize([b, o])[1]
    per_round = sorted(x / y for x, y in zip(ours, base))
    assert row["min_us"] == 1.1 and row["median_us"] == statistics.median(ours)
    assert row["p90_us"] == sorted(ours)[269]
    assert row["ratio_min"] == pytest.approx(1.1 / 1.0)
    assert row["ratio_median"] == pytest.approx(statistics.median(ours) / statistics.median(base))
    assert row["ratio_round_p10"] == per_round[29] and row["ratio_round_p90"] == per_round[269]
    assert row["ratio_round_median"] == statistics.median(per_round)
    assert row["meets_target"] is False  # 1.10 > 1.05
    assert "meets_target" not in stats.summarize([b])[0]


class Clock:
    """Bursts that return fixed 'ns' figures and log the order they ran in."""

    def __init__(self):
        self.log = []

    def burst(self, name, ns):
        def run():
            self.log.append(name)
            return ns
        return run


def test_interleave_warms_up_shuffles_each_round_and_divides_per_operation():
    clock, synced, rounds_done = Clock(), [], []
    ws = [Workload(n, clock.burst(n, 1000 * (i + 1))) for i, n in enumerate("abcd")]
    runner.interleave(ws, 6, per_sample=10, sync=lambda: synced.append(1),
                      sync_round=lambda: rounds_done.append(1))
    assert clock.log[:4] == list("abcd")  # the warm-up, not recorded
    assert [w.samples for w in ws] == [[0.1] * 6, [0.2] * 6, [0.3] * 6, [0.4] * 6]  # µs per operation
    assert len(synced) == 4 + 24 and len(rounds_done) == 6
    orders = [clock.log[4 + 4 * r: 8 + 4 * r] for r in range(6)]
    assert all(sorted(o) == list("abcd") for o in orders)
    assert len({tuple(o) for o in orders}) > 1  # not a fixed order
    again = Clock()
    runner.interleave([Workload(n, again.burst(n, 1)) for n in "abcd"], 6, per_sample=1)
    assert again.log == clock.log  # seeded: a rerun repeats the order


def test_interleave_runs_a_slow_workload_only_in_its_first_rounds():
    clock = Clock()
    fast, slow = Workload("fast", clock.burst("fast", 5)), Workload("slow", clock.burst("slow", 5), rounds=2)
    runner.interleave([fast, slow], 5, per_sample=1, warmup=False)
    assert (len(fast.samples), len(slow.samples)) == (5, 2)


def test_run_measure_fills_targets_from_the_subcommand_and_names_the_progress(monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "progress", lambda done, total, label: seen.append((done, total, label)))
    run = runner.Run("demo", 3, 4, {}, {"ours": 1.2})
    clock = Clock()
    rows = run.measure([Workload("base", clock.burst("base", 4000)),
                        Workload("ours", clock.burst("ours", 4400), "base")], None)
    assert rows[1]["target"] == 1.2 and rows[1]["ratio_min"] == pytest.approx(1.1) and rows[1]["meets_target"]
    assert seen == [(1, 3, "bench demo"), (2, 3, "bench demo"), (3, 3, "bench demo")]
    assert run.result(rows, burst=4) == {"rows": rows, "skipped": [], "burst": 4}


def test_run_skip_formats_the_reason():
    run = runner.Run("demo", 1, 1, {}, {})
    run.skip("CuPy", ImportError("No module named 'cupy'"))
    run.skip("bridge", RuntimeError("x" * 500), limit=10)
    run.skip("peer copies: needs 2 GPUs")
    assert run.skipped == ["CuPy (ImportError: No module named 'cupy')", "bridge (RuntimeError: xxxxxxxxxx)",
                           "peer copies: needs 2 GPUs"]


def test_call_loop_calls_with_the_arguments_in_order():
    got = []
    burst = call_loop(lambda *a: got.append(a), (1, "b", None), 3)
    assert burst() >= 0 and got == [(1, "b", None)] * 3
    got.clear()
    assert call_loop(lambda: got.append(()), (), 2)() >= 0 and got == [(), ()]
    w = calls("row", lambda x: got.append(x), (7,), 2, "base", 1.1)
    assert (w.name, w.baseline, w.target) == ("row", "base", 1.1)
    w.burst()
    assert got[-2:] == [7, 7]
    n = []
    assert python_burst(lambda: n.append(1), 4)() >= 0 and len(n) == 4
