"""Synthetic OTF2 archives written with the `otf2` bindings, for tests and
benchmarks: an MPI ring exchange with computation phases, collectives,
PAPI counters, optional worker threads, buffer flushes and measurement gaps.
`write_trace` returns what it wrote, so a reader can be checked against it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import otf2
from otf2.enums import (Base, CollectiveOp, GroupType, LocationGroupType, LocationType, MeasurementMode,
                        MetricMode, MetricOccurrence, Paradigm, RecorderKind, RegionRole, Type)

TICKS_PER_S = 2_000_000_000      # 0.5 ns per tick: exercises the clock conversion
MESSAGE_BYTES = 4096


@dataclass
class Written:
    """What write_trace put into the archive."""

    anchor: Path
    ranks: int
    threads: int
    iterations: int
    events: dict[str, int] = field(default_factory=dict)          # per OTF2 record name
    messages: int = 0
    message_bytes: int = 0
    collectives: int = 0
    compute_visits: int = 0
    counter_totals: dict[str, int] = field(default_factory=dict)  # summed over all samples' increments
    duration_ticks: int = 0

    @property
    def total_events(self) -> int:
        return sum(self.events.values())


def write_trace(folder: Path, ranks: int = 4, iterations: int = 10, threads: int = 1,
                collective_every: int = 5, counters: bool = True, flush_at: int | None = None,
                measurement_gap: int | None = None) -> Written:
    """Write `folder`/traces.otf2 (+ traces.def, traces/): `ranks` MPI processes
    exchanging one message each way with their ring neighbours per iteration."""
    folder = Path(folder)
    if (folder / "traces").exists() or (folder / "traces.otf2").exists():
        raise FileExistsError(f"{folder}: an OTF2 archive already exists here")
    out = Written(anchor=folder / "traces.otf2", ranks=ranks, threads=threads, iterations=iterations)
    counts: dict[str, int] = {}

    def count(name: str, n: int = 1) -> None:
        counts[name] = counts.get(name, 0) + n

    with otf2.writer.open(str(folder), archive_name="traces", timer_resolution=TICKS_PER_S) as trace:
        d = trace.definitions
        machine = d.system_tree_node("machine")
        node = d.system_tree_node("node0", parent=machine)
        groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(ranks)]
        mains = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
        workers = [[d.location(f"Thread {t}", type=LocationType.CPU_THREAD, group=g) for t in range(1, threads)]
                   for g in groups]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=mains)
        world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=mains))
        reg = {name: d.region(name, paradigm=paradigm, region_role=role) for name, paradigm, role in (
            ("main", Paradigm.USER, RegionRole.FUNCTION), ("compute", Paradigm.USER, RegionRole.FUNCTION),
            ("MPI_Send", Paradigm.MPI, RegionRole.POINT2POINT), ("MPI_Recv", Paradigm.MPI, RegionRole.POINT2POINT),
            ("MPI_Allreduce", Paradigm.MPI, RegionRole.COLL_ALL2ALL), ("worker", Paradigm.USER, RegionRole.FUNCTION))}
        papi = None
        if counters:
            members = [d.metric_member(n, metric_mode=MetricMode.ACCUMULATED_START, value_type=Type.UINT64,
                                       base=Base.DECIMAL, unit="#") for n in ("PAPI_TOT_INS", "PAPI_TOT_CYC")]
            papi = d.metric_class(members, occurrence=MetricOccurrence.SYNCHRONOUS_STRICT, recorder_kind=RecorderKind.CPU)
        period = 10_000
        for r in range(ranks):
            w = trace.event_writer_from_location(mains[r])
            t = 1000 + 37 * r
            ins = cyc = 0
            w.enter(t, reg["main"])
            count("Enter")
            for i in range(iterations):
                base = t + i * period
                if flush_at == i and r == 0:
                    w.buffer_flush(base, base + 50)
                    count("BufferFlush")
                if measurement_gap == i:
                    w.measurement_on_off(base + 60, MeasurementMode.OFF)
                    w.measurement_on_off(base + 90, MeasurementMode.ON)
                    count("MeasurementOnOff", 2)
                w.enter(base + 100, reg["compute"])
                count("Enter")
                out.compute_visits += 1
                if papi is not None:
                    w.metric(base + 100, papi, [ins, cyc])
                    ins += 1000 + 10 * r
                    cyc += 2000 + i
                    w.metric(base + 4000, papi, [ins, cyc])
                    count("Metric", 2)
                w.leave(base + 4000, reg["compute"])
                count("Leave")
                right, left = (r + 1) % ranks, (r - 1) % ranks
                w.enter(base + 4100, reg["MPI_Send"])
                w.mpi_send(base + 4200, right, world, i, MESSAGE_BYTES)
                w.leave(base + 4300, reg["MPI_Send"])
                w.enter(base + 4400, reg["MPI_Recv"])
                w.mpi_recv(base + 6000, left, world, i, MESSAGE_BYTES)
                w.leave(base + 6100, reg["MPI_Recv"])
                count("Enter", 2), count("Leave", 2), count("MpiSend"), count("MpiRecv")
                out.messages += 1
                out.message_bytes += MESSAGE_BYTES
                if collective_every and i % collective_every == collective_every - 1:
                    w.enter(base + 7000, reg["MPI_Allreduce"])
                    w.mpi_collective_begin(base + 7010)
                    w.mpi_collective_end(base + 8000, CollectiveOp.ALLREDUCE, world, 0xFFFFFFFF, 8, 8 * ranks)
                    w.leave(base + 8010, reg["MPI_Allreduce"])
                    count("Enter"), count("Leave"), count("MpiCollectiveBegin"), count("MpiCollectiveEnd")
                    out.collectives += 1
            end = t + iterations * period
            w.leave(end, reg["main"])
            count("Leave")
            out.duration_ticks = max(out.duration_ticks, end)
            if papi is not None:
                out.counter_totals["PAPI_TOT_INS"] = out.counter_totals.get("PAPI_TOT_INS", 0) + ins
                out.counter_totals["PAPI_TOT_CYC"] = out.counter_totals.get("PAPI_TOT_CYC", 0) + cyc
            for k, loc in enumerate(workers[r]):
                ww = trace.event_writer_from_location(loc)
                for i in range(iterations):
                    base = t + i * period
                    ww.enter(base + 200 + k, reg["worker"])
                    ww.leave(base + 3000, reg["worker"])
                    count("Enter"), count("Leave")
    out.events = counts
    return out
