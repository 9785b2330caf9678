"""The raw figures of one focus of analysis, the same whatever the source.

Every metric model reads a `FocusInputs`: per location (thread) the time
by category in seconds, counters during useful computation, and per
OpenMP parallel region the master's time in it and each thread's useful
time in it; plus the runtime R of the focus. Traces fill it from the
cache's cumulative sums (popview.cache.cumulative), Cube profiles from
their stored profile.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.model.categories import CAT, CATEGORIES

MPI_CATS = ("mpi_p2p", "mpi_collective", "mpi_sync", "mpi_other", "mpi_io")
OMP_CATS = ("comp_parallel", "omp_sync", "omp_management", "omp_idle")


@dataclass
class Region:
    """One OpenMP parallel region (all instances of one outlined function)."""

    name: str
    openmp: np.ndarray        # per process: master's time inside, s
    useful: np.ndarray        # per location: useful time inside, s


@dataclass
class FocusInputs:
    runtime: float                         # R, seconds
    process: np.ndarray                    # per location: process index (0..P-1)
    thread: np.ndarray                     # per location: thread number within the process
    cat: np.ndarray                        # (locations, N_CAT) seconds
    counters: dict[str, np.ndarray] = field(default_factory=dict)   # per location, during useful computation
    regions: list[Region] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    label: str = ""
    # quantities the source does not measure apart -> why ("useful": the masters' computation
    # apart from OpenMP fork / join; "runtime": R itself); metrics needing them are not available
    unmeasured: dict[str, str] = field(default_factory=dict)
    # when "useful" is unmeasured: what the source's useful time includes beyond useful computation
    # (it is then an upper bound of it), for the reason of the metrics shown as bounds
    useful_includes: str = ""
    regions_left_out: int = 0              # parallel regions (or outlined functions) without sums of their own
    # counters read only part of the time (rotating counter sets): the share of the useful time they
    # were read in, or why it is not known (popview.analysis.counter_sets); absent: read throughout
    counter_shares: dict[str, float | str] = field(default_factory=dict)
    n_processes: int = 0

    def __post_init__(self):
        self.n_processes = int(self.process.max()) + 1 if len(self.process) else 0

    # ---- shape -------------------------------------------------------------------------
    @property
    def n_threads(self) -> int:
        """T: processing elements (threads) of the focus."""
        return len(self.process)

    @property
    def threads_per_process(self) -> np.ndarray:
        return np.bincount(self.process, minlength=self.n_processes)

    @property
    def masters(self) -> np.ndarray:
        """Location index of each process's master thread."""
        order = np.lexsort((self.thread, self.process))
        _, first = np.unique(self.process[order], return_index=True)
        return order[first]

    def time(self, *names: str) -> np.ndarray:
        return self.cat[:, [CAT[n] for n in names]].sum(axis=1)

    # ---- the quantities of METRICS.md -------------------------------------------------
    @property
    def useful(self) -> np.ndarray:
        return self.time("comp_serial", "comp_parallel")

    @property
    def serial_useful(self) -> np.ndarray:
        """Per process: useful time of the master outside parallel regions."""
        return self.cat[self.masters, CAT["comp_serial"]]

    @property
    def omp_useful(self) -> np.ndarray:
        """Per location: useful time in parallel regions (a worker's useful time all counts)."""
        out = self.useful.copy()
        out[self.masters] = self.cat[self.masters, CAT["comp_parallel"]]
        return out

    @property
    def openmp(self) -> np.ndarray:
        """Per process: time of the master inside parallel regions; never less than any thread of
        the process computes beyond the master's serial computation (threads that work while
        their master is idle, as pthreads or HPX do, or a worker's own visits of a call path
        that begin before its master's)."""
        busiest = np.zeros(self.n_processes)
        np.maximum.at(busiest, self.process, self.useful)
        return np.maximum(self.time(*OMP_CATS)[self.masters], busiest - self.serial_useful)

    @property
    def mpi(self) -> np.ndarray:
        """Per process: time of the master in MPI."""
        return self.time(*MPI_CATS)[self.masters]

    @property
    def outside_mpi(self) -> np.ndarray:
        """Per process: the master's time in OpenMP parallel regions or computing outside them.

        Time the master spends neither there nor in MPI (before its process or
        thread exists, idle, file I/O, tracer flushing, unrecorded gaps) is lost
        at the process level, as POP MPI counts it: with one thread per process
        the hybrid models then reduce to POP MPI and every OpenMP factor is 1."""
        return self.openmp + self.serial_useful

    @property
    def other_lost(self) -> np.ndarray:
        """Per process: the master's time neither useful, nor OpenMP, nor MPI."""
        return np.maximum(self.runtime - self.outside_mpi - self.mpi, 0.0)

    def weighted_avg(self, per_process: np.ndarray) -> float:
        """sum_p t_p x[p] / T (seed 000, 2.1.1)."""
        return float((self.threads_per_process * per_process).sum() / self.n_threads)

    def counter(self, name: str) -> np.ndarray | None:
        return self.counters.get(name)


__all__ = ["FocusInputs", "Region", "CATEGORIES", "MPI_CATS", "OMP_CATS"]
