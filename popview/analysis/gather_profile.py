"""FocusInputs from a stored profile (Cube): the whole run or a call path.

The profile's derived time hierarchy gives the categories; computation
inside a parallel region (a call path under an OpenMP parallel region)
is `comp_parallel`, the rest `comp_serial`. R is the longest inclusive
time of a master thread (a worker's time in a parallel region also holds
its idle time between regions), or the longest useful time of a thread if
that is longer. Counters are summed over the call paths whose
time is all computation, as a profile cannot split a call path's counts
between computation and runtime time.
"""
from __future__ import annotations

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError, main_locations
from popview.analysis.inputs import FocusInputs, Region
from popview.analysis.profiles import experiment_profile
from popview.model.categories import CAT, N_CAT

# counters of other sources (perf events in Score-P) that count what PAPI's do; a PAPI one wins
_COUNTER_ALIASES = {"instructions": "PAPI_TOT_INS", "cycles": "PAPI_TOT_CYC"}
_DIRECT = ("mpi_p2p", "mpi_collective", "mpi_sync", "mpi_other", "mpi_io", "omp_sync", "omp_management",
           "omp_idle", "io", "other")


def _locations(exp, prof):
    locs, proc, thread, notes = main_locations(exp.definitions)
    if prof.n_locations != len(exp.definitions.locations):
        locs = np.arange(prof.n_locations)
        proc, thread = locs.copy(), np.zeros(len(locs), np.int64)
    return locs, proc, thread, notes


def focus_span(exp, focus: Focus):
    """(profile, call paths of the focus as a pre-order slice, locations the inputs use)."""
    if focus.kind not in ("whole", "callpath"):
        raise FocusError(f"{exp.source}: a profile has no time line: focus {focus.kind} needs a trace")
    prof = exp.profile() if hasattr(exp, "profile") else experiment_profile(exp)
    if not prof.has("time"):
        raise FocusError(f"{exp.source}: the profile has no time metric")
    cp = None
    if focus.kind == "callpath":
        cp = prof.find(focus.callpath)
        if cp is None:
            from popview.analysis.gather import no_callpath
            raise no_callpath(exp.source, focus.callpath, (prof.path(i) for i in range(prof.n_callpaths)))
    span = slice(0, prof.n_callpaths) if cp is None else slice(cp, cp + int(prof.subtree_size[cp]))
    return prof, span, _locations(exp, prof)[0]


def gather_profile(exp, focus: Focus) -> FocusInputs:
    prof, span, _ = focus_span(exp, focus)
    locs, proc, thread, notes = _locations(exp, prof)
    inside = _inside_parallel(prof)
    cat = np.zeros((len(locs), N_CAT))
    dense = {m: _matrix(prof, m)[span][:, locs] for m in ("time", "comp", *_DIRECT) if _has(prof, m)}
    if "comp" not in dense:
        raise FocusError(f"{exp.source}: the profile has no computation metric (no derived time hierarchy)")
    par = inside[span]
    cat[:, CAT["comp_parallel"]] = dense["comp"][par].sum(axis=0)
    cat[:, CAT["comp_serial"]] = dense["comp"][~par].sum(axis=0)
    for m in _DIRECT:
        if m in dense:
            cat[:, CAT[m]] = dense[m].sum(axis=0)
    inputs = FocusInputs(runtime=0.0, process=proc, thread=thread, cat=cat, notes=notes,
                         label=focus.label())
    time = dense["time"].sum(axis=0)
    team_gap = _team_time(inputs, time) if focus.kind == "callpath" and par[0] else 0.0
    # a worker can be recorded computing a little longer than its master's time in the focus
    # (popview-heat Score-P 1x2, region @107: 0.07 %); no thread computes longer than R
    inputs.runtime = float(max(time[inputs.masters].max(), inputs.useful.max(initial=0.0)))
    inputs.counters = _counters(prof, dense, span, locs)
    inputs.regions = _regions(prof, span, locs, inputs)
    inputs.unmeasured = _unmeasured_fork_join(prof, span, locs, inputs, focus)
    if team_gap > TEAM_TOLERANCE * inputs.runtime:
        inputs.unmeasured.setdefault("runtime", TEAM_UNMEASURED.format(gap=team_gap))
        inputs.unmeasured.setdefault("outside_mpi", TEAM_UNMEASURED.format(gap=team_gap))
    inputs.notes.append("profile: R = the longest inclusive time of a master thread; counters summed over "
                        "call paths that are all computation")
    return inputs


def _team_time(x: FocusInputs, time: np.ndarray) -> None:
    """A call path inside a parallel region: a trace counts the time some thread of the team is in
    it (popview.analysis.callpath_time), the master's time while a worker is in it and it is not
    being OpenMP time of the focus. Per-thread totals give the longest thread's time, a lower bound
    of that union, exact when the master's visits lie within the longest thread's (a worker waiting
    at the construct's barrier for a late master): the master's time is raised to it (in place of
    `time`), the difference as OpenMP idle time."""
    longest = np.zeros(x.n_processes)
    np.maximum.at(longest, x.process, time)
    masters = x.masters
    gap = np.maximum(longest - time[masters], 0.0)
    x.cat[masters, CAT["omp_idle"]] += gap
    time[masters] += gap
    return float(gap.max(initial=0.0))


TEAM_TOLERANCE = 0.002       # a worker in the focus this share of R longer than its master: R is not known
TEAM_UNMEASURED = (
    "not available from this profile: in this call path inside a parallel region a worker spends {gap:.4g} s "
    "longer than its master, so the team's threads are in it at different times (a worker waiting at the "
    "construct's barrier for a late or descheduled master); R is the time some thread of a process is in the "
    "call path, the union of the threads' visits, which a profile's per-thread totals do not give; open the "
    "trace of the run")


# A remapped report (scalasca -examine, cube_remap2: summary.cubex) has Cube's own time hierarchy;
# popview's categories are these sums of its metrics (each metric's value includes its sub-metrics).
_REMAPPED = {
    "comp": (("execution", 1), ("mpi", -1), ("omp_time", -1)),
    "mpi_p2p": (("mpi_point2point", 1),),
    "mpi_sync": (("mpi_synchronization", 1),),
    "mpi_other": (("mpi", 1), ("mpi_point2point", -1), ("mpi_collective", -1), ("mpi_synchronization", -1),
                  ("mpi_io", -1)),
    "omp_sync": (("omp_synchronization", 1), ("omp_flush", 1)),
    "omp_idle": (("omp_idle_threads", 1),),
    "other": (("overhead", 1),),
}


def _remapped(prof) -> bool:
    return prof.has("execution") and not prof.has("comp")


def _terms(prof, metric: str):
    return _REMAPPED.get(metric, ((metric, 1),)) if _remapped(prof) else ((metric, 1),)


def _has(prof, metric: str) -> bool:
    return any(prof.has(m) for m, _ in _terms(prof, metric))


def _matrix(prof, metric: str) -> np.ndarray:
    return sum(sign * prof.matrix(m) for m, sign in _terms(prof, metric) if prof.has(m))


def _inside_parallel(prof) -> np.ndarray:
    parallel = np.array([r.paradigm == "openmp" and r.role == "parallel" for r in prof.regions], bool)
    inside = parallel[prof.callpath_region].copy()
    for c in range(prof.n_callpaths):           # pre-order: parents first
        p = prof.callpath_parent[c]
        inside[c] |= p >= 0 and inside[p]
    return inside


def _counters(prof, dense, span, locs) -> dict[str, np.ndarray]:
    pure = np.isclose(dense["comp"], dense["time"]) & (dense["time"] > 0)
    out = {}
    for m in prof.metrics:
        name = _COUNTER_ALIASES.get(m.id.lower(), m.id)
        if name.startswith("PAPI_") and prof.has(m.id) and not (name != m.id and prof.has(name)):
            out[name] = np.where(pure, prof.matrix(m.id)[span][:, locs], 0.0).sum(axis=0)
    if prof.has("visits"):
        mpi = np.array([prof.regions[r].paradigm == "mpi" for r in prof.callpath_region[span]], bool)
        coll = np.array([prof.regions[r].paradigm == "mpi" and prof.regions[r].role in
                         ("collective", "barrier", "one2all", "all2one", "all2all", "other collective")
                         for r in prof.callpath_region[span]], bool)
        visits = prof.matrix("visits")[span][:, locs]
        out["mpi_calls"] = visits[mpi].sum(axis=0)
        out["mpi_collective_calls"] = visits[coll].sum(axis=0)
    return out


FORK_JOIN_UNMEASURED = (
    "not available from this profile: it counts the masters' OpenMP fork and join time as computation, so "
    "{what}; Score-P's profile times a parallel region on its master from the region's enter to its leave and "
    "charges the fork and join around it (from THREAD_FORK to the team's begin, from the team's end to "
    "THREAD_JOIN: waking and waiting for the team, or a descheduled master) to the calling path; open the trace "
    "of the run")


USEFUL_INCLUDES = (
    "Score-P's profile charges the masters' OpenMP fork and join (from THREAD_FORK to the team's begin, from the "
    "team's end to THREAD_JOIN: waking and waiting for the team, or a descheduled master) to the calling path as "
    "computation, so the useful time it gives is the true one plus that time")


def _stores_fork_join(prof) -> bool:
    """Scalasca's trace analysis (scout) stores the fork time it measured (omp_fork, under its
    omp_management); the remapper's omp_management (a summary.cubex) and popview's derived one are
    the parallel regions' own time, not the fork and join around them."""
    return prof.has("omp_fork")


def _unmeasured_fork_join(prof, span, locs, x: FocusInputs, focus: Focus) -> dict[str, str]:
    """What the profile cannot give when masters fork teams in the focus (docs/metrics.md)."""
    if _stores_fork_join(prof):
        return {}
    masters = locs[x.masters]
    forking = [c for c in range(span.start, span.stop)
               if prof.regions[prof.callpath_region[c]].paradigm == "openmp"
               and prof.regions[prof.callpath_region[c]].role == "parallel"
               and (prof.by_location("time", c, True)[masters] > 0).any()]
    if not forking:
        return {}
    out = {"useful": FORK_JOIN_UNMEASURED.format(
        what="the masters' useful time in the focus is not known")}
    x.useful_includes = USEFUL_INCLUDES
    if forking[0] == span.start and focus.kind == "callpath":
        out["runtime"] = FORK_JOIN_UNMEASURED.format(
            what="in this parallel region, which runs from its masters' forks to their joins, R and the masters' "
                 "time are not known")
        out["outside_mpi"] = out["runtime"]
    return out


def _regions(prof, span, locs, inputs: FocusInputs) -> list[Region]:
    """One region per outermost parallel-region call path in the focus."""
    out = []
    parallel = [c for c in range(span.start, span.stop)
                if prof.regions[prof.callpath_region[c]].paradigm == "openmp"
                and prof.regions[prof.callpath_region[c]].role == "parallel"]
    masters = inputs.masters
    taken = set()
    for c in parallel:
        p = int(prof.callpath_parent[c])
        nested = False
        while p >= 0:
            if p in taken:
                nested = True
                break
            p = int(prof.callpath_parent[p])
        if nested:
            continue
        taken.add(c)
        time = prof.by_location("time", c, True)[locs]
        comp = sum(sign * prof.by_location(m, c, True) for m, sign in _terms(prof, "comp") if prof.has(m))[locs]
        out.append(Region(prof.path(c), time[masters], comp))
    return out
