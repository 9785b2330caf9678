"""Synthetic Paraver traces of a chosen shape, with their figures in closed form.

Every iteration of the main loop ("timestep", a user function) is the same:
the master of rank r computes its serial part, then the ranks' threads run
`parallel_regions` OpenMP regions (an outlined function each), then the
master calls MPI_Sendrecv with its ring neighbours, MPI_Allreduce and
MPI_Barrier. Rank r's work is `work_ns * rank_weights[r]`; a fraction
`serial_fraction` of it runs on the master alone, the rest is split over
the threads by `thread_weights`. MPI calls last until their partners arrive
plus `mpi_cost_ns`. Counters (instructions, cycles) are written as deltas at
the end of every state interval.

Because the schedule is known, the writer returns the figures the analysis
must find (useful time per thread, runtime, time in MPI per process...) as an
`Expected`, computed from the schedule and not from the records.

Writing streams: one iteration's records are a template per location, tiled
over chunks of iterations with numpy and formatted to text by a numba
kernel, so 10^8 records take minutes, not hours, and bounded memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from popview.jit import njit

# Extrae conventions
RUNNING, IDLE, NOT_CREATED, SYNC, FORK_JOIN, GROUP_COMM, SEND_RECV, OTHERS = 1, 0, 2, 5, 7, 13, 16, 15
MPI_P2P, MPI_COLL, MPI_OTHER = 50000001, 50000002, 50000003
SENDRECV, ALLREDUCE, BARRIER, INIT, FINALIZE = 41, 10, 8, 31, 32
OMP_PARALLEL, OMP_OUTLINED, USER_FUNCTION = 60000001, 60000018, 60000019
MAIN, TIMESTEP = 1, 2
INS, CYC = 42000050, 42000059
STATE, EVENT, COMM = 1, 2, 3
MAX_FIELDS = 16
# Which fields of a record row are times (shifted per iteration), by record kind.
_TIME_FIELDS = {STATE: (5, 6), EVENT: (5,), COMM: (5, 6, 11, 12)}
_NONUSEFUL_IPC = 0.25      # instructions per cycle while waiting (spin loops)


@dataclass(frozen=True)
class Shape:
    """What the synthetic run looks like. Times in ns."""

    processes: int = 2
    threads: int = 1
    iterations: int = 10
    work_ns: int = 1_000_000
    rank_weights: tuple[float, ...] | None = None     # per rank, default all 1
    thread_weights: tuple[float, ...] | None = None   # per thread, normalised to mean 1
    serial_fraction: float = 0.0
    parallel_regions: int = 1                         # per iteration, when threads > 1
    sendrecv: bool = True
    allreduce: bool = True
    barrier: bool = True
    mpi_cost_ns: int = 2_000
    fork_ns: int = 0                                  # OpenMP fork overhead per region
    worker_parallel_records: bool = True              # False: workers record only the outlined function (Extrae)
    # Extrae on an oversubscribed node (popview-heat 2x2): each worker runs its chunk of a region only
    # after its master has finished its own, the master waiting in Fork/Join meanwhile; workers write
    # nothing but their chunks (outlined function events, Running), their first record is their first
    # chunk (Not created before it), and nothing of the construct
    workers_after_master: bool = False
    message_bytes: int = 4096
    init_ns: int = 0                                  # MPI_Init before the loop
    fini_ns: int = 0                                  # MPI_Finalize after it
    ipc: float = 1.5
    ghz: float = 2.0
    counters: bool = True

    def __post_init__(self):
        if self.processes < 1 or self.threads < 1 or self.iterations < 1:
            raise ValueError("a synthetic run needs at least one process, thread and iteration")
        if self.processes > 1 and not (self.allreduce or self.barrier):
            raise ValueError("several processes need a collective (allreduce or barrier) to synchronise")
        if self.rank_weights is not None and len(self.rank_weights) != self.processes:
            raise ValueError("rank_weights needs one weight per process")
        if self.thread_weights is not None and len(self.thread_weights) != self.threads:
            raise ValueError("thread_weights needs one weight per thread")
        if not 0.0 <= self.serial_fraction <= 1.0:
            raise ValueError("serial_fraction must lie in [0, 1]")

    @property
    def regions(self) -> int:
        return self.parallel_regions if self.threads > 1 and self.serial_fraction < 1.0 else 0

    @property
    def label(self) -> str:
        return f"{self.processes}x{self.threads}"


@dataclass
class Expected:
    """The figures the analysis must find. Arrays per location are indexed
    rank * threads + thread; per process by rank. Times in ns."""

    shape: Shape
    runtime_ns: int
    iteration_ns: int
    loop_begin_ns: int
    useful_ns: np.ndarray             # per location, whole run (= inside the loop)
    serial_useful_ns: np.ndarray      # per process, master outside parallel regions
    omp_useful_ns: np.ndarray         # per location, inside parallel regions
    openmp_ns: np.ndarray             # per process, master inside parallel regions
    region_openmp_ns: np.ndarray      # (regions, processes)
    region_omp_useful_ns: np.ndarray  # (regions, locations)
    mpi_ns: np.ndarray                # per process, master inside MPI, whole run
    instructions: np.ndarray          # per location, during useful computation
    cycles: np.ndarray                # per location, during useful computation
    counts: dict[str, int] = field(default_factory=dict)   # states, events, messages, records, visits

    @property
    def outside_mpi_ns(self) -> np.ndarray:
        return self.runtime_ns - self.mpi_ns

    def load_balance(self) -> float:
        return float(self.useful_ns.mean() / self.useful_ns.max())

    def parallel_efficiency(self, runtime_ns: float | None = None) -> float:
        return float(self.useful_ns.mean() / (runtime_ns or self.runtime_ns))

    def communication_efficiency(self, runtime_ns: float | None = None) -> float:
        return float(self.useful_ns.max() / (runtime_ns or self.runtime_ns))

    def ipc(self) -> float:
        return float(self.instructions.sum() / self.cycles.sum())


# ---------------------------------------------------------------- schedule

@dataclass
class _Schedule:
    serial: np.ndarray        # per rank, master serial useful per iteration
    work: np.ndarray          # (ranks, regions, threads) useful per region
    region_start: np.ndarray  # (ranks, regions)
    region_end: np.ndarray    # (ranks, regions)
    compute_end: np.ndarray   # per rank
    sendrecv_end: np.ndarray  # per rank
    allreduce_end: int
    length: int               # iteration length


def _schedule(s: Shape) -> _Schedule:
    P, T, K = s.processes, s.threads, s.regions
    weights = np.asarray(s.rank_weights if s.rank_weights is not None else np.ones(P), np.float64)
    total = np.rint(s.work_ns * weights).astype(np.int64)
    serial = total if K == 0 else np.rint(total * s.serial_fraction).astype(np.int64)
    tw = np.asarray(s.thread_weights if s.thread_weights is not None else np.ones(T), np.float64)
    tw = tw / tw.mean()
    per_thread = (total - serial)[:, None] / max(K, 1) / T * tw[None, :]
    work = np.repeat(np.rint(per_thread).astype(np.int64)[:, None, :], K, axis=1)
    start = np.zeros((P, K), np.int64)
    end = np.zeros((P, K), np.int64)
    t = serial.copy()
    for k in range(K):
        start[:, k] = t
        if s.workers_after_master:
            end[:, k] = t + s.fork_ns + work[:, k, 0] + work[:, k, 1:].max(axis=1, initial=0)
        else:
            end[:, k] = t + s.fork_ns + work[:, k, :].max(axis=1)
        t = end[:, k].copy()
    compute_end = t
    if s.sendrecv and P > 1:
        neighbours = np.maximum(np.roll(compute_end, 1), np.roll(compute_end, -1))
        sendrecv_end = np.maximum(compute_end, neighbours) + s.mpi_cost_ns
    else:
        sendrecv_end = compute_end.copy()
    allreduce_end = int(sendrecv_end.max()) + s.mpi_cost_ns if s.allreduce else int(sendrecv_end.max())
    length = allreduce_end + s.mpi_cost_ns if s.barrier else allreduce_end
    return _Schedule(serial, work, start, end, compute_end, sendrecv_end, allreduce_end, length)


# ---------------------------------------------------------------- records

class _Records:
    """Rows of int64 fields [kind, cpu, appl, task, thread, ...] with their sort time."""

    def __init__(self):
        self.rows: list[list[int]] = []

    def state(self, who, begin, end, state):
        if end > begin:
            self.rows.append([STATE, *who, begin, end, state])

    def event(self, who, time, *pairs):
        self.rows.append([EVENT, *who, time, *pairs])

    def comm(self, src, dst, send, recv, size, tag):
        self.rows.append([COMM, *src, send, send, *dst, recv, recv, size, tag])

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fields (n, MAX_FIELDS), field counts, time mask (n, MAX_FIELDS))."""
        n = len(self.rows)
        fields = np.zeros((n, MAX_FIELDS), np.int64)
        counts = np.zeros(n, np.int64)
        mask = np.zeros((n, MAX_FIELDS), bool)
        for i, row in enumerate(self.rows):
            fields[i, :len(row)] = row
            counts[i] = len(row)
            mask[i, list(_TIME_FIELDS[row[0]])] = True
        return fields, counts, mask


class _Counters:
    """Instruction and cycle deltas per location, read at the end of every state."""

    def __init__(self, shape: Shape, n_loc: int):
        self.shape = shape
        self.ins = np.zeros(n_loc, np.int64)
        self.cyc = np.zeros(n_loc, np.int64)

    def read(self, recs: _Records, loc: int, who, time: int, duration: int, useful: bool):
        if not self.shape.counters or duration <= 0:
            return
        cyc = int(round(duration * self.shape.ghz))
        ins = int(round(cyc * (self.shape.ipc if useful else _NONUSEFUL_IPC)))
        recs.event(who, time, INS, ins, CYC, cyc)
        if useful:
            self.ins[loc] += ins
            self.cyc[loc] += cyc


def _who(s: Shape, r: int, t: int) -> tuple[int, int, int, int]:
    return (r * s.threads + t + 1, 1, r + 1, t + 1)


def _iteration(s: Shape, sch: _Schedule, counters: _Counters) -> _Records:
    """One iteration's records, times relative to its start."""
    recs = _Records()
    P, T = s.processes, s.threads
    for r in range(P):
        for t in range(T):
            who, loc = _who(s, r, t), r * T + t
            if t > 0 and s.workers_after_master:
                segments = _region_segments(s, sch, r, t, False)
            else:
                segments = [(0, int(sch.serial[r]), RUNNING if t == 0 else IDLE, (), ())]
                segments += _region_segments(s, sch, r, t, t == 0 or s.worker_parallel_records)
                c = int(sch.compute_end[r])
                segments += _mpi_segments(s, sch, r, c) if t == 0 else [(c, sch.length, IDLE, (), ())]
            if t == 0:
                recs.event(who, 0, USER_FUNCTION, TIMESTEP)
            for a, e, state, enter, leave in segments:
                if enter:
                    recs.event(who, a, *enter)
                recs.state(who, a, e, state)
                counters.read(recs, loc, who, e, e - a, state == RUNNING)
                if leave:
                    recs.event(who, e, *leave)
            if t == 0:
                recs.event(who, sch.length, USER_FUNCTION, 0)
        if s.sendrecv and P > 1:
            dst = (r + 1) % P
            recs.comm(_who(s, r, 0), _who(s, dst, 0), int(sch.compute_end[r]), int(sch.sendrecv_end[dst]),
                      s.message_bytes, 1)
    return recs


def _region_segments(s: Shape, sch: _Schedule, r: int, t: int, construct: bool) -> list:
    """(begin, end, state, events entering, events leaving) of thread t's parallel regions;
    the construct's events only where `construct` (Extrae writes them on the master alone)."""
    out = []
    for k in range(s.regions):
        a, e = int(sch.region_start[r, k]), int(sch.region_end[r, k])
        b = a + s.fork_ns
        w = int(sch.work[r, k, t])
        if s.workers_after_master:
            own = b + int(sch.work[r, k, 0])             # the master's chunk ends, the workers' begin
            if t > 0:
                out.append((own, own + w, RUNNING, (OMP_OUTLINED, k + 1), (OMP_OUTLINED, 0)))
            else:
                out += [(a, b, FORK_JOIN, (OMP_PARALLEL, 1), ()),
                        (b, own, RUNNING, (OMP_OUTLINED, k + 1), (OMP_OUTLINED, 0)),
                        (own, e, FORK_JOIN, (), (OMP_PARALLEL, 0))]
            continue
        out += [(a, b, FORK_JOIN, (OMP_PARALLEL, 1) if construct else (), ()),
                (b, b + w, RUNNING, (OMP_OUTLINED, k + 1), (OMP_OUTLINED, 0)),
                (b + w, e, SYNC, (), (OMP_PARALLEL, 0) if construct else ())]
    return out


def _mpi_segments(s: Shape, sch: _Schedule, r: int, c: int) -> list:
    out = []
    if s.sendrecv and s.processes > 1:
        out.append((c, int(sch.sendrecv_end[r]), SEND_RECV, (MPI_P2P, SENDRECV), (MPI_P2P, 0)))
        c = int(sch.sendrecv_end[r])
    if s.allreduce:
        out.append((c, sch.allreduce_end, GROUP_COMM, (MPI_COLL, ALLREDUCE), (MPI_COLL, 0)))
        c = sch.allreduce_end
    if s.barrier:
        out.append((c, sch.length, SYNC, (MPI_COLL, BARRIER), (MPI_COLL, 0)))
    return out


# ---------------------------------------------------------------- text

@njit(cache=True)
def _digits(v):
    n = 1
    if v < 0:
        n += 1
        v = -v
    while v >= 10:
        v //= 10
        n += 1
    return n


@njit(cache=True)
def _format(fields, counts):
    """Rows of integer fields -> ':'-separated lines of ASCII."""
    n = fields.shape[0]
    size = 0
    for i in range(n):
        for j in range(counts[i]):
            size += _digits(fields[i, j]) + 1
    out = np.empty(size, np.uint8)
    pos = 0
    for i in range(n):
        m = counts[i]
        for j in range(m):
            v = fields[i, j]
            if v < 0:
                out[pos] = 45
                pos += 1
                v = -v
            d = _digits(v)
            for k in range(d - 1, -1, -1):
                out[pos + k] = 48 + v % 10
                v //= 10
            pos += d
            out[pos] = 58 if j < m - 1 else 10
            pos += 1
    return out


def _write_tiled(f, tmpl: tuple[np.ndarray, np.ndarray, np.ndarray], base: int, period: int,
                 n: int, chunk_rows: int) -> None:
    """Write `n` copies of the template, copy k shifted by base + k * period, in time order."""
    fields, counts, mask = tmpl
    if len(fields) == 0 or n == 0:
        return
    # records of one iteration in time order (stable: equal times keep the template order)
    order = np.argsort(fields[np.arange(len(fields)), 5], kind="stable")
    fields, counts, mask = fields[order], counts[order], mask[order]
    per_chunk = max(1, chunk_rows // len(fields))
    for k0 in range(0, n, per_chunk):
        k1 = min(n, k0 + per_chunk)
        shift = base + np.arange(k0, k1, dtype=np.int64) * period
        block = np.repeat(fields[None], k1 - k0, axis=0)
        block += mask[None] * shift[:, None, None]
        # copies only touch at their shared boundary: copy-major order is time order
        f.write(_format(block.reshape(-1, MAX_FIELDS), np.tile(counts, k1 - k0)).tobytes())


# ---------------------------------------------------------------- files

def write(path, shape: Shape, chunk_rows: int = 1 << 20) -> Expected:
    """Write `path` (.prv) with its .pcf and .row; return the expected figures."""
    path = Path(path)
    if path.suffix != ".prv":
        raise ValueError(f"{path}: a synthetic trace must end in .prv")
    s = shape
    sch = _schedule(s)
    n_loc = s.processes * s.threads
    counters = _Counters(s, n_loc)
    it_counters = _Counters(s, n_loc)
    body = _iteration(s, sch, it_counters).arrays()
    counters.ins += it_counters.ins * s.iterations
    counters.cyc += it_counters.cyc * s.iterations
    loop0 = s.init_ns
    end = loop0 + s.iterations * sch.length + s.fini_ns
    head, tail = _prologue(s, counters), _epilogue(s, counters, loop0 + s.iterations * sch.length, end)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(_header(s, end).encode("ascii"))
        _write_tiled(f, head.arrays(), 0, 0, 1, chunk_rows)
        _write_tiled(f, body, loop0, sch.length, s.iterations, chunk_rows)
        _write_tiled(f, tail.arrays(), 0, 0, 1, chunk_rows)
    tmp.replace(path)
    path.with_suffix(".pcf").write_text(_pcf(s), encoding="ascii")
    path.with_suffix(".row").write_text(_row(s), encoding="ascii")
    return _expected(s, sch, counters, end, (head, body, tail))


def _prologue(s: Shape, counters: _Counters) -> _Records:
    recs = _Records()
    for r in range(s.processes):
        for t in range(s.threads):
            who = _who(s, r, t)
            if t == 0:
                recs.event(who, 0, USER_FUNCTION, MAIN)
                if s.init_ns:
                    recs.event(who, 0, MPI_OTHER, INIT)
                    recs.state(who, 0, s.init_ns, OTHERS)
                    counters.read(recs, r * s.threads, who, s.init_ns, s.init_ns, False)
                    recs.event(who, s.init_ns, MPI_OTHER, 0)
            elif s.workers_after_master:
                if s.regions:                       # Not created until its first chunk
                    sch = _schedule(s)
                    recs.state(who, 0, s.init_ns + int(sch.region_start[r, 0]) + s.fork_ns
                               + int(sch.work[r, 0, 0]), NOT_CREATED)
            else:
                recs.state(who, 0, s.init_ns, IDLE)
    return recs


def _epilogue(s: Shape, counters: _Counters, t0: int, end: int) -> _Records:
    recs = _Records()
    for r in range(s.processes):
        for t in range(s.threads):
            who = _who(s, r, t)
            if t == 0:
                if s.fini_ns:
                    recs.event(who, t0, MPI_OTHER, FINALIZE)
                    recs.state(who, t0, end, OTHERS)
                    counters.read(recs, r * s.threads, who, end, end - t0, False)
                    recs.event(who, end, MPI_OTHER, 0)
                recs.event(who, end, USER_FUNCTION, 0)
            elif not s.workers_after_master:
                recs.state(who, t0, end, IDLE)
    return recs


def _expected(s: Shape, sch: _Schedule, counters: _Counters, end: int, parts) -> Expected:
    P, T, K, N = s.processes, s.threads, s.regions, s.iterations
    omp_useful = sch.work.sum(axis=1).reshape(P * T) * N
    useful = omp_useful.copy()
    useful[::T] += sch.serial * N
    region_openmp = (sch.region_end - sch.region_start).T * N
    mpi_per_it = np.full(P, sch.length) - sch.compute_end
    mpi = mpi_per_it * N + (s.init_ns + s.fini_ns)
    head, body, tail = parts
    states = events = pairs = messages = 0
    for (fields, nfields, _), times in ((head.arrays(), 1), (body, N), (tail.arrays(), 1)):
        kinds = fields[:, 0]
        states += int((kinds == STATE).sum()) * times
        events += int((kinds == EVENT).sum()) * times
        pairs += int((nfields[kinds == EVENT] - 6).sum()) // 2 * times
        messages += int((kinds == COMM).sum()) * times
    # "events" counts type:value pairs (the cache's rows), "event_lines" the .prv lines
    counts = {"states": states, "events": pairs, "event_lines": events, "messages": messages,
              "records": states + events + messages,
              "timestep_visits": N * P, "allreduce_visits": N * P if s.allreduce else 0,
              "barrier_visits": N * P if s.barrier else 0,
              "sendrecv_visits": N * P if s.sendrecv and P > 1 else 0,
              "parallel_visits": N * P * (T if s.worker_parallel_records and not s.workers_after_master else 1) * K}
    return Expected(
        shape=s, runtime_ns=end, iteration_ns=sch.length, loop_begin_ns=s.init_ns,
        useful_ns=useful.astype(np.int64), serial_useful_ns=sch.serial * N, omp_useful_ns=omp_useful,
        openmp_ns=region_openmp.sum(axis=0), region_openmp_ns=region_openmp,
        region_omp_useful_ns=np.transpose(sch.work, (1, 0, 2)).reshape(K, P * T) * N,
        mpi_ns=mpi.astype(np.int64), instructions=counters.ins, cycles=counters.cyc, counts=counts)


def _header(s: Shape, end: int) -> str:
    P, T = s.processes, s.threads
    tasks = ",".join(f"{T}:1" for _ in range(P))
    world = ":".join(str(r + 1) for r in range(P))
    return (f"#Paraver (22/11/26 at 00:00):{end}_ns:1({P * T}):1:{P}({tasks}),1\n"
            f"c:1:1:{P}:{world}\n")


def _pcf(s: Shape) -> str:
    states = {IDLE: "Idle", RUNNING: "Running", NOT_CREATED: "Not created", SYNC: "Synchronization", FORK_JOIN: "Scheduling and Fork/Join",
              GROUP_COMM: "Group Communication", OTHERS: "Others", SEND_RECV: "Send Receive"}
    lines = ["DEFAULT_OPTIONS", "", "LEVEL               THREAD", "UNITS               NANOSEC", "", "STATES"]
    lines += [f"{c}    {n}" for c, n in sorted(states.items())]
    blocks = [
        (9, MPI_P2P, "MPI Point-to-point", {SENDRECV: "MPI_Sendrecv", 0: "Outside MPI"}),
        (9, MPI_COLL, "MPI Collective Comm", {BARRIER: "MPI_Barrier", ALLREDUCE: "MPI_Allreduce", 0: "Outside MPI"}),
        (9, MPI_OTHER, "MPI Other", {INIT: "MPI_Init", FINALIZE: "MPI_Finalize", 0: "Outside MPI"}),
        (0, OMP_PARALLEL, "Parallel (OMP)", {0: "close", 1: "parallel (open)"}),
        (0, OMP_OUTLINED, "Executed OpenMP parallel function",
         {0: "End", **{k + 1: f"solve_region_{k + 1}._omp_fn.{k}" for k in range(max(s.parallel_regions, 1))}}),
        (0, USER_FUNCTION, "User function", {0: "End", MAIN: "main", TIMESTEP: "timestep"}),
    ]
    for grad, code, name, values in blocks:
        lines += ["", "EVENT_TYPE", f"{grad}    {code}    {name}", "VALUES"]
        lines += [f"{v}      {label}" for v, label in sorted(values.items())]
    lines += ["", "EVENT_TYPE", f"7  {INS} PAPI_TOT_INS [Instr completed]", f"7  {CYC} PAPI_TOT_CYC [Total cycles]", ""]
    return "\n".join(lines)


def _row(s: Shape) -> str:
    n = s.processes * s.threads
    lines = [f"LEVEL CPU SIZE {n}", *[f"{i + 1}.synth" for i in range(n)], "",
             "LEVEL NODE SIZE 1", "synth", "",
             f"LEVEL THREAD SIZE {n}",
             *[f"THREAD 1.{r + 1}.{t + 1}" for r in range(s.processes) for t in range(s.threads)], ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- rotating counter sets

SET_EVENT, L1_DCM = 41999999, 42000000      # Extrae's active counter set; a counter of the second set


def write_rotating_sets(path, rows_before: int, rows_after: int, row_ns: int = 100) -> Path:
    """A one-thread trace (.prv, .pcf) whose counter sets rotate (Extrae's event 41999999):
    Running in rows of `row_ns`; set 1 (200 cycles, 300 instructions a row: 2 GHz, IPC 1.5)
    for `rows_before` rows, then set 2 (5 L1 misses a row, no cycles) for `rows_after`. The
    set is declared at 0 and changed once, after 2 * rows_before events: a rotation that
    starts that far in. Written with numpy, fast at millions of rows."""
    path = Path(path)
    n = rows_before + rows_after
    begin = np.arange(n, dtype=np.int64) * row_ns
    fields = np.zeros((2 * n + 1, MAX_FIELDS), np.int64)
    counts = np.zeros(2 * n + 1, np.int64)
    fields[0, :8] = (2, 1, 1, 1, 1, 0, SET_EVENT, 1)
    counts[0] = 8
    states, events = fields[1::2], fields[2::2]
    states[:, :8] = (1, 1, 1, 1, 1, 0, 0, RUNNING)
    states[:, 5], states[:, 6] = begin, begin + row_ns
    counts[1::2] = 8
    events[:, :5] = (2, 1, 1, 1, 1)
    events[:, 5] = begin + row_ns
    events[:rows_before, 6:10] = (CYC, 200, INS, 300)
    counts[2::2][:rows_before] = 10
    if rows_after:
        events[rows_before - 1, 10:14] = (SET_EVENT, 2, L1_DCM, 0)   # the old set's last deltas, the new's zeros
        counts[2::2][rows_before - 1] = 14
        events[rows_before:, 6:8] = (L1_DCM, 5)
        counts[2::2][rows_before:] = 8
    end = n * row_ns
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(f"#Paraver (22/11/26 at 00:00):{end}_ns:1(1):1:1(1:1),1\nc:1:1:1:1\n".encode("ascii"))
        for k in range(0, len(fields), 1 << 20):
            f.write(_format(fields[k:k + (1 << 20)], counts[k:k + (1 << 20)]).tobytes())
    tmp.replace(path)
    path.with_suffix(".pcf").write_text(
        "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n\nSTATES\n"
        f"{IDLE}    Idle\n{RUNNING}    Running\n\nEVENT_TYPE\n"
        f"7  {INS} PAPI_TOT_INS [Instr completed]\n7  {CYC} PAPI_TOT_CYC [Total cycles]\n"
        f"7  {L1_DCM} PAPI_L1_DCM [L1D cache misses]\n7  {SET_EVENT} Active hardware counter set\n",
        encoding="ascii")
    return path


# ---------------------------------------------------------------- series

def write_scaling_series(directory, shapes=((1, 2), (2, 2), (4, 2)), total_work_ns: int = 40_000_000,
                         iterations: int = 10, overhead_per_rank: float = 0.02,
                         **shape_options) -> list[tuple[Path, Expected]]:
    """A small hybrid MPI+OpenMP strong-scaling series: the same total work
    split over P ranks of T threads, with a little replicated work per rank
    (so computation scalability < 1) and a linear imbalance."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for P, T in shapes:
        per_rank = total_work_ns / iterations / P * (1 + overhead_per_rank * (P - 1))
        weights = tuple(1.0 + 0.1 * (r - (P - 1) / 2) / max(P - 1, 1) for r in range(P))
        opts = {"serial_fraction": 0.05, "parallel_regions": 2, "init_ns": 200_000, "fini_ns": 100_000,
                **shape_options}
        shape = Shape(processes=P, threads=T, iterations=iterations, work_ns=int(per_rank),
                      rank_weights=weights, **opts)
        path = directory / f"synthetic_{P}x{T}.prv"
        out.append((path, write(path, shape)))
    return out
