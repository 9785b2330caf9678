"""Carrying a focus from one run to another of the same program.

A time window means nothing in another run (its iterations happen at other
times), so it is carried as the iterations it holds: the visits of the run's
dominant repeating region (the automatic focus's; else the call path every
master visits equally often, the rarest such) that lie wholly inside the
window on every process. Whole run, call paths and iterations carry over as
they are.
"""
from __future__ import annotations

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError, iteration_window, run_window, visits


def window_iterations(exp, focus: Focus) -> Focus | None:
    """The iterations focus equivalent to the window `focus` of `exp`, or None when the
    window holds no whole iteration of a repeating region on every process."""
    if focus.kind != "window" or not exp.is_trace:
        return None
    known = exp.__dict__.get("_window_iterations", {})
    if focus in known:
        return known[focus]
    path = _marker(exp)
    if path is None:
        return None
    proc, begin, end = visits(exp, path)
    if not len(proc):
        return None
    starts = np.flatnonzero(np.r_[True, proc[1:] != proc[:-1]])
    n = int(np.diff(np.r_[starts, len(proc)]).min())
    rows = starts[:, None] + np.arange(n)[None, :]            # (processes, iterations)
    inside = ((begin[rows] >= focus.t0) & (end[rows] <= focus.t1)).all(axis=0)
    if not inside.any():
        return None
    k = np.flatnonzero(inside)
    # the iterations stand for the window only when they fill most of it (EPOCH 4x1's 0.5-1 s
    # held one MPI_Comm_rank call of 0.4 ms, which then was the focus of every run)
    covered = end[rows[:, k[-1]]].max() - begin[rows[:, k[0]]].min()
    if covered < MIN_COVER * (focus.t1 - focus.t0):
        return None
    return Focus.iterations(path, int(k[0]), int(k[-1]))


MIN_COVER = 0.5      # the share of a window its whole iterations must fill to stand for it
MIN_SPAN = 0.5       # the share of the run a marker's visits must span on every process


def remember_window(exp, focus: Focus, held: Focus | None) -> None:
    """What window_iterations gives for `focus` in `exp`, found elsewhere (a Dask task)."""
    exp.__dict__.setdefault("_window_iterations", {})[focus] = held


def _marker(exp) -> str | None:
    """The call path whose visits count the iterations: the automatic focus's region, else
    the call path every master visits equally often (at least 3 times), the rarest such
    (once per iteration, e.g. an MPI_Allreduce or a parallel region) whose visits span at
    least half the run on every process (EPOCH's three MPI_Comm_rank calls, all in its first
    0.53 s of 6 s, count no iterations), else the rarest such."""
    from popview.analysis.metrics import propose_focus
    auto, _ = propose_focus(exp)
    if auto.kind == "iterations":
        return auto.callpath
    from popview.analysis.gather import main_locations
    from popview.analysis.profiles import trace_profile
    prof = trace_profile(exp)
    locs, _, thread, _ = main_locations(exp.definitions)
    masters = locs[thread == 0]
    if not prof.has("visits") or not len(masters):
        return None
    v = prof.matrix("visits")[:, masters]
    equal = (v.min(axis=1) == v.max(axis=1)) & (v.min(axis=1) >= 3)
    real = np.array([prof.regions[r].role != "artificial" for r in prof.callpath_region], bool)
    cand = np.flatnonzero(equal & real)
    t_end = float(exp.definitions.t_end)
    for c in cand[np.argsort(v[cand, 0], kind="stable")].tolist():
        path = prof.path(int(c))
        proc, begin, end = visits(exp, path)
        if not len(proc):
            continue
        first = np.full(int(proc.max()) + 1, np.inf)
        last = np.full(int(proc.max()) + 1, -np.inf)
        np.minimum.at(first, proc, begin)
        np.maximum.at(last, proc, end)
        seen = np.isfinite(first)
        if seen.any() and (last[seen] - first[seen]).min() >= MIN_SPAN * t_end:
            return path
    # none repeats over most of the run (a long set-up and wind-down): the rarest, as before;
    # a window still needs its whole iterations to fill it (window_iterations)
    return prof.path(int(cand[np.argmin(v[cand, 0])])) if len(cand) else None


def carries_to(exp, focus: Focus) -> bool:
    """Whether `focus` (not a window) applies to `exp`."""
    if focus.kind != "iterations":
        return focus.kind != "window"
    try:
        iteration_window(exp, focus.callpath, focus.first, focus.last)
    except FocusError:
        return False
    return True


def carry(source, focus: Focus, targets) -> tuple[Focus | None, str]:
    """The focus to use in `source` and every run of `targets` so that they cover the same
    part of the program, and a note; None when a time window of `source` has no
    equivalent (the note says why)."""
    if focus.kind != "window":
        return focus, ""
    mapped = window_iterations(source, focus)
    if mapped is None:
        return None, (f"the time window {focus.label()} holds no whole iterations of a repeating region on every "
                      "process that fill at least half of it, so it has no equivalent in the other runs: "
                      "scalabilities need a focus per run (iterations or a call path); this run is shown alone")
    missing = [getattr(t, "label", "?") for t in targets if t is not source and not carries_to(t, mapped)]
    if missing:
        return None, (f"the time window {focus.label()} holds {mapped.label()}, which {', '.join(missing)} "
                      "does not have: scalabilities need a focus per run; this run is shown alone")
    return mapped, (f"the time window {focus.label()} holds {mapped.label()}: every run is compared over "
                    "these iterations")


def common_focus(exps, focus: Focus) -> tuple[Focus, str]:
    """A focus every run of `exps` has, and a note: a time window (on the first run) becomes the
    iterations it holds. FocusError (a ValueError), saying why, when there is none. The one rule by which a
    series, its scaling decision and its table gather their runs."""
    if len(exps) == 1:
        return focus, ""
    if focus.kind == "auto":
        return _common_auto(exps)
    if focus.kind == "window":          # read on the first run: one wholly outside it is said so, not
        try:                            # as a window holding no iterations
            run_window(focus.t0, focus.t1, exps[0].definitions.t_end)
        except FocusError as exc:
            raise FocusError(f"{exc} of {getattr(exps[0], 'label', 'the first run')}, the series' first, "
                             "whose times a window gives") from None
    mapped, note = carry(exps[0], focus, exps)
    if mapped is None:
        raise FocusError(note.replace("this run is shown alone", "open the first run alone or give an "
                                      "iterations / call-path focus"))
    lacking = [e.label for e in exps if not carries_to(e, mapped)]
    if lacking:
        raise FocusError(f"{mapped.label()} does not apply to {', '.join(lacking)}: give a focus every run has")
    return mapped, note


def _common_auto(exps) -> tuple[Focus, str]:
    """The automatic focus of a series: one focus for every run, so that the scalabilities
    compare the same part of the program. Each run proposes its own (popview-heat Extrae 1x1
    proposed its source-term region's iterations, 1x2 and 2x2 MPI_Waitall's 1-199: the
    series took the first run's, so two runs of three were analysed over a focus they did not
    propose); of the proposals every run has, the one most runs make is taken (ties: the
    earliest run's, the reference by default), and the note names the runs that proposed it and
    the others. When none applies to every run, each run keeps its own, and the note says so."""
    from popview.analysis.metrics import propose_focus
    proposed = [propose_focus(e) for e in exps]
    foci = [f for f, _ in proposed]
    if all(f == foci[0] for f in foci):
        return foci[0], f"automatic focus: {foci[0].label()} - {proposed[0][1]}"
    labels = [getattr(e, "label", f"run {i}") for i, e in enumerate(exps, 1)]
    usable = []
    for i, (f, why) in enumerate(proposed):
        if f in foci[:i]:
            continue
        if f.kind in ("whole", "callpath", "iterations") and all(_applies(x, f) for x in exps):
            usable.append((sum(g == f for g in foci), -i, f, why))
    if usable:
        count, _, f, why = max(usable, key=lambda u: u[:2])
        by = [lab for lab, g in zip(labels, foci) if g == f]
        others = "; ".join(f"{lab} proposed {g.label()}" for lab, g in zip(labels, foci) if g != f)
        rule = (f"the proposal of most runs ({count} of {len(exps)})" if count * 2 > len(exps) else
                "the proposal most runs make, the earliest run's on a tie" if count > 1 or len(usable) > 1 else
                "the only proposal every run has")
        return f, (f"automatic focus: {f.label()} for every run, {rule}: {', '.join(by)} "
                   f"{'propose' if len(by) > 1 else 'proposes'} it ({why}); {others}")
    return Focus("auto"), ("automatic focus: the runs propose different foci and none applies to every run: "
                           "each run is analysed over its own (see its note), so the scalabilities compare "
                           "different parts of the program")


def _applies(exp, focus: Focus) -> bool:
    """Whether `exp` has `focus` (a call path it visits, iterations it has)."""
    if focus.kind != "callpath":
        return carries_to(exp, focus)
    from popview.analysis.metrics import focus_inputs
    try:
        focus_inputs(exp, focus)
    except (FocusError, ValueError, KeyError):
        return False
    return True
