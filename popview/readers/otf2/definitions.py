"""OTF2 global definitions (read with the `otf2` bindings) mapped onto
popview's Definitions, plus the lookup tables the event conversion needs."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.model.definitions import (TASK_COMPLETE, TASK_CREATE, TASK_SWITCH, THREAD_FORK, THREAD_JOIN,
                                       Definitions, EventType, Location, Process, Region)
from popview.readers.errors import InputError
from popview.readers.otf2 import regions as rg

REGION_TYPE = 46000000          # one event type for every Enter / Leave
COLL_BYTES_SENT, COLL_BYTES_RECV, COLL_ROOT, COLL_COMM = 50100001, 50100002, 50100003, 50100004
KNOWN_COUNTERS = {"PAPI_TOT_INS": 42000050, "PAPI_TOT_CYC": 42000059}
OTHER_COUNTER_BASE = 44000000
ARTIFICIAL_ROOTS = ("THREADS", "TASKS", "KERNELS")
FLUSH_REGION = "TRACE BUFFER FLUSH"

# Info event types for records that are not regions, messages or metrics.
INFO_TYPES = {
    46000001: "Thread fork (requested threads)", 46000002: "Thread join", 46000003: "Thread team begin",
    46000004: "Thread team end", 46000005: "Lock acquire (lock id + 1)", 46000006: "Lock release (lock id + 1)",
    46000007: "Task create (generation + 1)", 46000008: "Task switch (generation + 1)",
    46000009: "Task complete (generation + 1)", 46000010: "Measurement on (1) / off (0)",
    46000011: "I/O operation begin (bytes requested)", 46000012: "I/O operation complete (bytes)",
    46000013: "RMA operation (bytes)", 46000014: "Thread create / begin / wait / end",
}

# The info types the analysis understands (model.definitions.EVENT_ROLES).
INFO_ROLES = {46000001: THREAD_FORK, 46000002: THREAD_JOIN, 46000007: TASK_CREATE, 46000008: TASK_SWITCH,
              46000009: TASK_COMPLETE}

ACCUMULATED_MODES = ("ACCUMULATED_START", "ACCUMULATED_POINT", "ACCUMULATED_LAST", "ACCUMULATED_NEXT")


def enum_name(value) -> str:
    return str(value).rsplit(".", 1)[-1]


@dataclass
class KernelTables:
    """Dense arrays of the lookups, as the numba kernel takes them."""

    metric_code: np.ndarray      # [metric ref, member position] -> event type, -1 undefined
    metric_slot: np.ndarray      # [metric ref, member position] -> running-value slot
    metric_acc: np.ndarray       # [metric ref, member position] -> accumulated mode
    metric_double: np.ndarray    # [metric ref, member position] -> float64 values (stored as their bits)
    n_slots: int
    comm_procs: np.ndarray       # [comm ref, rank] -> process, -1 padding
    comm_size: np.ndarray
    comm_self: np.ndarray


@dataclass
class Tables:
    """Reference -> index lookups shared by the binding reader and the decoder."""

    location_refs: list[int] = field(default_factory=list)       # popview location order
    location_index: dict[int, int] = field(default_factory=dict)
    location_events: dict[int, int] = field(default_factory=dict)
    region_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))   # OTF2 ref -> region
    region_state: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))   # region -> state
    comm_procs: dict[int, np.ndarray] = field(default_factory=dict)   # comm ref -> rank -> process
    comm_self: set[int] = field(default_factory=set)
    metric_members: dict[int, list[tuple[int, bool, bool]]] = field(default_factory=dict)  # ref -> [(code, accumulated, double)]
    root_region: dict[str, int] = field(default_factory=dict)
    flush_region: int = -1
    global_offset: int = 0
    ns_per_tick: float = 1.0
    event_chunk_size: int = 1 << 20
    _kernel: KernelTables | None = None

    def kernel_tables(self) -> KernelTables:
        if self._kernel is None:
            self._kernel = _kernel_tables(self)
        return self._kernel


def _kernel_tables(t: Tables) -> KernelTables:
    n_ref = dense_bound(t.metric_members, "metric")
    width = max((len(m) for m in t.metric_members.values()), default=0)
    code = np.full((n_ref, max(width, 1)), -1, np.int64)
    slot = np.zeros((n_ref, max(width, 1)), np.int64)
    acc = np.zeros((n_ref, max(width, 1)), np.bool_)
    double = np.zeros((n_ref, max(width, 1)), np.bool_)
    slots: dict[int, int] = {}
    for ref, members in t.metric_members.items():
        for pos, (c, accumulated, is_double) in enumerate(members):
            code[ref, pos] = c
            acc[ref, pos] = accumulated
            double[ref, pos] = is_double
            slot[ref, pos] = slots.setdefault(c, len(slots))
    n_comm = dense_bound(t.comm_procs, "communicator")
    size = np.zeros(n_comm, np.int64)
    is_self = np.zeros(n_comm, np.bool_)
    procs = np.full((n_comm, max((len(p) for p in t.comm_procs.values()), default=0) or 1), -1, np.int64)
    for ref, p in t.comm_procs.items():
        size[ref] = len(p)
        procs[ref, :len(p)] = p
        is_self[ref] = ref in t.comm_self
    return KernelTables(code, slot, acc, double, len(slots), procs, size, is_self)


MAX_NS = float(1 << 62)      # as for Paraver: room left in int64 for sums and bin edges


def build(reg, anchor_name: str, creator: str = "OTF2") -> tuple[Definitions, Tables]:
    """Definitions and lookup tables from an `otf2.registry.DefinitionRegistry`."""
    clock = reg.clock_properties
    if not clock.timer_resolution > 0:
        raise InputError(f"timer resolution {clock.timer_resolution} is not positive")
    ns_per_tick = 1e9 / clock.timer_resolution
    t_end = clock.trace_length * ns_per_tick
    if not 0 <= t_end < MAX_NS:
        raise InputError(f"trace length of {clock.trace_length} ticks at {clock.timer_resolution} ticks/s is "
                         f"{t_end:.3g} ns: beyond the {MAX_NS:.3g} ns (146 years) a trace can span")
    if not 0 <= clock.global_offset < 1 << 63:
        raise InputError(f"global time offset {clock.global_offset} does not fit a 64-bit time stamp")
    defs = Definitions(source_format="otf2", tool=creator, date="",
                       t_end=int(round(t_end)), source_unit_ns=ns_per_tick)
    tables = Tables(global_offset=int(clock.global_offset), ns_per_tick=ns_per_tick)
    _locations(reg, defs, tables)
    _regions(reg, defs, tables)
    _communicators(reg, defs, tables)
    _metrics(reg, defs, tables)
    _topologies(reg, defs, tables)
    defs.event_types[REGION_TYPE] = EventType(code=REGION_TYPE, name="OTF2 region", kind="region",
                                              values={i + 1: r.name for i, r in enumerate(defs.regions)})
    for code, (name, kind) in {COLL_BYTES_SENT: ("MPI collective bytes sent", "mpi-param"),
                               COLL_BYTES_RECV: ("MPI collective bytes received", "mpi-param"),
                               COLL_ROOT: ("MPI collective root (rank + 1)", "mpi-param"),
                               COLL_COMM: ("MPI collective communicator", "mpi-param")}.items():
        defs.event_types[code] = EventType(code=code, name=name, kind=kind, paradigm="mpi")
    for code, name in INFO_TYPES.items():
        defs.event_types[code] = EventType(code=code, name=name, kind="info", role=INFO_ROLES.get(code, ""))
    defs.applications = [anchor_name]
    return defs, tables


def _locations(reg, defs: Definitions, tables: Tables) -> None:
    groups = list(reg.location_groups)
    processes = [g for g in groups if enum_name(g.location_group_type) == "PROCESS"]
    if not processes:   # some writers use UNKNOWN: treat every non-accelerator group as a process
        processes = [g for g in groups if enum_name(g.location_group_type) != "ACCELERATOR"]
    proc_of = {g._ref: i for i, g in enumerate(processes)}
    for g in groups:
        if g._ref not in proc_of:
            host = getattr(g, "creating_location_group", None)
            proc_of[g._ref] = proc_of.get(host._ref, 0) if host is not None else 0
    nodes: list = []
    for g in processes:
        node = g.system_tree_parent
        if node is not None and node not in nodes:
            nodes.append(node)
    defs.nodes = [n.name for n in nodes] or ["node"]
    for i, g in enumerate(processes):
        node = nodes.index(g.system_tree_parent) if g.system_tree_parent in nodes else 0
        defs.processes.append(Process(name=g.name or f"rank {i}", node=node, appl=0, rank=i))
    by_proc: dict[int, dict[str, list]] = {i: {"thread": [], "gpu": [], "metric": []} for i in range(len(processes))}
    for loc in reg.locations:
        kind = {"CPU_THREAD": "thread", "GPU": "gpu", "ACCELERATOR_STREAM": "gpu", "METRIC": "metric"}.get(
            enum_name(loc.type), "thread")
        by_proc[proc_of.get(loc.group._ref, 0)][kind].append(loc)
    for p in range(len(processes)):
        for kind in ("thread", "gpu", "metric"):
            for k, loc in enumerate(by_proc[p][kind]):
                tables.location_index[loc._ref] = len(defs.locations)
                tables.location_refs.append(loc._ref)
                tables.location_events[loc._ref] = int(loc.number_of_events)
                defs.locations.append(Location(name=loc.name or f"{kind} {p}.{k}", process=p, thread=k, kind=kind))


def dense_bound(refs, what: str) -> int:
    """1 + the largest reference, refused when the references are too sparse for the
    dense lookup tables built from them (OTF2 writers number definitions from 0)."""
    refs = list(refs)
    top = max(refs, default=-1) + 1
    if top > 16 * len(refs) + 4096 or min(refs, default=0) < 0:
        raise InputError(f"{what} reference {top - 1} is out of range for {len(refs)} definitions")
    return top


def _regions(reg, defs: Definitions, tables: Tables) -> None:
    regs = list(reg.regions)
    top = dense_bound((r._ref for r in regs), "region")
    tables.region_index = np.full(top, -1, np.int32)
    states = []
    for r in regs:
        paradigm = rg.PARADIGMS.get(enum_name(r.paradigm), "user")
        role = rg.ROLES.get(enum_name(r.region_role), "function")
        tables.region_index[r._ref] = len(defs.regions)
        _add_region(defs, states, r.name, paradigm, role, str(getattr(r.source_file, "name", r.source_file) or ""),
                    int(r.begin_line_number or 0))
        if r.name == FLUSH_REGION:
            tables.flush_region = len(defs.regions) - 1
    for name in ARTIFICIAL_ROOTS:
        tables.root_region[name] = len(defs.regions)
        _add_region(defs, states, name, "measurement", "artificial", "", 0)
    if tables.flush_region < 0:
        tables.flush_region = len(defs.regions)
        _add_region(defs, states, FLUSH_REGION, "measurement", "flush", "", 0)
    tables.region_state = np.array(states, np.int32)


def _add_region(defs: Definitions, states: list, name, paradigm, role, file, line) -> None:
    idx = len(defs.regions)
    defs.regions.append(Region(name=name, paradigm=paradigm, role=role, file=file, line=line,
                               event_type=REGION_TYPE, event_value=idx + 1))
    states.append(rg.region_state(name, paradigm, role))


def _communicators(reg, defs: Definitions, tables: Tables) -> None:
    proc_of_loc = {ref: defs.locations[i].process for ref, i in tables.location_index.items()}
    for comm in reg.comms:
        group = comm.group
        gtype = enum_name(group.group_type) if group is not None else "COMM_SELF"
        if gtype == "COMM_SELF":
            tables.comm_self.add(comm._ref)
            tables.comm_procs[comm._ref] = np.zeros(0, np.int32)
            continue
        procs = [proc_of_loc.get(getattr(m, "_ref", -1), -1) for m in group.members]
        tables.comm_procs[comm._ref] = np.array(procs, np.int32)
        if enum_name(group.paradigm) == "MPI":
            defs.communicators.append({"id": int(comm._ref), "appl": 0, "name": comm.name,
                                       "tasks": sorted({p for p in procs if p >= 0})})


def _metrics(reg, defs: Definitions, tables: Tables) -> None:
    code_of: dict[str, int] = {}
    n_other = 0
    for metric in list(reg.metrics):
        klass = metric.metric_class if hasattr(metric, "metric_class") else metric
        members = []
        for m in klass.members:
            name = m.name
            if name not in code_of:
                code = KNOWN_COUNTERS.get(name)
                if code is None:
                    code = OTHER_COUNTER_BASE + n_other
                    n_other += 1
                code_of[name] = code
                unit = f" [{m.unit}]" if m.unit and m.unit != "#" else ""
                value_type = "double" if enum_name(m.value_type) == "DOUBLE" else "int"
                defs.event_types[code] = EventType(code=code, name=name, kind="counter",
                                                   description=(m.description or "") + unit, value_type=value_type)
                defs.counters.append(name)
            members.append((code_of[name], enum_name(m.metric_mode) in ACCUMULATED_MODES,
                            defs.event_types[code_of[name]].value_type == "double"))
        tables.metric_members[metric._ref] = members


def _topologies(reg, defs: Definitions, tables: Tables) -> None:
    coords: dict[int, dict[str, list[int]]] = {}
    for c in reg.cart_coordinates:
        topo = c.topology
        members = list(topo.communicator.group.members) if topo.communicator.group is not None else []
        if c.rank < len(members):
            loc = tables.location_index.get(getattr(members[c.rank], "_ref", -1))
            if loc is not None:
                coords.setdefault(topo._ref, {})[str(loc)] = [int(x) for x in c.coordinates]
    for topo in reg.cart_topologies:
        dims = list(topo.dimensions)
        defs.topologies.append({
            "name": topo.name, "dims": [int(d.size) for d in dims],
            "periodic": [enum_name(d.cart_periodicity) == "TRUE" for d in dims],
            "dim_names": [d.name for d in dims], "coords": coords.get(topo._ref, {})})
