"""`--plot`: a bar chart of every path's ratio to its C++ baseline, with targets marked."""

from __future__ import annotations


def ratios(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for res in results.values() if isinstance(res, dict) and "rows" in res
            for r in res["rows"] if "ratio_min" in r]
    if not rows:
        raise SystemExit("--plot: no ratios to plot")
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.2))
    names = [r["name"] for r in rows]
    ax.barh(names, [r["ratio_min"] for r in rows], color="#4c72b0", label="× C++ (min)")
    ax.scatter([r["ratio_median"] for r in rows], names, color="#dd8452", zorder=3, label="× C++ (median)")
    for i, r in enumerate(rows):
        if r.get("target"):
            ax.plot([r["target"]] * 2, [i - 0.4, i + 0.4], color="red", lw=2)
    ax.axvline(1.0, color="black", lw=0.8)
    # Log scale: ratios run from ~1 (nanocuda) to >100 (some peers).
    ax.set_xscale("log")
    ax.set_xlabel("× baseline (C++ loop; torch for kernels), log scale; red: target")
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
