"""Streams an OTF2 archive into the cache writer: definitions first, then
the locations in batches of bounded size, then the matched messages."""
from __future__ import annotations

from collections import Counter
from contextlib import closing
from pathlib import Path

import numpy as np

from popview.cache.progress import Progress
from popview.cache.writer import Writer
from popview.model import states as st
from popview.model.definitions import Definitions
from popview.readers.errors import InputError
from popview.readers.otf2 import archive, events, raw
from popview.readers.otf2 import definitions as dd
from popview.readers.otf2.mapping import Halves, Problems, convert_location, match_messages

BATCH_EVENTS = 4_000_000   # records read into memory at once (bounded memory)


def read_definitions(anchor: Path) -> tuple[Definitions, dd.Tables]:
    """Definitions and lookup tables; InputError naming the file on any failure."""
    import _otf2
    import otf2

    archive.check_anchor(anchor)
    try:
        with closing(otf2.reader.Reader(str(anchor))) as trace:
            try:
                creator = _otf2.Reader_GetCreator(trace.handle) or "OTF2"
            except _otf2.Error:
                creator = "OTF2"
            if isinstance(creator, bytes):
                creator = creator.decode("utf-8", "replace")
            defs, tables = dd.build(trace.definitions, anchor.stem,
                                    creator.strip().splitlines()[0] if creator.strip() else "OTF2")
            tables.event_chunk_size = int(_otf2.Reader_GetChunkSize(trace.handle)[0])
            return defs, tables
    except _otf2.Error as exc:
        raise InputError(f"{anchor}: the OTF2 library cannot read the anchor or the global definitions "
                         f"{anchor.with_suffix('.def').name}: {exc}") from None
    except Exception as exc:  # the bindings raise plain errors for malformed definitions  # noqa: BLE001
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{anchor}: malformed OTF2 definitions ({type(exc).__name__}: {exc})") from None


def convert(path: Path, writer: Writer, progress: Progress) -> Definitions:
    anchor = archive.anchor(Path(path))
    defs, tables = read_definitions(anchor)
    archive.check_event_files(anchor, tables.location_events)
    sends, recvs, problems = Halves(), Halves(), Problems()
    counts: Counter = Counter()
    seen_regions: set[int] = set()
    batches = _batches(tables)
    total = max(sum(tables.location_events.values()), 1)
    done = fallback = 0
    for refs in batches:
        progress(0.9 * done / total, f"reading {anchor.name}: {done:,} of {total:,} events")
        records, batch_counts, slow = events.read(anchor, refs, tables, defs.warn)
        counts.update(batch_counts)
        fallback += slow
        for ref in refs:
            loc = tables.location_index[ref]
            rec = records.pop(ref)
            _convert_one(defs, tables, loc, rec, writer, sends, recvs, problems, seen_regions)
            done += tables.location_events[ref]
    defs.flags["otf2_locations_via_bindings"] = fallback
    _finish_messages(defs, writer, sends, recvs)
    _finish_definitions(defs, counts, problems, seen_regions, writer)
    writer.set_definitions(defs)
    progress(1.0, "events read")
    return defs


def _batches(tables: dd.Tables) -> list[list[int]]:
    batches, cur, acc = [], [], 0
    for ref in tables.location_refs:
        n = tables.location_events[ref]
        if cur and acc + n > BATCH_EVENTS:
            batches.append(cur)
            cur, acc = [], 0
        cur.append(ref)
        acc += n
    if cur:
        batches.append(cur)
    return batches


def _convert_one(defs, tables, loc, rec, writer, sends, recvs, problems, seen_regions) -> None:
    location = defs.locations[loc]
    team_member = bool(np.any(rec.kind == raw.TEAM_BEGIN))
    if location.kind == "gpu":
        root, idle = "KERNELS", 0
    elif location.kind == "thread" and location.thread > 0:
        root, idle = (None if team_member else "THREADS"), 0
    else:
        root, idle = None, st.RUNNING
    ev, states = convert_location(loc, location.kind, location.process, rec, tables, defs.t_end, root, idle,
                                  sends, recvs, problems)
    writer.append("events", ev)
    if states is not None:
        writer.append("states", states)
    regions = ev["value"][(ev["type"] == dd.REGION_TYPE) & (ev["value"] > 0)]
    seen_regions.update((np.unique(regions) - 1).tolist())


def _finish_messages(defs: Definitions, writer: Writer, sends: Halves, recvs: Halves) -> None:
    msgs, lost_sends, lost_recvs = match_messages(sends.arrays(), recvs.arrays())
    if len(msgs["send_loc"]):
        order = np.lexsort((msgs["send_time"], msgs["send_loc"]))
        writer.append("messages", {k: v[order] for k, v in msgs.items()})
    if lost_sends or lost_recvs:
        defs.warn(f"{lost_sends} MPI sends and {lost_recvs} receives without a matching partner were left out")


def _finish_definitions(defs, counts, problems, seen_regions, writer) -> None:
    defs.flags["otf2_event_counts"] = dict(sorted(counts.items()))
    defs.t_end = max(defs.t_end, writer.time_max())
    for what, n in problems.counts.items():
        defs.warn(f"{n} {what} not represented")
    tasks = sum(counts.get(k, 0) for k in ("ThreadTaskSwitch", "OmpTaskSwitch"))
    if tasks:
        defs.warn(f"{tasks} task switches recorded as events; tasks do not yet keep call stacks of their own")
    used = {defs.regions[i].paradigm for i in seen_regions if 0 <= i < len(defs.regions)}
    order = ["mpi", "openmp", "pthread", "cuda", "hip", "opencl", "io"]
    defs.paradigms = [p for p in order if p in used]
    defs.flags["measurement_off"] = counts.get("MeasurementOnOff", 0) > 0
