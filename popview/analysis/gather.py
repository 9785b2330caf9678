"""FocusInputs of an experiment for a focus of analysis.

Traces: whole run and call paths read figures summed at conversion; a
window evaluates the cumulative sums at its two ends; iterations i..j of a
repeating region become the window from the start of visit i to the end of
visit j (earliest start, latest end over processes). Cube profiles: whole
run and call paths from the stored profile; they have no time line.
Only the main application (Paraver application 1) is analysed.
"""
from __future__ import annotations

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.inputs import FocusInputs, Region
from popview.analysis.window_index import CumulativeIndex
from popview.model.categories import CAT, N_CAT
from popview.cache.nodes import Group

NS = 1e9


class FocusError(ValueError):
    """A focus that does not apply to this experiment."""


def no_callpath(source, path: str, names) -> FocusError:
    """The error for a call path `path` that `source` does not have, naming the nearest ones
    among `names` (its call paths: "callpath:mpi_allreduce" -> "MPI_Allreduce")."""
    import difflib
    names = list(names)
    low = path.strip("/").lower()
    leaf = low.rsplit("/", 1)[-1]
    near = [n for n in names if n.lower() == low or n.lower().rsplit("/", 1)[-1] == leaf]
    near += [n for n in difflib.get_close_matches(path, names, n=3, cutoff=0.6) if n not in near]
    hint = f"; did you mean {', '.join(repr(n) for n in near[:3])}?" if near else \
        "; call paths are region names joined by '/' from the root (main/timestep)"
    return FocusError(f"{source}: no call path {path!r}{hint}")


def main_locations(defs) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(locations, process index 0..P-1, thread) of the main application's threads, and notes."""
    notes = []
    main_procs = [i for i, p in enumerate(defs.processes) if p.appl == 0]
    if len(defs.applications) > 1:
        notes.append(f"the trace holds {len(defs.applications)} applications: only the main one "
                     f"(application 1, {len(main_procs)} processes) is analysed")
    index = {p: i for i, p in enumerate(main_procs)}
    locs = [i for i, loc in enumerate(defs.locations) if loc.kind == "thread" and loc.process in index]
    devices = sum(1 for loc in defs.locations if loc.kind == "gpu" and loc.process in index)
    if devices:
        notes.append(f"the {devices} GPU location{'' if devices == 1 else 's'} (device streams) are not analysed: "
                     "the figures are the host threads'; their time in GPU API calls (waiting for the device) "
                     "is neither computation, OpenMP nor MPI")
    proc = np.array([index[defs.locations[i].process] for i in locs], np.int64)
    thread = np.array([defs.locations[i].thread for i in locs], np.int64)
    return np.array(locs, np.int64), proc, thread, notes


def gather(exp, focus: Focus) -> FocusInputs:
    if focus.kind == "auto":
        # through the experiment's caches: the focus proposed once, its inputs gathered once
        # (a Dask task preparing `auto` also wants the proposed focus and its own inputs)
        import dataclasses

        from popview.analysis.metrics import focus_inputs, propose_focus
        focus, why = propose_focus(exp)
        inputs = focus_inputs(exp, focus)
        return dataclasses.replace(inputs, notes=[f"automatic focus: {focus.label()} - {why}"] + inputs.notes)
    if not exp.is_trace:
        from popview.analysis.gather_profile import gather_profile
        return gather_profile(exp, focus)
    return _TraceGather(exp).run(focus)


class _TraceGather:
    def __init__(self, exp):
        self.exp = exp
        self.defs = exp.definitions
        self.locs, self.proc, self.thread, self.notes = main_locations(self.defs)
        self.index = _index(exp)
        self.procs_global = np.unique(np.array([self.defs.locations[i].process for i in self.locs], np.int64))

    def run(self, focus: Focus) -> FocusInputs:
        if focus.kind == "whole":
            return self._counted(self._whole(), 0, int(self.defs.t_end))
        if focus.kind == "window":
            out = self._window(int(focus.t0), int(focus.t1), focus.label())
            (t0, t1), _ = run_window(int(focus.t0), int(focus.t1), self.defs.t_end)
            return self._counted(out, t0, t1)
        if focus.kind == "iterations":
            t0, t1 = iteration_window(self.exp, focus.callpath, focus.first, focus.last)
            out = self._window(t0, t1, focus.label())
            out.notes.append(f"iterations {focus.first}-{focus.last} of {focus.callpath}: the window "
                             f"{t0 / NS:.6g} s - {t1 / NS:.6g} s (first start to last end over processes)")
            return self._counted(out, t0, t1)
        if focus.kind == "callpath":
            return self._counted(self._callpath(focus.callpath), None, None)
        raise FocusError(f"unknown focus kind {focus.kind!r}")

    def _counted(self, inputs: FocusInputs, t0: int | None, t1: int | None) -> FocusInputs:
        """The share of the useful time each counter was read in, when the counter sets rotate
        (popview.analysis.counter_sets); a call-path focus does not know it."""
        from popview.analysis import counter_sets
        rotating = sorted(counter_sets.periods(self.exp).rotating)
        if not rotating:
            return inputs
        if t0 is None:
            why = ("the counter sets rotate (event 41999999) and the share of a call path's useful time each "
                   "counter was read in is not known: focus on the whole run, a window or iterations")
            inputs.counter_shares = {name: why for name in rotating}
        elif (t0, t1) != (0, int(self.defs.t_end)) and counter_sets.mixed_rows(self.exp, self.locs, t0, t1):
            why = ("the counter sets rotate (event 41999999) and a state of the focus spans a set change: a "
                   "window's counters are its states' readings pro-rated by time, so the share read in the "
                   "window is not known: focus on the whole run")
            inputs.counter_shares = {name: why for name in rotating}
        else:
            inputs.counter_shares = counter_sets.shares(self.exp, self.index, self.locs, t0, t1)
        shown = [n for n in ("PAPI_TOT_INS", "PAPI_TOT_CYC") if isinstance(inputs.counter_shares.get(n), float)]
        others = len([n for n, v in inputs.counter_shares.items() if isinstance(v, float) and n not in shown])
        read = ", ".join([f"{name} {inputs.counter_shares[name]:.1%}" for name in shown]
                         + ([f"{others} other counters" if shown else f"{others} counters"] if others else []))
        inputs.notes.append("the counter sets rotate: a counter is read only while its set is active"
                            + (f" (share of the useful time read: {read}); the clock rate divides by that time, "
                               "instruction counts are scaled up to the whole useful time" if read else ""))
        return inputs

    def _inputs(self, runtime_ns, sums_ns, ctr, label, keep_region=None) -> FocusInputs:
        counters = {name: ctr[:, k] for k, name in enumerate(self.index.counter_names)}
        inputs = FocusInputs(runtime=runtime_ns / NS, process=self.proc, thread=self.thread,
                             cat=sums_ns[:, :N_CAT] / NS, counters=counters, notes=list(self.notes), label=label)
        inputs.regions = self._regions(sums_ns, inputs.masters, keep_region)
        left_out = int(self.defs.flags.get("parallel_regions_without_sums", 0))
        if inputs.regions and left_out:
            inputs.regions_left_out = left_out
            inputs.notes.append(f"{left_out} parallel regions (outlined functions) have no sums of their own "
                                f"(popview keeps them for {len(self.index.region_callpaths)}): their part of the "
                                "OpenMP region efficiency is under 'Outside the listed regions'")
        return inputs

    def _regions(self, sums_ns, masters, keep) -> list[Region]:
        """Per parallel region: the master's time in it per process, each thread's useful time in it.
        A call-path focus (`keep`) gets them only when it holds every region of the run: the sums are
        the whole run's, and a part of them would not add up to the focus's thread level."""
        n = self.index.n_regions
        out = []
        for k, key in enumerate(self.index.region_callpaths):
            time = sums_ns[:, N_CAT + k] / NS
            useful = sums_ns[:, N_CAT + n + k] / NS
            if not time.any():
                continue
            if keep is not None and not keep(key):
                return []
            out.append(Region(self.defs.callpath_name(key), time[masters], useful))
        return out

    # ---- whole run -------------------------------------------------------------
    def _whole(self) -> FocusInputs:
        return self._inputs(self.defs.t_end, self.index.totals[self.locs], self.index.ctr_totals[self.locs],
                            "whole run")

    # ---- window ----------------------------------------------------------------
    def _window(self, t0: int, t1: int, label: str) -> FocusInputs:
        if t1 <= t0:
            raise FocusError(f"empty window [{t0}, {t1}] ns")
        (t0, t1), cut = run_window(t0, t1, self.defs.t_end)
        res = self.index.evaluate([(loc, np.array([t0, t1])) for loc in self.locs.tolist()])
        sums = np.vstack([c[1] - c[0] for c, _ in res])
        ctr = np.vstack([k[1] - k[0] for _, k in res])
        inputs = self._inputs(t1 - t0, sums, ctr, label)
        if cut:
            inputs.notes.append(cut)
        return inputs

    # ---- call path -------------------------------------------------------------
    def _region_within(self, key: int, focus_cp: int) -> bool:
        """Whether every instance of the region keyed `key` lies inside the call path: its
        parallel construct (the key itself when it has none) descends from it. An outlined
        function's visit is shorter than its region (the fork and join lie outside it)."""
        parent, d = self.defs.callpath_parent, self.defs
        construct = key
        while construct >= 0:
            r = d.regions[d.callpath_region[construct]]
            if r.paradigm == "openmp" and r.role == "parallel":
                break
            construct = int(parent[construct])
        return _descends(parent, key if construct < 0 else construct, focus_cp)

    def _callpath(self, path: str) -> FocusInputs:
        from popview.analysis.profiles import trace_profile
        prof = trace_profile(self.exp)
        cp = prof.find(path)
        if cp is None:
            raise no_callpath(self.exp.source, path, (prof.path(i) for i in range(prof.n_callpaths)))
        cat = np.zeros((len(self.locs), self.index.width))
        for name, cats in _PROFILE_TO_CATS.items():
            if prof.has(name):
                cat[:, CAT[cats]] += prof.by_location(name, cp, True)[self.locs] * NS
        cat[:, N_CAT:] = self.index.totals[self.locs][:, N_CAT:]
        ctr = np.zeros((len(self.locs), len(self.index.counter_names)))
        for k, name in enumerate(self.index.counter_names):
            if prof.has(name):
                ctr[:, k] = prof.by_location(name, cp, True)[self.locs]
        from popview.analysis.callpath_time import callpath_extent
        defs_cp = _defs_callpath(self.defs, path)
        cp_time = callpath_extent(self.exp, path) if defs_cp >= 0 else None   # not the profile's artificial root
        if cp_time is not None:
            self._add_masters_waiting(cat, cp_time)
        runtime = float(cat[:, :N_CAT].sum(axis=1).max()) if len(self.locs) else 0.0
        if cp_time is not None:
            runtime = max(float(cp_time.runtime_ns), runtime)
        inputs = self._inputs(runtime, cat, ctr, path, lambda key: self._region_within(key, defs_cp))
        inputs.notes.append("call-path focus: every thread's time while its process's master thread (or the thread "
                            f"itself, in its own visits) is inside {path}; R = the longest, over processes, of the "
                            "time some thread of the process is inside it")
        return inputs


    def _add_masters_waiting(self, cat: np.ndarray, cp_time) -> None:
        """A master's time in the call path outside its own visits of it (its team inside them
        in the same parallel-region instance, callpath_time.py), which the trace's profile
        gives to another call path: its OpenMP runtime states as the cumulative sums have
        them, the rest (its own computation elsewhere in the region, unrecorded time) as
        OpenMP idle, no counters (none of it is the call path's computation)."""
        if cp_time.extra_ptr is None:
            return
        ptr = cp_time.extra_ptr
        rows = [(i, int(loc)) for i, loc in enumerate(self.locs.tolist()) if ptr[loc + 1] > ptr[loc]]
        if not rows:
            return
        requests = []
        for _, loc in rows:
            lo, hi = int(ptr[loc]), int(ptr[loc + 1])
            requests.append((loc, np.column_stack((cp_time.extra_begin[lo:hi], cp_time.extra_end[lo:hi])).ravel()))
        runtime = [CAT[c] for c in _OPENMP_RUNTIME]
        for (i, loc), (cum, _) in zip(rows, self.index.evaluate(requests)):
            lo, hi = int(ptr[loc]), int(ptr[loc + 1])
            length = float((cp_time.extra_end[lo:hi] - cp_time.extra_begin[lo:hi]).sum())
            waiting = (cum[1::2, runtime] - cum[0::2, runtime]).sum(axis=0)
            cat[i, runtime] += waiting
            cat[i, CAT["omp_idle"]] += max(length - float(waiting.sum()), 0.0)


_OPENMP_RUNTIME = ("omp_sync", "omp_management", "omp_idle")


_PROFILE_TO_CATS = {"comp_serial": "comp_serial", "comp_parallel": "comp_parallel", "mpi_p2p": "mpi_p2p",
                    "mpi_collective": "mpi_collective", "mpi_sync": "mpi_sync", "mpi_other": "mpi_other",
                    "mpi_io": "mpi_io", "omp_sync": "omp_sync", "omp_management": "omp_management",
                    "omp_idle": "omp_idle", "io": "io", "other": "other"}


def _index(exp) -> CumulativeIndex:
    cached = getattr(exp, "_cumulative_index", None)
    if cached is None:
        cached = CumulativeIndex(exp.reader)
        exp._cumulative_index = cached
    return cached


def _defs_callpath(defs, path: str) -> int:
    want = [p for p in path.strip("/").split("/") if p]
    names = [defs.regions[r].name for r in defs.callpath_region]
    parent = defs.callpath_parent
    cur = -1
    for part in want:
        match = [c for c in range(len(parent)) if parent[c] == cur and names[c] == part]
        if not match:
            return -2
        cur = match[0]
    return cur


def _descends(parent: np.ndarray, cp: int, ancestor: int) -> bool:
    while cp >= 0:
        if cp == ancestor:
            return True
        cp = int(parent[cp])
    return False


def _visit_rows(exp, path: str) -> tuple[Group, int, int]:
    """The master-visits group and the row range of call path `path` in it."""
    cp = _defs_callpath(exp.definitions, path)
    if cp < 0:
        d = exp.definitions
        raise no_callpath(exp.source, path, (d.callpath_name(i) for i in range(len(d.callpath_parent))))
    g = _index(exp).group["master_calls"]
    off = g["cp_offsets"]
    return g, int(off[cp]), int(off[cp + 1])


def visits(exp, path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(process, begin, end) of the master threads' visits of `path`, by process then time."""
    g, lo, hi = _visit_rows(exp, path)
    return g["proc"][lo:hi], g["begin"][lo:hi], g["end"][lo:hi]


def run_window(t0: int, t1: int, t_end: int) -> tuple[tuple[int, int], str]:
    """The part of the window [t0, t1) ns that lies in the run [0, t_end), and a note when it
    was cut: the time before or after the records is no time of the program's (it would count
    as lost time, R being the window's length). A window wholly outside the run is refused."""
    a, b = max(int(t0), 0), min(int(t1), int(t_end))
    if b <= a:
        raise FocusError(f"the window {t0 / NS:.6g} s - {t1 / NS:.6g} s lies outside the run "
                         f"(0 s - {t_end / NS:.6g} s)")
    if (a, b) == (t0, t1):
        return (a, b), ""
    return (a, b), (f"the window {t0 / NS:.6g} s - {t1 / NS:.6g} s was cut to the run: "
                    f"{a / NS:.6g} s - {b / NS:.6g} s (R = {(b - a) / NS:.6g} s)")


def iteration_window(exp, path: str, first: int, last: int) -> tuple[int, int]:
    """[start of visit `first`, end of visit `last`] (0-based, over the processes).
    Reads the visits' process column and only the 2 x P times needed."""
    g, lo, hi = _visit_rows(exp, path)
    proc = g["proc"][lo:hi]
    if not len(proc):
        raise FocusError(f"{path} is never visited")
    starts = np.flatnonzero(np.r_[True, proc[1:] != proc[:-1]])
    n = int(np.diff(np.r_[starts, len(proc)]).min())
    if not 0 <= first <= last < n:
        raise FocusError(f"{path} has iterations 0..{n - 1} on every process; asked for {first}..{last}")
    return int(g["begin"][lo + starts + first].min()), int(g["end"][lo + starts + last].max())


__all__ = ["gather", "FocusError", "main_locations", "iteration_window", "visits"]
