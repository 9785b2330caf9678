"""Definitions of an experiment: who (locations), what (states, event types,
regions, call paths) and how it was measured.

Everything here is small compared with the records; it travels as JSON
inside the cache except the call-path columns, which may be large.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from popview.model.plain import as_plain
from popview.model.states import default_states

# Region paradigms understood by the analysis layer.
PARADIGMS = ("user", "mpi", "openmp", "pthread", "cuda", "hip", "opencl", "io", "measurement", "compiler")

# What a point event means to the analysis (EventType.role), whatever its code in the source:
TASK_ID = "task id"               # an OpenMP task's id, written at its creation and at its start
TASKWAIT = "taskwait"             # a non-zero value enters an OpenMP taskwait, 0 leaves it
TASK_CREATE = "task create"       # value: the task's number + 1 (per creating thread), at its creation
TASK_SWITCH = "task switch"       # the same number, where a thread switches to the task
TASK_COMPLETE = "task complete"   # the same number, where the task completes
THREAD_FORK = "thread fork"       # a master forks a thread team
THREAD_JOIN = "thread join"       # ... and joins it
EVENT_ROLES = (TASK_ID, TASKWAIT, TASK_CREATE, TASK_SWITCH, TASK_COMPLETE, THREAD_FORK, THREAD_JOIN)


@dataclass
class Process:
    """An MPI rank (or the one process of a non-MPI run)."""

    name: str
    node: int
    appl: int = 0
    rank: int = 0


@dataclass
class Location:
    """A stream of records: a CPU thread, a GPU stream, a metric source."""

    name: str
    process: int
    thread: int
    kind: str = "thread"  # thread | gpu | metric


@dataclass
class EventType:
    """A Paraver event type (or an OTF2 metric mapped onto one)."""

    code: int
    name: str
    kind: str = "info"  # region | counter | info | mpi-param | caller
    values: dict[int, str] = field(default_factory=dict)
    gradient: int = 0
    paradigm: str = ""
    description: str = ""
    value_type: str = "int"   # int | double: the events' int64 values hold float64 bits
    role: str = ""            # one of EVENT_ROLES, set by the reader, or ""
    # a region type: the role (Region.role) of the values the source does not name (a Paraver
    # trace without its .pcf: Extrae's MPI and OpenMP types still say what their regions are)
    region_role: str = ""

    def decode(self, values: np.ndarray) -> np.ndarray:
        """The measured values of events of this type, as float64."""
        values = np.ascontiguousarray(values, np.int64)
        return values.view(np.float64) if self.value_type == "double" else values.astype(np.float64)


@dataclass
class Region:
    """A code region: a function, an MPI call, an OpenMP construct..."""

    name: str
    paradigm: str = "user"
    role: str = "function"
    file: str = ""
    line: int = 0
    event_type: int = 0   # Paraver: the (type, value) pair this region comes from
    event_value: int = 0


@dataclass
class Definitions:
    """All definitions of one experiment."""

    source_format: str = ""
    tool: str = ""
    date: str = ""
    t_end: int = 0                 # ns
    source_unit_ns: float = 1.0    # ns per tick of the source's clock
    nodes: list[str] = field(default_factory=list)
    applications: list[str] = field(default_factory=list)
    processes: list[Process] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)
    states: dict[int, dict] = field(default_factory=default_states)
    event_types: dict[int, EventType] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    callpath_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    callpath_region: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    communicators: list[dict] = field(default_factory=list)
    topologies: list[dict] = field(default_factory=list)
    paradigms: list[str] = field(default_factory=list)
    counters: list[str] = field(default_factory=list)
    flags: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    # ---- convenience -------------------------------------------------
    @property
    def n_locations(self) -> int:
        return len(self.locations)

    @property
    def n_processes(self) -> int:
        return len(self.processes)

    def location_process(self) -> np.ndarray:
        return np.array([loc.process for loc in self.locations], dtype=np.int32)

    def location_thread(self) -> np.ndarray:
        return np.array([loc.thread for loc in self.locations], dtype=np.int32)

    def threads_per_process(self) -> np.ndarray:
        counts = np.zeros(self.n_processes, dtype=np.int64)
        for loc in self.locations:
            if loc.kind == "thread":
                counts[loc.process] += 1
        return counts

    def counter_code(self, name: str) -> int | None:
        """Event type code of a counter by name (e.g. PAPI_TOT_INS)."""
        for code, et in self.event_types.items():
            if et.kind == "counter" and (et.name == name or et.name.split()[0] == name):
                return code
        return None

    def event_codes(self, role: str) -> list[int]:
        """Event types with this role (EVENT_ROLES), sorted."""
        return sorted(code for code, et in self.event_types.items() if et.role == role)

    def callpath_name(self, cp: int, sep: str = "/") -> str:
        parts = []
        while cp >= 0:
            parts.append(self.regions[self.callpath_region[cp]].name)
            cp = int(self.callpath_parent[cp])
        return sep.join(reversed(parts))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # ---- serialisation ------------------------------------------------
    def to_json_dict(self) -> dict:
        later = ("states", "event_types")            # in their places, filled below
        d = {f.name: None if f.name in later else as_plain(getattr(self, f.name)) for f in fields(self)
             if f.name not in ("callpath_parent", "callpath_region")}
        d["states"] = {str(k): v for k, v in self.states.items()}
        d["event_types"] = {str(k): {**as_plain(v), "values": {str(a): b for a, b in v.values.items()}}
                            for k, v in self.event_types.items()}
        return d

    @classmethod
    def from_json_dict(cls, d: dict, callpath_parent=None, callpath_region=None) -> "Definitions":
        d = dict(d)
        d["processes"] = [Process(**p) for p in d.get("processes", [])]
        d["locations"] = [Location(**p) for p in d.get("locations", [])]
        d["regions"] = [Region(**p) for p in d.get("regions", [])]
        d["states"] = {int(k): v for k, v in d.get("states", {}).items()}
        d["event_types"] = {
            int(k): EventType(**{**v, "values": {int(a): b for a, b in v.get("values", {}).items()}})
            for k, v in d.get("event_types", {}).items()
        }
        defs = cls(**d)
        if callpath_parent is not None:
            defs.callpath_parent = np.asarray(callpath_parent, dtype=np.int32)
            defs.callpath_region = np.asarray(callpath_region, dtype=np.int32)
        return defs
