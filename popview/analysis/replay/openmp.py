"""OpenMP edges inside a process: fork copies the master's clock to every
worker, join gives the master the max of the team, the k-th barrier of
every thread within one parallel region is one instance (max of all), and
tasks (tasks.py) wait for their creation and hold back the taskwaits and
barriers that wait for them.

Parallel regions are the master's outermost visits of regions with paradigm
"openmp" and role "parallel"; worker nodes are placed at the master's fork
and join times, so workers need no region records of their own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis.replay.collectives import collective_callpaths
from popview.analysis.replay.graph import (BARRIER_BEGIN, BARRIER_END, FORK_MASTER, FORK_WORKER, JOIN_MASTER,
                                           JOIN_WORKER, ZERO_LENGTH_END, GraphBuilder)
from popview.analysis.replay.records import Calls
from popview.analysis.replay.tasks import TaskStats, add_tasks


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
    if len(regions["begin"]):
        _fork_join(builder, regions, team)
    barriers = _barriers(builder, bar, regions, team)
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


def _outermost(par, team) -> dict[str, np.ndarray]:
    """The master's outermost parallel regions, with their process."""
    masters = {m: p for p, (m, _) in team.items()}
    parts = []
    for m, p in masters.items():
        lo, hi = np.searchsorted(par["loc"], [m, m + 1])
        if hi <= lo:
            continue
        b, e = par["begin"][lo:hi], par["end"][lo:hi]
        outer = np.ones(len(b), bool)
        outer[1:] = b[1:] >= np.maximum.accumulate(e)[:-1]
        parts.append((b[outer], e[outer], np.full(int(outer.sum()), p, np.int64)))
    if not parts:
        z = np.zeros(0, np.int64)
        return {"begin": z, "end": z, "process": z}
    b, e, p = (np.concatenate(c) for c in zip(*parts))
    return {"begin": b, "end": e, "process": p}


def _fork_join(builder: GraphBuilder, regions, team) -> None:
    for p in np.unique(regions["process"]):
        sel = regions["process"] == p
        master, workers = team[int(p)]
        if len(workers) == 0:
            continue
        b, e = regions["begin"][sel], regions["end"][sel]
        n, w = len(b), len(workers)
        fm = builder.nodes(np.full(n, master), b, FORK_MASTER)
        fw = builder.nodes(np.tile(workers, n), np.repeat(b, w), FORK_WORKER, copy=True)
        builder.edges(np.repeat(fm, w), fw, False)
        jw = builder.nodes(np.tile(workers, n), np.repeat(e, w), JOIN_WORKER)
        jm = builder.nodes(np.full(n, master), e, JOIN_MASTER)
        builder.edges(jw, np.repeat(jm, w), False)


def _barriers(builder: GraphBuilder, bar, regions, team) -> Barriers:
    """Barrier instances: (parallel region, k-th barrier of each thread in it)."""
    z = np.zeros(0, np.int64)
    if len(bar["loc"]) == 0 or len(regions["begin"]) == 0:
        return Barriers(z, z, z, z)
    loc_proc = builder.loc_process
    region = enclosing_region(regions, loc_proc[bar["loc"]], bar["begin"])
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
