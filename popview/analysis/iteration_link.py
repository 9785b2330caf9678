"""Linking two runs' time axes on the same iteration: the start of iteration k in
run A is the start of iteration k in run B, and time between two starts maps
linearly (the ends of the runs too). The iterations are the visits of the
repeating region popview.analysis.focus_map counts them by (A's), which must
be a call path of B as well."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.focus_map import _marker
from popview.analysis.gather import FocusError, visits


@dataclass
class IterationLink:
    path: str                    # the region whose visits are the iterations
    a: np.ndarray                # knots in A's time (ns): 0, iteration starts, end of the run
    b: np.ndarray                # the same knots in B's time
    shared: int = 0              # iterations both runs have

    def a_to_b(self, t):
        return np.interp(t, self.a, self.b)

    def b_to_a(self, t):
        return np.interp(t, self.b, self.a)


def iteration_starts(exp, path: str) -> np.ndarray:
    """When each iteration starts (the earliest process), ns; every process's count at least."""
    proc, begin, _ = visits(exp, path)
    if not len(proc):
        raise FocusError(f"{path} is never visited in {exp.name}")
    starts = np.flatnonzero(np.r_[True, proc[1:] != proc[:-1]])
    n = int(np.diff(np.r_[starts, len(proc)]).min())
    return begin[starts[:, None] + np.arange(n)[None, :]].min(axis=0).astype(float)


def link(a, b) -> IterationLink:
    """The iteration link of A and B (FocusError saying why there is none)."""
    if not (a.is_trace and b.is_trace):
        raise FocusError("iterations are counted from the records: both runs must be traces")
    path = _marker(a)
    if path is None:
        raise FocusError(f"{a.name} has no repeating region to count iterations by")
    sa, sb = iteration_starts(a, path), iteration_starts(b, path)
    n = min(len(sa), len(sb))
    if n < 2:
        raise FocusError(f"{path} repeats fewer than twice in one of the runs")
    ka = np.r_[0.0, sa[:n], float(a.definitions.t_end)]
    kb = np.r_[0.0, sb[:n], float(b.definitions.t_end)]
    keep = np.r_[True, (np.diff(ka) > 0) & (np.diff(kb) > 0)]     # strictly increasing knots for interp
    return IterationLink(path, ka[keep], kb[keep], n)
