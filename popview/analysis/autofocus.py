"""Propose a focus of analysis from the structure of a run: the dominant
repeating region, from its first to its last iteration (which leaves out
initialisation and finalisation)."""
from __future__ import annotations

import numpy as np

from popview.analysis.focus import Focus

MIN_ITERATIONS = 3        # a region must repeat at least this often on every process
MIN_COVERAGE = 0.5        # and its iterations must cover this share of the run


def propose(exp) -> tuple[Focus, str]:
    if not exp.is_trace:
        return _propose_profile(exp)
    from popview.analysis.gather import main_locations
    from popview.analysis.profiles import trace_profile
    defs = exp.definitions
    prof = trace_profile(exp)
    locs, _, thread, _ = main_locations(defs)
    masters = locs[thread == 0]
    if not prof.has("visits") or not len(masters):
        return Focus.whole(), "no call paths to choose from: the whole run"
    time = prof.matrix("time", inclusive=True)[:, masters].max(axis=1)
    visits = prof.matrix("visits")[:, masters].min(axis=1)
    best, best_time = None, 0.0
    for cp in range(prof.n_callpaths):
        region = prof.regions[prof.callpath_region[cp]]
        if region.paradigm not in ("user", "compiler") or visits[cp] < MIN_ITERATIONS:
            continue
        if time[cp] > best_time:
            best, best_time = cp, float(time[cp])
    run = defs.t_end / 1e9
    if best is None or best_time < MIN_COVERAGE * run:
        no_user = (f"no user region repeats at least {MIN_ITERATIONS} times on every process over "
                   f"{MIN_COVERAGE:.0%} of the run")
        mpi = _mpi_iterations(exp, prof, masters, time)
        if mpi is not None:
            return mpi[0], f"{no_user}; {mpi[1]}"
        return Focus.whole(), f"{no_user}, nor an MPI call once per iteration: the whole run"
    path = prof.path(best)
    n = int(visits[best])
    return Focus.iterations(path, 0, n - 1), (
        f"{path} repeats {n} times on every process and covers {best_time / run:.0%} of the run; "
        "its iterations leave out initialisation and finalisation")


def _mpi_iterations(exp, prof, masters, time) -> tuple[Focus, str] | None:
    """The iterations of the MPI call every master makes equally often (at least MIN_ITERATIONS + 1
    times), the rarest such (once per iteration: MPI_Waitall, MPI_Allreduce of a time-step loop; of
    those the one holding the most time), from its second visit to its last: the loop without
    initialisation, finalisation and the first iteration (warm-up: first touch, connection set-up).
    The compare view counts iterations by a call path alike (focus_map._marker). None when there is
    none or its iterations cover less than MIN_COVERAGE of the run."""
    from popview.analysis.gather import FocusError, iteration_window
    v = prof.matrix("visits")[:, masters]
    n = v.min(axis=1)
    mpi = np.array([prof.regions[r].paradigm == "mpi" for r in prof.callpath_region], bool)
    cand = np.flatnonzero(mpi & (n == v.max(axis=1)) & (n > MIN_ITERATIONS))
    if not len(cand):
        return None
    rarest = cand[n[cand] == n[cand].min()]
    best = int(rarest[np.argmax(time[rarest])])
    path, count = prof.path(best), int(n[best])
    try:
        t0, t1 = iteration_window(exp, path, 1, count - 1)
    except FocusError:
        return None
    run = exp.definitions.t_end
    if run <= 0 or (t1 - t0) < MIN_COVERAGE * run:
        return None
    return Focus.iterations(path, 1, count - 1), (
        f"the MPI call {prof.name(best)} is made {count} times on every process, once per iteration: its "
        f"visits 1-{count - 1} ({(t1 - t0) / run:.0%} of the run) leave out initialisation, finalisation and "
        "at least the first iteration (warm-up)")


def _propose_profile(exp) -> tuple[Focus, str]:
    from popview.analysis.profiles import experiment_profile
    prof = experiment_profile(exp)
    if not prof.has("visits") or not prof.has("time"):
        return Focus.whole(), "the profile has no visit counts: the whole run"
    time = prof.inclusive_totals("time")
    visits = prof.matrix("visits").max(axis=1) if prof.n_callpaths * prof.n_locations < 5e7 else None
    if visits is None:
        return Focus.whole(), "profile too large to search for a repeating region: the whole run"
    cand = [cp for cp in range(prof.n_callpaths)
            if visits[cp] >= MIN_ITERATIONS and prof.regions[prof.callpath_region[cp]].paradigm in ("user", "compiler")]
    total = float(time[prof.roots()].sum())
    if not cand or total <= 0:
        return Focus.whole(), "no repeating user region: the whole run"
    best = max(cand, key=lambda c: time[c])
    if time[best] < MIN_COVERAGE * total:
        return Focus.whole(), "no repeating user region covers half the run: the whole run"
    return Focus.on_callpath(prof.path(best)), (
        f"{prof.path(best)} repeats (up to {int(visits[best])} visits) and holds {time[best] / total:.0%} "
        "of the time; a profile has no time line, so its call path is the focus")



