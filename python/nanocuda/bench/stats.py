"""The bench's spread statistics: min, median, p10/p90 and per-round ratios against a baseline."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def quantile(values: Sequence[float], q: float) -> float:
    """The value at rank int(q * (n - 1)) of the sorted values: a measured sample, never an
    interpolation between two (so p90 of 300 rounds is round 270's figure)."""
    if not values:
        raise ValueError("quantile: no samples")
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def round_ratios(samples: Sequence[float], base: Sequence[float]) -> list[float]:
    """Per-round ratios of two workloads timed in the same rounds (interleaved neighbours),
    sorted: their spread is the honest noise of the ratio."""
    if len(samples) != len(base):
        raise ValueError(f"round_ratios: {len(samples)} samples against {len(base)} baseline samples")
    return sorted(a / b for a, b in zip(samples, base))


def spread(ratios: Sequence[float]) -> tuple[float, float]:
    """(p10, p90) of per-round ratios."""
    return quantile(ratios, 0.1), quantile(ratios, 0.9)


def summarize(workloads) -> list[dict]:
    """One row per workload (objects with name, samples, baseline, target): min, median and
    p90 in µs, every sample, and against its baseline the ratio of minimums, of medians, the
    per-round median and p10-p90, and whether the ratio of minimums meets the target."""
    by_name = {w.name: w for w in workloads}
    rows = []
    for w in workloads:
        row = {
            "name": w.name,
            "min_us": min(w.samples),
            "median_us": statistics.median(w.samples),
            "p90_us": quantile(w.samples, 0.9),
            "samples_us": w.samples,
            "baseline": w.baseline,
            "target": w.target,
        }
        if w.baseline:
            base = by_name[w.baseline]
            row["ratio_min"] = row["min_us"] / min(base.samples)
            row["ratio_median"] = row["median_us"] / statistics.median(base.samples)
            per_round = round_ratios(w.samples, base.samples)
            row["ratio_round_median"] = statistics.median(per_round)
            row["ratio_round_p10"], row["ratio_round_p90"] = spread(per_round)
            if w.target is not None:
                row["meets_target"] = row["ratio_min"] <= w.target
        rows.append(row)
    return rows
