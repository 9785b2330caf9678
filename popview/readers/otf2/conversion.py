"""Streams an OTF2 archive into the cache writer: definitions first, then
the locations (decoded and mapped on worker threads, at most a few in
memory; those the decoder leaves go through the bindings in bounded
batches), then the matched messages."""
from __future__ import annotations

from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
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

BATCH_EVENTS = 2_000_000   # records the bindings read into memory at once (bounded memory)
WORKERS = 2                # locations decoded and mapped in parallel


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
    acc = _Accumulated()
    total = max(sum(tables.location_events.values()), 1)
    done = 0
    slow: list[int] = []
    with ThreadPoolExecutor(WORKERS) as pool:
        for ref, result in _in_window(pool, tables.location_refs, lambda r: _decode_and_map(anchor, r, defs, tables)):
            if result is None:
                slow.append(ref)
            else:
                acc.store(writer, defs, anchor, tables, ref, *result)
                done += tables.location_events[ref]
                progress(0.9 * done / total, f"reading {anchor.name}: {done:,} of {total:,} events")
    for refs in _batches(slow, tables):
        records, counts = events.read_with_bindings(anchor, refs)
        for ref in refs:
            acc.store(writer, defs, anchor, tables, ref, _map(defs, tables, ref, records.pop(ref)), counts[ref])
            done += tables.location_events[ref]
        progress(0.9 * done / total, f"reading {anchor.name} with the OTF2 library: {done:,} of {total:,} events")
    acc.via_bindings = len(slow)
    defs.flags["otf2_locations_via_bindings"] = acc.via_bindings
    _finish_messages(defs, writer, acc.sends, acc.recvs)
    _finish_definitions(defs, acc, writer)
    writer.set_definitions(defs)
    progress(1.0, "events read")
    return defs


class _Accumulated:
    """What the locations contribute beyond their own rows."""

    def __init__(self):
        self.sends, self.recvs, self.problems = Halves(), Halves(), Problems()
        self.counts: Counter = Counter()
        self.seen_regions: set[int] = set()
        self.via_bindings = 0

    def store(self, writer, defs, anchor, tables, ref, mapped, counts: Counter) -> None:
        events_cols, states, sends, recvs, problems = mapped
        writer.append("events", events_cols)
        if states is not None:
            writer.append("states", states)
        for mine, theirs in ((self.sends, sends), (self.recvs, recvs)):
            for k, v in vars(theirs).items():
                getattr(mine, k).extend(v)
        for what, n in problems.counts.items():
            self.problems.add(what, n)
        self.counts.update(counts)
        mismatch = events.count_mismatch(anchor, ref, sum(counts.values()), tables)
        if mismatch:
            defs.warn(mismatch)
        regions = events_cols["value"][(events_cols["type"] == dd.REGION_TYPE) & (events_cols["value"] > 0)]
        self.seen_regions.update((np.unique(regions) - 1).tolist())


def _decode_and_map(anchor: Path, ref: int, defs: Definitions, tables: dd.Tables):
    """Worker: decode one location and map it (both numba, without the GIL)."""
    out = events.decode(anchor, ref, tables)
    if out is None:
        return None
    rec, counts = out
    return _map(defs, tables, ref, rec), counts


def _map(defs: Definitions, tables: dd.Tables, ref: int, rec):
    loc = tables.location_index[ref]
    location = defs.locations[loc]
    team_member = bool(np.any(rec.kind == raw.TEAM_BEGIN))
    if location.kind == "gpu":
        root, idle = "KERNELS", 0
    elif location.kind == "thread" and location.thread > 0:
        root, idle = (None if team_member else "THREADS"), 0
    else:
        root, idle = None, st.RUNNING
    sends, recvs, problems = Halves(), Halves(), Problems()
    ev, states = convert_location(loc, location.kind, location.process, rec, tables, defs.t_end, root, idle,
                                  sends, recvs, problems)
    return ev, states, sends, recvs, problems


def _in_window(pool: ThreadPoolExecutor, refs: list[int], work):
    """(ref, work(ref)) in order, with at most WORKERS + 1 results in memory at once."""
    pending: deque = deque()
    for ref in refs:
        pending.append((ref, pool.submit(work, ref)))
        if len(pending) > WORKERS:
            r, job = pending.popleft()
            yield r, job.result()
    while pending:
        r, job = pending.popleft()
        yield r, job.result()


def _batches(refs: list[int], tables: dd.Tables) -> list[list[int]]:
    """Locations for the bindings, in groups of at most BATCH_EVENTS events."""
    batches, cur, acc = [], [], 0
    for ref in refs:
        n = tables.location_events[ref]
        if cur and acc + n > BATCH_EVENTS:
            batches.append(cur)
            cur, acc = [], 0
        cur.append(ref)
        acc += n
    if cur:
        batches.append(cur)
    return batches


def _finish_messages(defs: Definitions, writer: Writer, sends: Halves, recvs: Halves) -> None:
    msgs, lost_sends, lost_recvs = match_messages(sends.arrays(), recvs.arrays())
    if len(msgs["send_loc"]):
        order = np.lexsort((msgs["send_time"], msgs["send_loc"]))
        writer.append("messages", {k: v[order] for k, v in msgs.items()})
    defs.flags["unmatched_sends"], defs.flags["unmatched_receives"] = int(lost_sends), int(lost_recvs)
    if lost_sends or lost_recvs:
        defs.warn(f"{lost_sends} MPI sends and {lost_recvs} receives without a matching partner were left out")


def _finish_definitions(defs: Definitions, acc: _Accumulated, writer: Writer) -> None:
    counts, seen_regions = acc.counts, acc.seen_regions
    defs.flags["otf2_event_counts"] = dict(sorted(counts.items()))
    defs.t_end = max(defs.t_end, writer.time_max())
    for what, n in acc.problems.counts.items():
        defs.warn(f"{n} {what} not represented")
    tasks = sum(counts.get(k, 0) for k in ("ThreadTaskSwitch", "OmpTaskSwitch"))
    if tasks:
        defs.warn(f"{tasks} task switches recorded as events; tasks do not yet keep call stacks of their own")
    used = {defs.regions[i].paradigm for i in seen_regions if 0 <= i < len(defs.regions)}
    order = ["mpi", "openmp", "pthread", "cuda", "hip", "opencl", "io"]
    defs.paradigms = [p for p in order if p in used]
    defs.flags["measurement_off"] = counts.get("MeasurementOnOff", 0) > 0
