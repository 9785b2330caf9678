"""The raw record stream of one location, as both event sources produce it
(the `otf2` bindings and the buffer decoder): parallel int64 columns
kind, time (ticks), a..e, with one row per OTF2 event (one per metric value)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Record kinds and the meaning of columns a..e.
ENTER, LEAVE = 0, 1                      # a = OTF2 region ref
MPI_SEND, MPI_ISEND = 2, 3               # a = receiver rank, b = comm ref, c = tag, d = bytes
MPI_RECV, MPI_IRECV = 4, 5               # a = sender rank, b = comm ref, c = tag, d = bytes
COLL_BEGIN, COLL_END = 6, 7              # end: a = op, b = comm ref, c = root rank, d = sent, e = received
METRIC = 8                               # a = metric ref, b = member position, c = value (int64 or float64 bits), d = 1 if float
MEASUREMENT = 9                          # a = 1 on, 0 off
BUFFER_FLUSH = 10                        # a = stop time (ticks)
THREAD_FORK, THREAD_JOIN = 11, 12        # fork: a = requested threads
TEAM_BEGIN, TEAM_END = 13, 14            # a = thread team (communicator ref)
LOCK_ACQUIRE, LOCK_RELEASE = 15, 16      # a = lock id
TASK_CREATE, TASK_SWITCH, TASK_COMPLETE = 17, 18, 19   # a = generation number (0: the implicit task),
                                         # b = creating thread, c = thread team; OpenMP 1.x form:
                                         # a = task id, b = c = -1
IO_BEGIN, IO_COMPLETE = 20, 21           # a = bytes
RMA = 22                                 # a = bytes
THREAD_LIFE = 23                         # ThreadCreate / Begin / Wait / End
OTHER = 24                               # everything else (program begin/end, parameters, requests...)
N_KINDS = 25

COLUMNS = ("kind", "time", "a", "b", "c", "d", "e")


@dataclass
class RawEvents:
    """Columns of one location's records in time order."""

    kind: np.ndarray
    time: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    e: np.ndarray

    def __len__(self) -> int:
        return len(self.kind)

    def copy(self) -> "RawEvents":
        return RawEvents(*(getattr(self, name).copy() for name in COLUMNS))

    @classmethod
    def empty(cls) -> "RawEvents":
        z = np.zeros(0, np.int64)
        return cls(np.zeros(0, np.int8), z, z, z, z, z, z)

    @classmethod
    def from_rows(cls, rows: list[tuple]) -> "RawEvents":
        if not rows:
            return cls.empty()
        try:
            arr = np.array(rows, dtype=np.int64).reshape(len(rows), 7)
        except OverflowError:      # uint64 values beyond int64 (corrupt or undefined): -1, as the decoder does
            arr = np.array([[v if -(1 << 63) <= v < 1 << 63 else -1 for v in row] for row in rows],
                           dtype=np.int64).reshape(len(rows), 7)
        return cls(arr[:, 0].astype(np.int8), *(np.ascontiguousarray(arr[:, i]) for i in range(1, 7)))
