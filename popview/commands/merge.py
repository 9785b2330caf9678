"""`popview merge A B ... -o OUT.cubex`: one profile with the metrics of all runs
(runs of one program that each measured other hardware counters)."""
from __future__ import annotations

from popview.commands import combine

OPERATION = "merge"
HELP = "merge runs that measured different metrics (e.g. PAPI counter sets) into one profile"
RUNS_HELP = ("traces or profiles of one program (at least two); a metric several runs have is taken "
             "from the first of them")


def add_parser(sub) -> None:
    combine.add_parser(sub, OPERATION, HELP, RUNS_HELP)


def run(args) -> int:
    return combine.run(args, OPERATION)
