"""Synthetic OTF2 archives written with the `otf2` bindings, for tests and
benchmarks: an MPI ring exchange with computation phases, collectives,
PAPI counters, optional worker threads, buffer flushes and measurement gaps.
`write_trace` returns what it wrote, so a reader can be checked against it."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from otf2.enums import (Base, CollectiveOp, GroupType, LocationGroupType, LocationType, MeasurementMode,
                        MetricMode, MetricOccurrence, Paradigm, RecorderKind, RegionRole, Type)

from popview.readers.otf2 import library

otf2, _otf2 = library.bindings()

TICKS_PER_S = 2_000_000_000      # 0.5 ns per tick: exercises the clock conversion
MESSAGE_BYTES = 4096


@dataclass
class Written:
    """What write_trace put into the archive."""

    anchor: Path
    ranks: int
    threads: int
    iterations: int
    events: dict[str, int] = field(default_factory=dict)          # per OTF2 record name
    messages: int = 0
    message_bytes: int = 0
    collectives: int = 0
    compute_visits: int = 0
    counter_totals: dict[str, int] = field(default_factory=dict)  # summed over all samples' increments
    duration_ticks: int = 0

    @property
    def total_events(self) -> int:
        return sum(self.events.values())


def write_trace(folder: Path, ranks: int = 4, iterations: int = 10, threads: int = 1,
                collective_every: int = 5, counters: bool = True, flush_at: int | None = None,
                measurement_gap: int | None = None, chunk_size: int = 1 << 20) -> Written:
    """Write `folder`/traces.otf2 (+ traces.def, traces/): `ranks` MPI processes
    exchanging one message each way with their ring neighbours per iteration."""
    folder = Path(folder)
    if (folder / "traces").exists() or (folder / "traces.otf2").exists():
        raise FileExistsError(f"{folder}: an OTF2 archive already exists here")
    out = Written(anchor=folder / "traces.otf2", ranks=ranks, threads=threads, iterations=iterations)
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    with otf2.writer.open(str(folder), archive_name="traces", timer_resolution=TICKS_PER_S,
                          chunk_size_events=chunk_size) as trace:
        d = trace.definitions
        machine = d.system_tree_node("machine")
        node = d.system_tree_node("node0", parent=machine)
        groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(ranks)]
        mains = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
        workers = [[d.location(f"Thread {t}", type=LocationType.CPU_THREAD, group=g) for t in range(1, threads)]
                   for g in groups]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=mains)
        world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=mains))
        reg = {name: d.region(name, paradigm=paradigm, region_role=role) for name, paradigm, role in (
            ("main", Paradigm.USER, RegionRole.FUNCTION), ("compute", Paradigm.USER, RegionRole.FUNCTION),
            ("MPI_Send", Paradigm.MPI, RegionRole.POINT2POINT), ("MPI_Recv", Paradigm.MPI, RegionRole.POINT2POINT),
            ("MPI_Allreduce", Paradigm.MPI, RegionRole.COLL_ALL2ALL), ("worker", Paradigm.USER, RegionRole.FUNCTION))}
        papi = None
        if counters:
            members = [d.metric_member(n, metric_mode=MetricMode.ACCUMULATED_START, value_type=Type.UINT64,
                                       base=Base.DECIMAL, unit="#") for n in ("PAPI_TOT_INS", "PAPI_TOT_CYC")]
            papi = d.metric_class(members, occurrence=MetricOccurrence.SYNCHRONOUS_STRICT, recorder_kind=RecorderKind.CPU)
        period = 10_000
        for r in range(ranks):
            slow = trace.event_writer_from_location(mains[r])
            w = _Direct(trace, slow)
            t = 1000 + 37 * r
            ins = cyc = 0
            w.enter(t, reg["main"]._ref)
            count("Enter")
            right, left = (r + 1) % ranks, (r - 1) % ranks
            compute, send, recv, allreduce = (reg[n]._ref for n in ("compute", "MPI_Send", "MPI_Recv", "MPI_Allreduce"))
            for i in range(iterations):
                base = t + i * period
                if flush_at == i and r == 0:
                    slow.buffer_flush(base, base + 50)
                    count("BufferFlush")
                if measurement_gap == i:
                    slow.measurement_on_off(base + 60, MeasurementMode.OFF)
                    slow.measurement_on_off(base + 90, MeasurementMode.ON)
                    count("MeasurementOnOff", 2)
                w.enter(base + 100, compute)
                out.compute_visits += 1
                if papi is not None:
                    w.metric2(base + 100, papi._ref, ins, cyc)
                    ins += 1000 + 10 * r
                    cyc += 2000 + i
                    w.metric2(base + 4000, papi._ref, ins, cyc)
                w.leave(base + 4000, compute)
                w.enter(base + 4100, send)
                w.send(base + 4200, right, world._ref, i, MESSAGE_BYTES)
                w.leave(base + 4300, send)
                w.enter(base + 4400, recv)
                w.recv(base + 6000, left, world._ref, i, MESSAGE_BYTES)
                w.leave(base + 6100, recv)
                if collective_every and i % collective_every == collective_every - 1:
                    w.enter(base + 7000, allreduce)
                    w.collective(base + 7010, base + 8000, CollectiveOp.ALLREDUCE.value, world._ref, 0xFFFFFFFF,
                                 8, 8 * ranks)
                    w.leave(base + 8010, allreduce)
                    out.collectives += 1
            out.messages += iterations
            out.message_bytes += iterations * MESSAGE_BYTES
            end = t + iterations * period
            w.leave(end, reg["main"]._ref)
            count("Leave")
            w.close()
            out.duration_ticks = max(out.duration_ticks, end)
            if papi is not None:
                out.counter_totals["PAPI_TOT_INS"] = out.counter_totals.get("PAPI_TOT_INS", 0) + ins
                out.counter_totals["PAPI_TOT_CYC"] = out.counter_totals.get("PAPI_TOT_CYC", 0) + cyc
            for k, loc in enumerate(workers[r]):
                ww = _Direct(trace, trace.event_writer_from_location(loc))
                for i in range(iterations):
                    base = t + i * period
                    ww.enter(base + 200 + k, reg["worker"]._ref)
                    ww.leave(base + 3000, reg["worker"]._ref)
                ww.close()
                count("Enter", iterations), count("Leave", iterations)
        count("Enter", 3 * ranks * iterations), count("Leave", 3 * ranks * iterations)   # compute, send, recv
        count("MpiSend", ranks * iterations), count("MpiRecv", ranks * iterations)
        if papi is not None:
            count("Metric", 2 * ranks * iterations)
        if out.collectives:
            count("Enter", out.collectives), count("Leave", out.collectives)
            count("MpiCollectiveBegin", out.collectives), count("MpiCollectiveEnd", out.collectives)
    out.events = counts
    return out


class _Direct:
    """Hot-path event writing straight through the OTF2 C API (the bindings'
    per-event objects write ~3*10^4 events/s; this ~10x more), keeping the
    bookkeeping the high-level writer does: event counts and clock range."""

    _lib = None

    def __init__(self, trace, writer):
        lib = self._functions()
        self.trace, self.writer, self.handle = trace, writer, writer.handle
        self.n, self.first, self.last = 0, None, None
        self.enter, self.leave = self._two(lib.OTF2_EvtWriter_Enter), self._two(lib.OTF2_EvtWriter_Leave)
        self._lib = lib
        self._types2 = (_otf2.Type * 2)(_otf2.TYPE_UINT64, _otf2.TYPE_UINT64)
        self._values2 = (_otf2.MetricValue * 2)()

    @classmethod
    def _functions(cls):
        if cls._lib is None:
            lib = _otf2.conf.lib
            ptr, al = ctypes.POINTER(_otf2.EvtWriter), ctypes.POINTER(_otf2.AttributeList)
            u8, u32, u64 = ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64
            sig = {"OTF2_EvtWriter_Enter": [ptr, al, u64, u32], "OTF2_EvtWriter_Leave": [ptr, al, u64, u32],
                   "OTF2_EvtWriter_MpiSend": [ptr, al, u64, u32, u32, u32, u64],
                   "OTF2_EvtWriter_MpiRecv": [ptr, al, u64, u32, u32, u32, u64],
                   "OTF2_EvtWriter_MpiCollectiveBegin": [ptr, al, u64],
                   "OTF2_EvtWriter_MpiCollectiveEnd": [ptr, al, u64, u8, u32, u32, u64, u64],
                   "OTF2_EvtWriter_Metric": [ptr, al, u64, u32, u8, _otf2.Type * 2, _otf2.MetricValue * 2]}
            functions = {}
            for name, argtypes in sig.items():
                f = lib[name]          # a function object of our own: the bindings' keep their signatures
                f.argtypes = argtypes
                f.restype = _otf2.ErrorCode
                f.errcheck = _otf2.HandleErrorCode
                functions[name] = f
            cls._lib = SimpleNamespace(**functions)
        return cls._lib

    def _two(self, f):
        def call(t, ref):
            self._tick(t)
            f(self.handle, None, t, ref)
        return call

    def _tick(self, t):
        self.n += 1
        if self.first is None:
            self.first = t
        self.last = t

    def send(self, t, receiver, comm, tag, size):
        self._tick(t)
        self._lib.OTF2_EvtWriter_MpiSend(self.handle, None, t, receiver, comm, tag, size)

    def recv(self, t, sender, comm, tag, size):
        self._tick(t)
        self._lib.OTF2_EvtWriter_MpiRecv(self.handle, None, t, sender, comm, tag, size)

    def collective(self, t_begin, t_end, op, comm, root, sent, received):
        self._tick(t_begin)
        self._lib.OTF2_EvtWriter_MpiCollectiveBegin(self.handle, None, t_begin)
        self._tick(t_end)
        self._lib.OTF2_EvtWriter_MpiCollectiveEnd(self.handle, None, t_end, op, comm, root, sent, received)

    def metric2(self, t, metric, a, b):
        self._tick(t)
        self._values2[0].unsigned_int, self._values2[1].unsigned_int = a, b
        self._lib.OTF2_EvtWriter_Metric(self.handle, None, t, metric, 2, self._types2, self._values2)

    def close(self):
        self.writer._location._number_of_events_written += self.n
        if self.first is not None:
            self.trace._update_timestamps(self.first)
            self.trace._update_timestamps(self.last)


def write_record_kinds(folder: Path) -> Path:
    """A small archive with every record kind the buffer decoder handles, in the
    forms that exercise its corner cases (attribute lists, records longer than 254
    bytes, all-ones and 64-bit values, double and signed metrics, clock gaps),
    thread, lock and task records (OpenMP and generic), plus, on a second rank, an
    RMA window record, which it leaves to the bindings."""
    folder = Path(folder)
    with otf2.writer.open(str(folder), archive_name="traces", timer_resolution=1_000_000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
        groups = [d.location_group(f"rank {r}", location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(2)]
        locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=locs))
        region = d.region("work", paradigm=Paradigm.USER, region_role=RegionRole.FUNCTION)
        mpi = d.region("MPI_Isend", paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT)
        attr = d.attribute("note", type=Type.UINT64)
        ints = d.metric_class([d.metric_member("signed", metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.INT64),
                               d.metric_member("PAPI_TOT_INS", metric_mode=MetricMode.ACCUMULATED_START,
                                               value_type=Type.UINT64)],
                              occurrence=MetricOccurrence.SYNCHRONOUS_STRICT, recorder_kind=RecorderKind.CPU)
        power = d.metric("power", metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.DOUBLE, unit="W")
        window = d.rma_win("window", comm=world)
        param_s = d.parameter("mode", parameter_type=otf2.ParameterType.STRING)
        param_i = d.parameter("size", parameter_type=otf2.ParameterType.INT64)
        param_u = d.parameter("count", parameter_type=otf2.ParameterType.UINT64)
        for r, loc in enumerate(locs):
            w = trace.event_writer_from_location(loc)
            t = 10 + r
            w.program_begin(t, "a.out", [f"--argument-{i}" for i in range(150)])
            w.enter(t + 1, region, attributes={attr: 7})
            w.metric(t + 2, ints, [-5 - r, 1 << 40])
            w.metric(t + 3, power, 151.75 + r)
            w.parameter_string(t + 4, param_s, "fast")
            w.parameter_int(t + 4, param_i, -3)
            w.parameter_unsigned_int(t + 4, param_u, 1 << 62)
            w.enter(t + 5, mpi)
            w.mpi_isend(t + 6, 1 - r, world, 0xFFFFFFFE, 5 << 32, 17)
            w.mpi_isend_complete(t + 7, 17)
            w.leave(t + 8, mpi)
            w.mpi_irecv_request(t + 9, 18)
            w.mpi_request_test(t + 10, 18)
            w.mpi_irecv(t + 11, 1 - r, world, 0xFFFFFFFE, 5 << 32, 18)
            w.mpi_request_cancelled(t + 12, 19)
            w.measurement_on_off(t + 20, MeasurementMode.OFF)
            w.measurement_on_off(t + 300, MeasurementMode.ON)
            w.buffer_flush(t + 301, t + 400)
            w.mpi_collective_begin(t + 401)
            w.mpi_collective_end(t + 402, CollectiveOp.BCAST, world, 1, 0, 64)
            w.metric(t + 403, ints, [7, (1 << 40) + 9])
            _thread_records(w, t + 404, world)
            if r == 1:
                w.rma_win_create(t + 500, window)
            w.leave(t + 1000, region)
            w.program_end(t + 1001, 0)
    return folder / "traces.otf2"


def _thread_records(w, t: int, team) -> None:
    """One of each thread, lock and task record, generic and OpenMP (OTF2 1.x) forms."""
    w.thread_fork(t, Paradigm.OPENMP, 4)
    w.thread_team_begin(t + 1, team)
    w.thread_acquire_lock(t + 2, Paradigm.OPENMP, 3, 1)
    w.thread_release_lock(t + 3, Paradigm.OPENMP, 3, 1)
    w.thread_task_create(t + 4, team, 0, 9)
    w.thread_task_switch(t + 5, team, 0, 9)
    w.thread_task_complete(t + 6, team, 0, 9)
    w.thread_team_end(t + 7, team)
    w.thread_join(t + 8, Paradigm.OPENMP)
    w.thread_create(t + 9, team, 1 << 40)
    w.thread_begin(t + 10, team, 1 << 40)
    w.thread_wait(t + 11, team, 1 << 40)
    w.thread_end(t + 12, team, 0xFFFFFFFFFFFFFFFF)
    w.omp_fork(t + 13, 8)
    w.omp_acquire_lock(t + 14, 300, 2)
    w.omp_release_lock(t + 15, 300, 2)
    w.omp_task_create(t + 16, 1 << 50)
    w.omp_task_switch(t + 17, 1 << 50)
    w.omp_task_complete(t + 18, 1 << 50)
    w.omp_join(t + 19)


class CaseArchive:
    """A small OTF2 archive written record by record, for the replay's
    closed-form cases (the OTF2 twins of popview.testing.replay_cases).
    Times in microseconds, written as nanosecond ticks from 0; process p has
    threads[p] threads, thread 0 its MPI rank's master; regions are named
    with their OTF2 paradigm and role."""

    def __init__(self, threads: list[int]):
        self.threads = threads
        self.regions: dict[str, tuple[Paradigm, RegionRole]] = {}
        self.records: dict[tuple[int, int], list] = {}

    def region(self, name: str, paradigm: Paradigm, role: RegionRole) -> None:
        self.regions[name] = (paradigm, role)

    def _add(self, p: int, t: int, time: float, write) -> None:
        rows = self.records.setdefault((p, t), [])
        rows.append((time, len(rows), write))

    def enter(self, p: int, t: int, time: float, name: str) -> None:
        self._add(p, t, time, lambda w, ticks, x: w.enter(ticks, x.region[name]))

    def leave(self, p: int, t: int, time: float, name: str) -> None:
        self._add(p, t, time, lambda w, ticks, x: w.leave(ticks, x.region[name]))

    def call(self, p: int, t: int, begin: float, end: float, name: str) -> None:
        self.enter(p, t, begin, name)
        self.leave(p, t, end, name)

    def collective(self, p: int, begin: float, end: float, name: str, op: CollectiveOp, root: int | None = None):
        """A collective call of process p's master with its begin / end records inside."""
        self.enter(p, 0, begin, name)
        self._add(p, 0, begin, lambda w, ticks, x: w.mpi_collective_begin(ticks))
        self._add(p, 0, end, lambda w, ticks, x: w.mpi_collective_end(
            ticks, op, x.world, 0xFFFFFFFF if root is None else root, 8, 8))
        self.leave(p, 0, end, name)

    def task(self, p: int, t: int, time: float, record: str, generation: int, creator: int = 0) -> None:
        """A task create / switch / complete record (OTF2 2.x thread form)."""
        self._add(p, t, time, lambda w, ticks, x: getattr(w, f"thread_task_{record}")(
            ticks, x.world, creator, generation))

    def rma(self, p: int, time: float, record: str, remote: int, size: int = 64) -> None:
        """An RMA put / get record of process p's master on the one window."""
        self._add(p, 0, time, lambda w, ticks, x: getattr(w, f"rma_{record}")(ticks, x.window, remote, size, 0))

    def write(self, folder: Path) -> Path:
        folder = Path(folder)
        with otf2.writer.open(str(folder), archive_name="traces", timer_resolution=1_000_000_000) as trace:
            d = trace.definitions
            node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
            groups = [d.location_group(f"MPI Rank {p}", location_group_type=LocationGroupType.PROCESS,
                                       system_tree_parent=node) for p in range(len(self.threads))]
            locs = {(p, t): d.location("Master thread" if t == 0 else f"Thread {t}",
                                       type=LocationType.CPU_THREAD, group=g)
                    for p, g in enumerate(groups) for t in range(self.threads[p])}
            masters = [locs[(p, 0)] for p in range(len(self.threads))]
            d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=masters)
            world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                            paradigm=Paradigm.MPI, members=masters))
            refs = _CaseRefs(world=world, window=d.rma_win("window", comm=world),
                             region={n: d.region(n, paradigm=pa, region_role=ro) for n, (pa, ro) in
                                     self.regions.items()})
            for key, loc in locs.items():
                w = trace.event_writer_from_location(loc)
                for time, _, write in sorted(self.records.get(key, []), key=lambda r: (r[0], r[1])):
                    write(w, int(round(time * 1000)), refs)
        return folder / "traces.otf2"


@dataclass
class _CaseRefs:
    world: object
    window: object
    region: dict


# ---------------------------------------------------------------- OpenMP teams and tasks

OMP_REGIONS = {  # name -> (paradigm, role)
    "main": (Paradigm.USER, RegionRole.FUNCTION), "foo": (Paradigm.USER, RegionRole.FUNCTION),
    "kernel": (Paradigm.USER, RegionRole.FUNCTION), "work": (Paradigm.USER, RegionRole.FUNCTION),
    "MPI_Barrier": (Paradigm.MPI, RegionRole.BARRIER),
    "!$omp parallel @x.c:10": (Paradigm.OPENMP, RegionRole.PARALLEL),
    "!$omp for @x.c:12": (Paradigm.OPENMP, RegionRole.LOOP),
    "!$omp implicit barrier @x.c:20": (Paradigm.OPENMP, RegionRole.IMPLICIT_BARRIER),
    "!$omp single @x.c:14": (Paradigm.OPENMP, RegionRole.SINGLE),
    "!$omp create task @x.c:15": (Paradigm.OPENMP, RegionRole.TASK_CREATE),
    "!$omp task @x.c:15": (Paradigm.OPENMP, RegionRole.TASK),
    "!$omp taskwait @x.c:17": (Paradigm.OPENMP, RegionRole.TASK_WAIT),
}
PARALLEL, FOR, BARRIER = "!$omp parallel @x.c:10", "!$omp for @x.c:12", "!$omp implicit barrier @x.c:20"
SINGLE, CREATE, TASK, TASKWAIT = ("!$omp single @x.c:14", "!$omp create task @x.c:15", "!$omp task @x.c:15",
                                  "!$omp taskwait @x.c:17")
POWER_W = (151.25, 0.1, 1e-3)          # absolute double samples (OpenMP archive, master of rank 0)
ENERGY_J = (0.5, 1.75, 3.0)            # accumulated double samples: increments 0.5, 1.25, 1.25


@dataclass
class Scripted:
    """An archive written from per-location scripts, with its record counts."""

    anchor: Path
    ranks: int
    threads: int
    events: dict[str, int] = field(default_factory=dict)


def openmp_script(rank: int, threads: int, iterations: int, generic: bool) -> list[list[tuple]]:
    """Per thread of one rank: (time in ns, record, arguments). Each iteration the
    master forks a team below main/foo: every thread runs an `!$omp for` and the
    implicit barrier, workers also call `kernel`; the master then calls MPI_Barrier.
    `generic`: ThreadFork/TeamBegin/TeamEnd/ThreadJoin, else OmpFork/OmpJoin only."""
    shift = 5 * rank
    master = [(shift, "enter", "main"), (shift + 10, "enter", "foo")]
    workers = [[] for _ in range(1, threads)]
    for i in range(iterations):
        base = shift + 100 + 1000 * i
        master += [(base, "fork", threads), (base + 1, "team_begin", None), (base + 2, "enter", PARALLEL),
                   (base + 10, "enter", FOR), (base + 400, "leave", FOR), (base + 400, "enter", BARRIER),
                   (base + 600, "leave", BARRIER), (base + 610, "leave", PARALLEL), (base + 611, "team_end", None),
                   (base + 620, "join", None), (base + 700, "enter", "MPI_Barrier"),
                   (base + 800, "leave", "MPI_Barrier")]
        for k, script in enumerate(workers, start=1):
            script += [(base + 2 + k, "team_begin", None), (base + 10, "enter", PARALLEL), (base + 12, "enter", FOR),
                       (base + 20, "enter", "kernel"), (base + 300, "leave", "kernel"),
                       (base + 400 + 10 * k, "leave", FOR), (base + 400 + 10 * k, "enter", BARRIER),
                       (base + 600, "leave", BARRIER), (base + 605, "leave", PARALLEL), (base + 606, "team_end", None)]
    end = shift + 100 + 1000 * iterations
    master += [(end, "leave", "foo"), (end + 10, "leave", "main")]
    scripts = [master] + workers
    if not generic:
        scripts = [[op for op in s if op[1] not in ("team_begin", "team_end")] for s in scripts]
    return scripts


def task_script() -> list[list[tuple]]:
    """One rank, 3 threads: the master creates a task in a single construct; thread 1
    starts it (task -> work, then taskwait), suspends it at the taskwait; thread 2
    resumes it (leaves the taskwait, work again) and completes it."""
    team = None     # the rank's (first) thread team
    return [
        [(0, "enter", "main"), (10, "fork", 3), (11, "team_begin", team), (12, "enter", PARALLEL),
         (13, "enter", SINGLE), (14, "enter", CREATE), (15, "task_create", (0, 1)), (16, "leave", CREATE),
         (17, "leave", SINGLE), (18, "enter", BARRIER), (90, "leave", BARRIER), (91, "leave", PARALLEL),
         (92, "team_end", team), (93, "join", None), (100, "leave", "main")],
        [(11, "team_begin", team), (12, "enter", PARALLEL), (20, "enter", BARRIER), (30, "task_switch", (0, 1)),
         (30, "enter", TASK), (32, "enter", "work"), (38, "leave", "work"), (40, "enter", TASKWAIT),
         (41, "task_switch", (1, 0)), (85, "leave", BARRIER), (86, "leave", PARALLEL), (87, "team_end", team)],
        [(11, "team_begin", team), (12, "enter", PARALLEL), (20, "enter", BARRIER), (50, "task_switch", (0, 1)),
         (55, "leave", TASKWAIT), (56, "enter", "work"), (60, "leave", "work"), (62, "leave", TASK),
         (62, "task_complete", (0, 1)), (63, "task_switch", (2, 0)), (88, "leave", BARRIER),
         (89, "leave", PARALLEL), (90, "team_end", team)],
    ]


def nested_script() -> list[list[tuple]]:
    """One rank, 3 threads: the master forks team 0 (threads 0, 1); inside it thread 1
    calls foo and forks team 1 (threads 1, 2), in which thread 2 calls `kernel`."""
    return [
        [(0, "enter", "main"), (10, "fork", 2), (11, "team_begin", 0), (12, "enter", PARALLEL),
         (85, "leave", PARALLEL), (91, "team_end", 0), (92, "join", None), (100, "leave", "main")],
        [(11, "team_begin", 0), (12, "enter", PARALLEL), (20, "enter", "foo"), (21, "fork", 2),
         (22, "team_begin", 1), (23, "enter", PARALLEL), (30, "enter", "work"), (40, "leave", "work"),
         (50, "leave", PARALLEL), (51, "team_end", 1), (52, "join", None), (60, "leave", "foo"),
         (89, "leave", PARALLEL), (90, "team_end", 0)],
        [(22, "team_begin", 1), (24, "enter", PARALLEL), (25, "enter", "kernel"), (45, "leave", "kernel"),
         (49, "leave", PARALLEL), (50, "team_end", 1)],
    ]


LATE_BARRIER = {"iterations": 3, "join": (270, 210), "worker_leave": (260, 200)}


def late_barrier_script(rank: int, iterations: int = 3) -> list[list[tuple]]:
    """Rank `rank` of 2, 2 threads, Score-P's record order, no MPI inside the parallel
    region. Iteration i at base = 100 + 1000 i: the master forks at base, is descheduled
    until base+50, where it begins its team and enters the region; it computes in the
    `!$omp for` [base+50, base+150], waits in the barrier until base+160, leaves, ends
    its team and waits until its ThreadJoin at base + join[rank] (270 / 210); then
    MPI_Barrier [base+300, base+400]. The worker begins its team and enters at base+10,
    computes [base+10, base+140], and, descheduled, stamps the end of its barrier, its
    leave and its team end at base + worker_leave[rank] (260 / 200): after its
    master's leave, before its master's join. main runs [0, 100 + 1000 iterations]."""
    join, leave = LATE_BARRIER["join"][rank], LATE_BARRIER["worker_leave"][rank]
    master, worker = [(0, "enter", "main")], []
    for i in range(iterations):
        base = 100 + 1000 * i
        master += [(base, "fork", 2), (base + 50, "team_begin", None), (base + 50, "enter", PARALLEL),
                   (base + 50, "enter", FOR), (base + 150, "leave", FOR), (base + 150, "enter", BARRIER),
                   (base + 160, "leave", BARRIER), (base + 160, "leave", PARALLEL), (base + 160, "team_end", None),
                   (base + join, "join", None), (base + 300, "enter", "MPI_Barrier"),
                   (base + 400, "leave", "MPI_Barrier")]
        worker += [(base + 10, "team_begin", None), (base + 10, "enter", PARALLEL), (base + 10, "enter", FOR),
                   (base + 140, "leave", FOR), (base + 140, "enter", BARRIER), (base + leave, "leave", BARRIER),
                   (base + leave, "leave", PARALLEL), (base + leave, "team_end", None)]
    master.append((100 + 1000 * iterations, "leave", "main"))
    return [master, worker]


def write_late_barrier_trace(folder: Path) -> Scripted:
    """2 ranks x 2 threads from late_barrier_script (1 tick = 1 ns)."""
    return _write_scripted(folder, [late_barrier_script(r, LATE_BARRIER["iterations"]) for r in range(2)], 2, False)


def write_nested_trace(folder: Path) -> Scripted:
    return _write_scripted(folder, [nested_script()], 3, False, nested=True)


def write_openmp_trace(folder: Path, ranks: int = 2, threads: int = 3, iterations: int = 3,
                       generic: bool = True, double_metrics: bool = False) -> Scripted:
    """MPI ranks of OpenMP threads from openmp_script (1 tick = 1 ns); with
    `double_metrics` the master of rank 0 records POWER_W and ENERGY_J."""
    return _write_scripted(folder, [openmp_script(r, threads, iterations, generic) for r in range(ranks)],
                           threads, double_metrics)


def write_task_trace(folder: Path) -> Scripted:
    return _write_scripted(folder, [task_script()], 3, False)


_RECORD_NAMES = {"enter": "Enter", "leave": "Leave", "team_begin": "ThreadTeamBegin", "team_end": "ThreadTeamEnd",
                 "task_create": "ThreadTaskCreate", "task_switch": "ThreadTaskSwitch",
                 "task_complete": "ThreadTaskComplete"}


def _write_scripted(folder: Path, scripts: list[list[list[tuple]]], threads: int, double_metrics: bool,
                    nested: bool = False) -> Scripted:
    folder = Path(folder)
    out = Scripted(anchor=folder / "traces.otf2", ranks=len(scripts), threads=threads)
    counts: dict[str, int] = {}
    generic = any(op[1] == "team_begin" for s in scripts for script in s for op in script)
    with otf2.writer.open(str(folder), archive_name="traces", timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
        groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(len(scripts))]
        locs = [[d.location("Master thread" if t == 0 else f"OMP thread {t}", type=LocationType.CPU_THREAD, group=g)
                 for t in range(threads)] for g in groups]
        masters = [row[0] for row in locs]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=masters)
        d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                               members=masters))
        d.group("OpenMP", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP,
                members=[loc for row in locs for loc in row])
        teams = [[d.comm(f"team {r}.{k}", group=d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.OPENMP,
                                                         members=members))
                  for k, members in enumerate([row[:2], row[1:3]] if nested else [row])] for r, row in enumerate(locs)]
        regions = {name: d.region(name, paradigm=p, region_role=role) for name, (p, role) in OMP_REGIONS.items()}
        metrics = None
        if double_metrics:
            metrics = (d.metric("power", metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.DOUBLE, unit="W"),
                       d.metric("energy", metric_mode=MetricMode.ACCUMULATED_START, value_type=Type.DOUBLE, unit="J"))
        for r, rank_scripts in enumerate(scripts):
            for t, script in enumerate(rank_scripts):
                w = trace.event_writer_from_location(locs[r][t])
                for time, what, arg in script:
                    _write_op(w, time, what, arg, regions, teams[r], generic)
                    name = _RECORD_NAMES.get(what) or (("ThreadFork" if generic else "OmpFork") if what == "fork"
                                                       else ("ThreadJoin" if generic else "OmpJoin"))
                    counts[name] = counts.get(name, 0) + 1
                if metrics is not None and r == 0 and t == 0:
                    for k, (p, e) in enumerate(zip(POWER_W, ENERGY_J)):
                        w.metric(script[-1][0] + 1 + k, metrics[0], p)
                        w.metric(script[-1][0] + 1 + k, metrics[1], e)
                    counts["Metric"] = counts.get("Metric", 0) + 2 * len(POWER_W)
    out.events = counts
    return out


def _write_op(w, time: int, what: str, arg, regions: dict, teams: list, generic: bool) -> None:
    if what in ("enter", "leave"):
        getattr(w, what)(time, regions[arg])
    elif what == "fork":
        w.thread_fork(time, Paradigm.OPENMP, arg) if generic else w.omp_fork(time, arg)
    elif what == "join":
        w.thread_join(time, Paradigm.OPENMP) if generic else w.omp_join(time)
    elif what in ("team_begin", "team_end"):
        getattr(w, f"thread_{what}")(time, teams[arg or 0])
    else:
        getattr(w, f"thread_{what}")(time, teams[0], *arg)
