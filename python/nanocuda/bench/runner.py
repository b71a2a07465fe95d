"""How the bench times workloads: repeated rounds, shuffled interleaving, progress, one run's state."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from . import report, stats


@dataclass
class Workload:
    """One timed path. `burst()` runs one sample's worth of work and returns its time (ns for
    a burst of operations; what `interleave` divides it by gives µs per operation)."""

    name: str
    burst: Callable[[], float]
    baseline: str | None = None  # name of the workload this one is divided by
    target: float | None = None  # the ratio of minimums it must not exceed, if any
    samples: list[float] = field(default_factory=list)  # µs per operation, one per round
    keep: object = None  # what the burst needs alive (packed arguments, foreign buffers)
    rounds: int | None = None  # at most this many rounds (slow rows); None: every round


def progress(done: int, total: int, label: str) -> None:
    """A progress bar on stderr when it is a terminal (logs stay clean)."""
    if not sys.stderr.isatty():
        return
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<30}")
    if done == total:
        sys.stderr.write("\r" + " " * (width + 50) + "\r")
    sys.stderr.flush()


def repeat(rounds: int, step: Callable[[int], None], label: str) -> None:
    """Calls step(round) `rounds` times, showing progress."""
    for r in range(rounds):
        step(r)
        progress(r + 1, rounds, label)


def interleave(workloads: list[Workload], rounds: int, per_sample: float, *, label: str = "",
               sync: Callable[[], None] | None = None, sync_round: Callable[[], None] | None = None,
               warmup: bool = True) -> None:
    """Runs every workload once per round in a shuffled order, appending burst() / per_sample /
    1000 to its samples (ns per burst -> µs per operation); `sync` (untimed) after each burst,
    `sync_round` after each round. Ratios then pair each workload with its baseline from the
    same round. A workload with `rounds` set runs only in the first that many rounds."""
    if warmup:  # first-call costs (type caches, lazy loading) stay out of the samples
        for w in workloads:
            w.burst()
            if sync:
                sync()
    # A fresh order every round (seeded, so runs repeat): a workload's cost depends on what
    # ran just before it (caches, the GPU's idle state), and a fixed order made the first
    # workload of each round, the 4-argument C++ loop, read 5-10% slower than its 16-argument twin.
    order = list(workloads)
    shuffle = random.Random(1).shuffle

    def one_round(r: int) -> None:
        shuffle(order)
        for w in order:
            if w.rounds is not None and r >= w.rounds:
                continue
            ns = w.burst()
            if sync:
                sync()
            w.samples.append(ns / per_sample / 1000.0)
        if sync_round:
            sync_round()

    repeat(rounds, one_round, label)


class Run:
    """One subcommand's run: the rounds and burst asked for, the CLI's options, what was
    skipped and why; and the shared steps (interleave, summarize, print a table)."""

    def __init__(self, name: str, rounds: int, burst: int, options: dict, targets: dict[str, float]):
        self.name, self.rounds, self.burst = name, rounds, burst
        self.options, self.targets = options, targets
        self.skipped: list[str] = []

    def option(self, key: str, default):
        return self.options.get(key, default)

    def skip(self, what: str, error: BaseException | None = None, limit: int | None = None) -> None:
        """Records a path that could not run: "what (TypeName: message)"."""
        if error is not None:
            what = f"{what} ({type(error).__name__}: {str(error)[:limit]})"
        self.skipped.append(what)

    def measure(self, workloads: list[Workload], sync: Callable[[], None] | None, *,
                rounds: int | None = None, per_sample: float | None = None, label: str | None = None,
                **kwargs) -> list[dict]:
        """Fills unset targets from the subcommand's table, interleaves the workloads
        (default: this run's rounds, bursts of this run's size) and returns their rows."""
        interleave(workloads, self.rounds if rounds is None else rounds,
                   self.burst if per_sample is None else per_sample,
                   label=label or f"bench {self.name}", sync=sync, **kwargs)
        return self.summarize(workloads)

    def summarize(self, workloads: list[Workload]) -> list[dict]:
        """Rows of workloads already timed, with the subcommand's targets where none is set."""
        for w in workloads:
            if w.target is None:
                w.target = self.targets.get(w.name)
        return stats.summarize(workloads)

    def table(self, title: str, rows: list[dict], baseline_label: str = "C++") -> None:
        report.print_table(title, rows, baseline_label)

    def result(self, rows: list[dict], **extra) -> dict:
        """The subcommand's JSON: rows, skips, then what else it reports."""
        return {"rows": rows, "skipped": self.skipped, **extra}
