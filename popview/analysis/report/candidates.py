"""Candidates: call paths worth a closer look, as Cube's Advisor lists them.

A call path is a candidate when it takes a noticeable share of the run and
one of the efficiencies of the chosen model, computed with that call path
as the focus, falls below the threshold.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.report import nodes


@dataclass
class Candidate:
    callpath: int
    path: str
    share: float                                   # of the run's thread time
    low: list[tuple[str, float]] = field(default_factory=list)   # (metric name, value), worst first

    def summary(self) -> str:
        return ", ".join(f"{name} {v:.2f}" for name, v in self.low)


def callpath_shares(exp) -> np.ndarray:
    """Inclusive time of each call path over all threads / (duration x threads)."""
    d = exp.definitions
    n = len(d.callpath_parent)
    if n == 0 or d.t_end <= 0:
        return np.zeros(n)
    cols = exp.reader.read("calls", columns=["begin", "end", "callpath"])
    time = np.bincount(cols["callpath"], weights=(cols["end"] - cols["begin"]).astype(np.float64), minlength=n)
    threads = max(1, sum(1 for loc in d.locations if loc.kind == "thread"))
    return time / (float(d.t_end) * threads)


def find(exp, model: str, threshold: float = 0.8, min_share: float = 0.01, limit: int = 40,
         cancel=None) -> list[Candidate]:
    """Candidates among the `limit` largest call paths above `min_share`, largest first."""
    shares = callpath_shares(exp)
    order = [int(c) for c in np.argsort(-shares, kind="stable") if shares[c] >= min_share][:limit]
    d = exp.definitions
    out = []
    for cp in order:
        if cancel is not None and cancel.is_set():
            break
        path = d.callpath_name(int(cp))
        tree = exp.metrics(model, Focus.on_callpath(path))
        low = sorted(((n.name, v) for _, n in tree.walk()
                      if getattr(n, "kind", "") == "efficiency"
                      and (v := nodes.value(n)) is not None and v < threshold), key=lambda t: t[1])
        if low:
            out.append(Candidate(cp, path, float(shares[cp]), low[:3]))
    return out
