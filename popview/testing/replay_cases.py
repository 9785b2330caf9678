"""Small synthetic Paraver runs whose critical-path figures are known in closed form.

Each case writes <name>.prv/.pcf/.row into a directory and returns the path
of the .prv with an `Expected` holding the figures derived from the schedule
(never from the records): runtime, G-CUE, the ideal-network runtime R_ideal,
G-COO, G-COM, PL-CUE per process and TL-CUE (useful time) per thread, all
in seconds.

Times in the schedules are in microseconds for readability; the traces are
written in nanoseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# Extrae state codes and event types
IDLE, RUNNING, WAIT_MSG, SYNC, FORK_JOIN, BLOCKED, GROUP, SEND_RECV = 0, 1, 3, 5, 7, 9, 13, 16
MPI_P2P, MPI_COLL, MPI_RMA, OMP_PARALLEL, OMP_BARRIER = 50000001, 50000002, 50000004, 60000001, 60000005
TASKWAIT, TASK_FUNCTION, TASK_INSTANTIATION, TASK_ID = 60000022, 60000023, 60000024, 60000028
ROOT, COMM, RMA_TARGET = 50100003, 50100004, 50001001
SEND, RECV, WAIT, SENDRECV = 1, 2, 5, 41
BCAST, BARRIER, REDUCE, ALLREDUCE, IREDUCE, IALLREDUCE, IBCAST = 7, 8, 9, 10, 213, 214, 216
PUT, GET, WIN_FENCE, WIN_LOCK, WIN_UNLOCK = 1, 2, 5, 8, 9
REMOTE_MEMORY = 20
US = 1000

_PCF = """DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC

STATES
0    Idle
1    Running
2    Not created
3    Waiting a message
5    Synchronization
7    Scheduling and Fork/Join
9    Blocked
13    Group Communication
16    Send Receive

EVENT_TYPE
9   50000001    MPI Point-to-point
VALUES
0   Outside MPI
1   MPI_Send
2   MPI_Recv
5   MPI_Wait
41   MPI_Sendrecv

EVENT_TYPE
9   50000002    MPI Collective Comm
VALUES
0   Outside MPI
7   MPI_Bcast
8   MPI_Barrier
9   MPI_Reduce
10   MPI_Allreduce
213   MPI_Ireduce
214   MPI_Iallreduce
216   MPI_Ibcast

EVENT_TYPE
9   50000004    MPI One-sided
VALUES
0   Outside MPI
1   MPI_Put
2   MPI_Get
5   MPI_Win_fence
8   MPI_Win_lock
9   MPI_Win_unlock

EVENT_TYPE
1    50100003    Root in MPI Global OP
1    50100004    Communicator in MPI Global OP
1    50001001    MPI RMA target rank

EVENT_TYPE
0    60000001    Parallel (OMP)
VALUES
0 close
3 REGION (open)

EVENT_TYPE
0    60000005    OpenMP barrier
VALUES
0 End
1 Begin

EVENT_TYPE
0    60000022    OpenMP taskwait
VALUES
0 End
1 Begin

EVENT_TYPE
0    60000023    Executed OpenMP task function
VALUES
0 End
7 compute_task

EVENT_TYPE
0    60000024    Instantiated OpenMP task function
VALUES
0 End
7 compute_task

EVENT_TYPE
0    60000028    OpenMP task id
"""


@dataclass
class Expected:
    """Closed-form figures of a case (seconds)."""

    r: float
    g_cue: float
    g_coo: float
    g_com: float
    pl_cue: list[float]
    tl_cue: list[float]
    r_ideal: float | None = None

    def __post_init__(self):
        # Unless a case says otherwise, no MPI runs inside OpenMP and no master
        # idles outside it: the time that weighs on the ideal network is then
        # exactly the time that weighs on G-COM (all but MPI and idle time).
        if self.r_ideal is None:
            self.r_ideal = self.g_com


@dataclass
class CaseWriter:
    """Records of a run with `threads[p]` threads in process p, in microseconds."""

    threads: list[int]
    records: list[tuple] = field(default_factory=list)

    def loc(self, p: int, t: int = 0) -> tuple[int, int, int]:
        cpu = sum(self.threads[:p]) + t + 1
        return cpu, p + 1, t + 1

    def state(self, p: int, t: int, begin: float, end: float, code: int) -> None:
        cpu, task, thread = self.loc(p, t)
        self.records.append((_ns(begin), 1, f"1:{cpu}:1:{task}:{thread}:{_ns(begin)}:{_ns(end)}:{code}"))

    def event(self, p: int, t: int, time: float, *pairs: int) -> None:
        cpu, task, thread = self.loc(p, t)
        body = ":".join(str(x) for x in pairs)
        self.records.append((_ns(time), 2, f"2:{cpu}:1:{task}:{thread}:{_ns(time)}:{body}"))

    def call(self, p: int, t: int, begin: float, end: float, etype: int, value: int, state: int,
             *params: int) -> None:
        """An MPI call / OpenMP construct: state plus enter / leave events."""
        self.state(p, t, begin, end, state)
        self.event(p, t, begin, etype, value, *params)
        self.event(p, t, end, etype, 0)

    def message(self, src: int, dst: int, send: float, recv_post: float, arrive: float, size: int = 1024,
                sent: float | None = None) -> None:
        """A message sent (logically) at `send`, leaving at `sent` (default the
        same), received by a call posted at `recv_post`, arriving at `arrive`."""
        cs, ts, hs = self.loc(src)
        cr, tr, hr = self.loc(dst)
        phys = send if sent is None else sent
        self.records.append((_ns(send), 3, f"3:{cs}:1:{ts}:{hs}:{_ns(send)}:{_ns(phys)}:"
                                           f"{cr}:1:{tr}:{hr}:{_ns(recv_post)}:{_ns(arrive)}:{size}:0"))

    def write(self, directory: Path, name: str, end: float) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        n_proc = len(self.threads)
        tasks = ",".join(f"{t}:1" for t in self.threads)
        members = ":".join(str(p + 1) for p in range(n_proc))
        lines = [f"#Paraver (01/01/2026 at 00:00):{_ns(end)}_ns:1({sum(self.threads)}):1:{n_proc}({tasks}),1",
                 f"c:1:1:{n_proc}:{members}"]
        lines += [text for _, _, text in sorted(self.records, key=lambda r: (r[0], r[1]))]
        prv = directory / f"{name}.prv"
        prv.write_text("\n".join(lines) + "\n")
        (directory / f"{name}.pcf").write_text(_PCF)
        names = [f"THREAD 1.{p + 1}.{t + 1}" for p in range(n_proc) for t in range(self.threads[p])]
        (directory / f"{name}.row").write_text(f"LEVEL THREAD SIZE {len(names)}\n" + "\n".join(names) + "\n")
        return prv


def _ns(us: float) -> int:
    return int(round(us * US))


def _s(us: float) -> float:
    return us * 1e-6


def pipeline(directory: Path, ranks: int = 4, work: float = 1000.0, transfer: float = 100.0,
             barrier: float = 50.0) -> tuple[Path, Expected]:
    """Rank r waits for r-1, computes `work`, sends to r+1; a final barrier.

    The useful work forms one chain through all ranks: R_ideal = ranks * work,
    serialisation = 1 / ranks; the transfers and the barrier are the rest.
    """
    w = CaseWriter([1] * ranks)
    last_done = ranks * work + (ranks - 1) * transfer
    end = last_done + barrier
    for r in range(ranks):
        start = r * (work + transfer)
        if r > 0:
            w.call(r, 0, 0, start, MPI_P2P, RECV, WAIT_MSG)
        w.state(r, 0, start, start + work, RUNNING)
        done = start + work
        if r < ranks - 1:
            w.call(r, 0, done, done + transfer, MPI_P2P, SEND, WAIT_MSG)
            w.message(r, r + 1, done, 0, done + transfer)
            done += transfer
        w.call(r, 0, done, end, MPI_COLL, BARRIER, SYNC, COMM, 1)
    total = _s(ranks * work)
    return w.write(directory, "pipeline", end), Expected(
        r=_s(end), g_cue=total, g_coo=_s(end), g_com=total, pl_cue=[_s(work)] * ranks, tl_cue=[_s(work)] * ranks)


def transfer(directory: Path, iterations: int = 5, work: float = 1000.0, cost: float = 250.0) -> tuple[Path, Expected]:
    """Two balanced ranks exchange a message every iteration; each exchange
    takes `cost`: transfer efficiency work / (work + cost), serialisation 1."""
    w = CaseWriter([1, 1])
    step = work + cost
    for i in range(iterations):
        t0 = i * step
        for r in range(2):
            w.state(r, 0, t0, t0 + work, RUNNING)
            w.call(r, 0, t0 + work, t0 + step, MPI_P2P, SENDRECV, SEND_RECV)
            w.message(r, 1 - r, t0 + work, t0 + work, t0 + step)
    end = iterations * step
    useful = _s(iterations * work)
    return w.write(directory, "transfer", end), Expected(
        r=_s(end), g_cue=useful, g_coo=_s(end), g_com=useful, pl_cue=[useful] * 2, tl_cue=[useful] * 2)


def imbalanced_collectives(directory: Path, ranks: int = 4, iterations: int = 3, work: float = 1000.0,
                           cost: float = 100.0) -> tuple[Path, Expected]:
    """Rank r computes work * (1 + 2r), then MPI_Allreduce (`cost` after the
    last arrives). Serialisation 1, load balance ranks / (2 ranks - 1)."""
    w = CaseWriter([1] * ranks)
    longest = work * (2 * ranks - 1)
    step = longest + cost
    for i in range(iterations):
        t0 = i * step
        for r in range(ranks):
            mine = work * (1 + 2 * r)
            w.state(r, 0, t0, t0 + mine, RUNNING)
            w.call(r, 0, t0 + mine, t0 + step, MPI_COLL, ALLREDUCE, GROUP, COMM, 1)
    end = iterations * step
    useful = [_s(iterations * work * (1 + 2 * r)) for r in range(ranks)]
    ideal = _s(iterations * longest)
    return w.write(directory, "imbalanced_collectives", end), Expected(
        r=_s(end), g_cue=ideal, g_coo=_s(end), g_com=ideal, pl_cue=useful, tl_cue=useful)


def rooted(directory: Path, kind: str = "reduce") -> tuple[Path, Expected]:
    """Two ranks, one rooted collective with root 0 between two phases of work.

    reduce: root works 400 then 100, rank 1 works 100 then 300. The root
    waits for rank 1 but rank 1 never waits: R_ideal = max(400 + 100, 100 + 300).
    bcast: root works 400 then 100, rank 1 works 100 then 300; rank 1 waits
    for the root: R_ideal = 400 + 300.
    """
    w = CaseWriter([1, 1])
    a, c, b, d, cost = 400.0, 100.0, 100.0, 300.0, 20.0
    if kind == "reduce":
        call, ideal = REDUCE, max(a + c, b + d)
        r0_exit, r1_exit = a + cost, b + cost          # the root waits for nobody slower
    else:
        call, ideal = BCAST, a + d
        r0_exit, r1_exit = a + cost, a + cost          # rank 1 waits for the root's data
    end = max(r0_exit + c, r1_exit + d)
    w.state(0, 0, 0, a, RUNNING)
    w.call(0, 0, a, r0_exit, MPI_COLL, call, GROUP, ROOT, 1, COMM, 1)
    w.state(0, 0, r0_exit, r0_exit + c, RUNNING)
    w.state(1, 0, 0, b, RUNNING)
    w.call(1, 0, b, r1_exit, MPI_COLL, call, GROUP, COMM, 1)
    w.state(1, 0, r1_exit, r1_exit + d, RUNNING)
    for r, done in ((0, r0_exit + c), (1, r1_exit + d)):
        if done < end:
            w.state(r, 0, done, end, IDLE)
    # every second but the trailing idle weighs on COO; only MPI is free on COM
    return w.write(directory, f"rooted_{kind}", end), Expected(
        r=_s(end), g_cue=_s(ideal), g_coo=_s(end), g_com=_s(ideal),
        pl_cue=[_s(a + c), _s(b + d)], tl_cue=[_s(a + c), _s(b + d)])


# Hybrid case: two parameter sets that processes alternate between.
_HYBRID = {"A": (100.0, (200.0, 100.0)), "B": (200.0, (200.0, 500.0))}   # serial, per-thread work


def hybrid(directory: Path, fork: float = 50.0, allreduce: float = 100.0,
           pattern: tuple[str, ...] = ("AB", "BA", "AB")) -> tuple[Path, Expected]:
    """Two processes x two threads. Per iteration, process p (parameters
    pattern[i][p]) runs serial work on its master, forks (overhead `fork`,
    OpenMP runtime), its threads work, join, then MPI_Allreduce (`allreduce`
    after the last master arrives). Every critical-path factor of seed 000
    2.1.4 differs from 1 and is known from the parameters."""
    w = CaseWriter([2, 2])
    t = 0.0
    tl = [[0.0, 0.0], [0.0, 0.0]]
    pl = [0.0, 0.0]
    ideal = coo = com = 0.0
    for it in pattern:
        joins, paths = [], []
        for p in range(2):
            serial, work = _HYBRID[it[p]]
            fork_at = t + serial
            start = fork_at + fork
            join = start + max(work)
            w.state(p, 0, t, fork_at, RUNNING)
            w.event(p, 0, fork_at, OMP_PARALLEL, 3)
            w.state(p, 0, fork_at, start, FORK_JOIN)
            w.state(p, 1, t, start, IDLE)
            for th in range(2):
                w.state(p, th, start, start + work[th], RUNNING)
                if work[th] < max(work):
                    w.state(p, th, start + work[th], join, BLOCKED)
                tl[p][th] += work[th]
            w.event(p, 0, join, OMP_PARALLEL, 0)
            tl[p][0] += serial
            pl[p] += serial + max(work)
            joins.append(join)
            paths.append(serial + max(work))
        exit_at = max(joins) + allreduce
        for p in range(2):
            w.call(p, 0, joins[p], exit_at, MPI_COLL, ALLREDUCE, GROUP, COMM, 1)
            w.state(p, 1, joins[p], exit_at, IDLE)
        ideal += max(paths)
        coo += max(paths) + allreduce
        com += max(paths) + fork
        t = exit_at
    return w.write(directory, "hybrid", t), Expected(
        r=_s(t), g_cue=_s(ideal), g_coo=_s(coo), g_com=_s(com), pl_cue=[_s(x) for x in pl],
        tl_cue=[_s(x) for row in tl for x in row])


def openmp_barrier(directory: Path) -> tuple[Path, Expected]:
    """One process, two threads, one parallel region with an explicit barrier
    (leaving 10 after the last arrival): master 100 / worker 300 before it,
    master 400 / worker 50 after it. R_ideal = 300 + 400: the barrier hands
    the worker's clock to the master."""
    w = CaseWriter([2])
    before, after = (100.0, 300.0), (400.0, 50.0)
    bar = max(before) + 10.0
    end = bar + max(after)
    w.event(0, 0, 0, OMP_PARALLEL, 3)
    for th in range(2):
        w.state(0, th, 0, before[th], RUNNING)
        w.call(0, th, before[th], bar, OMP_BARRIER, 1, BLOCKED)
        w.state(0, th, bar, bar + after[th], RUNNING)
        if bar + after[th] < end:
            w.state(0, th, bar + after[th], end, BLOCKED)
    w.event(0, 0, end, OMP_PARALLEL, 0)
    tl = [_s(before[th] + after[th]) for th in range(2)]
    ideal = _s(max(before) + max(after))
    return w.write(directory, "openmp_barrier", end), Expected(
        r=_s(end), g_cue=ideal, g_coo=ideal, g_com=_s(end), pl_cue=[ideal], tl_cue=tl)


def hybrid_barriers(directory: Path, iterations: int = 2) -> tuple[Path, Expected]:
    """Two processes x four threads. Per iteration, process p's master works
    serially (100 / 150), forks; every thread works (p0: 200 300 250 400,
    p1: 300 300 500 200), waits in an OpenMP barrier that ends 30 after the
    last arrival, as Extrae writes it (state 5 "Synchronization" inside
    event 60000005), works 100 and joins; then MPI_Allreduce, 50 after the
    last master arrives. Workers idle outside the parallel region.

    Per iteration the masters join at 630 / 780 (serial + slowest thread +
    barrier + 100) and the step takes 830. The barrier time is OpenMP
    runtime: it weighs on the ideal network (R_ideal = 780 per step) and
    on G-COM, not on G-CUE (600 / 750: 750 per step) nor on G-COO (the
    useful path plus the allreduce: 800 per step)."""
    w = CaseWriter([4, 4])
    serial = (100.0, 150.0)
    work = ((200.0, 300.0, 250.0, 400.0), (300.0, 300.0, 500.0, 200.0))
    barrier, after, cost = 30.0, 100.0, 50.0
    joins = [serial[p] + max(work[p]) + barrier + after for p in range(2)]
    step = max(joins) + cost
    for i in range(iterations):
        t0 = i * step
        for p in range(2):
            fork = t0 + serial[p]
            bar_end = fork + max(work[p]) + barrier
            join = bar_end + after
            w.state(p, 0, t0, fork, RUNNING)
            w.event(p, 0, fork, OMP_PARALLEL, 3)
            for th in range(4):
                if th:
                    w.state(p, th, t0, fork, IDLE)
                w.state(p, th, fork, fork + work[p][th], RUNNING)
                w.call(p, th, fork + work[p][th], bar_end, OMP_BARRIER, 1, SYNC)
                w.state(p, th, bar_end, join, RUNNING)
                if th:
                    w.state(p, th, join, t0 + step, IDLE)
            w.event(p, 0, join, OMP_PARALLEL, 0)
            w.call(p, 0, join, t0 + step, MPI_COLL, ALLREDUCE, GROUP, COMM, 1)
    n = iterations
    tl = [n * (work[p][th] + after + (serial[p] if th == 0 else 0)) for p in range(2) for th in range(4)]
    chains = [serial[p] + max(work[p]) + after for p in range(2)]
    return w.write(directory, "hybrid_barriers", n * step), Expected(
        r=_s(n * step), g_cue=_s(n * max(chains)), g_coo=_s(n * (max(chains) + cost)), g_com=_s(n * max(joins)),
        pl_cue=[_s(n * c) for c in chains], tl_cue=[_s(x) for x in tl], r_ideal=_s(n * max(joins)))


def skewed(directory: Path) -> Path:
    """Two ranks whose clocks disagree: rank 0 receives rank 1's message at 50
    although rank 1 sends it at 200, after waiting for rank 0's message sent
    at 100. The records form a cycle; the replay must break it and say so."""
    w = CaseWriter([1, 1])
    w.state(0, 0, 0, 40, RUNNING)
    w.call(0, 0, 40, 60, MPI_P2P, RECV, WAIT_MSG)
    w.state(0, 0, 60, 100, RUNNING)
    w.call(0, 0, 100, 110, MPI_P2P, SEND, WAIT_MSG)
    w.state(0, 0, 110, 300, RUNNING)
    w.state(1, 0, 0, 140, RUNNING)
    w.call(1, 0, 140, 160, MPI_P2P, RECV, WAIT_MSG)
    w.state(1, 0, 160, 200, RUNNING)
    w.call(1, 0, 200, 210, MPI_P2P, SEND, WAIT_MSG)
    w.state(1, 0, 210, 300, RUNNING)
    w.message(0, 1, 100, 140, 150)
    w.message(1, 0, 200, 40, 50)
    return w.write(directory, "skewed", 300)


def rendezvous(directory: Path) -> Path:
    """Rank 0 sends 1 MiB at 100 and its MPI_Send only returns at 500, when
    rank 1 posts the receive (the data arrives at 510). On the ideal network
    rank 0 does not wait: R_ideal = 500 + 90 (rank 1). With rendezvous
    (model "dimemas") it waits for the posting: R_ideal = 500 + 100 (rank 0)."""
    w = CaseWriter([1, 1])
    w.state(0, 0, 0, 100, RUNNING)
    w.call(0, 0, 100, 500, MPI_P2P, SEND, 4)
    w.state(0, 0, 500, 600, RUNNING)
    w.state(1, 0, 0, 500, RUNNING)
    w.call(1, 0, 500, 510, MPI_P2P, RECV, WAIT_MSG)
    w.state(1, 0, 510, 600, RUNNING)
    w.message(0, 1, 100, 500, 510, size=1 << 20, sent=500)
    return w.write(directory, "rendezvous", 600)


def nonblocking_collective(directory: Path, kind: str = "allreduce") -> tuple[Path, Expected]:
    """Rank 0 works 400, starts the collective (root 0), works 100, waits
    (MPI_Wait 505-510), works 100. Rank 1 works 100, starts it, works 50,
    completes another request (MPI_Wait 155-160), works 20, then waits for
    the collective (180-410) and works 300. The synchronisation takes effect
    at rank 1's second wait, the first to end after rank 0's entry:
    allreduce / bcast: rank 1 waits for rank 0's entry, R_ideal = 400 + 300;
    reduce: only the root waits (for rank 1): G-CUE = 400 + 100 + 100. The
    ideal network keeps rank 0's idle time at the end (not MPI): 700."""
    w = CaseWriter([1, 1])
    call, ideal = {"allreduce": (IALLREDUCE, 700.0), "bcast": (IBCAST, 700.0), "reduce": (IREDUCE, 600.0)}[kind]
    w.state(0, 0, 0, 400, RUNNING)
    w.call(0, 0, 400, 405, MPI_COLL, call, GROUP, ROOT, 1, COMM, 1)
    w.state(0, 0, 405, 505, RUNNING)
    w.call(0, 0, 505, 510, MPI_P2P, WAIT, 8)
    w.state(0, 0, 510, 610, RUNNING)
    w.state(0, 0, 610, 710, IDLE)
    w.state(1, 0, 0, 100, RUNNING)
    w.call(1, 0, 100, 105, MPI_COLL, call, GROUP, COMM, 1)
    w.state(1, 0, 105, 155, RUNNING)
    w.call(1, 0, 155, 160, MPI_P2P, WAIT, 8)
    w.state(1, 0, 160, 180, RUNNING)
    w.call(1, 0, 180, 410, MPI_P2P, WAIT, 8)
    w.state(1, 0, 410, 710, RUNNING)
    useful = [_s(600), _s(470)]
    return w.write(directory, f"i{kind}", 710), Expected(
        r=_s(710), g_cue=_s(ideal), g_coo=_s(710), g_com=_s(ideal), pl_cue=useful, tl_cue=useful, r_ideal=_s(700))


def rma_fence(directory: Path) -> tuple[Path, Expected]:
    """Rank 0 works 400, puts to rank 1 and closes the epoch with MPI_Win_fence
    (410-420); rank 1 works 100 and waits in its fence (100-420) for the data.
    Then rank 0 works 100, rank 1 300: the fence hands rank 0's clock to
    rank 1, R_ideal = 400 + 300."""
    w = CaseWriter([1, 1])
    w.state(0, 0, 0, 400, RUNNING)
    w.call(0, 0, 400, 410, MPI_RMA, PUT, REMOTE_MEMORY, RMA_TARGET, 1)
    w.call(0, 0, 410, 420, MPI_RMA, WIN_FENCE, REMOTE_MEMORY)
    w.state(0, 0, 420, 520, RUNNING)
    w.state(0, 0, 520, 720, IDLE)
    w.state(1, 0, 0, 100, RUNNING)
    w.call(1, 0, 100, 420, MPI_RMA, WIN_FENCE, REMOTE_MEMORY)
    w.state(1, 0, 420, 720, RUNNING)
    useful = [_s(500), _s(400)]
    return w.write(directory, "rma_fence", 720), Expected(
        r=_s(720), g_cue=_s(700), g_coo=_s(720), g_com=_s(700), pl_cue=useful, tl_cue=useful)


def rma_lock(directory: Path) -> tuple[Path, Expected]:
    """Rank 0 works 400, then reads rank 1's memory in a passive-target epoch
    (MPI_Win_lock / MPI_Get / MPI_Win_unlock, 400-450) and works 100; rank 1
    only works (500). The target takes no part: G-CUE = max(500, 500); the
    ideal network keeps rank 1's idle time at the end: 550."""
    w = CaseWriter([1, 1])
    w.state(0, 0, 0, 400, RUNNING)
    w.call(0, 0, 400, 410, MPI_RMA, WIN_LOCK, REMOTE_MEMORY, RMA_TARGET, 1)
    w.call(0, 0, 410, 420, MPI_RMA, GET, REMOTE_MEMORY, RMA_TARGET, 1)
    w.call(0, 0, 420, 450, MPI_RMA, WIN_UNLOCK, REMOTE_MEMORY, RMA_TARGET, 1)
    w.state(0, 0, 450, 550, RUNNING)
    w.state(1, 0, 0, 500, RUNNING)
    w.state(1, 0, 500, 550, IDLE)
    useful = [_s(500), _s(500)]
    return w.write(directory, "rma_lock", 550), Expected(
        r=_s(550), g_cue=_s(500), g_coo=_s(550), g_com=_s(500), pl_cue=useful, tl_cue=useful, r_ideal=_s(550))


def omp_tasks(directory: Path, wait: str = "taskwait") -> tuple[Path, Expected]:
    """One process, two threads in one parallel region (0-475). The master
    works 100, creates a task (100-101, task id 1) and works until 150, then
    waits for it (`wait`: a taskwait, or an OpenMP barrier 150-425 that the
    worker also enters at 110, after working 60), and works 50 after 425.
    The worker runs the task (useful 120-420). R_ideal = 100 (until the creation) + 300 (the
    task) + 50 = 450: the task waits for its creation and the master for
    the task's completion."""
    w = CaseWriter([2])
    w.event(0, 0, 0, OMP_PARALLEL, 3)
    w.state(0, 0, 0, 100, RUNNING)
    w.state(0, 0, 100, 101, FORK_JOIN)
    w.event(0, 0, 100, TASK_INSTANTIATION, 7, TASK_ID, 1)
    w.event(0, 0, 101, TASK_INSTANTIATION, 0)
    w.state(0, 0, 101, 150, RUNNING)
    if wait == "taskwait":
        w.call(0, 0, 150, 425, TASKWAIT, 1, BLOCKED)
        w.state(0, 1, 0, 120, BLOCKED)
    else:
        w.call(0, 0, 150, 425, OMP_BARRIER, 1, BLOCKED)
        w.state(0, 1, 0, 60, RUNNING)
        w.state(0, 1, 60, 110, BLOCKED)
        w.event(0, 1, 110, OMP_BARRIER, 1)
        w.state(0, 1, 110, 120, BLOCKED)
    w.state(0, 0, 425, 475, RUNNING)
    w.event(0, 1, 120, TASK_FUNCTION, 7, TASK_ID, 1)
    w.state(0, 1, 120, 420, RUNNING)
    w.event(0, 1, 420, TASK_FUNCTION, 0)
    w.state(0, 1, 420, 475, BLOCKED)
    if wait == "barrier":
        w.event(0, 1, 425, OMP_BARRIER, 0)
    w.event(0, 0, 475, OMP_PARALLEL, 0)
    worker = 300.0 + (60.0 if wait == "barrier" else 0.0)
    return w.write(directory, f"tasks_{wait}", 475), Expected(
        r=_s(475), g_cue=_s(450), g_coo=_s(450), g_com=_s(475), pl_cue=[_s(450)], tl_cue=[_s(199), _s(worker)])
