"""`nanocuda bench`: subcommand objects in one registry, over shared timing, statistics and tables.

Layout: `registry` (the `Subcommand` base, `register`, the module list), `runner` (a
`Workload`, shuffled interleaving, repetition, progress, one run's state), `stats` (min,
median, p10-p90, per-round ratios), `report` (tables, environment, JSON), `workloads`
(paths more than one subcommand times: Python call loops, the in-process C++ loops, cuda.core),
then one module per subcommand. A subcommand is a module listed in `registry.MODULES` whose
`Subcommand` subclass is registered with `run = register(Name())`; the CLI, --json, --plot
and the target summary pick it up. Importing any of this runs nothing and imports neither
torch nor numpy: each subcommand imports what it needs when it runs.
"""
