"""Replay benchmark: a synthetic MPI run with >= 10^7 messages and collectives.

    python tests/benchmarks/bench_replay.py /tmp/bench_replay.popview.h5 [iterations]
    python tests/benchmarks/bench_replay.py --small      # 50 iterations, in a temporary folder

Unless the file holds a valid cache already, it is written straight through
popview.cache.Writer (no text to parse; minutes): RANKS ranks, each iteration
a computation of rank-dependent length, MPI_Sendrecv with both ring
neighbours (2 messages per rank), a second computation and MPI_Allreduce.
The default 78,125 iterations give 10^7 messages and 5 x 10^6 collective
calls. Then the replay of the whole run is timed phase by phase (wall and
CPU time: other work on the machine inflates the wall time), twice (the
first run in a process also loads the compiled kernels), and the peak
memory (RSS) reported.
"""
from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import numpy as np
from small import add_small, in_scratch

RANKS = 64
ITERATIONS = 78_125
PERIOD, SENDRECV_AT, SECOND_AT, ALLREDUCE_AT = 8_000, 6_000, 6_000 + 1_000, 6_000 + 1_500
CHUNK = 5_000                       # iterations per append
SENDRECV, ALLREDUCE = 0, 1          # call paths


def _definitions(t_end: int):
    from popview.model.definitions import Definitions, EventType, Location, Process, Region

    defs = Definitions(source_format="paraver", tool="synthetic replay benchmark", t_end=t_end)
    defs.nodes = ["node0"]
    defs.applications = ["application 1"]
    for p in range(RANKS):
        defs.processes.append(Process(name=f"rank {p}", node=0, rank=p))
        defs.locations.append(Location(name=f"THREAD 1.{p + 1}.1", process=p, thread=0))
    defs.event_types = {
        50000001: EventType(50000001, "MPI Point-to-point", "region", {0: "End", 41: "MPI_Sendrecv"}, paradigm="mpi"),
        50000002: EventType(50000002, "MPI Collective Comm", "region", {0: "End", 10: "MPI_Allreduce"}, paradigm="mpi"),
    }
    defs.regions = [Region("MPI_Sendrecv", "mpi", "point2point", event_type=50000001, event_value=41),
                    Region("MPI_Allreduce", "mpi", "collective", event_type=50000002, event_value=10)]
    defs.callpath_parent = np.array([-1, -1], np.int32)
    defs.callpath_region = np.array([0, 1], np.int32)
    defs.communicators = [{"appl": 0, "id": 1, "tasks": list(range(RANKS))}]
    defs.paradigms = ["mpi"]
    return defs


def _chunk(i0: int, i1: int) -> dict[str, dict[str, np.ndarray]]:
    """Records of iterations [i0, i1), all ranks."""
    it = np.arange(i0, i1, dtype=np.int64)
    rank = np.arange(RANKS, dtype=np.int64)
    base = (it[None, :] * PERIOD).repeat(RANKS, 0)                     # [rank, iteration]
    work = 5_000 + 97 * ((rank[:, None] * 7 + it[None, :] * 3) % 11)   # varies by rank and iteration
    loc = np.broadcast_to(rank[:, None], base.shape).astype(np.int32)
    r = loc.ravel()
    st_b = np.stack([base, base + work, base + SENDRECV_AT, base + SECOND_AT, base + ALLREDUCE_AT], -1)
    st_e = np.stack([base + work, base + SENDRECV_AT, base + SECOND_AT, base + ALLREDUCE_AT, base + PERIOD], -1)
    codes = np.array([1, 16, 1, 1, 13], np.int32)
    # the state interval [work, SENDRECV_AT) is the Sendrecv; [SECOND_AT, ALLREDUCE_AT) computation
    states = {"loc": np.repeat(r, 5), "begin": st_b.ravel(), "end": st_e.ravel(),
              "state": np.tile(codes, r.size)}
    calls = {"loc": np.repeat(r, 2), "begin": np.stack([base + work, base + ALLREDUCE_AT], -1).ravel(),
             "end": np.stack([base + SENDRECV_AT, base + PERIOD], -1).ravel(),
             "callpath": np.tile(np.array([SENDRECV, ALLREDUCE], np.int32), r.size),
             "depth": np.zeros(2 * r.size, np.int16)}
    send = (base + work).ravel()
    arrive = (base + SENDRECV_AT - 10).ravel()
    right, left = (r + 1) % RANKS, (r - 1) % RANKS
    n = r.size
    messages = {"send_loc": np.concatenate([r, r]), "recv_loc": np.concatenate([right, left]).astype(np.int32),
                "send_time": np.concatenate([send, send]), "send_phys": np.concatenate([send, send]),
                "recv_time": np.concatenate([send, send]), "recv_phys": np.concatenate([arrive, arrive]),
                "size": np.full(2 * n, 4096, np.int64), "tag": np.zeros(2 * n, np.int64),
                "comm": np.ones(2 * n, np.int32)}
    return {"states": states, "calls": calls, "messages": messages}


def make(path: Path, iterations: int) -> None:
    from popview.cache import Writer

    started = time.perf_counter()
    with Writer(path, "bench-replay") as writer:
        for i0 in range(0, iterations, CHUNK):
            for table, cols in _chunk(i0, min(iterations, i0 + CHUNK)).items():
                writer.append(table, cols)
        writer.set_definitions(_definitions(iterations * PERIOD))
        writer.finish()
    print(f"made {path}: {iterations * 2 * RANKS:,} messages, {iterations * RANKS:,} collective calls "
          f"in {time.perf_counter() - started:.1f} s")


def run(path: Path) -> None:
    """Time the replay twice: the first in this process also loads the
    compiled kernels from numba's cache, the second is the steady state."""
    from popview.analysis.focus import Focus
    from popview.analysis.replay import clear_cache, replay
    from popview.cache import Reader
    from popview.experiment import Experiment

    exp = Experiment(path, Reader(path), converted=False)
    n_msg = exp.reader.count("messages")
    n_coll = exp.reader.count("calls") // 2
    for label in ("first replay in this process", "second replay"):
        clear_cache()
        phases: list[tuple[float, float, str]] = []
        result = replay(exp, Focus.whole(),
                        progress=lambda f, m: phases.append((time.perf_counter(), time.process_time(), m)))
        print(f"{label}:")
        for (w0, c0, m), (w1, c1, _) in zip(phases, phases[1:]):
            print(f"  {m:<40s} wall {w1 - w0:7.2f} s  cpu {c1 - c0:7.2f} s")
        wall, cpu = phases[-1][0] - phases[0][0], phases[-1][1] - phases[0][1]
        print(f"  {n_msg:,} messages and {n_coll:,} collective calls ({result.n_collectives:,} instances): "
              f"wall {wall:.2f} s = {n_msg / wall / 1e6:.2f} M messages/s; "
              f"cpu {cpu:.2f} s = {n_msg / cpu / 1e6:.2f} M messages/s")
    print(f"R = {result.r:.4f} s, R_ideal = {result.r_ideal:.4f} s, critical path {len(result.critical_path['loc']):,} "
          f"intervals; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
          f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache", type=Path, nargs="?", help="the benchmark's cache (written when not valid)")
    ap.add_argument("iterations", type=int, nargs="?", default=ITERATIONS)
    add_small(ap, iterations=50)
    args = ap.parse_args()
    if args.cache is None:
        in_scratch(ap, args.small, "the cache's path", lambda tmp: measure(tmp / "replay.popview.h5", args.iterations))
    else:
        measure(args.cache, args.iterations)


def measure(target: Path, iterations: int) -> None:
    from popview.cache import open_if_valid

    existing = open_if_valid(target, None)
    if existing is None or existing.count("messages") != 2 * RANKS * iterations:
        if existing is not None:
            existing.close()
        make(target, iterations)
    else:
        existing.close()
    run(target)


if __name__ == "__main__":
    main()
