"""Ideal-network figures of a Scalasca profile from its wait states.

A profile has no records to replay, but a Scalasca trace analysis
(scout.cubex, or a remapped report of it) stores how long each MPI call
waited for another process (Late Sender, Wait at N x N, ...). What is left
of the MPI time once the waiting is taken out is data transfer; on an ideal
network it costs nothing, as the Cube Advisor computes it (PEERS.md 1.3):

    transfer = mpi - wait states - MPI-IO            per location and call path
    R_ideal  = max over master threads of (R - transfer) in the focus

(every process spans the focus's runtime R, as the focus inputs count it:
time it has no record for counts as outside MPI, so R_ideal is never
shorter than a process's time outside MPI);
serialisation (max useful / R_ideal) and transfer (R_ideal / R) follow
for every model that uses R_ideal, and the additive model's ideal MPI time
of a process is its MPI time minus its transfer. The critical-path model
needs the process-local and global paths of a replay: not available.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.models.base import NotAvailable

# Scalasca's MPI wait states whose sum the Advisor takes out of the MPI time
WAIT_STATES = ("mpi_latesender", "mpi_latereceiver", "mpi_earlyreduce", "mpi_earlyscan", "mpi_latebroadcast",
               "mpi_wait_nxn", "mpi_barrier_wait", "mpi_finalize_wait")
NO_WAIT_STATES = ("a profile has no records to replay on an ideal network, and this one has no Scalasca wait "
                  "states (the report of a Scalasca trace analysis has them)")
CRITICAL_PATH = ("the critical-path model needs a replay of the records (process-local and global paths); "
                 "a profile has none")


@dataclass(frozen=True)
class WaitStateIdeal:
    """What the models read of a replay, from the wait states (seconds)."""

    focus: Focus
    r: float
    r_ideal: float
    mpi_ideal: np.ndarray            # per process
    outside_mpi: np.ndarray          # per process: the master's time outside MPI (openmp + serial useful)
    transfer: np.ndarray             # per location
    wait: np.ndarray                 # per location
    notes: list[str] = field(default_factory=list)
    approximate: bool = False

    def __getattr__(self, name):     # critical-path figures (pl_cue, g_coo, ...) do not exist here
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotAvailable(CRITICAL_PATH)


def has_wait_states(prof) -> bool:
    return any(prof.has(m) for m in WAIT_STATES)


def loader(exp, focus: Focus, model: str):
    """(loader, reason) for metrics(): a callable giving the WaitStateIdeal, or None and why not."""
    from popview.analysis.profiles import experiment_profile
    if model == "critical-path":
        return None, CRITICAL_PATH
    if not has_wait_states(experiment_profile(exp)):
        return None, NO_WAIT_STATES
    return (lambda: ideal(exp, focus)), NO_WAIT_STATES


def ideal(exp, focus: Focus) -> WaitStateIdeal:
    """R_ideal and the ideal MPI time per process of `focus` (whole run or a call path)."""
    from popview.analysis.gather_profile import focus_span
    from popview.analysis.metrics import focus_inputs
    x = focus_inputs(exp, focus)
    prof, span, locs = focus_span(exp, focus)
    mpi = _total(prof, "mpi", span, locs)
    io = _total(prof, "mpi_io", span, locs)
    wait = sum((_total(prof, m, span, locs) for m in WAIT_STATES if prof.has(m)), np.zeros(len(locs)))
    transfer = np.clip(mpi - wait - io, 0.0, None)
    masters = x.masters
    r = x.runtime
    r_ideal = float((r - transfer[masters]).max())
    non_mpi = x.openmp + x.serial_useful
    mpi_ideal = np.clip(r - non_mpi - transfer[masters], 0.0, r - non_mpi)
    return WaitStateIdeal(focus=focus, r=r, r_ideal=r_ideal, mpi_ideal=mpi_ideal, outside_mpi=non_mpi,
                          transfer=transfer, wait=wait,
                          notes=[f"ideal runtime from Scalasca's wait states: transfer = MPI - wait states - "
                                 f"MPI-IO ({transfer.sum():.4g} s over all threads), R_ideal {r_ideal:.6g} s"])


def _total(prof, metric: str, span: slice, locs: np.ndarray) -> np.ndarray:
    """Per location (in `locs` order): the metric summed over the call paths of `span`."""
    if not prof.has(metric):
        return np.zeros(len(locs))
    mv = prof.values[metric]
    lo, hi = int(mv.row_offsets[span.start]), int(mv.row_offsets[span.stop])
    return np.bincount(mv.loc[lo:hi], weights=mv.value[lo:hi], minlength=prof.n_locations)[locs]
