"""Streams an OTF2 archive into the cache writer: definitions first, then
the locations (decoded and mapped on worker threads, at most a few in
memory; those the decoder leaves go through the bindings in bounded
batches) with their visits and the archive's call paths, then the matched
messages."""
from __future__ import annotations

import threading
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from contextlib import closing
from pathlib import Path

import numpy as np

from popview import jit
from popview.cache import heap
from popview.cache.batches import by_budget
from popview.cache.progress import Cancelled, Progress
from popview.cache.writer import Writer
from popview.model import states as st
from popview.model.definitions import Definitions
from popview.readers.errors import InputError
from popview.readers.otf2 import archive, decoder, events, library, raw, threads
from popview.readers.otf2 import definitions as dd
from popview.readers.otf2.callpaths import CallPaths
from popview.readers.otf2.mapping import Halves, Links, Problems, convert_location, match_messages
from popview.readers.otf2.raw import RawEvents
from popview.threads import Pool

BATCH_EVENTS = 2_000_000   # records the bindings read into memory at once (bounded memory)
WORKERS = 2                # locations decoded and mapped in parallel
WATCH_SECONDS = 0.2        # how often a cancel request is looked for while a location decodes
KEEP_EVENTS = 1_000_000    # records of waiting locations kept from the first pass to the second (about 56 MB)
# Staged rows the writer keeps in memory rather than spilling (cache/kept.py): the locations come
# in order, so the tables are written and the sums built from them where they are. About 36 bytes
# an event (the 10^7-event archive: 353 MB); a larger archive is spilled as before.
KEEP_ROWS_BYTES = 512 << 20


def read_definitions(anchor: Path) -> tuple[Definitions, dd.Tables]:
    """Definitions and lookup tables; InputError naming the file on any failure."""
    _, _otf2 = library.bindings(anchor)

    archive.check_anchor(anchor)
    try:
        with closing(library.open_reader(anchor)) as trace:
            defs, tables = dd.build(trace.definitions, anchor.stem, library.creator(trace.handle))
            tables.event_chunk_size = library.chunk_size(trace.handle)
            tables.kernel_tables()          # built now: bad references are refused here, by file
            return defs, tables
    except _otf2.Error as exc:
        raise InputError(f"{anchor}: the OTF2 library cannot read the anchor or the global definitions "
                         f"{anchor.with_suffix('.def').name}: {exc}") from None
    except Exception as exc:  # the bindings raise plain errors for malformed definitions  # noqa: BLE001
        if isinstance(exc, InputError):
            raise InputError(f"{anchor.with_suffix('.def')}: {exc}") from None
        raise InputError(f"{anchor}: malformed OTF2 definitions ({type(exc).__name__}: {exc})") from None


def convert(path: Path, writer: Writer, progress: Progress, client=None) -> Definitions:
    """`client`: a Dask client: the locations are decoded and mapped on its workers
    (popview.readers.otf2.distributed), the rest is the same."""
    anchor = archive.anchor(Path(path))
    defs, tables = read_definitions(anchor)
    archive.check_event_files(anchor, tables.location_events)
    writer.expect_locations(defs.n_locations)
    if client is None:
        writer.keep_in_memory(KEEP_ROWS_BYTES)
        run = _Conversion(anchor, defs, tables, writer, progress)
    else:
        from popview.readers.otf2.distributed import DaskConversion
        run = DaskConversion(anchor, defs, tables, writer, progress, client)
    try:
        run.first_pass()
        run.link()
        run.second_pass()
    except BaseException:
        run.cancel[0] = 1              # the workers' kernels stop instead of finishing their locations
        raise
    defs.flags["otf2_locations_via_bindings"] = len(run.slow)
    defs.callpath_parent, defs.callpath_region = run.callpaths.tables()
    progress.check()
    heap.release_free_memory()     # what the decoding freed (0.35 GB at 10^7 events), before the messages' peak
    if client is None and _sums_first(defs, run, writer, progress):
        # the cumulative sums begun on their thread: the matching, on this one, no longer leaves a core idle
        sends, recvs = _halves(run)
        _finish_messages(defs, writer, sends, recvs, warn_at=run.warn_at)
        del sends, recvs
        heap.release_free_memory()
    else:
        sends, recvs = _halves(run)
        _finish_messages(defs, writer, sends, recvs)
        del sends, recvs
        heap.release_free_memory()     # and what the matching freed, before the finish
        progress.check()
        _finish_definitions(defs, run, writer)
        writer.set_definitions(defs)
    progress(1.0, "events read")
    return defs


def _halves(run) -> tuple[dict, dict]:
    """The message halves as columns; the per-location lists let go of (they were kept through
    the matching)."""
    sends, recvs = run.sends.arrays(), run.recvs.arrays()
    run.sends = run.recvs = None
    return sends, recvs


def _sums_first(defs: Definitions, run: "_Conversion", writer: Writer, progress: Progress) -> bool:
    """The definitions completed before the messages are matched, and the cumulative sums begun
    from the other tables (Writer.begin_derived), when what they read of the definitions cannot
    depend on the messages: the run's end (the messages table's times are its halves', within
    the other tables' times in every archive seen; where a half lies beyond, not begun). The
    flags and the warning the matching sets keep their places (what the definitions store is
    the same as when the matching came first). Returns whether they were begun."""
    progress.check()
    halves_end = max((int(t.max()) for side in (run.sends, run.recvs) for t in side.time if len(t)), default=0)
    if halves_end > max(defs.t_end, writer.time_max()) or not writer.derived_can_begin():
        return False
    defs.flags["unmatched_sends"] = defs.flags["unmatched_receives"] = 0     # their places; set by the matching
    run.warn_at = len(defs.warnings)
    _finish_definitions(defs, run, writer)
    writer.set_definitions(defs)
    return writer.begin_derived(progress)


class _Conversion:
    """The passes over the locations and what they contribute beyond their own rows.

    First pass: every location is decoded; those whose rows depend on other
    locations of their process (OpenMP workers, threads running explicit tasks)
    are only summarised, the others mapped and stored. Then the summaries are
    linked per process, and a second pass maps the waiting locations with their
    links. Rows are stored in location order within each pass, and each
    location's call paths merged into the global table as it is stored."""

    def __init__(self, anchor: Path, defs: Definitions, tables: dd.Tables, writer: Writer, progress: Progress):
        self.anchor, self.defs, self.tables, self.writer, self.progress = anchor, defs, tables, writer, progress
        self.sends, self.recvs, self.problems = Halves(), Halves(), Problems()
        self.counts: Counter = Counter()
        self.read: dict[int, int] = {}          # events read per location, against the announced counts
        self.seen_regions = np.zeros(len(defs.regions), bool)    # regions entered anywhere
        self.span = [None, None]                                 # the records' first and last time (ns)
        self.callpaths = CallPaths()
        self.summaries: dict[int, threads.Summary | None] = {}
        self.waiting: list[int] = []
        self.links: dict[int, Links] = {}
        self.slow: list[int] = []
        self.openmp = np.array([r.paradigm == "openmp" for r in defs.regions] + [False])
        self.total = max(sum(tables.location_events.values()), 1)
        self.done = 0
        self.cancel = np.zeros(1, np.uint8)      # set when the user cancels: the decoder kernels stop
        # the records of locations that wait for their links, kept while they are few (not decoded twice)
        self.kept: dict[int, RawEvents] = {}
        self._kept_events = 0
        self._keeping = threading.Lock()
        self._local = threading.local()          # each decoding thread's scratch (decoder.Scratch)
        self.warn_at: int | None = None          # where the matching's warning goes (_sums_first)

    # -------------------------------------------------------------- passes
    def decoded(self, refs: list[int], linked: bool):
        """(ref, result) in the order of `refs`: each location decoded and mapped (`linked`:
        with its links, the second pass) on this machine's worker threads. DaskConversion
        runs the same on Dask workers."""
        work = self._decode_linked if linked else self._decode_first
        if jit.is_interpreted():
            for ref in refs:
                self._watch()
                yield ref, work(ref)
            return
        with Pool(WORKERS, thread_name_prefix="popview-otf2") as pool:       # the workers run the kernels in this thread's mode
            yield from _in_window(pool, refs, jit.carry(work), self._watch)

    def first_pass(self) -> None:
        for ref, result in self.decoded(self.tables.location_refs, linked=False):
            if result is None:
                self.slow.append(ref)
            else:
                self._first(ref, *result)
        for refs in _batches(self.slow, self.tables):
            records, counts = events.read_with_bindings(self.anchor, refs)
            for ref in refs:
                rec = records.pop(ref)
                summary = self._summary(rec)
                self._first(ref, summary, None if self._waits(ref, summary, rec) else self._map(ref, rec), counts[ref])

    def link(self) -> None:
        unjoined = sum(int(s.fork_unjoined.sum()) for s in self.summaries.values() if s is not None)
        if unjoined:
            self.defs.warn(f"{unjoined} OpenMP forks have no ThreadJoin record: each parallel region instance ends "
                           "at its master's leave of the region (a master's wait for its team after it is not known)")
        if not self.waiting:
            return
        waiting = set(self.waiting)
        by_process: dict[int, list[threads.Member]] = {}
        for ref, loc in self.tables.location_index.items():
            location = self.defs.locations[loc]
            if self.summaries.get(ref) is not None or ref in waiting:
                by_process.setdefault(location.process, []).append(
                    threads.Member(loc, location.thread, self.summaries.get(ref), ref in waiting))
        problems = Counter()
        for members in by_process.values():
            links, stats = threads.link_process(members, self.callpaths)
            self.links.update(links)
            problems.update(stats)
        for what, n in problems.items():
            if n:
                self.defs.warn(f"{n} {what}: their threads' call paths start at the root")

    def second_pass(self) -> None:
        slow = set(self.slow)
        fast = [ref for ref in self.waiting if ref not in slow]
        for ref, result in self.decoded(fast, linked=True):
            self._store(ref, result)
        for refs in _batches([ref for ref in self.waiting if ref in slow], self.tables):
            records, _ = events.read_with_bindings(self.anchor, refs)
            for ref in refs:
                self._store(ref, self._map(ref, records.pop(ref)))

    # -------------------------------------------------------------- workers
    def _decode_first(self, ref: int):
        """Worker: decode one location, summarise it, map it unless it waits (numba, without the GIL)."""
        out = events.decode(self.anchor, ref, self.tables, self.cancel, self._scratch())
        if out is None:
            return None
        rec, counts = out
        summary = self._summary(rec)
        if self._waits(ref, summary, rec):
            self._keep(ref, rec)
            return summary, None, counts
        return summary, self._map(ref, rec), counts

    def _keep(self, ref: int, rec: RawEvents) -> None:
        """A waiting location's records, for the second pass, while they stay under KEEP_EVENTS
        in all (a small archive's OpenMP workers were decoded twice: 40 % of hyb_2x2's decoding)."""
        with self._keeping:
            if self._kept_events + len(rec) <= KEEP_EVENTS:
                self.kept[ref] = rec.copy()       # its columns are the thread's scratch
                self._kept_events += len(rec)

    def _decode_linked(self, ref: int):
        rec = self.kept.pop(ref, None)
        if rec is None:
            rec, _ = events.decode(self.anchor, ref, self.tables, self.cancel, self._scratch())
        return self._map(ref, rec)

    def _scratch(self) -> decoder.Scratch:
        """This thread's decoding memory, reused from one location to the next (the mapped rows
        and the summary never refer to the records)."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = decoder.Scratch()
        return scratch

    def _watch(self) -> None:
        """While waiting for a worker: a cancel request reaches the running kernels."""
        try:
            self.progress.check()
        except Cancelled:
            self.cancel[0] = 1
            raise

    def _summary(self, rec: RawEvents) -> threads.Summary | None:
        if not threads.has_thread_records(rec):
            return None
        return threads.summarize(rec, self.tables.region_index, self.tables.global_offset, self.tables.ns_per_tick)

    def _waits(self, ref: int, summary: threads.Summary | None, rec: RawEvents) -> bool:
        """Whether the location's rows depend on others: a member of another thread's team,
        a thread running explicit tasks, or a worker of an OpenMP 1.x archive (no team records)."""
        if summary is not None and (summary.works_in_teams or summary.runs_tasks):
            return True
        location = self.defs.locations[self.tables.location_index[ref]]
        if location.kind != "thread" or location.thread == 0 or (summary is not None and summary.team_records):
            return False
        entered = rec.a[rec.kind == raw.ENTER]
        regions = self.tables.region_index[entered[(entered >= 0) & (entered < len(self.tables.region_index))]]
        return bool(self.openmp[regions].any())

    def _map(self, ref: int, rec: RawEvents):
        loc = self.tables.location_index[ref]
        location = self.defs.locations[loc]
        links = self.links.get(loc)
        team_member = bool(np.any(rec.kind == raw.TEAM_BEGIN)) or (links is not None and len(links.graft_begin) > 0)
        if location.kind == "gpu":
            root, idle = "KERNELS", 0
        elif location.kind == "thread" and location.thread > 0:
            root, idle = (None if team_member else "THREADS"), 0
        else:
            root, idle = None, st.RUNNING
        sends, recvs, problems = Halves(), Halves(), Problems()
        mapped = convert_location(loc, location.kind, location.process, rec, self.tables, self.defs.t_end, root, idle,
                                  sends, recvs, problems, links, self.cancel)
        return mapped, sends, recvs, problems

    # -------------------------------------------------------------- main thread
    def _first(self, ref: int, summary, mapped, counts: Counter) -> None:
        self.summaries[ref] = summary
        self.counts.update(counts)
        self.read[ref] = sum(counts.values())
        if mapped is None:
            self.waiting.append(ref)
        else:
            self._store(ref, mapped)

    def _store(self, ref: int, result) -> None:
        mapped, sends, recvs, problems = result
        w = self.writer
        w.append("events", mapped.events)
        if mapped.states is not None:
            w.append("states", mapped.states)
        visits = mapped.visits
        if len(visits["begin"]):
            to_global = self.callpaths.merge(mapped.local_parent, mapped.local_region).astype(np.int32)
            visits["callpath"] = to_global[visits["callpath"]]
            w.append("calls", visits)
        for mine, theirs in ((self.sends, sends), (self.recvs, recvs)):
            for k, v in vars(theirs).items():
                getattr(mine, k).extend(v)
        for what, n in problems.counts.items():
            self.problems.add(what, n)
        ev = mapped.events
        if len(ev["time"]):
            first, last = int(ev["time"].min()), int(ev["time"].max())
            self.span = [first if self.span[0] is None else min(self.span[0], first),
                         last if self.span[1] is None else max(self.span[1], last)]
        regions = ev["value"][(ev["type"] == dd.REGION_TYPE) & (ev["value"] > 0)] - 1
        self.seen_regions[regions[regions < len(self.seen_regions)]] = True   # no sort (np.unique: 0.17 s at 10^7)
        self.done += self.tables.location_events[ref]
        self.progress(0.9 * self.done / self.total, f"reading {self.anchor.name}: {self.done:,} of {self.total:,} events")


def _in_window(pool: ThreadPoolExecutor, refs: list[int], work, watch):
    """(ref, work(ref)) in order, with at most WORKERS + 1 results in memory at once;
    watch() is called while waiting (it raises to stop)."""
    pending: deque = deque()
    for ref in refs:
        pending.append((ref, pool.submit(work, ref)))
        if len(pending) > WORKERS:
            r, job = pending.popleft()
            yield r, _result(job, watch)
    while pending:
        r, job = pending.popleft()
        yield r, _result(job, watch)


def _result(job, watch):
    while True:
        try:
            return job.result(timeout=WATCH_SECONDS)
        except FuturesTimeout:
            watch()


def _batches(refs: list[int], tables: dd.Tables) -> list[list[int]]:
    """Locations for the bindings, in groups of at most BATCH_EVENTS events."""
    return by_budget(refs, [tables.location_events[ref] for ref in refs], BATCH_EVENTS)


def _finish_messages(defs: Definitions, writer: Writer, sends: dict, recvs: dict, warn_at: int | None = None) -> None:
    """The matched messages appended, their flags set and the warning for the unmatched given
    (at position `warn_at` of the warnings: where it stands when the matching comes first)."""
    msgs, lost_sends, lost_recvs = match_messages(sends, recvs)   # by sender, then time
    if len(msgs["send_loc"]):
        writer.append("messages", msgs)
    defs.flags["unmatched_sends"], defs.flags["unmatched_receives"] = int(lost_sends), int(lost_recvs)
    if lost_sends or lost_recvs:
        warning = f"{lost_sends} MPI sends and {lost_recvs} receives without a matching partner were left out"
        if warn_at is None:
            defs.warn(warning)
        elif warning not in defs.warnings:
            defs.warnings.insert(warn_at, warning)


UNRECORDED_SHARE = 0.01     # of the run: time the clock properties give beyond the records, said


def unrecorded_ends(t_end: int, span, offset: int) -> str | None:
    """Says when the definitions' clock properties (global offset, trace length: OTF2's span that
    includes every event) reach well beyond the records. APEX 1.2.0 writes offset 0 and a trace
    length of 584.9 ms, counted from its own start, while its events span 20.3-571.0 ms: the run's
    duration stays the definitions' (the span the writer measured, as Vampir shows it, and what
    the spec defines), and this says what of it holds no records."""
    first, last = span
    if first is None or t_end <= 0:
        return None
    before, after = max(first, 0), max(t_end - last, 0)
    if before + after <= UNRECORDED_SHARE * t_end:
        return None
    ms = 1e6
    return (f"the definitions' clock properties (global offset {offset}, trace length {t_end / ms:.4g} ms) give the "
            f"run {t_end / ms:.4g} ms, the duration shown; its records span {first / ms:.4g}-{last / ms:.4g} ms: "
            f"{before / ms:.3g} ms before the first record and {after / ms:.3g} ms after the last "
            f"({(before + after) / t_end:.1%} of the run) hold no records (the writer's own start-up and "
            "shut-down, or time it measured without events): whole-run figures count them as no thread's "
            "work; a time window over the records leaves them out")


def _finish_definitions(defs: Definitions, run: _Conversion, writer: Writer) -> None:
    counts, seen_regions = run.counts, run.seen_regions
    for mismatch in events.count_mismatches(run.anchor, run.read, run.tables):
        defs.warn(mismatch)
    defs.flags["otf2_event_counts"] = dict(sorted(counts.items()))
    defs.flags["threads_grafted"] = True      # workers' visits below the fork, tasks below TASKS: profiles use them
    defs.t_end = max(defs.t_end, writer.time_max())
    if (note := unrecorded_ends(defs.t_end, run.span, run.tables.global_offset)) is not None:
        defs.warn(note)
    for what, n in run.problems.counts.items():
        defs.warn(f"{n} {what} not represented")
    used = {defs.regions[i].paradigm for i in np.flatnonzero(seen_regions)}
    order = ["mpi", "openmp", "pthread", "cuda", "hip", "opencl", "io"]
    defs.paradigms = [p for p in order if p in used]
    defs.flags["measurement_off"] = counts.get("MeasurementOnOff", 0) > 0
