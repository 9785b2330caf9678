"""`--small`, the size every benchmark here runs at on every push
(tests/test_benchmarks_smoke.py): seconds, checking that the benchmark runs
and prints its figures; those figures measure nothing. The full sizes are
run by hand for the figures in the docs (docs/benchmarks.md)."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HELP = ("a small size that runs in seconds (CI runs every benchmark so on every push): checks that it runs "
        "and prints its figures, which then measure nothing")


def add_small(parser: argparse.ArgumentParser, **sizes) -> None:
    """Add --small to `parser`: with it, the options' defaults become `sizes` (options given
    on the command line still win)."""
    parser.add_argument("--small", action="store_true", help=HELP)
    if "--small" in sys.argv[1:]:
        parser.set_defaults(**sizes)


def in_scratch(parser: argparse.ArgumentParser, small: bool, what: str, fn):
    """fn(folder) with a temporary folder, for a --small run that was given no input of its
    own (it makes a small one there); without --small, a usage error asking for `what`."""
    if not small:
        parser.error(f"give {what} (or --small)")
    with tempfile.TemporaryDirectory(prefix="popview-bench-") as tmp:
        return fn(Path(tmp))
