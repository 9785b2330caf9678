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
    first, skipped = warm_up(n)
    return Focus.iterations(path, first, n - 1), (
        f"{path} repeats {n} times on every process and covers {best_time / run:.0%} of the run; "
        f"its iterations {first}-{n - 1} leave out initialisation and finalisation{skipped}")


def warm_up(n: int) -> tuple[int, str]:
    """The first iteration of a proposed focus and what the reason adds: one rule for a user
    region and an MPI call made once per iteration (heat Extrae 1x1 proposed its region's
    iterations 0-199, the 1x2 and 2x2 runs MPI_Waitall's 1-199): the first iteration (warm-up:
    first touch, connection set-up) is left out when at least MIN_ITERATIONS remain."""
    if n > MIN_ITERATIONS:
        return 1, " and at least the first iteration (warm-up)"
    return 0, f" (all {n} kept: too few to leave out the first, warm-up, iteration)"


def _mpi_iterations(exp, prof, masters, time) -> tuple[Focus, str] | None:
    """The iterations of the MPI call every master makes equally often (at least MIN_ITERATIONS + 1
    times), the rarest such (once per iteration: MPI_Waitall, MPI_Allreduce of a time-step loop),
    from its second visit to its last: the loop without initialisation, finalisation and the first
    iteration (warm-up: first touch, connection set-up). Of those calls, the one whose visits
    1..n-1 cover the most of the run (the earliest call of an iteration: a call at the end of each
    iteration, as heat's MPI_Allreduce, would drop the first two iterations' computation), among
    those whose visits pace the run (no iteration longer than half the window: MPI_Comm_free
    called 4 times at start and end is no loop). The compare view counts iterations by a call path
    alike (focus_map._marker). None when there is none or its iterations cover less than
    MIN_COVERAGE of the run."""
    from popview.analysis.gather import FocusError
    v = prof.matrix("visits")[:, masters]
    n = v.min(axis=1)
    mpi = np.array([prof.regions[r].paradigm == "mpi" for r in prof.callpath_region], bool)
    cand = np.flatnonzero(mpi & (n == v.max(axis=1)) & (n > MIN_ITERATIONS))
    if not len(cand):
        return None
    rarest = cand[n[cand] == n[cand].min()]
    best, best_window = None, None
    for cp in rarest[np.argsort(-time[rarest], kind="stable")]:     # ties: the one holding the most time
        try:
            window = _paced_window(exp, prof.path(int(cp)), int(n[cp]))
        except FocusError:
            continue
        if window is not None and (best_window is None or window[1] - window[0] > best_window[1] - best_window[0]):
            best, best_window = int(cp), window
    if best is None:
        return None
    t0, t1 = best_window
    path, count = prof.path(best), int(n[best])
    run = exp.definitions.t_end
    if run <= 0 or (t1 - t0) < MIN_COVERAGE * run:
        return None
    others = [prof.name(int(c)) for c in rarest if int(c) != best]
    chosen = (f"; of the calls made as often ({', '.join(others)}), its iterations cover the most of the run"
              if others else "")
    first, skipped = warm_up(count)
    return Focus.iterations(path, first, count - 1), (
        f"the MPI call {prof.name(best)} is made {count} times on every process, once per iteration: its "
        f"visits {first}-{count - 1} ({(t1 - t0) / run:.0%} of the run) leave out initialisation, finalisation"
        f"{skipped}{chosen}")


def _paced_window(exp, path: str, count: int) -> tuple[int, int] | None:
    """[start of visit 1, end of visit count-1] over the processes (as gather.iteration_window), or
    None when one iteration (from a visit's start to the next's, on any process) is longer than half
    of it: such visits do not pace a loop."""
    from popview.analysis.gather import visits
    proc, begin, end = visits(exp, path)
    starts = np.flatnonzero(np.r_[True, proc[1:] != proc[:-1]])
    if not len(starts) or int(np.diff(np.r_[starts, len(proc)]).min()) < count:
        return None
    first = starts[:, None] + np.arange(1, count)           # visits 1..count-1 of each process
    t0, t1 = int(begin[first[:, 0]].min()), int(end[first[:, -1]].max())
    longest = int(np.diff(begin[first], axis=1).max()) if count > 2 else 0
    if t1 <= t0 or longest > (t1 - t0) / 2:
        return None
    return t0, t1


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



