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
    callpath: int                                  # id in the experiment's profile (as AppState.callpath)
    path: str
    share: float                                   # of the run's thread time
    low: list[tuple[str, float]] = field(default_factory=list)   # (metric name, value), worst first

    def summary(self) -> str:
        return ", ".join(f"{name} {v:.2f}" for name, v in self.low)


def callpath_shares(profile) -> np.ndarray:
    """Inclusive time of each call path of the profile over the total time of all locations."""
    time = profile.inclusive_totals("time")
    total = float(profile.exclusive_totals("time").sum())
    return time / total if total > 0 else np.zeros_like(time)


def _below(node, threshold: float) -> bool:
    """An efficiency under the threshold; one outside [0, 1] is not a candidate's figure (its tree
    shows it with the cause)."""
    v = nodes.value(node)
    return node.kind == "efficiency" and v is not None and 0 <= v < threshold


def _explains(node, threshold: float) -> bool:
    """Below the threshold while none of its children is: where the loss shows itself
    (load balance rather than the parallel efficiency it drags down)."""
    return _below(node, threshold) and not any(_below(c, threshold) for c in node.children)


def _label(node) -> str:
    """The node's name, with the region it belongs to when several nodes share that name
    (a per-region part: "Fork, join and runtime [main._omp_fn.0]")."""
    kind, _, region = node.id.partition(":")
    at_most = " \u2264" if nodes.bound(node) else ""       # an upper bound below the threshold: low for sure
    if not region or kind == "openmp_region_efficiency":
        return node.name + at_most
    return f"{node.name} [{region.rsplit('/', 1)[-1]}]{at_most}"


def find(exp, model: str, threshold: float = 0.8, min_share: float = 0.01, limit: int = 40) -> list[Candidate]:
    """Candidates among the `limit` largest call paths above `min_share`, largest first.
    Without the ideal-network replay (one per call path would be slow): serialisation and
    transfer are left to the Advisor once a candidate is the focus."""
    profile = exp.profile()
    shares = callpath_shares(profile)
    real = np.array([profile.regions[r].role != "artificial" for r in profile.callpath_region], bool)
    order = [int(c) for c in np.argsort(-shares, kind="stable") if shares[c] >= min_share and real[c]][:limit]
    out = []
    for cp in order:
        path = profile.path(cp)
        tree = exp.metrics(model, Focus.on_callpath(path), use_replay=False)
        low = sorted(((_label(n), nodes.value(n)) for _, n in tree.walk() if _explains(n, threshold)),
                     key=lambda t: t[1])
        if low:
            out.append(Candidate(cp, path, float(shares[cp]), low[:3]))
    return out
