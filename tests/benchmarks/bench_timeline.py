"""Timeline benchmark: a ~10^8-record synthetic trace with 1,000 locations.

    python tests/benchmarks/bench_timeline.py make /tmp/bench_timeline.popview.h5 [--locations N --iterations N]
    python tests/benchmarks/bench_timeline.py pyramid /tmp/bench_timeline.popview.h5
    python tests/benchmarks/bench_timeline.py run /tmp/bench_timeline.popview.h5
    python tests/benchmarks/bench_timeline.py --small      # make + run at 64 x 200, in a temporary folder

`make` writes the cache straight through popview.cache.Writer (no text to
parse; minutes), `pyramid` (re)builds its timeline overview (the pyramid, in
its companion file: popview.cache.overview) as a first use does and times it,
`run` opens it in a TimelinePane offscreen (building the overview first when
it has none, timed) and times redraws after zooms and pans at full view and
at 1 ms windows, and reports the peak memory (RSS).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from pathlib import Path

import numpy as np
from small import add_small, in_scratch

N_LOC = 1000
THREADS = 8
ITERATIONS = 17_000          # compute + MPI pairs per location
MPI_ENTER = 50000001
INS, CYC = 42000050, 42000059


def _definitions(t_end: int):
    from popview.model.definitions import Definitions, EventType, Location, Process

    defs = Definitions(source_format="paraver", tool="synthetic benchmark", t_end=t_end)
    n_proc = N_LOC // THREADS
    defs.nodes = [f"node{i}" for i in range(n_proc // 8)]
    defs.applications = ["application 1"]
    for p in range(n_proc):
        defs.processes.append(Process(name=f"rank {p}", node=p // 8, rank=p))
        for t in range(THREADS):
            defs.locations.append(Location(name=f"THREAD 1.{p + 1}.{t + 1}", process=p, thread=t))
    defs.event_types = {
        MPI_ENTER: EventType(MPI_ENTER, "MPI Point-to-point", "region", {0: "End", 1: "MPI_Send", 2: "MPI_Recv",
                                                                      3: "MPI_Wait"}, paradigm="mpi"),
        INS: EventType(INS, "PAPI_TOT_INS", "counter"),
        CYC: EventType(CYC, "PAPI_TOT_CYC", "counter"),
    }
    defs.paradigms = ["mpi"]
    defs.counters = ["PAPI_TOT_INS", "PAPI_TOT_CYC"]
    return defs


def _location_records(loc: int, rng: np.random.Generator):
    """Alternating Running / MPI states, MPI enter/exit events, counters at each entry."""
    compute = rng.lognormal(np.log(380_000 + 40 * loc), 0.3, ITERATIONS).astype(np.int64) + 1
    mpi = rng.lognormal(np.log(90_000), 0.6, ITERATIONS).astype(np.int64) + 1
    dur = np.empty(2 * ITERATIONS, np.int64)
    dur[0::2], dur[1::2] = compute, mpi
    ends = np.cumsum(dur)
    begins = ends - dur
    state = np.empty(2 * ITERATIONS, np.int32)
    state[0::2] = 1
    state[1::2] = np.where(rng.random(ITERATIONS) < 0.7, 3, 8)
    calls = rng.integers(1, 4, ITERATIONS)
    mpi_b, mpi_e = begins[1::2], ends[1::2]
    ev_time = np.concatenate([mpi_b, mpi_e, mpi_b, mpi_b])
    ev_type = np.concatenate([np.full(ITERATIONS, MPI_ENTER), np.full(ITERATIONS, MPI_ENTER),
                              np.full(ITERATIONS, INS), np.full(ITERATIONS, CYC)]).astype(np.int32)
    ins = (compute * rng.uniform(1.0, 2.5, ITERATIONS)).astype(np.int64)
    ev_value = np.concatenate([calls, np.zeros(ITERATIONS, np.int64), ins, compute])
    order = np.lexsort((ev_type == MPI_ENTER, ev_time))  # counters before the entry at equal times
    states = {"loc": np.full(len(begins), loc, np.int32), "begin": begins, "end": ends, "state": state}
    events = {"loc": np.full(len(ev_time), loc, np.int32), "time": ev_time[order], "type": ev_type[order],
              "value": ev_value[order]}
    return states, events


def make(path: Path) -> None:
    from popview.cache import Progress, Writer

    rng = np.random.default_rng(7)
    t_end = 0
    n = 0
    start = time.perf_counter()
    with Writer(path, "synthetic-benchmark", N_LOC) as w:
        for loc in range(N_LOC):
            states, events = _location_records(loc, rng)
            t_end = max(t_end, int(states["end"][-1]))
            w.append("states", states)
            w.append("events", events)
            n += len(states["loc"]) + len(events["loc"])
            if loc % 100 == 99:
                print(f"generated {loc + 1} locations, {n:,} records, {time.perf_counter() - start:.0f} s", flush=True)
        w.set_definitions(_definitions(t_end))
        w.finish(Progress(lambda f, m: print(f"{f:5.1%} {m}", flush=True) if m else None))
    print(f"made {path}: {n:,} records in {time.perf_counter() - start:.0f} s")


def pyramid(path: Path) -> None:
    from popview.cache import Progress, Reader, overview

    _stamp(path)
    overview.remove(path)
    with Reader(path) as reader:
        start, cpu = time.perf_counter(), time.process_time()
        reader.timeline(Progress(lambda f, m: print(f"{f:5.1%} {m}", flush=True) if m else None))
    print(f"timeline overview built from the cache in {time.perf_counter() - start:.1f} s "
          f"({time.process_time() - cpu:.1f} s CPU)")


def _stamp(path: Path) -> None:
    """Mark a benchmark cache of an older schema current (an unchanged one is left as it is:
    sealed again, its timeline overview would belong to another digest)."""
    import h5py

    from popview.cache import integrity
    from popview.cache.schema import SCHEMA_VERSION

    with h5py.File(path, "r") as out:
        if int(out.attrs.get("schema_version", -1)) == SCHEMA_VERSION:
            return
    with h5py.File(path, "r+") as out:
        out.attrs["schema_version"] = SCHEMA_VERSION
    integrity.reseal(path)


def run(path: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from popview.analysis import timeline_data
    from popview.cache import Reader, overview
    from popview.experiment import Experiment
    from popview.gui.state import AppState
    from popview.gui.timeline import TimelinePane

    _stamp(path)
    overview_existed = overview.path_of(path).exists()
    app = QApplication.instance() or QApplication([])
    state = AppState()
    pane = TimelinePane(state)
    pane.resize(1600, 1000)
    pane.show()
    exp = Experiment(path, Reader(path), False)
    start = time.perf_counter()
    exp.prepare_timeline()               # as the window's opening lane does,
    timeline_data.warm_kernels()         # with the pictures' kernels
    print(f"timeline overview ready in {time.perf_counter() - start:.2f} s "
          f"({'opened' if overview_existed else 'built from the cache: its first use'})")
    state.add_experiment(exp)
    app.processEvents()
    t_end = exp.definitions.t_end
    view = pane.view

    cpu = []

    def timed(action) -> float:
        start, start_cpu = time.perf_counter(), time.process_time()
        action()
        view.redraw_now()
        pane.grab()
        cpu.append((time.process_time() - start_cpu) * 1e3)
        return (time.perf_counter() - start) * 1e3

    view.set_window(0, t_end // 2)                       # warm up: first reads, kernel loading
    view.redraw_now()
    view.set_window(t_end // 3, t_end // 3 + 1_000_000)
    view.redraw_now()

    full = []
    for i in range(10):
        shift = (i % 5) * t_end // 200
        full.append(timed(lambda s=shift: view.set_window(s, t_end + s)))
        full.append(timed(lambda: view.set_window(0, t_end)))
    rng = np.random.default_rng(1)
    small = []
    for _ in range(10):
        t0 = int(rng.integers(0, t_end - 2_000_000))
        small.append(timed(lambda a=t0: view.set_window(a, a + 1_000_000)))            # zoom to 1 ms
        small.append(timed(lambda a=t0: view.set_window(a + 200_000, a + 1_200_000)))  # pan by 20 %
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"records: {sum(exp.reader.count(t) for t in ('states', 'events', 'messages')):,} "
          f"(+{exp.reader.count('calls'):,} call intervals), locations: {len(exp.definitions.locations)}")
    n = len(full)
    print(f"redraw at full view:  median {statistics.median(full):6.1f} ms  max {max(full):6.1f} ms  "
          f"(CPU median {statistics.median(cpu[:n]):6.1f} ms, n={n})")
    print(f"redraw at 1 ms views: median {statistics.median(small):6.1f} ms  max {max(small):6.1f} ms  "
          f"(CPU median {statistics.median(cpu[n:]):6.1f} ms, n={len(small)})")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"peak memory (RSS) of the GUI process: {peak:.0f} MB")


def main() -> None:
    """The step and the cache; --locations / --iterations shrink `make`; --small makes and
    runs a small cache in a temporary folder (CI)."""
    global N_LOC, ITERATIONS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("make", "pyramid", "run"), nargs="?")
    ap.add_argument("cache", type=Path, nargs="?")
    ap.add_argument("--locations", type=int, default=N_LOC, help="locations (a multiple of 64)")
    ap.add_argument("--iterations", type=int, default=ITERATIONS, help="compute + MPI pairs per location")
    add_small(ap, locations=64, iterations=200)
    args = ap.parse_args()
    N_LOC, ITERATIONS = args.locations, args.iterations
    if args.step is None:
        in_scratch(ap, args.small, "a step and the cache's path", lambda tmp: make_and_run(tmp / "timeline.popview.h5"))
    elif args.cache is None:
        ap.error("give the cache's path")
    else:
        {"make": make, "pyramid": pyramid, "run": run}[args.step](args.cache)


def make_and_run(path: Path) -> None:
    make(path)
    run(path)


if __name__ == "__main__":
    main()
