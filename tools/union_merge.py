#!/usr/bin/env python3
"""Resolves git conflict blocks in list-like files by keeping both sides (deduplicated)."""
import sys

for path in sys.argv[1:]:
    out, seen_block = [], []
    state = None
    for line in open(path).read().splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            state, seen_block = "ours", []
        elif line.startswith("=======") and state == "ours":
            state = "theirs"
        elif line.startswith(">>>>>>> ") and state == "theirs":
            state = None
            out.extend(dict.fromkeys(seen_block))
        elif state:
            seen_block.append(line)
        else:
            out.append(line)
    open(path, "w").write("".join(out))
