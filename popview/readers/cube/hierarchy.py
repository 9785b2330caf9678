"""The time hierarchy of a raw Score-P / Scalasca profile, derived from the
paradigm and role of each call path's region the way Score-P's
remapping.spec (Cube's remapper) classifies call paths:

    time = comp + mpi + omp + io + other      (per call path and location)
    mpi  = mpi_p2p + mpi_collective + mpi_sync + mpi_io + mpi_other
    omp  = omp_sync + omp_management + omp_idle

Differences from the remapper, because the shared vocabulary is flatter:
file I/O (paradigm io) is its own `io` instead of a part of computation; the
runtime time of other paradigms (pthread, SHMEM, CUDA/HIP/OpenCL/OpenACC API
calls) and buffer flushes go to `other`; OpenMP runtime API calls (role
wrapper, except the lock API) and task creation form `omp_management`,
unless the file stores an omp_management of its own (Scalasca), which is
kept as it is and left outside the derived tree.
`omp_idle` is the time worker threads (thread rank > 0) recorded outside
every OpenMP parallel region, so that the sum above holds with `time` as
the file stores it (the value Cube, pycubexr and scorep-score show).

Score-P records almost nothing for workers outside parallel regions, so the
remapper additionally counts the time they sat allocated but idle, making
its `time` larger than the stored one. That estimate is kept as the
separate top-level metric `omp_idle_threads`, computed as the remapper
does (the master's exclusive time minus the worker's, at call paths outside
parallel regions; its omp_limited_parallelism part is not derived). It is
not part of `time`.
"""
from __future__ import annotations

import re

import numpy as np

from popview.model.definitions import Location, Region
from popview.model.profile import MetricDef, MetricValues, Profile

# (id, name, parent, description); order = the metric tree's order.
DERIVED = (
    ("comp", "Computation", "time", "Useful computation: time outside every parallel runtime"),
    ("mpi", "MPI", "time", "Time in MPI calls"),
    ("mpi_p2p", "MPI point-to-point", "mpi", "MPI point-to-point communication"),
    ("mpi_collective", "MPI collective", "mpi", "MPI collective communication (not barriers)"),
    ("mpi_sync", "MPI synchronization", "mpi", "MPI barriers and RMA synchronization"),
    ("mpi_io", "MPI file I/O", "mpi", "MPI-IO calls"),
    ("mpi_other", "MPI other", "mpi", "Other MPI calls: init/finalize, requests, management, RMA"),
    ("omp", "OpenMP", "time", "OpenMP runtime (not useful computation)"),
    ("omp_sync", "OpenMP synchronization", "omp", "Barriers, critical, atomic, locks, ordered, taskwait, flush"),
    ("omp_management", "OpenMP management", "omp", "OpenMP runtime API calls and task creation"),
    ("omp_idle", "OpenMP idle threads", "omp", "Worker threads outside parallel regions"),
    ("io", "File I/O", "time", "File I/O outside MPI-IO"),
    ("other", "Other", "time", "Measurement overhead, buffer flushes, other runtimes"),
)
LEAVES = ("comp", "mpi_p2p", "mpi_collective", "mpi_sync", "mpi_io", "mpi_other",
          "omp_sync", "omp_management", "omp_idle", "io", "other")
_PARENT = {d[0]: d[2] for d in DERIVED}

_OMP_SYNC_ROLES = {"barrier", "implicit barrier", "atomic", "critical", "ordered", "taskwait", "flush"}
_OMP_LOCK = re.compile(r"^omp_(destroy|init|set|test|unset)(_nest)?_lock$")
_MPI_RMA_SYNC = re.compile(r"^MPI_Win_(complete|fence|post|start|test|wait|sync|(flush(_local)?|lock|unlock)(_all)?)$")
_MPI_COLLECTIVE = {"one2all", "all2one", "all2all", "other collective"}
_FLUSH = {"TRACE BUFFER FLUSH", "BUFFER FLUSH"}
_KERNEL_MODULES = {"CUDA_KERNEL", "OPENCL_KERNEL", "HIP_KERNEL"}
_OTHER_RUNTIMES = {"pthread", "shmem", "cuda", "hip", "opencl", "openacc"}


def applies(profile: Profile) -> bool:
    """Only raw profiles: those with `time` and no hierarchy of their own."""
    ids = {m.id for m in profile.metrics}
    return "time" in profile.values and not ids & {"execution", "comp", "mpi", "omp", "io", "other"}


def region_category(region: Region) -> str:
    """The leaf of the time hierarchy a region's exclusive time belongs to."""
    p, role, name = region.paradigm, region.role, region.name
    if name in _FLUSH and p in ("measurement", "cuda", "opencl", "hip"):
        return "other"
    if p == "mpi":
        if name.startswith("MPI_File_"):
            return "mpi_io"
        if role == "barrier" or _MPI_RMA_SYNC.match(name):
            return "mpi_sync"
        if role == "point2point":
            return "mpi_p2p"
        if role in _MPI_COLLECTIVE:
            return "mpi_collective"
        return "mpi_other"
    if p == "openmp":
        if role in _OMP_SYNC_ROLES or _OMP_LOCK.match(name):
            return "omp_sync"
        if role in ("wrapper", "task create"):
            return "omp_management"
        return "comp"
    if p == "io":
        return "io"
    if p in _OTHER_RUNTIMES:
        return "comp" if region.file in _KERNEL_MODULES else "other"
    return "comp"


def _leaf(category: str, owned: set[str]) -> str:
    """A leaf the file already stores is not derived: its call paths count as computation."""
    return "comp" if category in owned else category


def idle_mask(profile: Profile, locations: list[Location]) -> np.ndarray:
    """(call path, location) True where a worker thread idles outside parallel regions."""
    parallel = np.array([r.paradigm == "openmp" and r.role == "parallel" for r in profile.regions], bool)
    inside = parallel[profile.callpath_region]
    for cp in range(1, profile.n_callpaths):            # pre-order: parents come first
        p = profile.callpath_parent[cp]
        if p >= 0 and inside[p]:
            inside[cp] = True
    worker = np.array([loc.kind == "thread" and loc.thread > 0 for loc in locations], bool)
    return ~inside[:, None] & worker[None, :]


def derive(profile: Profile, locations: list[Location]) -> None:
    """Add the derived time hierarchy to a raw profile (in place)."""
    time = profile.matrix("time")
    owned = {ident for ident, *_ in DERIVED if ident in profile.values}
    category = np.array([LEAVES.index(_leaf(region_category(r), owned)) for r in profile.regions], np.int64)
    leaf = category[profile.callpath_region][:, None] * np.ones(time.shape[1], np.int64)[None, :]
    if any(r.paradigm == "openmp" for r in profile.regions):
        leaf[idle_mask(profile, locations)] = LEAVES.index("omp_idle")
    parts = {name: np.where(leaf == i, time, 0.0) for i, name in enumerate(LEAVES)}
    for name in ("mpi", "omp"):
        parts[name] = sum(v for k, v in parts.items() if _PARENT.get(k) == name)
    for ident, title, parent, descr in DERIVED:
        if ident in profile.values:                     # the file's own metric wins (scout's omp_management)
            profile.metrics[[m.id for m in profile.metrics].index(ident)].description += (
                " (stored by the file; not part of the derived time hierarchy)")
            continue
        profile.metrics.append(MetricDef(id=ident, name=title, unit="sec", description=descr, parent=parent,
                                         kind="derived"))
        profile.values[ident] = MetricValues.from_dense(parts[ident])
    if any(r.paradigm == "openmp" for r in profile.regions) and "omp_idle_threads" not in profile.values:
        _add_idle_threads(profile, locations, time)


def _add_idle_threads(profile: Profile, locations: list[Location], time: np.ndarray) -> None:
    master_of_process = {}
    for i, loc in enumerate(locations):
        if loc.kind == "thread" and loc.thread == 0:
            master_of_process.setdefault(loc.process, i)
    master = np.array([master_of_process.get(loc.process, i) for i, loc in enumerate(locations)], np.int64)
    idle = np.where(idle_mask(profile, locations), time[:, master] - time, 0.0)
    profile.metrics.append(MetricDef(
        id="omp_idle_threads", name="Idle threads", unit="sec", kind="derived",
        description="Time worker threads were allocated but idle outside parallel regions, as Cube's remapper "
                    "computes it (master's exclusive time minus the worker's); not part of time"))
    profile.values["omp_idle_threads"] = MetricValues.from_dense(idle)
