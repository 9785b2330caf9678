"""What ties the locations of a process together: OpenMP teams and tasks.

A first pass summarises each location's fork, team and task records (numba):
- forks, with the regions open at the fork, the join time and the thread team
  (the communicator of the forking thread's own ThreadTeamBegin);
- the intervals in which the location works in another thread's team
  (ThreadTeamBegin .. ThreadTeamEnd);
- fragments of explicit tasks (generation number != 0; Score-P numbers each
  thread's implicit task 0): from a ThreadTaskSwitch to the task until the
  next switch or its ThreadTaskComplete, with the net effect on the task's
  stack (leaves below the fragment's start, regions still open at its end).

`link_process` then gives each location that depends on others its Links:
every team interval gets the global call path of the matching fork (same
process, another location, same team, the latest fork open at the
interval's begin), and every task fragment the regions open in its task
when it starts, by replaying the task's fragments in time order across
threads. OpenMP 1.x archives (OmpFork/OmpJoin, no team records) get their
workers' intervals from the master thread's outermost forks."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.jit import njit
from popview.readers.otf2 import raw
from popview.readers.otf2.callpaths import CallPaths, get
from popview.readers.otf2.kernel import _grow, _ns
from popview.readers.otf2.mapping import Links
from popview.readers.otf2.raw import RawEvents

THREAD_KINDS = np.array([raw.THREAD_FORK, raw.THREAD_JOIN, raw.TEAM_BEGIN, raw.TEAM_END, raw.TASK_CREATE,
                         raw.TASK_SWITCH, raw.TASK_COMPLETE], np.int8)


@dataclass
class Summary:
    """One location's forks, team intervals and explicit task fragments (times in ns)."""

    fork_time: np.ndarray
    fork_join: np.ndarray
    fork_team: np.ndarray          # -1: unknown (no ThreadTeamBegin after the fork)
    fork_in_task: np.ndarray       # forked inside an explicit task: its workers are not grafted
    fork_offsets: np.ndarray       # CSR of the regions open at the fork, outermost first
    fork_regions: np.ndarray
    fork_unjoined: np.ndarray      # no ThreadJoin: joined at its return to the fork's level (the region's leave)
    team_begin: np.ndarray
    team_end: np.ndarray
    team_comm: np.ndarray
    task_team: np.ndarray          # task key: (team, creating thread, generation) or (-1, -1, task id)
    task_thread: np.ndarray
    task_id: np.ndarray
    task_begin: np.ndarray
    task_pops: np.ndarray          # leaves below the fragment's start
    task_done: np.ndarray          # ended by the task's completion
    task_offsets: np.ndarray       # CSR of the regions entered in the fragment and still open at its end
    task_regions: np.ndarray
    team_records: bool

    @property
    def works_in_teams(self) -> bool:
        return len(self.team_begin) > 0

    @property
    def runs_tasks(self) -> bool:
        return len(self.task_begin) > 0


def _kinds(*kinds) -> np.ndarray:
    """A table by record kind (as uint8) of whether it is one of `kinds`: one lookup a record."""
    table = np.zeros(256, bool)
    table[np.asarray(kinds, np.int8).view(np.uint8)] = True
    return table


_IS_THREAD_KIND, _IS_TEAM_KIND = _kinds(*THREAD_KINDS), _kinds(raw.TEAM_BEGIN, raw.TEAM_END)


def has_thread_records(rec: RawEvents) -> bool:
    return bool(_IS_THREAD_KIND[rec.kind.astype(np.int8, copy=False).view(np.uint8)].any())


def summarize(rec: RawEvents, region_index: np.ndarray, offset: int, ns_per_tick: float) -> Summary:
    team_records = bool(_IS_TEAM_KIND[rec.kind.astype(np.int8, copy=False).view(np.uint8)].any())
    out = _summarize(rec.kind, rec.time, rec.a, rec.b, rec.c, region_index.astype(np.int64), np.int64(offset),
                     np.float64(ns_per_tick))
    return Summary(*out, team_records=team_records)


@njit(cache=True)
def _summarize(kind, ticks, a, b, c, region_index, offset, ns_per_tick):
    n = len(kind)
    n_fork = n_team = n_task = 0
    for k in kind:
        n_fork += k == raw.THREAD_FORK
        n_team += k == raw.TEAM_BEGIN
        n_task += k == raw.TASK_SWITCH
    f_time = np.empty(n_fork, np.int64)
    f_join = np.empty(n_fork, np.int64)
    f_team = np.full(n_fork, -1, np.int64)
    f_in_task = np.zeros(n_fork, np.bool_)
    f_off = np.zeros(n_fork + 1, np.int64)
    f_reg = np.empty(16, np.int64)
    f_back = np.full(n_fork, -1, np.int64)     # the thread's first return to the fork's level after it
    f_unjoined = np.zeros(n_fork, np.bool_)
    i_begin = np.empty(n_team, np.int64)
    i_end = np.empty(n_team, np.int64)
    i_comm = np.empty(n_team, np.int64)
    g_team = np.empty(n_task, np.int64)
    g_thread = np.empty(n_task, np.int64)
    g_id = np.empty(n_task, np.int64)
    g_begin = np.empty(n_task, np.int64)
    g_pops = np.zeros(n_task, np.int64)
    g_done = np.zeros(n_task, np.bool_)
    g_off = np.zeros(n_task + 1, np.int64)
    g_reg = np.empty(16, np.int64)
    own = np.empty(64, np.int64)        # the location's own stack (its implicit task)
    task = np.empty(64, np.int64)       # regions entered in the running task fragment
    forks = np.empty(n_fork + 1, np.int64)     # open forks, innermost last
    teams = np.empty(n_team + n_fork + 1, np.int64)   # open team memberships: interval, or -1 for the own team
    d_own = d_task = d_forks = d_teams = 0
    nf = ni = ng = 0
    awaiting = -1             # a fork whose own ThreadTeamBegin has not come yet
    running = -1              # the running task fragment
    t_last = _ns(ticks[n - 1], offset, ns_per_tick) if n else np.int64(0)
    for r in range(n):
        k = kind[r]
        if k == raw.ENTER:
            region = region_index[a[r]] if 0 <= a[r] < len(region_index) else -1
            if region < 0:
                continue
            if running >= 0:
                if d_task == len(task):
                    task = _grow(task)
                task[d_task] = region
                d_task += 1
            else:
                if d_own == len(own):
                    own = _grow(own)
                own[d_own] = region
                d_own += 1
        elif k == raw.LEAVE:
            if running >= 0:
                if d_task > 0:
                    d_task -= 1
                else:
                    g_pops[running] += 1
            elif d_own > 0:
                d_own -= 1
                if d_forks > 0:
                    top = forks[d_forks - 1]
                    if f_back[top] < 0 and d_own == f_off[top + 1] - f_off[top]:
                        f_back[top] = _ns(ticks[r], offset, ns_per_tick)
        elif k == raw.THREAD_FORK:
            t = _ns(ticks[r], offset, ns_per_tick)
            # a fork beside one never joined (a trace without ThreadJoin): that one ended at its
            # return to its level, the leave of its parallel region
            while d_forks > 0 and f_off[forks[d_forks - 1] + 1] - f_off[forks[d_forks - 1]] == d_own:
                top = forks[d_forks - 1]
                f_join[top] = f_back[top] if f_back[top] >= 0 else t
                f_unjoined[top] = True
                d_forks -= 1
            f_time[nf] = t
            f_join[nf] = t_last
            f_in_task[nf] = running >= 0
            if f_off[nf] + d_own > len(f_reg):
                f_reg = _grow(f_reg, f_off[nf] + d_own)
            f_reg[f_off[nf]:f_off[nf] + d_own] = own[:d_own]
            f_off[nf + 1] = f_off[nf] + d_own
            forks[d_forks] = nf
            d_forks += 1
            awaiting = nf
            nf += 1
        elif k == raw.THREAD_JOIN:
            if d_forks > 0:
                d_forks -= 1
                f_join[forks[d_forks]] = _ns(ticks[r], offset, ns_per_tick)
                if awaiting == forks[d_forks]:
                    awaiting = -1
        elif k == raw.TEAM_BEGIN:
            if awaiting >= 0:
                f_team[awaiting] = a[r]
                awaiting = -1
                teams[d_teams] = -1
            else:
                i_begin[ni] = _ns(ticks[r], offset, ns_per_tick)
                i_end[ni] = t_last
                i_comm[ni] = a[r]
                teams[d_teams] = ni
                ni += 1
            d_teams += 1
        elif k == raw.TEAM_END:
            if d_teams > 0:
                d_teams -= 1
                if teams[d_teams] >= 0:
                    i_end[teams[d_teams]] = _ns(ticks[r], offset, ns_per_tick)
        elif k == raw.TASK_SWITCH or k == raw.TASK_COMPLETE:
            if running >= 0:
                g_done[running] = k == raw.TASK_COMPLETE
                if g_off[running] + d_task > len(g_reg):
                    g_reg = _grow(g_reg, g_off[running] + d_task)
                g_reg[g_off[running]:g_off[running] + d_task] = task[:d_task]
                g_off[running + 1] = g_off[running] + d_task
                running = -1
            if k == raw.TASK_SWITCH and a[r] != 0:
                running = ng
                g_team[ng], g_thread[ng], g_id[ng] = c[r], b[r], a[r]
                g_begin[ng] = _ns(ticks[r], offset, ns_per_tick)
                d_task = 0
                ng += 1
    if running >= 0:
        if g_off[running] + d_task > len(g_reg):
            g_reg = _grow(g_reg, g_off[running] + d_task)
        g_reg[g_off[running]:g_off[running] + d_task] = task[:d_task]
        g_off[running + 1] = g_off[running] + d_task
    for i in range(d_forks):            # never joined
        f_unjoined[forks[i]] = True
        if f_back[forks[i]] >= 0:
            f_join[forks[i]] = f_back[forks[i]]
    return (f_time[:nf], f_join[:nf], f_team[:nf], f_in_task[:nf], f_off[:nf + 1], f_reg[:f_off[nf]],
            f_unjoined[:nf],
            i_begin[:ni], i_end[:ni], i_comm[:ni],
            g_team[:ng], g_thread[:ng], g_id[:ng], g_begin[:ng], g_pops[:ng], g_done[:ng], g_off[:ng + 1],
            g_reg[:g_off[ng]])


# ------------------------------------------------------------------ linking

@dataclass
class Member:
    """A location of the process as link_process sees it."""

    loc: int
    thread: int
    summary: Summary | None
    dependent: bool            # its rows wait for its Links


def link_process(members: list[Member], callpaths: CallPaths) -> tuple[dict[int, Links], dict[str, int]]:
    """Links of the dependent members, and counts for the warnings."""
    with_summary = [m for m in members if m.summary is not None]
    forks = _forks([m.summary for m in with_summary], [m.loc for m in with_summary])
    teams = _team_intervals(members, forks)
    team_base = _resolve_teams(forks, teams, callpaths)
    depths = callpaths.depths()
    restores = _restores([m.summary for m in with_summary], [m.loc for m in with_summary])
    links: dict[int, Links] = {}
    for m in members:
        if not m.dependent:
            continue
        sel = teams["loc"] == m.loc
        base = team_base[sel]
        offsets, regions = restores.get(m.loc, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        links[m.loc] = Links(teams["begin"][sel], teams["end"][sel], base,
                             np.where(base >= 0, depths[np.maximum(base, 0)], -1), offsets, regions)
    stats = {"OpenMP team memberships without a matching fork": int(((team_base < 0) & ~teams["root"]).sum()),
             "parallel regions forked inside a task": int(forks["in_task"].sum())}
    return links, stats


def _forks(summaries: list[Summary], locs: list[int]) -> dict[str, np.ndarray]:
    """The forks of several locations as one table (regions as CSR)."""
    cols = {"time": "fork_time", "join": "fork_join", "team": "fork_team", "in_task": "fork_in_task"}
    parts = {k: [getattr(s, v) for s in summaries] for k, v in cols.items()}
    out = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in parts.items()}
    out["in_task"] = out["in_task"].astype(bool)
    out["loc"] = np.concatenate([np.full(len(s.fork_time), loc, np.int64) for s, loc in zip(summaries, locs)]
                                or [np.zeros(0, np.int64)])
    out["offsets"], out["regions"] = _join_csr([s.fork_offsets for s in summaries],
                                               [s.fork_regions for s in summaries])
    return out


def _join_csr(offsets: list[np.ndarray], regions: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not offsets:
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    shift = np.cumsum([0] + [len(r) for r in regions[:-1]])
    joined = np.concatenate([[0]] + [o[1:] + s for o, s in zip(offsets, shift)]).astype(np.int64)
    return joined, np.concatenate(regions).astype(np.int64)


def _team_intervals(members: list[Member], forks: dict) -> dict[str, np.ndarray]:
    """Every dependent member's team intervals; for members of OpenMP 1.x archives
    (no team records) the outermost forks of the process's first thread."""
    rows = []
    master = min((m for m in members if m.summary is not None and len(m.summary.fork_time)),
                 key=lambda m: m.thread, default=None)
    for m in members:
        s = m.summary
        if s is not None and s.team_records:
            rows.append((np.full(len(s.team_begin), m.loc), s.team_begin, s.team_end, s.team_comm))
        elif m.dependent and master is not None and m is not master:
            sel = forks["loc"] == master.loc
            t, j = forks["time"][sel], forks["join"][sel]
            outer = np.ones(len(t), bool)
            outer[1:] = t[1:] > np.maximum.accumulate(j)[:-1]
            rows.append((np.full(int(outer.sum()), m.loc), t[outer], j[outer], np.full(int(outer.sum()), -1)))
    if not rows:
        z = np.zeros(0, np.int64)
        return {"loc": z, "begin": z, "end": z, "comm": z, "root": np.zeros(0, bool)}
    loc, begin, end, comm = (np.concatenate(c).astype(np.int64) for c in zip(*rows))
    return {"loc": loc, "begin": begin, "end": end, "comm": comm, "root": np.zeros(len(loc), bool)}


def _resolve_teams(forks: dict, teams: dict, callpaths: CallPaths) -> np.ndarray:
    """The fork call path of each team interval (-1: none); marks in teams["root"]
    the intervals whose fork was made outside every region."""
    fo = np.argsort(forks["time"], kind="stable")
    to = np.argsort(teams["begin"], kind="stable")
    n_loc = int(max(forks["loc"].max(initial=-1), teams["loc"].max(initial=-1))) + 1
    callpaths.reserve(len(forks["regions"]))
    team_base, at_root, callpaths.n = _resolve(
        forks["loc"][fo], forks["time"][fo], forks["join"][fo], forks["team"][fo], forks["in_task"][fo],
        *_reorder_csr(forks["offsets"], forks["regions"], fo),
        teams["loc"][to], teams["begin"][to], teams["end"][to], teams["comm"][to], n_loc,
        *callpaths.tables_for_numba(), callpaths.n)
    out_t = np.empty_like(team_base)
    out_t[to] = team_base
    root = np.empty(len(to), bool)
    root[to] = at_root
    teams["root"] = root
    return out_t


def _reorder_csr(offsets: np.ndarray, regions: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.diff(offsets)[order]
    new = np.zeros(len(order) + 1, np.int64)
    np.cumsum(lengths, out=new[1:])
    idx = np.repeat(offsets[:-1][order] - new[:-1], lengths) + np.arange(new[-1])
    return new, regions[idx]


@njit(cache=True)
def _resolve(f_loc, f_time, f_join, f_team, f_in_task, f_off, f_reg, i_loc, i_begin, i_end, i_comm, n_loc,
             keys, values, parent, region, depth, n):
    """Forks and team intervals in time order (a fork before an interval starting
    at the same time): a fork's call path continues its location's own graft."""
    nf, ni = len(f_time), len(i_begin)
    fork_cp = np.full(nf, -1, np.int64)
    team_base = np.full(ni, -1, np.int64)
    at_root = np.zeros(ni, np.bool_)      # matched a fork made outside every region
    current = np.full(n_loc, -1, np.int64)
    active = np.empty(nf + 1, np.int64)
    n_active = 0
    jf = ji = 0
    while jf < nf or ji < ni:
        if jf < nf and (ji >= ni or f_time[jf] <= i_begin[ji]):
            j = jf
            jf += 1
            q = current[f_loc[j]]
            base = team_base[q] if q >= 0 and i_end[q] >= f_time[j] else np.int64(-1)
            if not f_in_task[j]:
                cp = base
                for s in range(f_off[j], f_off[j + 1]):
                    cp, n = get(keys, values, parent, region, depth, n, cp, f_reg[s])
                fork_cp[j] = cp
            active[n_active] = j
            n_active += 1
        else:
            q = ji
            ji += 1
            current[i_loc[q]] = q
            if n_active > 64:          # drop forks joined before now
                kept = 0
                for x in range(n_active):
                    if f_join[active[x]] >= i_begin[q]:
                        active[kept] = active[x]
                        kept += 1
                n_active = kept
            for x in range(n_active - 1, -1, -1):
                j = active[x]
                if f_join[j] < i_begin[q] or f_loc[j] == i_loc[q]:
                    continue
                if f_team[j] >= 0 and i_comm[q] >= 0 and f_team[j] != i_comm[q]:
                    continue
                team_base[q] = fork_cp[j]
                at_root[q] = fork_cp[j] < 0 and not f_in_task[j]
                break
    return team_base, at_root, n


def _restores(summaries: list[Summary], locs: list[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per location with task fragments: the regions to re-enter at each (CSR, in its record order)."""
    have = [(s, loc) for s, loc in zip(summaries, locs) if s.runs_tasks]
    if not have:
        return {}
    key = [np.concatenate([getattr(s, f) for s, _ in have]) for f in ("task_team", "task_thread", "task_id")]
    begin = np.concatenate([s.task_begin for s, _ in have])
    pops = np.concatenate([s.task_pops for s, _ in have])
    done = np.concatenate([s.task_done for s, _ in have])
    offsets, regions = _join_csr([s.task_offsets for s, _ in have], [s.task_regions for s, _ in have])
    order = np.lexsort((begin, key[2], key[1], key[0]))
    k = [x[order] for x in key]
    first = np.r_[True, (k[0][1:] != k[0][:-1]) | (k[1][1:] != k[1][:-1]) | (k[2][1:] != k[2][:-1])]
    start, length, data = _replay(order, first, pops, done, offsets, regions)
    out, at = {}, 0
    for s, loc in have:
        sel = slice(at, at + len(s.task_begin))
        at += len(s.task_begin)
        lengths = length[sel]
        off = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=off[1:])
        idx = np.repeat(start[sel] - off[:-1], lengths) + np.arange(off[-1])
        out[loc] = (off, data[idx])
    return out


@njit(cache=True)
def _replay(order, first, pops, done, offsets, regions):
    """Each task's fragments in time order: the stack at a fragment's start is the
    previous fragment's end. Returns, per fragment, where its start stack is in `data`."""
    n = len(order)
    start = np.zeros(n, np.int64)
    length = np.zeros(n, np.int64)
    data = np.empty(16, np.int64)
    nd = 0
    stack = np.empty(16, np.int64)
    depth = 0
    for x in range(n):
        j = order[x]
        if first[x]:
            depth = 0
        if nd + depth > len(data):
            data = _grow(data, nd + depth)
        data[nd:nd + depth] = stack[:depth]
        start[j] = nd
        length[j] = depth
        nd += depth
        depth = max(depth - pops[j], 0)
        pushed = offsets[j + 1] - offsets[j]
        if depth + pushed > len(stack):
            stack = _grow(stack, depth + pushed)
        stack[depth:depth + pushed] = regions[offsets[j]:offsets[j + 1]]
        depth += pushed
        if done[j]:
            depth = 0
    return start, length, data[:nd]
