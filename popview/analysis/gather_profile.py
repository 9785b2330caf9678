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
            raise FocusError(f"{exp.source}: no call path {focus.callpath!r}")
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
    # a worker can be recorded computing a little longer than its master's time in the focus
    # (popview-heat Score-P 1x2, region @107: 0.07 %); no thread computes longer than R
    inputs.runtime = float(max(time[inputs.masters].max(), inputs.useful.max(initial=0.0)))
    inputs.counters = _counters(prof, dense, span, locs)
    inputs.regions = _regions(prof, span, locs, inputs)
    _forks_before_enter(inputs)
    inputs.notes.append("profile: R = the longest inclusive time of a master thread; counters summed over "
                        "call paths that are all computation")
    return inputs


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


def _forks_before_enter(x: FocusInputs) -> None:
    """A thread computing in a parallel region longer than its master is in it began before
    the master's enter: the master was forking, time a Cube profile charges to the parent's
    own time, i.e. to serial computation. That much moves from the master's serial computation
    to OpenMP management and to the region, as a trace counts it (the region from its fork)."""
    masters = x.masters
    deficit = np.zeros(x.n_processes)
    for reg in x.regions:
        busiest = np.zeros(x.n_processes)
        np.maximum.at(busiest, x.process, reg.useful)
        lacking = np.maximum(busiest - reg.openmp, 0.0)
        reg.openmp = reg.openmp + lacking
        deficit += lacking
    moved = np.minimum(deficit, x.cat[masters, CAT["comp_serial"]])
    x.cat[masters, CAT["comp_serial"]] -= moved
    x.cat[masters, CAT["omp_management"]] += moved


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
