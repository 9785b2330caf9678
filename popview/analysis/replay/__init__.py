"""Replay of a trace on an ideal network: critical paths from the trace itself.

Lamport clocks travel along the execution graph (sequential execution on a
location, messages, collectives, OpenMP fork / join / barriers) with three
weightings - CUE (useful computation only), COO (all but OpenMP runtime),
COM (all but MPI) - globally and process-locally. The results fill the
serialisation / transfer factors of every POP model and the whole
critical-path model (seed 000, 2.1.4), without Dimemas or Scalasca.

    result = replay(popview.open("run.prv"), Focus.whole())
    result.r_ideal, result.critical_path, result.critical_path_profile

model="lamport" (the default) is the ideal network of the POP definitions:
zero latency, infinite bandwidth, collectives by their semantics.
model="dimemas" reproduces what BSC's modelfactors gets from Dimemas with
its ideal configuration: CPU bursts (useful, I/O, "Not created") weigh,
every collective synchronises like a barrier, and messages of 32 KiB or
more use the rendezvous protocol (docs/replay.md compares both).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from popview.analysis.computed_once import ComputedOnce
from popview.analysis.focus import Focus
from popview.analysis.gather import main_locations
from popview.analysis.replay import kernel
from popview.analysis.replay.collectives import add_collectives
from popview.analysis.replay.graph import GraphBuilder
from popview.analysis.replay.messages import add_messages
from popview.analysis.replay.openmp import add_openmp
from popview.analysis.replay.profile import critical_path_profile
from popview.analysis.replay.records import Calls
from popview.analysis.replay.result import ReplayResult
from popview.analysis.replay.rma import add_rma
from popview.analysis.replay.weights import COM, CUE, IDEAL, focus_mask, masters, weighted_pieces
from popview.cache.progress import Progress

__all__ = ["replay", "remember", "ReplayResult", "clear_cache", "MODELS"]

# model -> (rendezvous threshold in bytes, every collective a barrier, CUE weighs CPU bursts,
#          dependencies stamped backwards in time are dropped: Dimemas simulates them as recorded)
MODELS = {"lamport": (None, False, False, True), "dimemas": (32 * 1024, True, True, False)}

NS = 1e-9
_CACHE = ComputedOnce(32)


def replay(exp, focus: Focus | None = None, progress=None, model: str = "lamport") -> ReplayResult:
    """Replay `exp` for `focus` (default the whole run); cached per cache file, focus and model."""
    focus = focus or Focus.whole()
    if not exp.is_trace:
        raise ValueError(f"{exp.source}: a profile holds no records to replay; open a trace")
    if model not in MODELS:
        raise ValueError(f"unknown replay model {model!r}: use one of {', '.join(MODELS)}")
    held = getattr(exp, "__dict__", {}).get("_replays", {}).get((focus, model))
    if held is not None:
        return held
    key = (str(exp.cache_path), exp.reader.fingerprint, focus, model)
    progress = progress if isinstance(progress, Progress) else Progress(progress)
    return _CACHE.get(key, lambda: _replay(exp, focus, progress, model))


def remember(exp, focus: Focus, result: ReplayResult, model: str = "lamport") -> None:
    """A replay of `exp` computed elsewhere (a Dask worker: popview.analysis.distributed),
    kept with the experiment for as long as it lives (the bounded cache could let it go)."""
    exp.__dict__.setdefault("_replays", {})[(focus, model)] = result


def clear_cache() -> None:
    _CACHE.clear()


def _replay(exp, focus: Focus, progress: Progress, model: str) -> ReplayResult:
    started = time.perf_counter()
    rendezvous, all_barriers, bursts, forward_only = MODELS[model]
    defs = exp.definitions
    progress(0.0, "replay: reading synchronisation")
    # A call path's visits lie at other times on each process: a dependency between processes
    # would chain them into a path longer than R (the longest master's time in the call path)
    builder = GraphBuilder(defs.n_locations, defs.location_process(), forward_only=forward_only,
                           local_only=focus.kind == "callpath")
    calls = Calls(exp.reader)
    mask = focus_mask(exp, focus, calls)
    window = (mask.t_start, mask.t_stop) if mask.is_window else None
    stats = (add_messages(builder, exp.reader, defs.n_locations, rendezvous, window, repair=forward_only),
             add_collectives(builder, calls, defs, all_barriers), add_openmp(builder, calls, defs),
             add_rma(builder, calls, defs))
    progress(0.3, "replay: building the execution graph")
    pieces = weighted_pieces(exp, mask, calls, bursts)
    last_state = int(pieces[2].max()) if len(pieces[2]) else 0
    graph = builder.finish(max(builder.latest(), last_state, int(defs.t_end)) + 1)
    progress(0.5, "replay: propagating clocks")
    clock, came_from, forced, weighted = kernel.propagate(
        graph.loc_ptr, graph.time, graph.copy, graph.n_virtual, graph.succ_ptr, graph.succ, graph.succ_cross,
        graph.indegree, *pieces, kernel.WEIGHT_OF_CLOCK, kernel.LOCAL_CLOCK)
    progress(0.8, "replay: critical path")
    main = main_locations(defs)[0]
    end_loc = int(main[np.argmax(clock[main, kernel.G_CUE])]) if len(main) else 0
    cp_loc, cp_b, cp_e, cp_wait = kernel.backtrack(graph.loc_ptr, graph.time, came_from,
                                                   int(graph.loc_ptr[end_loc + 1] - 1), mask.t_start, mask.t_stop)
    path = {"loc": cp_loc, "begin": cp_b, "end": cp_e, "waiting": cp_wait}
    result = _result(exp, focus, model, mask, clock, path, pieces, weighted, calls, stats, forced,
                     graph.backwards)
    progress(1.0, "replay: done")
    return replace(result, seconds=time.perf_counter() - started)


def _result(exp, focus, model, mask, clock, path, pieces, weighted, calls, stats, forced,
            backwards: int) -> ReplayResult:
    """Clocks and weighted totals (ns) and path into the figures the models use (s)."""
    defs = exp.definitions
    msg, coll, omp, rma = stats
    per_cp, outside, by_loc = critical_path_profile(exp, path, pieces, calls)
    weighted = weighted * NS
    main = main_locations(defs)[0]
    top = clock[main].max(axis=0) * NS if len(main) else np.zeros(kernel.N_CLOCKS)    # the main application's
    outside_mpi = weighted[masters(defs), COM]
    pl_cue = np.zeros(defs.n_processes)
    np.maximum.at(pl_cue, defs.location_process(), clock[:, kernel.PL_CUE] * NS)
    notes, approximate = _notes(msg, coll, omp, rma, forced, backwards, model, focus, defs.n_processes)
    return ReplayResult(
        focus=focus, model=model, r=mask.runtime_ns * NS, r_ideal=float(top[kernel.G_IDEAL]),
        g_cue=float(top[kernel.G_CUE]), g_coo=float(top[kernel.G_COO]), g_com=float(top[kernel.G_COM]),
        pl_cue=pl_cue, tl_cue=weighted[:, CUE], non_mpi=weighted[:, IDEAL], outside_mpi=outside_mpi,
        mpi_ideal=float(top[kernel.G_COM]) - outside_mpi, critical_path=path, critical_path_profile=per_cp,
        critical_path_outside=outside, critical_path_by_location=by_loc, n_messages_matched=msg.matched,
        n_unmatched=msg.unmatched, n_collectives=coll.instances, approximate=approximate, notes=notes)


def _notes(msg, coll, omp, rma, forced: int, backwards: int, model: str, focus: Focus,
           defs_processes: int) -> tuple[list[str], bool]:
    """What the replay could not follow exactly, in words; and whether that makes it approximate."""
    notes, approximate = [], False
    tasks = omp.tasks
    checks = [
        (msg.unmatched, f"{msg.unmatched} message halves without a partner (or a valid location) were ignored"),
        (coll.incomplete, f"{coll.incomplete} collective instances lack members or have extra ones"),
        (coll.unknown_root, f"{coll.unknown_root} rooted collectives without a known root replayed as all-to-all"),
        (coll.skipped_neighbourhood, f"{coll.skipped_neighbourhood} neighbourhood collective calls not "
                                     "synchronised (the process topology is not recorded)"),
        (coll.uncompleted, f"{coll.uncompleted} non-blocking collective calls without a completing MPI_Wait / "
                           "MPI_Test after their last member's entry were not synchronised"),
        (omp.incomplete_barriers, f"{omp.incomplete_barriers} OpenMP barriers not reached by the whole team"),
        (tasks.unstarted, f"{tasks.unstarted} OpenMP tasks whose creation or start is missing from the records "
                          "were not linked"),
        (tasks.ambiguous, f"{tasks.ambiguous} OpenMP task creations not replayed: their generation number repeats "
                          "in the process and the creating thread is not recorded"),
        (tasks.no_completion, f"{tasks.no_completion} OpenMP tasks without a recorded completion hold back no "
                              "taskwait or barrier"),
        (rma.incomplete_fences, f"{rma.incomplete_fences} MPI_Win_fence instances lack some of the locations "
                                "that call fences"),
        (rma.lock_epochs, f"{rma.lock_epochs} passive-target epochs (MPI_Win_lock): lock contention between "
                          "origins not replayed (the lock type is not recorded)"),
        (rma.pscw_calls, f"{rma.pscw_calls} MPI_Win_post / start / complete / wait calls not synchronised "
                         "(the access and exposure groups are not recorded)"),
        (msg.backwards, f"{msg.backwards} messages received before they were sent (clock skew between nodes) "
                        + ("were not followed" if model == "lamport" else "followed as recorded")),
        (backwards, f"{backwards} collective, OpenMP or task dependencies stamped after the event waiting for "
                    "them (inconsistent records) were not followed"),
        (forced, f"{forced} cyclic waits broken (inconsistent records)"),
    ]
    for count, text in checks:
        if count:
            notes.append(text)
            approximate = True
    if msg.placeholders or msg.repaired_channels:
        notes.append(f"{msg.placeholders} receives from MPI_PROC_NULL recorded as messages (size 0, tag "
                     f"MPI_ANY_TAG) dropped; sends and receives of {msg.repaired_channels} "
                     f"channel{'' if msg.repaired_channels == 1 else 's'} paired again in order")
    if focus.kind == "callpath" and defs_processes > 1:
        notes.append("call-path focus: dependencies between processes are not followed (each process's time in "
                     "the call path lies elsewhere in the run): in the ideal run no process waits for another, "
                     "so the MPI serialisation factors of the hybrid and critical-path models read 1 and POP "
                     "MPI's serialisation holds only each process's own time outside computation and MPI "
                     "(OpenMP runtime, I/O, unrecorded time); focus on iterations or a window to see waiting "
                     "between processes")
    if coll.no_communicator and coll.calls:
        notes.append("no communicator recorded for collectives: each assumed over all processes")
    if rma.fences:
        notes.append(f"{rma.fences} MPI_Win_fence calls replayed as barriers over every location that calls "
                     "fences (the window's communicator is not recorded)")
    if tasks.tasks:
        notes.append(f"{tasks.tasks} OpenMP tasks wait for their creation; task dependencies (depend clauses) "
                     "are not recorded and not replayed")
    return notes, approximate
