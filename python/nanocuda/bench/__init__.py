"""`nanocuda bench`: timing harness shared by the subcommands (interleaved bursts, ratios)."""
