"""The thread-state vocabulary shared by every format.

popview uses Paraver's state codes as the common language: Extrae writes
them directly, and the OTF2 reader maps region paradigms onto them. Each
state belongs to one *class* that the analysis layer aggregates over.
"""
from __future__ import annotations

import enum

import numpy as np


class StateClass(enum.IntEnum):
    """What kind of time a state is, for POP accounting."""

    USEFUL = 0        # running user code
    MPI = 1           # inside an MPI call (p2p, collective, wait...)
    OPENMP = 2        # OpenMP / thread runtime: scheduling, fork/join, sync
    IO = 3            # file I/O
    IDLE = 4          # idle / not created / tracing disabled
    OTHER = 5         # overhead, flushing, anything else
    GPU = 6           # accelerator activity (kernels, memcpy)


STATE_CLASSES = [c for c in StateClass]

RUNNING = 1
NOT_CREATED = 2
FORK_JOIN = 7               # Scheduling and Fork/Join
IO_STATE = 12
OUTSIDE_TRACE = -1

# code: (name, (r, g, b), class). Names and colours as Extrae's .pcf writes them.
_DEFAULTS: dict[int, tuple[str, tuple[int, int, int], StateClass]] = {
    0: ("Idle", (117, 195, 255), StateClass.IDLE),
    1: ("Running", (0, 0, 255), StateClass.USEFUL),
    2: ("Not created", (255, 255, 255), StateClass.IDLE),
    3: ("Waiting a message", (255, 0, 0), StateClass.MPI),
    4: ("Blocking Send", (255, 0, 174), StateClass.MPI),
    5: ("Synchronization", (179, 0, 0), StateClass.MPI),
    6: ("Test/Probe", (0, 255, 0), StateClass.MPI),
    7: ("Scheduling and Fork/Join", (255, 255, 0), StateClass.OPENMP),
    8: ("Wait/WaitAll", (235, 0, 0), StateClass.MPI),
    9: ("Blocked", (0, 162, 0), StateClass.OPENMP),
    10: ("Immediate Send", (255, 0, 255), StateClass.MPI),
    11: ("Immediate Receive", (100, 100, 177), StateClass.MPI),
    12: ("I/O", (172, 174, 41), StateClass.IO),
    13: ("Group Communication", (255, 144, 26), StateClass.MPI),
    14: ("Tracing Disabled", (2, 255, 177), StateClass.IDLE),
    15: ("Others", (192, 224, 0), StateClass.OTHER),
    16: ("Send Receive", (233, 138, 154), StateClass.MPI),
    17: ("Memory transfer", (160, 160, 160), StateClass.GPU),
    18: ("Profiling", (255, 211, 70), StateClass.OTHER),
    19: ("On-line analysis", (80, 80, 80), StateClass.OTHER),
    20: ("Remote memory access", (0, 224, 224), StateClass.MPI),
    21: ("Atomic memory operation", (255, 255, 0), StateClass.MPI),
    22: ("Memory ordering operation", (255, 200, 0), StateClass.MPI),
    23: ("Distributed locking", (128, 0, 128), StateClass.MPI),
    24: ("Overhead", (139, 121, 94), StateClass.OTHER),
    25: ("One-sided op", (224, 0, 224), StateClass.MPI),
    26: ("Startup latency", (95, 95, 95), StateClass.OTHER),
    27: ("Waiting links", (200, 200, 200), StateClass.OTHER),
    28: ("Data copy", (255, 170, 150), StateClass.OTHER),
    29: ("RTT", (110, 110, 220), StateClass.OTHER),
    30: ("Allocating memory", (180, 180, 80), StateClass.OTHER),
    31: ("Freeing memory", (80, 180, 180), StateClass.OTHER),
}

# Extra codes popview adds for OTF2 data (beyond Extrae's range).
GPU_KERNEL = 40
OPENMP_SYNC = 41
MPI_OTHER = 42
_DEFAULTS[GPU_KERNEL] = ("GPU kernel", (120, 200, 80), StateClass.GPU)
# a dark amber: Group Communication's orange (13) is too near to tell apart in a timeline
_DEFAULTS[OPENMP_SYNC] = ("OpenMP synchronization", (150, 95, 0), StateClass.OPENMP)
_DEFAULTS[MPI_OTHER] = ("MPI other", (200, 60, 60), StateClass.MPI)  # MPI_Init, MPI_Comm_rank, ...


def default_states() -> dict[int, dict]:
    """Fresh copy of the default state table: code -> {name, color, cls}."""
    return {code: {"name": n, "color": list(c), "cls": int(k)} for code, (n, c, k) in _DEFAULTS.items()}


def class_of(code: int, name: str | None = None) -> StateClass:
    """Class of a state code; unknown codes are classified by their name."""
    if code in _DEFAULTS:
        return _DEFAULTS[code][2]
    lowered = (name or "").lower()
    for word, cls in (("running", StateClass.USEFUL), ("i/o", StateClass.IO), ("idle", StateClass.IDLE),
                      ("send", StateClass.MPI), ("recv", StateClass.MPI), ("receiv", StateClass.MPI),
                      ("fork", StateClass.OPENMP), ("schedul", StateClass.OPENMP)):
        if word in lowered:
            return cls
    return StateClass.OTHER


def class_lookup(states: dict[int, dict], size: int | None = None) -> np.ndarray:
    """Dense array state code -> class (int8) for vectorised classification."""
    top = max([0, *states.keys()]) + 1
    table = np.full(max(top, size or 0), int(StateClass.OTHER), dtype=np.int8)
    for code, info in states.items():
        if code >= 0:
            table[code] = info.get("cls", int(class_of(code, info.get("name"))))
    return table
