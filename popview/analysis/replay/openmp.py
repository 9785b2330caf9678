"""OpenMP edges inside a process: fork copies the master's clock to every
worker, join gives the master the max of the team, the k-th barrier of
every thread within one parallel region is one instance (max of all), and
tasks (tasks.py) wait for their creation and hold back the taskwaits and
barriers that wait for them.

Parallel regions are the master's outermost visits of regions with paradigm
"openmp" and role "parallel". The master forks at its fork record if the
trace has one (an event with the role THREAD_FORK: OTF2's ThreadFork) before
the region's entry, else at the entry, and joins at its join record after
the exit, else at the exit: an oversubscribed master may stamp its entry
milliseconds after its workers started. A worker with its own records of
the regions (OTF2: every thread enters the parallel region) starts and
ends each one at its own k-th outermost visit (not before the fork, not
after the join), else at the master's fork and join; its barriers belong
to the region of its own visit. Workers thus need no region records.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis.replay.collectives import collective_callpaths
from popview.analysis.replay.graph import (BARRIER_BEGIN, BARRIER_END, FORK_MASTER, FORK_WORKER, JOIN_MASTER,
                                           JOIN_WORKER, ZERO_LENGTH_END, GraphBuilder)
from popview.analysis.replay.records import Calls, select
from popview.analysis.replay.tasks import TaskStats, add_tasks
from popview.model.definitions import THREAD_FORK, THREAD_JOIN


@dataclass
class OpenMPStats:
    barriers: int = 0
    incomplete_barriers: int = 0
    tasks: TaskStats = field(default_factory=TaskStats)


@dataclass
class Barriers:
    """Barrier calls inside parallel regions, with the virtual node of their instance."""

    loc: np.ndarray
    begin: np.ndarray
    region: np.ndarray
    virtual: np.ndarray
    instances: int = 0
    incomplete: int = 0


def add_openmp(builder: GraphBuilder, calls: Calls, defs) -> OpenMPStats:
    stats = OpenMPStats()
    par = calls.select(collective_callpaths(defs, "openmp", ("parallel",)))
    bar = calls.select(collective_callpaths(defs, "openmp", ("barrier",)))
    team = _teams(defs)
    regions = _outermost(par, team)
    windows = _thread_windows(calls.reader, defs, par, regions, team)
    if len(regions["begin"]):
        _fork_join(builder, windows, team)
    barriers = _barriers(builder, bar, regions, windows, team)
    stats.barriers, stats.incomplete_barriers = barriers.instances, barriers.incomplete
    stats.tasks = add_tasks(builder, calls, defs, regions, barriers, enclosing_region)
    return stats


def _teams(defs) -> dict[int, tuple[int, np.ndarray]]:
    """process -> (master location, worker locations)."""
    out: dict[int, list] = {}
    for i, loc in enumerate(defs.locations):
        if loc.kind == "thread":
            out.setdefault(loc.process, []).append((loc.thread, i))
    return {p: (min(m)[1], np.array([i for _, i in sorted(m)[1:]], np.int32)) for p, m in out.items()}


def _outer_visits(par, loc: int) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) of the outermost visits of location `loc`."""
    lo, hi = np.searchsorted(par["loc"], [loc, loc + 1])
    b, e = par["begin"][lo:hi], par["end"][lo:hi]
    if len(b) == 0:
        return b, e
    outer = np.ones(len(b), bool)
    outer[1:] = b[1:] >= np.maximum.accumulate(e)[:-1]
    return b[outer], e[outer]


def _outermost(par, team) -> dict[str, np.ndarray]:
    """The master's outermost parallel regions, with their process."""
    masters = {m: p for p, (m, _) in team.items()}
    parts = []
    for m, p in masters.items():
        b, e = _outer_visits(par, m)
        if len(b):
            parts.append((b, e, np.full(len(b), p, np.int64)))
    if not parts:
        z = np.zeros(0, np.int64)
        return {"begin": z, "end": z, "process": z}
    b, e, p = (np.concatenate(c) for c in zip(*parts))
    return {"begin": b, "end": e, "process": p}


@dataclass
class Windows:
    """Per location and region instance, where the thread's part of it lies:
    master rows at its fork and join, worker rows at its own visit."""

    loc: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    region: np.ndarray


def _thread_windows(reader, defs, par, regions, team) -> Windows:
    fork, join = _fork_join_events(reader, defs)
    parts = []
    for p in np.unique(regions["process"]):
        idx = np.flatnonzero(regions["process"] == p)
        master, workers = team[int(p)]
        b, e = regions["begin"][idx], regions["end"][idx]
        f = _nearest(fork, master, b, before=True, bound=np.r_[np.iinfo(np.int64).min, e[:-1]])
        j = _nearest(join, master, e, before=False, bound=np.r_[b[1:], np.iinfo(np.int64).max])
        parts.append((np.full(len(idx), master), f, j, idx))
        for w in workers:
            wb, we = _outer_visits(par, int(w))
            if len(wb) == len(idx):
                wb, we = np.clip(wb, f, j), np.clip(we, f, j)
            else:
                wb, we = f, j
            parts.append((np.full(len(idx), w), wb, np.maximum(we, wb), idx))
    if not parts:
        z = np.zeros(0, np.int64)
        return Windows(z, z, z, z)
    loc, b, e, r = (np.concatenate(c).astype(np.int64) for c in zip(*parts))
    return Windows(loc, b, e, r)


def _fork_join_events(reader, defs) -> tuple[dict, dict]:
    """Per location, sorted times of fork and join records (events with the roles
    THREAD_FORK / THREAD_JOIN: OTF2's ThreadFork / ThreadJoin)."""
    out = []
    for role in (THREAD_FORK, THREAD_JOIN):
        codes = defs.event_codes(role)
        ev = select(reader, "events", "type", codes, ["loc", "time"]) if codes else None
        per = {}
        if ev is not None and len(ev["loc"]):
            order = np.lexsort((ev["time"], ev["loc"]))
            loc, t = ev["loc"][order], ev["time"][order]
            for l_ in np.unique(loc):
                lo, hi = np.searchsorted(loc, [l_, l_ + 1])
                per[int(l_)] = t[lo:hi]
        out.append(per)
    return out[0], out[1]


def _nearest(events: dict, loc: int, at: np.ndarray, before: bool, bound: np.ndarray) -> np.ndarray:
    """For each time in `at`: the latest event of `loc` at or before it (and
    after `bound`), or the earliest at or after it (and before `bound`); else itself."""
    t = events.get(int(loc))
    if t is None or len(t) == 0:
        return at.copy()
    if before:
        k = np.searchsorted(t, at, side="right") - 1
        ok = k >= 0
        found = np.where(ok, t[np.maximum(k, 0)], at)
        return np.where(ok & (found > bound), found, at)
    k = np.searchsorted(t, at, side="left")
    ok = k < len(t)
    found = np.where(ok, t[np.minimum(k, len(t) - 1)], at)
    return np.where(ok & (found < bound), found, at)


def _fork_join(builder: GraphBuilder, windows: Windows, team) -> None:
    is_master = np.zeros(builder.n_loc, bool)
    is_master[[m for m, _ in team.values()]] = True
    m_rows = np.flatnonzero(is_master[windows.loc])
    w_rows = np.flatnonzero(~is_master[windows.loc])
    if len(w_rows) == 0:
        return
    master_row = np.full(int(windows.region.max()) + 1, -1, np.int64)
    master_row[windows.region[m_rows]] = m_rows
    fm = builder.nodes(windows.loc[m_rows], windows.begin[m_rows], FORK_MASTER)
    jm = builder.nodes(windows.loc[m_rows], windows.end[m_rows], JOIN_MASTER)
    pos = np.full(len(windows.loc), -1, np.int64)
    pos[m_rows] = np.arange(len(m_rows))
    of = pos[master_row[windows.region[w_rows]]]
    fw = builder.nodes(windows.loc[w_rows], windows.begin[w_rows], FORK_WORKER, copy=True)
    builder.edges(fm[of], fw, False)
    jw = builder.nodes(windows.loc[w_rows], windows.end[w_rows], JOIN_WORKER)
    builder.edges(jw, jm[of], False)


def _barriers(builder: GraphBuilder, bar, regions, windows: Windows, team) -> Barriers:
    """Barrier instances: (parallel region, k-th barrier of each thread in it)."""
    z = np.zeros(0, np.int64)
    if len(bar["loc"]) == 0 or len(regions["begin"]) == 0:
        return Barriers(z, z, z, z)
    own = enclosing_region({"begin": windows.begin, "end": windows.end, "process": windows.loc},
                           bar["loc"].astype(np.int64), bar["begin"])
    region = np.where(own >= 0, windows.region[np.maximum(own, 0)], -1)
    inside = region >= 0
    loc, b, e, region = bar["loc"][inside], bar["begin"][inside], bar["end"][inside], region[inside]
    if len(loc) == 0:
        return Barriers(z, z, z, z)
    order = np.lexsort((b, loc, region))
    r, lo = region[order], loc[order]
    new_run = np.ones(len(order), bool)
    new_run[1:] = (r[1:] != r[:-1]) | (lo[1:] != lo[:-1])
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(len(order)), 0))
    k = np.empty(len(order), np.int64)
    k[order] = np.arange(len(order)) - run_start
    _, group = np.unique(region * (int(k.max()) + 1) + k, return_inverse=True)
    group = group.ravel()
    n_groups = int(group.max()) + 1
    size = np.bincount(group, minlength=n_groups)
    team_size = np.array([1 + len(team[int(p)][1]) for p in regions["process"]], np.int64)
    g_region = np.zeros(n_groups, np.int64)
    g_region[group] = region
    incomplete = int((size != team_size[g_region]).sum())
    b_ids = builder.nodes(loc, b, BARRIER_BEGIN)
    e_ids = builder.nodes(loc, e, BARRIER_END, priority=np.where(e <= b, ZERO_LENGTH_END, 1))
    virt = builder.virtual(n_groups)
    builder.edges(b_ids, virt[group], False)
    builder.edges(virt[group], e_ids, False)
    return Barriers(loc.astype(np.int64), b, region, virt[group], n_groups, incomplete)


def enclosing_region(regions, proc, begin) -> np.ndarray:
    """Index of the parallel region of `proc` that each time falls in, or -1.
    Regions and times sorted together by (process, time): each time takes the
    last region row before it, if that region is of its process and still open."""
    n_r = len(regions["begin"])
    all_proc = np.concatenate([regions["process"], proc])
    all_time = np.concatenate([regions["begin"], begin])
    is_time = np.r_[np.zeros(n_r, np.int8), np.ones(len(begin), np.int8)]
    order = np.lexsort((is_time, all_time, all_proc))
    row = np.where(is_time[order] == 0, np.arange(len(order)), -1)
    last = np.maximum.accumulate(row)
    region = np.where(last >= 0, order[np.maximum(last, 0)], -1)
    out = np.full(len(begin), -1, np.int64)
    queries = is_time[order] == 1
    r = region[queries]
    ok = r >= 0
    ok[ok] = (regions["process"][r[ok]] == all_proc[order][queries][ok]) & (
        all_time[order][queries][ok] < regions["end"][r[ok]])
    out[order[queries] - n_r] = np.where(ok, r, -1)
    return out
