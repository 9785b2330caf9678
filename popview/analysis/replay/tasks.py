"""OpenMP tasks: a task cannot start before it was created, and a taskwait
or barrier that waits for a task does not end before it completed.

The records, in the model's vocabulary (EventType.role, set by the readers):
  Task ids (Extrae's 60000028): the id is written where the task is created
    (inside its instantiation) and where it starts to run (the entry of the
    task function, an OpenMP region with role "task"): per process, the
    first occurrence of an id is the creation, the next one the start; the
    task completes at the end of the task-function call on that thread that
    is open at its start. Taskwait events (Extrae's 60000022): the intervals
    from an event with a value to the next one with value 0.
  Task create / switch / complete records (Score-P's, value = generation
    number + 1): per process the create, the first switch to that
    generation after it (the start) and the first complete after that, on
    whichever thread it happens (untied tasks move). The creating thread is
    not kept, and generation numbers count per creating thread, so a number
    created more than once in a process cannot be told apart: such tasks are
    reported, not replayed. Taskwaits are OpenMP regions with role "wait".
The edges: creation -> start; completion -> the end of the first taskwait
of the creating thread in the same task (the innermost task execution open
on that thread, or its implicit task) that begins after the creation;
completion -> the instance of the creating thread's next barrier in the
parallel region (a barrier waits for every task the team created before
it; the region's join needs no edge: it waits for the whole team anyway).
Task dependencies (depend clauses) are recorded by neither format and not
replayed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis.replay.graph import TASK_COMPLETE, TASK_CREATE, TASK_START, TASKWAIT_END, GraphBuilder
from popview.analysis.replay.records import Calls, select
from popview.jit import njit
from popview.model import definitions as vocab

# the event roles read here, and their index in the "role" column of the selected events
_ROLES = (vocab.TASK_ID, vocab.TASK_CREATE, vocab.TASK_SWITCH, vocab.TASK_COMPLETE, vocab.TASKWAIT)
ID, CREATE, SWITCH, COMPLETE, WAIT = range(len(_ROLES))


@dataclass
class TaskStats:
    tasks: int = 0               # creations followed to their start
    unstarted: int = 0           # created, or started, without the other half in the records
    ambiguous: int = 0           # OTF2 generation numbers created more than once in a process
    no_completion: int = 0       # started tasks whose completion was not found
    taskwaits: int = 0


@dataclass
class Tasks:
    """One row per task followed: where it was created, started and completed (-1 unknown)."""

    create_loc: np.ndarray
    create_time: np.ndarray
    start_loc: np.ndarray
    start_time: np.ndarray
    end_loc: np.ndarray           # an untied OTF2 task may complete on another thread
    end_time: np.ndarray


def add_tasks(builder: GraphBuilder, calls: Calls, defs, regions, barriers, enclosing_region) -> TaskStats:
    stats = TaskStats()
    reader = calls.reader
    if not reader.has("events"):
        return stats
    codes = {role: defs.event_codes(role) for role in _ROLES}
    wanted = sorted({c for cs in codes.values() for c in cs})
    if not wanted:
        return stats
    ev = select(reader, "events", "type", wanted, ["loc", "time", "type", "value"])
    ev["role"] = np.full(len(ev["type"]), -1, np.int8)
    for k, role in enumerate(_ROLES):
        ev["role"][np.isin(ev["type"], codes[role])] = k
    if not np.isin(ev["role"], (ID, CREATE)).any():
        return stats
    proc = builder.loc_process
    executions = _visits(calls, defs, "task")
    by_id = (ev["role"] == ID).any()
    tasks = _by_task_id(ev, proc, executions, stats) if by_id else _by_generation(ev, proc, stats)
    stats.tasks = len(tasks.create_loc)
    if stats.tasks == 0:
        return stats
    created = builder.nodes(tasks.create_loc, tasks.create_time, TASK_CREATE)
    started = builder.nodes(tasks.start_loc, tasks.start_time, TASK_START)
    builder.edges(created, started, False)
    done = tasks.end_time >= 0
    stats.no_completion = int((~done).sum())
    completed = np.full(stats.tasks, -1, np.int64)
    completed[done] = builder.nodes(tasks.end_loc[done], tasks.end_time[done], TASK_COMPLETE)
    stats.taskwaits = _taskwaits(builder, calls, defs, ev, tasks, completed, executions)
    _barriers(builder, tasks, completed, regions, barriers, enclosing_region)
    return stats


def _visits(calls: Calls, defs, role: str) -> dict[str, np.ndarray]:
    """Visits of OpenMP regions with `role`, sorted by (location, begin, longest first)."""
    cps = [cp for cp, r in enumerate(defs.callpath_region)
           if defs.regions[int(r)].paradigm == "openmp" and defs.regions[int(r)].role == role]
    c = calls.select(cps)
    order = np.lexsort((c["begin"] - c["end"], c["begin"], c["loc"]))
    return {k: c[k][order].astype(np.int64) for k in ("loc", "begin", "end")}


def _by_task_id(ev, proc, executions, stats: TaskStats) -> Tasks:
    """Per (process, id): the first occurrence is the creation, the second the start."""
    sel = ev["role"] == ID
    loc, time, tid = ev["loc"][sel].astype(np.int64), ev["time"][sel], ev["value"][sel]
    order = np.lexsort((time, tid, proc[loc]))
    loc, time, tid, p = loc[order], time[order], tid[order], proc[loc[order]]
    first = np.r_[True, (tid[1:] != tid[:-1]) | (p[1:] != p[:-1])]
    has_start = np.r_[first[:-1] & ~first[1:], False]     # the next row is the same task
    stats.unstarted = int((first & ~has_start).sum())
    c = np.flatnonzero(has_start)
    start_loc, start_time = loc[c + 1], time[c + 1]
    call = _innermost(executions, start_loc, start_time)
    end = np.where(call >= 0, executions["end"][np.maximum(call, 0)], -1)
    return Tasks(loc[c], time[c], start_loc, start_time, start_loc, end)


def _by_generation(ev, proc, stats: TaskStats) -> Tasks:
    """Creates with a generation number unique in their process, their first
    switch after the creation and the first complete after the start."""
    parts = {}
    width = int(ev["value"].max()) + 1
    for role in (CREATE, SWITCH, COMPLETE):
        sel = (ev["role"] == role) & (ev["value"] > 1)         # value 1: the implicit task
        loc = ev["loc"][sel].astype(np.int64)
        key = proc[loc] * width + ev["value"][sel]
        order = np.lexsort((ev["time"][sel], key))
        parts[role] = (key[order], ev["time"][sel][order], loc[order])
    key, time, loc = parts[CREATE]
    counts = np.unique(key, return_counts=True)
    repeated = np.isin(key, counts[0][counts[1] > 1])
    stats.ambiguous = int(repeated.sum())
    key, time, loc = key[~repeated], time[~repeated], loc[~repeated]
    s = _first_after(parts[SWITCH][0], parts[SWITCH][1], key, time)
    stats.unstarted = int((s < 0).sum())
    ok = s >= 0
    key, time, loc, s = key[ok], time[ok], loc[ok], s[ok]
    start_time, start_loc = parts[SWITCH][1][s], parts[SWITCH][2][s]
    e = _first_after(parts[COMPLETE][0], parts[COMPLETE][1], key, start_time)
    end = np.where(e >= 0, parts[COMPLETE][1][np.maximum(e, 0)], -1)
    end_loc = np.where(e >= 0, parts[COMPLETE][2][np.maximum(e, 0)], start_loc)
    return Tasks(loc, time, start_loc, start_time, end_loc, end)


def _first_after(keys, times, q_key, q_time) -> np.ndarray:
    """Row of the first (key, time) at or after each query (-1: none); rows sorted by (key, time)."""
    return _search_in_runs(times, np.searchsorted(keys, q_key, side="left"),
                           np.searchsorted(keys, q_key, side="right"), q_time)


@njit(cache=True, nogil=True)
def _search_in_runs(times, lo, hi, q_time):
    """First row of times[lo:hi] at or after q_time, per query (-1: none)."""
    out = np.full(len(lo), -1, np.int64)
    for i in range(len(lo)):
        j = lo[i] + np.searchsorted(times[lo[i]:hi[i]], q_time[i])
        if j < hi[i]:
            out[i] = j
    return out


def _innermost(calls, q_loc, q_time) -> np.ndarray:
    """Index of the innermost call (latest begin) of each query's location open at its time, or -1."""
    n_loc = int(max(calls["loc"].max(initial=-1), q_loc.max(initial=-1))) + 1
    ptr = np.zeros(n_loc + 1, np.int64)
    np.cumsum(np.bincount(calls["loc"], minlength=n_loc), out=ptr[1:])
    return _innermost_kernel(ptr, calls["begin"], calls["end"], q_loc, q_time)


@njit(cache=True, nogil=True)
def _innermost_kernel(ptr, begin, end, q_loc, q_time):
    """Calls of a location nest (sorted by begin, longest first): the latest
    begin at or before t whose call is still open at t, walking outwards."""
    out = np.full(len(q_loc), -1, np.int64)
    for i in range(len(q_loc)):
        lo, hi = ptr[q_loc[i]], ptr[q_loc[i] + 1]
        j = lo + np.searchsorted(begin[lo:hi], q_time[i], side="right") - 1
        while j >= lo:
            if end[j] > q_time[i] or (end[j] == q_time[i] and begin[j] == q_time[i]):
                out[i] = j
                break
            j -= 1
    return out


def _taskwaits(builder: GraphBuilder, calls: Calls, defs, ev, tasks: Tasks, completed, executions) -> int:
    """Completion -> end of the creator's first later taskwait in the same task."""
    w_loc, w_begin, w_end = _taskwait_intervals(calls, defs, ev)
    if len(w_loc) == 0:
        return 0
    ok = completed >= 0
    c_loc, c_time = tasks.create_loc[ok], tasks.create_time[ok]
    c_ctx = _innermost(executions, c_loc, c_time)
    w_ctx = _innermost(executions, w_loc, w_begin)
    # creations, then taskwaits, in (location, task, time) order: each creation takes the next wait
    loc = np.r_[c_loc, w_loc]
    ctx = np.r_[c_ctx, w_ctx]
    time = np.r_[c_time, w_begin]
    is_wait = np.r_[np.zeros(len(c_loc), bool), np.ones(len(w_loc), bool)]
    order = np.lexsort((is_wait, time, ctx, loc))
    nxt = _next_target(loc[order], ctx[order], is_wait[order])
    row = np.empty(len(order), np.int64)
    row[order] = nxt
    target = row[:len(c_loc)]
    hit = target >= 0
    w = order[target[hit]] - len(c_loc)
    ends = builder.nodes(w_loc, w_end, TASKWAIT_END)
    builder.edges(completed[ok][hit], ends[w], False)
    return len(w_loc)


@njit(cache=True, nogil=True)
def _next_target(loc, ctx, is_target):
    """For each row, the position of the next target row with the same (loc, ctx), or -1."""
    out = np.full(len(loc), -1, np.int64)
    nxt = -1
    for i in range(len(loc) - 1, -1, -1):
        if i + 1 < len(loc) and (loc[i + 1] != loc[i] or ctx[i + 1] != ctx[i]):
            nxt = -1
        out[i] = nxt
        if is_target[i]:
            nxt = i
    return out


def _taskwait_intervals(calls: Calls, defs, ev):
    """Taskwaits: OpenMP regions with role "wait" and taskwait event pairs."""
    calls = _visits(calls, defs, "wait")
    sel = ev["role"] == WAIT
    loc, time, value = ev["loc"][sel].astype(np.int64), ev["time"][sel], ev["value"][sel]
    order = np.lexsort((time, loc))
    loc, time, value = loc[order], time[order], value[order]
    pair = np.flatnonzero((value[:-1] != 0) & (value[1:] == 0) & (loc[:-1] == loc[1:]))
    return (np.r_[calls["loc"], loc[pair]], np.r_[calls["begin"], time[pair]],
            np.r_[calls["end"], time[pair + 1]])


def _barriers(builder: GraphBuilder, tasks: Tasks, completed, regions, barriers, enclosing_region) -> None:
    """Completion -> the instance of the creator's next barrier in the same parallel region."""
    ok = completed >= 0
    if not ok.any() or len(barriers.loc) == 0:
        return
    c_loc, c_time, node = tasks.create_loc[ok], tasks.create_time[ok], completed[ok]
    region = enclosing_region(regions, builder.loc_process[c_loc], c_time)
    ptr = np.searchsorted(barriers.loc, np.arange(builder.n_loc + 1))
    j = _search_in_runs(barriers.begin, ptr[c_loc], ptr[c_loc + 1], c_time)
    same = j >= 0
    same[same] &= (barriers.region[j[same]] == region[same]) & (region[same] >= 0)
    builder.edges(node[same], barriers.virtual[j[same]], False)
