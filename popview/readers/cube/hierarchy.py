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
wrapper, except the lock API), task creation and the exclusive time of a
parallel region's call path (the team's fork / join, as the remapper
counts it) form `omp_management`,
unless the file stores an omp_management of its own (Scalasca: fork / join
time at parallel-region call paths), which then takes that place and is
taken out of the computation it lies in. Scalasca's wait states go under
the leaf their call paths belong to (Late Sender under mpi_p2p, implicit
barrier waiting under omp_sync ...), as Cube shows them.
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

# Scalasca's wait-state (time) metrics and the leaf of the time hierarchy they belong to
WAIT_STATE_LEAF = {
    **dict.fromkeys(("mpi_latesender", "mpi_latereceiver"), "mpi_p2p"),
    **dict.fromkeys(("mpi_earlyreduce", "mpi_earlyscan", "mpi_latebroadcast", "mpi_wait_nxn",
                     "mpi_nxn_completion"), "mpi_collective"),
    **dict.fromkeys(("mpi_barrier_wait", "mpi_barrier_completion", "mpi_rma_sync_late_post", "mpi_rma_early_wait",
                     "mpi_rma_wait_at_fence", "mpi_rma_wait_at_create", "mpi_rma_wait_at_free",
                     "mpi_rma_sync_lock_competition", "mpi_rma_sync_wait_for_progress"), "mpi_sync"),
    **dict.fromkeys(("mpi_finalize_wait", "mpi_init_completion", "mpi_rma_comm_late_post",
                     "mpi_rma_comm_lock_competition", "mpi_rma_comm_wait_for_progress"), "mpi_other"),
    **dict.fromkeys(("omp_ibarrier_wait", "omp_ebarrier_wait", "omp_lock_contention_api",
                     "omp_lock_contention_critical"), "omp_sync"),
}

_OMP_SYNC_ROLES = {"barrier", "implicit barrier", "atomic", "critical", "ordered", "taskwait", "flush"}
_OMP_LOCK = re.compile(r"^omp_(destroy|init|set|test|unset)(_nest)?_lock$")
_MPI_RMA_SYNC = re.compile(r"^MPI_Win_(complete|fence|post|start|test|wait|sync|(flush(_local)?|lock|unlock)(_all)?)$")
# completion of non-blocking requests (role "function" since Score-P 2): point-to-point, where
# Scalasca puts Late Sender / Late Receiver, as Score-P 1.x's role said
_MPI_REQUEST = re.compile(r"^MPI_(Wait|Test)(all|any|some)?$")
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
        if role == "point2point" or _MPI_REQUEST.match(name):
            return "mpi_p2p"
        if role in _MPI_COLLECTIVE:
            return "mpi_collective"
        return "mpi_other"
    if p == "openmp":
        if role in _OMP_SYNC_ROLES or _OMP_LOCK.match(name):
            return "omp_sync"
        if role in ("wrapper", "task create", "parallel"):    # a parallel region's own time: fork / join
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


def outside_parallel(profile: Profile) -> np.ndarray:
    """Per call path: True if neither it nor an ancestor is an OpenMP parallel region."""
    parallel = np.array([r.paradigm == "openmp" and r.role == "parallel" for r in profile.regions], bool)
    inside = parallel[profile.callpath_region]
    for cp in range(1, profile.n_callpaths):            # pre-order: parents come first
        p = profile.callpath_parent[cp]
        if p >= 0 and inside[p]:
            inside[cp] = True
    return ~inside


def worker_threads(locations: list[Location]) -> np.ndarray:
    return np.array([loc.kind == "thread" and loc.thread > 0 for loc in locations], bool)


def derive(profile: Profile, locations: list[Location]) -> None:
    """Add the derived time hierarchy to a raw profile (in place), entry by
    entry of the stored `time` (memory proportional to its non-zeros)."""
    n = profile.n_callpaths
    time = profile.values["time"]
    cp = np.repeat(np.arange(n), np.diff(time.row_offsets))
    loc, value = time.loc, time.value
    owned = {ident for ident, *_ in DERIVED if ident in profile.values}
    category = np.array([LEAVES.index(_leaf(region_category(r), owned)) for r in profile.regions], np.int64)
    leaf = category[profile.callpath_region[cp]]
    uses_openmp = any(r.paradigm == "openmp" for r in profile.regions)
    if uses_openmp:
        leaf[outside_parallel(profile)[cp] & worker_threads(locations)[loc]] = LEAVES.index("omp_idle")
    cp, loc, value, leaf = _move_stored_leaves(profile, owned, category, cp, loc, value, leaf)
    by_id = {m.id: m for m in profile.metrics}
    for ident, title, parent, descr in DERIVED:
        if ident in profile.values:                     # the file's own metric (scout's omp_management)
            by_id[ident].parent = parent
            by_id[ident].description += " (stored by the file; taken out of the computation it lies in)"
            continue
        members = [LEAVES.index(k) for k in LEAVES if k == ident or _PARENT[k] == ident]
        sel = np.isin(leaf, members)
        profile.metrics.append(MetricDef(id=ident, name=title, unit="sec", description=descr, parent=parent,
                                         kind="derived"))
        profile.values[ident] = _summed(n, profile.n_locations, cp[sel], loc[sel], value[sel])
    _place_wait_states(profile, category)
    if uses_openmp and "omp_idle_threads" not in profile.values:
        time = profile.values["time"]
        _add_idle_threads(profile, locations, np.repeat(np.arange(n), np.diff(time.row_offsets)), time.loc,
                          time.value)


def _move_stored_leaves(profile: Profile, owned: set[str], category: np.ndarray, cp, loc, value, leaf):
    """A leaf the file stores itself (Scalasca's omp_management: fork / join time at parallel-region
    call paths) is taken out of the leaf its call paths belong to and counted as itself."""
    for ident in sorted(owned & set(LEAVES)):
        mv = profile.values[ident]
        m_cp = np.repeat(np.arange(profile.n_callpaths), np.diff(mv.row_offsets))
        from_leaf = category[profile.callpath_region[m_cp]]
        cp = np.concatenate([cp, m_cp, m_cp])
        loc = np.concatenate([loc, mv.loc, mv.loc])
        value = np.concatenate([value, mv.value, -mv.value])
        leaf = np.concatenate([leaf, np.full(len(m_cp), LEAVES.index(ident)), from_leaf])
    return cp, loc, value, leaf


def _summed(n_callpaths: int, n_locations: int, cp, loc, value) -> MetricValues:
    """MetricValues of COO entries, duplicates added."""
    key = np.asarray(cp, np.int64) * n_locations + np.asarray(loc, np.int64)
    unique, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=value, minlength=len(unique))
    keep = total != 0
    return MetricValues.from_coo(n_callpaths, unique[keep] // n_locations, unique[keep] % n_locations, total[keep])


def _place_wait_states(profile: Profile, category: np.ndarray) -> None:
    """Scalasca's wait states under the part of the time they lie in, as Cube shows them (Late
    Sender under point-to-point, ...): the one leaf holding all their call paths. One spread over
    several leaves stays where the file puts it."""
    for m in profile.metrics:
        canonical = WAIT_STATE_LEAF.get(m.id)
        if canonical is None or m.parent is not None or m.id not in profile.values:
            continue
        rows = np.flatnonzero(np.diff(profile.values[m.id].row_offsets))
        leaves = {LEAVES[c] for c in category[profile.callpath_region[rows]]}
        if len(leaves) <= 1:
            m.parent = leaves.pop() if leaves else canonical


def _add_idle_threads(profile: Profile, locations: list[Location], cp: np.ndarray, loc: np.ndarray,
                      value: np.ndarray) -> None:
    """Master's time minus each worker's, at call paths outside parallel regions."""
    n, n_loc = profile.n_callpaths, len(locations)
    process = np.array([x.process for x in locations], np.int64)
    master = np.array([x.kind == "thread" and x.thread == 0 for x in locations], bool)
    worker = worker_threads(locations)
    worker[~np.isin(process, process[master])] = False     # no master thread: nothing to compare with
    workers = np.flatnonzero(worker)
    workers = workers[np.argsort(process[workers], kind="stable")]
    per_process = np.bincount(process[workers], minlength=process.max() + 1)
    first = np.concatenate([[0], np.cumsum(per_process)[:-1]])
    outside = outside_parallel(profile)[cp]
    m = np.flatnonzero(outside & master[loc])                # master entries, one copy per worker
    copies = per_process[process[loc[m]]]
    src = np.repeat(m, copies)
    rank_in_process = np.arange(len(src)) - np.repeat(np.cumsum(copies) - copies, copies)
    w = np.flatnonzero(outside & worker[loc])
    keys = np.concatenate([cp[src] * n_loc + workers[first[process[loc[src]]] + rank_in_process],
                           cp[w] * n_loc + loc[w]])
    unique, inverse = np.unique(keys, return_inverse=True)
    idle = np.bincount(inverse, weights=np.concatenate([value[src], -value[w]]), minlength=len(unique))
    profile.metrics.append(MetricDef(
        id="omp_idle_threads", name="Idle threads", unit="sec", kind="derived",
        description="Time worker threads were allocated but idle outside parallel regions, as Cube's remapper "
                    "computes it (master's exclusive time minus the worker's); not part of time"))
    profile.values["omp_idle_threads"] = MetricValues.from_coo(n, unique // n_loc, unique % n_loc, idle)
