"""The bench's one registry: each subcommand an object with its name, help, targets and run."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from typing import ClassVar

from . import report
from .runner import Run

# The modules that register a subcommand, in the order `nanocuda bench` runs them. Each is
# imported only when the CLI needs the list (never by `import nanocuda`).
MODULES = ("launch", "tma", "gemm", "saxpy", "graphs", "memory", "cuda_core", "kernels", "gemm_shapes", "torch_ops",
           "jax")

_registry: dict[str, Subcommand] = {}


class UnknownSubcommand(ValueError):
    """A name that no registered subcommand has."""


class Subcommand:
    """A `nanocuda bench` subcommand. Subclasses set `name`, `help` (one line, shown by
    `nanocuda bench --help`), `targets` (row name -> ratio it must not exceed), `needs`
    (modules without which it is skipped) and write `measure(run) -> dict` (the JSON under
    `name`); calling the object runs it: `launch.run(rounds, burst, use_bridge=False)`."""

    name: ClassVar[str]
    help: ClassVar[str]
    targets: ClassVar[dict[str, float]] = {}
    needs: ClassVar[tuple[str, ...]] = ()

    def measure(self, run: Run) -> dict:
        raise NotImplementedError(f"bench subcommand {self.name!r} has no measure()")

    def __call__(self, rounds: int, burst: int, **options) -> dict:
        run = Run(self.name, rounds, burst, options, dict(self.targets))
        missing = [m for m in self.needs if importlib.util.find_spec(m) is None]
        if missing:
            why = f"bench {self.name} needs {' and '.join(missing)} (not installed)"
            print(f"\n  skipped: {why}")
            return {"rows": [], "skipped": [why]}
        result = self.measure(run)
        report.print_skipped(run.skipped)
        return result

    def __repr__(self) -> str:
        return f"<bench subcommand {self.name!r}: {self.help}>"


def register(subcommand: Subcommand) -> Subcommand:
    """Adds a subcommand; a second one with the same name is a mistake, not an override."""
    for attr in ("name", "help"):
        if not getattr(subcommand, attr, ""):
            raise TypeError(f"bench register: {type(subcommand).__name__} has no {attr}")
    if subcommand.name in _registry and type(_registry[subcommand.name]) is not type(subcommand):
        raise ValueError(f"bench register: subcommand {subcommand.name!r} is already registered "
                         f"by {type(_registry[subcommand.name]).__module__}")
    _registry[subcommand.name] = subcommand
    return subcommand


def subcommands() -> dict[str, Subcommand]:
    """Every registered subcommand by name, in MODULES order (importing them the first time)."""
    for module in MODULES:
        importlib.import_module(f"{__package__}.{module}")
    rank = {m: i for i, m in enumerate(MODULES)}
    return dict(sorted(_registry.items(),
                       key=lambda kv: rank.get(type(kv[1]).__module__.rsplit(".", 1)[-1], len(rank))))


def _valid() -> str:
    return "all, " + ", ".join(subcommands())


def select(names: list[str] | str | None) -> list[Subcommand]:
    """The subcommands named, in the order given, each once; none or "all": every one."""
    names = [names] if isinstance(names, str) else list(dict.fromkeys(names or []))
    table = subcommands()
    if not names or "all" in names:
        return list(table.values())
    unknown = [n for n in names if n not in table]
    if unknown:
        raise UnknownSubcommand(f"nanocuda bench: unknown subcommand {', '.join(map(repr, unknown))}; "
                                f"valid: {_valid()}")
    return [table[n] for n in names]


def checked_name(name: str) -> str:
    """argparse `type=` for a subcommand name: an unknown one fails with the valid list."""
    if name != "all" and name not in subcommands():
        raise argparse.ArgumentTypeError(f"unknown subcommand {name!r}; valid: {_valid()}")
    return name
