"""OTF2 twins of popview.testing.replay_cases: the same schedules written as
Score-P would record them, so the replay must give the same closed-form
figures from either format (each returns the .otf2 anchor; the Paraver
case's `Expected` holds for it).

Thread states follow from the region stack (popview.readers.otf2.regions):
user regions run, MPI calls are MPI states, a thread outside every region
is idle. Where the Paraver twin idles in another state class, CUE and COO
agree (neither weighs idle or OpenMP time).
"""
from __future__ import annotations

from pathlib import Path

from otf2.enums import CollectiveOp, Paradigm, RegionRole

from popview.testing.otf2_writer import CaseArchive

_MPI = {"MPI_Iallreduce": RegionRole.COLL_ALL2ALL, "MPI_Wait": RegionRole.POINT2POINT,
        "MPI_Put": RegionRole.RMA, "MPI_Get": RegionRole.RMA, "MPI_Win_fence": RegionRole.RMA,
        "MPI_Win_lock": RegionRole.RMA, "MPI_Win_unlock": RegionRole.RMA}
_OPENMP = {"!$omp parallel": RegionRole.PARALLEL, "!$omp create task": RegionRole.TASK_CREATE,
           "!$omp task": RegionRole.TASK, "!$omp taskwait": RegionRole.TASK_WAIT, "!$omp barrier": RegionRole.BARRIER}


def _archive(threads: list[int]) -> CaseArchive:
    a = CaseArchive(threads)
    a.region("main", Paradigm.USER, RegionRole.FUNCTION)
    for name, role in _MPI.items():
        a.region(name, Paradigm.MPI, role)
    for name, role in _OPENMP.items():
        a.region(name, Paradigm.OPENMP, role)
    return a


def nonblocking_allreduce(directory: Path) -> Path:
    """replay_cases.nonblocking_collective("allreduce"). Score-P ties the
    request to its completion with records the OTF2 reader does not keep
    (non-blocking collective request / complete), so the replay finds the
    completing MPI_Wait as for Paraver."""
    a = _archive([1, 1])
    a.call(0, 0, 0, 610, "main")
    a.call(0, 0, 400, 405, "MPI_Iallreduce")
    a._add(0, 0, 402, lambda w, ticks, x: w.non_blocking_collective_request(ticks, 7))
    a.call(0, 0, 505, 510, "MPI_Wait")
    a._add(0, 0, 507, lambda w, ticks, x: w.non_blocking_collective_complete(
        ticks, CollectiveOp.ALLREDUCE, x.world, 0xFFFFFFFF, 8, 8, 7))
    a.call(1, 0, 0, 710, "main")
    a.call(1, 0, 100, 105, "MPI_Iallreduce")
    a.call(1, 0, 155, 160, "MPI_Wait")
    a.call(1, 0, 180, 410, "MPI_Wait")
    return a.write(directory)


def rma_fence(directory: Path) -> Path:
    """replay_cases.rma_fence."""
    a = _archive([1, 1])
    a.call(0, 0, 0, 520, "main")
    a.call(0, 0, 400, 410, "MPI_Put")
    a.rma(0, 405, "put", remote=1)
    a.call(0, 0, 410, 420, "MPI_Win_fence")
    a.call(1, 0, 0, 720, "main")
    a.call(1, 0, 100, 420, "MPI_Win_fence")
    return a.write(directory)


def rma_lock(directory: Path) -> Path:
    """replay_cases.rma_lock."""
    a = _archive([1, 1])
    a.call(0, 0, 0, 550, "main")
    a.call(0, 0, 400, 410, "MPI_Win_lock")
    a.call(0, 0, 410, 420, "MPI_Get")
    a.rma(0, 415, "get", remote=1)
    a.call(0, 0, 420, 450, "MPI_Win_unlock")
    a.call(1, 0, 0, 500, "main")
    return a.write(directory)


def omp_tasks(directory: Path, wait: str = "taskwait") -> Path:
    """replay_cases.omp_tasks: the master creates generation 1, the worker
    switches to it at 120 and completes it at 420."""
    a = _archive([2])
    a.enter(0, 0, 0, "!$omp parallel")
    a.call(0, 0, 100, 101, "!$omp create task")
    a.task(0, 0, 100, "create", 1)
    a.call(0, 0, 150, 425, "!$omp taskwait" if wait == "taskwait" else "!$omp barrier")
    a.leave(0, 0, 475, "!$omp parallel")
    if wait == "barrier":
        a.call(0, 1, 0, 60, "main")
        a.call(0, 1, 110, 425, "!$omp barrier")
    a.task(0, 1, 120, "switch", 1)
    a.call(0, 1, 120, 420, "!$omp task")
    a.task(0, 1, 420, "complete", 1)
    return a.write(directory)


def late_worker_region(directory: Path, instances: int = 2) -> Path:
    """One rank, 2 threads: each instance of `!$omp parallel` begins at the master's
    fork, 50 us before its enter (a descheduled master); the worker enters 10 us
    after the fork, works 130 us, and leaves the barrier 60 us after the master
    has left the region (a descheduled worker). Instance k at base = 100 + 400 k:
    master fork base, parallel [base+50, base+200], work [base+60, base+150],
    barrier [base+150, base+200]; worker parallel [base+10, base+260], work
    [base+10, base+140], barrier [base+140, base+260]. Call-path focus
    main/!$omp parallel: the master is in it 205 us per instance (fork to OmpJoin
    at base+205; a worker stamping its leave after its master's join is unlike a
    real runtime, whose join waits for the team, but a reader must cope), the
    worker (its own visits and the master's fork) 260 us, some thread of the
    process 260 us = R; the master computes 90 us and the worker 130 us per instance."""
    a = _archive([2])
    a.region("work", Paradigm.USER, RegionRole.FUNCTION)
    end = 100 + 400 * instances
    a.call(0, 0, 0, end, "main")
    for k in range(instances):
        base = 100 + 400 * k
        a._add(0, 0, base, lambda w, ticks, x: w.omp_fork(ticks, 2))
        a.enter(0, 0, base + 50, "!$omp parallel")
        a.call(0, 0, base + 60, base + 150, "work")
        a.call(0, 0, base + 150, base + 200, "!$omp barrier")
        a.leave(0, 0, base + 200, "!$omp parallel")
        a._add(0, 0, base + 205, lambda w, ticks, x: w.omp_join(ticks))
        a.enter(0, 1, base + 10, "!$omp parallel")
        a.call(0, 1, base + 10, base + 140, "work")
        a.call(0, 1, base + 140, base + 260, "!$omp barrier")
        a.leave(0, 1, base + 260, "!$omp parallel")
    return a.write(directory)
