"""`popview mean A B ... -o OUT.cubex`: the mean of repetitions of one run, per call
path and location, for the metrics every run has."""
from __future__ import annotations

from popview.commands import combine

OPERATION = "mean"
HELP = "the mean of repeated runs (per call path and location) as one profile"
RUNS_HELP = "traces or profiles of one program (at least two); metrics not in every run are left out"


def add_parser(sub) -> None:
    combine.add_parser(sub, OPERATION, HELP, RUNS_HELP)


def run(args) -> int:
    return combine.run(args, OPERATION)
