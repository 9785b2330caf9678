"""Small profiles with known numbers, and large random ones, for the GUI's tests and benchmarks."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from popview.model.definitions import Definitions, Location, Process, Region
from popview.model.profile import MetricDef, MetricValues, Profile

# Call tree of the small profile (pre-order): name, parent, paradigm, role.
SMALL_TREE = [
    ("main", -1, "user", "function"),
    ("init", 0, "user", "function"),
    ("loop", 0, "user", "function"),
    ("solve", 2, "user", "function"),
    ("halo", 2, "user", "function"),
    ("MPI_Send", 4, "mpi", "point2point"),
    ("MPI_Allreduce", 2, "mpi", "collective"),
    ("TASKS", -1, "measurement", "artificial"),
    ("task_body", 7, "user", "task"),
]
# Exclusive seconds per (call path, location); locations: n0/p0/t0, n0/p0/t1, n1/p1/t0, n1/p1/t1, n1/p1/gpu0.
SMALL_COMP = np.array([
    [0.5, 0.0, 0.5, 0.0, 0.0],     # main
    [1.0, 0.0, 2.0, 0.0, 0.0],     # init
    [0.25, 0.25, 0.25, 0.25, 0.0],  # loop
    [4.0, 3.0, 2.0, 1.0, 5.0],     # solve
    [0.5, 0.5, 0.5, 0.5, 0.0],     # halo
    [0.0, 0.0, 0.0, 0.0, 0.0],     # MPI_Send
    [0.0, 0.0, 0.0, 0.0, 0.0],     # MPI_Allreduce
    [0.0, 0.0, 0.0, 0.0, 0.0],     # TASKS
    [0.0, 1.5, 0.0, 1.5, 0.0],     # task_body
])
SMALL_P2P = np.zeros_like(SMALL_COMP)
SMALL_P2P[5] = [0.75, 0.0, 1.25, 0.0, 0.0]
SMALL_COLL = np.zeros_like(SMALL_COMP)
SMALL_COLL[6] = [2.0, 0.0, 1.0, 0.0, 0.0]
SMALL_VISITS = np.where(SMALL_COMP + SMALL_P2P + SMALL_COLL > 0, 10.0, 0.0)


def small_definitions() -> Definitions:
    procs = [Process("rank 0", node=0, rank=0), Process("rank 1", node=1, rank=1)]
    locs = [Location("rank 0 thread 0", 0, 0), Location("rank 0 thread 1", 0, 1),
            Location("rank 1 thread 0", 1, 0), Location("rank 1 thread 1", 1, 1),
            Location("rank 1 GPU stream 0", 1, 2, kind="gpu")]
    return Definitions(source_format="synthetic", nodes=["n0", "n1"], processes=procs, locations=locs,
                       paradigms=["mpi", "openmp", "cuda"], t_end=10_000_000_000)


def small_profile() -> Profile:
    regions = [Region(name, paradigm=par, role=role) for name, _p, par, role in SMALL_TREE]
    parent = [p for _n, p, _a, _r in SMALL_TREE]
    mpi = SMALL_P2P + SMALL_COLL
    metrics = [
        MetricDef("time", "Time", "sec"),
        MetricDef("comp", "Computation", "sec", parent="time"),
        MetricDef("mpi", "MPI", "sec", parent="time"),
        MetricDef("mpi_p2p", "Point-to-point", "sec", parent="mpi"),
        MetricDef("mpi_collective", "Collective", "sec", parent="mpi"),
        MetricDef("omp", "OpenMP", "sec", parent="time"),
        MetricDef("visits", "Visits", "occ"),
    ]
    dense = {"time": SMALL_COMP + mpi, "comp": SMALL_COMP, "mpi": mpi, "mpi_p2p": SMALL_P2P,
             "mpi_collective": SMALL_COLL, "omp": np.zeros_like(SMALL_COMP), "visits": SMALL_VISITS}
    return Profile(regions, parent, list(range(len(regions))), SMALL_COMP.shape[1], metrics,
                   {k: MetricValues.from_dense(v) for k, v in dense.items()})


def random_profile(n_callpaths: int, n_locations: int, per_callpath: int = 16, seed: int = 0,
                   max_depth: int = 30) -> Profile:
    """A random pre-order call tree (fan-out and depth like real codes: at most
    `max_depth` deep) with `per_callpath` locations holding values per call path."""
    rng = np.random.default_rng(seed)
    parent = np.empty(n_callpaths, np.int32)
    parent[0] = -1
    stack = [0]
    pops = rng.geometric(0.5, n_callpaths) - 1          # one pop per push on average
    for i in range(1, n_callpaths):
        n_pop = max(min(pops[i], len(stack) - 1), len(stack) - max_depth + 1)
        del stack[len(stack) - n_pop:]
        parent[i] = stack[-1]
        stack.append(i)
    n_regions = max(1, n_callpaths // 10)
    regions = [Region(f"function_{i}") for i in range(n_regions)]
    region = rng.integers(0, n_regions, n_callpaths).astype(np.int32)
    cp = np.repeat(np.arange(n_callpaths), per_callpath)
    loc = rng.integers(0, n_locations, len(cp))
    time = rng.exponential(1e-3, len(cp))
    metrics = [MetricDef("time", "Time", "sec"), MetricDef("comp", "Computation", "sec", parent="time"),
               MetricDef("visits", "Visits", "occ")]
    values = {"time": MetricValues.from_coo(n_callpaths, cp, loc, time),
              "comp": MetricValues.from_coo(n_callpaths, cp, loc, time * 0.8),
              "visits": MetricValues.from_coo(n_callpaths, cp, loc, np.ones(len(cp)))}
    return Profile(regions, parent, region, n_locations, metrics, values)


def flat_definitions(n_locations: int, threads: int = 4, per_node: int = 8) -> Definitions:
    n_procs = n_locations // threads
    procs = [Process(f"rank {p}", node=p // per_node, rank=p) for p in range(n_procs)]
    locs = [Location(f"rank {p} thread {t}", p, t) for p in range(n_procs) for t in range(threads)]
    nodes = [f"node{i}" for i in range((n_procs + per_node - 1) // per_node)]
    return Definitions(source_format="synthetic", nodes=nodes, processes=procs, locations=locs)


class ProfileExperiment:
    """Stands in for an Experiment where only the profile and definitions matter."""

    def __init__(self, profile: Profile, definitions: Definitions | None = None, name: str = "synthetic",
                 is_trace: bool = True):
        self._profile = profile
        self.definitions = definitions
        self.name = name
        self.source = Path(name)
        self.format = definitions.source_format if definitions else "synthetic"
        self.is_trace = is_trace
        self.closed = False

    def profile(self) -> Profile:
        return self._profile

    def shape(self) -> tuple[int, int]:
        d = self.definitions
        if d is None or not d.processes:
            return 1, self._profile.n_locations
        return len(d.processes), int(d.threads_per_process().max())

    @property
    def label(self) -> str:
        p, t = self.shape()
        return f"{p}x{t}"

    def info(self) -> dict:
        p, t = self.shape()
        d = self.definitions
        return {"format": self.format, "processes": p, "threads_per_process": t,
                "duration_ns": d.t_end if d else 0, "paradigms": d.paradigms if d else []}

    def close(self) -> None:
        self.closed = True
