"""What a replay hands to the metric models (times in seconds)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis.focus import Focus


@dataclass(frozen=True)
class ReplayResult:
    """Critical-path figures of one experiment for one focus of analysis.

    r: measured runtime of the focus. r_ideal: runtime on an ideal network
    (MPI costs nothing but its waits; every other interval, OpenMP runtime
    included, keeps its length): METRICS.md's R_ideal, for POP MPI and the
    hybrid multiplicative model. g_cue: useful computation along the
    critical path (G-CUE, critical-path model only). g_coo, g_com: the
    global critical paths weighing all but OpenMP / all but MPI (outside
    OpenMP) time: g_com is the runtime when MPI outside OpenMP costs nothing.
    pl_cue: process-local CUE per process; tl_cue: useful time per location;
    non_mpi: time per location that weighs on r_ideal (on a master: its
    time outside MPI).
    outside_mpi: COM-weighted time of each process's master (its time
    outside MPI, MPI inside OpenMP counting as OpenMP); mpi_ideal: that
    master's time in MPI on the ideal network, g_com - outside_mpi, which
    lies in [0, R - outside_mpi] (seed 001, additive model).
    critical_path: columns loc / begin / end (ns) / waiting of the G-CUE
    path in time order, contiguous over the focus (waiting: the time from a
    dependency to the node it held back, which the ideal network removes);
    critical_path_profile: useful seconds on it per call path id,
    critical_path_outside: those outside any region (the two sum to g_cue);
    critical_path_by_location: sparse columns loc / callpath / seconds.
    With model "dimemas", CUE weighs CPU bursts (useful, I/O, not created)
    and tl_cue is the burst time per location; r_ideal weighs the bursts too.
    """

    focus: Focus
    model: str
    r: float
    r_ideal: float
    g_cue: float
    g_coo: float
    g_com: float
    pl_cue: np.ndarray
    tl_cue: np.ndarray
    non_mpi: np.ndarray
    outside_mpi: np.ndarray
    mpi_ideal: np.ndarray
    critical_path: dict[str, np.ndarray]
    critical_path_profile: np.ndarray
    critical_path_outside: float
    critical_path_by_location: dict[str, np.ndarray]
    n_messages_matched: int
    n_unmatched: int
    n_collectives: int
    approximate: bool
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def serialisation_efficiency(self) -> float:
        """max useful / R_ideal (POP MPI model)."""
        return float(self.tl_cue.max()) / self.r_ideal if self.r_ideal > 0 and len(self.tl_cue) else float("nan")

    @property
    def transfer_efficiency(self) -> float:
        """R_ideal / R (POP MPI model)."""
        return self.r_ideal / self.r if self.r > 0 else float("nan")
