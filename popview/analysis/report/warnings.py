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
    for text in run_warnings(exp, focus, micro=micro):
        add(text)
    return out


def run_warnings(exp, focus=None, *, micro: str = "us") -> list[str]:
    """What the run itself warns of, whatever the model: a truncated trace, burst mode,
    the tracer's flushing inside the focus (`popview metrics` prints them above its table)."""
    flags = exp.definitions.flags
    out = [truncation_warning(exp, focus, micro=micro)]
    if flags.get("burst_mode"):
        out.append("Burst-mode trace: only computation bursts were recorded, so communication "
                   "metrics rest on what is missing between the bursts.")
    if flags.get("flushing") and focus is not None:
        out.append(flushing_warning(exp, focus, micro=micro))
    return [text for text in out if text]


def truncation_warning(exp, focus=None, *, micro: str = "us") -> str:
    """A sentence when the reader found the trace cut short (flags["truncated"]: its last
    line has no newline), saying how much of the run its records miss, else ''. Nothing
    when the focus is a time window or iterations that end before the records do."""
    d = exp.definitions
    if not d.flags.get("truncated"):
        return ""
    name = getattr(exp, "source", None)
    name = getattr(name, "name", None) or getattr(exp, "label", "") or "the trace"
    end = records_end(exp)
    if focus is not None and getattr(focus, "kind", "whole") in ("window", "iterations"):
        _, focus_end = _focus_intervals(exp, focus)
        if len(focus_end) and int(focus_end.max()) <= end:
            return ""
    if d.t_end > 0 and end < d.t_end * (1 - 1e-3):
        return (f"{name} is truncated (its last line has no newline): its records stop at "
                f"{nodes.format_seconds(end / NS, micro=micro)}, {(d.t_end - end) / d.t_end:.0%} short of the "
                f"{nodes.format_seconds(d.t_end / NS, micro=micro)} its header gives; every figure counts the part "
                "missing as time lost, not as time measured.")
    return f"{name} is truncated (its last line has no newline): its last record may be cut short."


def records_end(exp) -> int:
    """The latest time (ns) a record of the cache reaches: each location's last state and
    event (rows are sorted by location, then time), one row read per location."""
    reader, end = exp.reader, 0
    for table, column in (("states", "end"), ("events", "time")):
        if not reader.has(table):
            continue
        off = np.asarray(reader.offsets(table), np.int64)
        for last in (off[1:] - 1)[np.diff(off) > 0]:
            end = max(end, int(reader.rows(table, column, int(last), int(last) + 1).max()))
    return end


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
