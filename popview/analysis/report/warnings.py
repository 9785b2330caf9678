"""Warnings worth reading before trusting a metric table."""
from __future__ import annotations

import numpy as np

from popview.analysis.report import nodes

NS = 1e9


def collect(exp, trees: list, focus=None, *, micro: str = "us") -> list[str]:
    """Node warnings of every MetricTree, inconsistent (> 100 %) efficiencies,
    trace flushing inside the focus, and how the trace was recorded (burst mode).
    `micro`: how microseconds are written (nodes.format_seconds)."""
    out: list[str] = []

    def add(text: str) -> None:
        if text and text not in out:
            out.append(text)

    for tree in trees:
        for _, node in tree.walk():
            for w in node.warnings:
                add(f"{node.name}: {w}")
            v = nodes.value(node)
            if v is not None and node.kind == "efficiency" and v > 1.0 + 1e-6 and not node.warnings:
                add(f"{node.name} is {v * 100:.1f} %, above 100 %: the inputs are inconsistent "
                    "(check clock synchronisation and the focus of analysis).")
    flags = exp.definitions.flags
    if flags.get("burst_mode"):
        add("Burst-mode trace: only computation bursts were recorded, so communication "
            "metrics rest on what is missing between the bursts.")
    if flags.get("flushing") and focus is not None:
        add(flushing_warning(exp, focus, micro=micro))
    return out


def notes(trees: list) -> list[str]:
    """What the engine says about how it computed the trees (focus, reference, replay)."""
    out: list[str] = []
    for tree in trees:
        out += [n for n in tree.notes if n not in out]
    return out


def flushing_warning(exp, focus, *, micro: str = "us") -> str:
    """A sentence when the tracer flushed its buffers inside the focus, else '' (kept per experiment)."""
    cache = exp.__dict__.setdefault("_flushing_warnings", {})
    if (focus, micro) not in cache:
        cache[focus, micro] = _flushing_sentence(exp, focus, micro=micro)
    return cache[focus, micro]


def _flushing_sentence(exp, focus, *, micro: str = "us") -> str:
    begin, end = _flush_intervals(exp)
    if not len(begin):
        return ""
    union = _focus_intervals(exp, focus)
    inside = _overlap(begin, end, union)
    hit = inside > 0
    if not hit.any():
        return ""
    threads = sum(1 for loc in exp.definitions.locations if loc.kind == "thread")
    share = inside.sum() / max(float((union[1] - union[0]).sum()) * threads, 1.0)
    return (f"The tracer flushed its buffers {int(hit.sum())} time(s) inside the focus "
            f"({nodes.format_seconds(inside.sum() / NS, micro=micro)}, {share * 100:.2g} % of the threads' time there): "
            "measurement overhead, neither computation nor communication.")


def _flush_intervals(exp) -> tuple[np.ndarray, np.ndarray]:
    d = exp.definitions
    flush = [i for i, r in enumerate(d.regions) if r.role == "flush"]
    if not flush or not len(d.callpath_region):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    is_flush = np.isin(d.callpath_region, flush)
    calls = exp.reader.read("calls", columns=["begin", "end", "callpath"])
    keep = is_flush[calls["callpath"]]
    return calls["begin"][keep], calls["end"][keep]


def _focus_intervals(exp, focus) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted [begin, end) intervals (ns) the focus covers."""
    from popview.analysis import gather
    if focus.kind == "window":
        return np.array([focus.t0]), np.array([focus.t1])
    if focus.kind == "iterations":
        t0, t1 = gather.iteration_window(exp, focus.callpath, focus.first, focus.last)
        return np.array([t0]), np.array([t1])
    if focus.kind == "callpath":
        _, begin, end = gather.visits(exp, focus.callpath)
        return _union(np.asarray(begin, np.int64), np.asarray(end, np.int64))
    return np.array([0]), np.array([exp.definitions.t_end])


def _union(begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(begin):
        return begin, end
    order = np.argsort(begin, kind="stable")
    begin, end = begin[order], end[order]
    reach = np.maximum.accumulate(end)
    first = np.flatnonzero(np.r_[True, begin[1:] > reach[:-1]])
    return begin[first], np.maximum.reduceat(end, first)


def _overlap(begin: np.ndarray, end: np.ndarray, union) -> np.ndarray:
    """Length of each [begin, end) inside the union of disjoint sorted intervals."""
    ub, ue = union
    covered = np.r_[0, np.cumsum(ue - ub)]

    def measure(t):   # length of the union inside [-inf, t)
        i = np.searchsorted(ub, t, side="right")
        prev = np.maximum(i - 1, 0)
        part = np.where(i > 0, np.clip(t - ub[prev], 0, (ue - ub)[prev]), 0)
        return covered[prev] * (i > 0) + part
    return measure(end) - measure(begin)
