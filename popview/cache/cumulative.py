"""Per-location cumulative time by category, so that the POP figures of any
time window cost O(locations x log records).

Every state interval gets one *category* (useful outside / inside OpenMP,
MPI by kind, OpenMP runtime by kind, I/O, idle, other) from its state code
and the regions open on its location. The group `cumulative` holds:

    seg          (n, 2 + n_counters) int64: begin, (end - begin) << 16 | (region + 1) << 8 | category,
                 then, as float64 bits, the counter deltas read during the row (useful rows
                 only) and the pseudo counters (MPI calls entered during the row): one read per slab
    kind         (n,) uint16: (region + 1) << 8 | category of each row (seg's word without the
                 duration: what the replay reads, whole run or window)
    ck_row, ck_begin, ck_cum, ck_ctr: checkpoints every CHECK rows (and at each
                 location's first row) with the sums of everything before them
    totals, ctr_totals (n_loc, ...): the sums over each whole location
    profile/     a popview Profile (process-level call paths, see below)
    master_calls/ the master threads' visits by call path (iterations of a region)

A conversion builds the whole-run part (`totals`, `ctr_totals`, `profile`,
`master_calls`, `kind`: what whole-run and call-path metrics, the replay and the
trees read) into the cache; the rows (`seg` and the checkpoints: what only time windows and the replay
read) are built when first needed, into the cache's window-sums companion
(window_sums.py), by the same pass over the records (build(rows=True, profile=False)).

A row's *region* is the OpenMP parallel region its process's master thread
is in at that moment (key: the first outlined function of the instance, else
the parallel construct's call path), so the sums also hold, per region, the
time inside it and the useful time inside it: the columns of `ck_cum` and
`totals` are the categories, then region time, then region useful time.

The profile attributes every thread's time to the call path of its process's
master thread at that moment (the way Score-P nests worker time under the
master's call tree), so a call-path focus is one profile row.
"""
from __future__ import annotations

import json
import threading

import h5py
import hdf5plugin
import numpy as np

from popview.cache.batches import by_budget
from popview.cache.chunks import ChunkedWriter, copy_rows
from popview.cache.codes import code_index
from popview.cache.integrity import checked
from popview.cache.progress import Progress
from popview.cache.rawtables import RawTable, SpillColumn
from popview.cache.writer import _Either, compression, create_column
from popview.jit import njit
from popview.model.categories import (CAT, CATEGORIES, CATEGORY_DESCRIPTIONS, MPI_ROLE_CATEGORY, N_CAT,
                                      PROFILE_METRICS)
from popview.model.definitions import THREAD_JOIN, Definitions
from popview.model.states import FORK_JOIN, StateClass, class_lookup

CHECK = 1024               # rows between checkpoints (and rows per chunk)
KIND_CHUNK = 1 << 16       # rows per chunk of `kind`
MAX_REGIONS = 64           # parallel regions with their own sums (outlined functions first, by call-path id)
BUDGET_ROWS = 1_000_000    # state rows held in memory at once
EVENT_SLICE = 1 << 20      # a location's events read at once for its counters (one slice: 20 MB)
SPLIT_ROWS = 1 << 18       # state rows from which a conversion's sums run on two threads (_Builder._halves)
EVENTS_PER_STATE = 8       # events weigh about this many times less than states in the sums' work
MASTER_BLOCK = 1 << 16     # master-thread visits gathered at once for their chunks' compression
OUTSIDE = "(outside any region)"
# Counts kept like counters (per row, cumulative) so windows get them too.
PSEUDO_COUNTERS = ("mpi_calls", "mpi_collective_calls")

_OMP_SYNC_STATES = (5, 9, 41)       # synchronization, blocked, OpenMP synchronization


def build(out: h5py.File, defs: Definitions, progress: Progress, dst: h5py.File | None = None,
          rows: bool = False, profile: bool = True) -> None:
    """The cumulative group from a cache's sorted tables, into `dst` (default: the cache):
    its whole-run part (`profile`: totals, profile, master calls) and its `rows` (seg and
    the checkpoints: the window sums)."""
    if "states" not in out or out["states"]["loc"].shape[0] == 0:
        return
    _Builder(out, defs, rows, profile).run(progress, out if dst is None else dst)


class Ahead:
    """build() of the whole-run part (no rows) computed by threads from when it is made, while
    the caller writes something else into the cache (the conversion's call paths); write(dst)
    then waits for them and writes the group, as build() would have: the same group, written
    after what the caller wrote meanwhile (one thread at a time in the HDF5 file, in a fixed
    order, so the file is the same at every conversion). The threads report no progress but
    see a cancel; leaving the `with` stops them and waits for them (a failure of the caller's)."""

    def __init__(self, src, defs: Definitions, progress: Progress):
        from popview import jit
        from popview.threads import Pool

        self.builder = None
        self._jobs: list = []
        self._stop = threading.Event()
        self._pool = None
        if "states" not in src or src["states"]["loc"].shape[0] == 0:
            return                               # nothing to build (build() writes nothing either)
        b = self.builder = _Builder(src, defs)
        procs = b._process_groups()
        halves = b._halves(procs)
        self._halves = list(halves) if halves is not None else [[p for group in procs for p in group]]
        self._kinds = [_KeptRows() for _ in self._halves]
        b._read_whole_once()
        quiet = Progress(None, _Either(progress.cancel, self._stop))
        self._pool = Pool(len(self._halves), thread_name_prefix="popview-sums")
        try:
            for half, kinds in zip(self._halves, self._kinds):
                self._jobs.append(self._pool.submit(jit.carry(b.part), [half], None, kinds, quiet))
        except BaseException:
            self.close()
            raise

    def write(self, dst: h5py.File, progress: Progress, read_done=None) -> None:
        """The group into `dst`, once the threads are done (their failure raised here);
        `read_done()` is called once they are, before the group is written (nothing reads
        the source tables after)."""
        progress(0.0, "cumulative sums")
        if self.builder is None:
            if read_done is not None:
                read_done()
            return
        parts = [job.result() for job in self._jobs]
        self.close()
        if read_done is not None:
            read_done()
        g, _, kind = self.builder.create(dst)
        sink = _SegmentSink(kind, self._halves)
        for kept in self._kinds:
            kept.replay(sink)
        sink.close()
        self.builder.write(g, self.builder.joined(self._halves, parts))

    def close(self) -> None:
        """The threads stopped (when not done) and waited for; their failures dropped."""
        self._stop.set()
        for job in self._jobs:
            job.exception()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ------------------------------------------------------------------ by parts (a finish on Dask)

def plan_parts(src, defs: Definitions, budget: int | None = None) -> list[dict] | None:
    """The work cut into parts of whole processes (its groups within the row budget), each
    a task of a distributed finish (popview.cache.groups): [] when there is nothing to
    build, None when the parts' rows would not be consecutive (a process's threads numbered
    apart: then built in one piece)."""
    if "states" not in src or src["states"]["loc"].shape[0] == 0:
        return []
    b = _Builder(src, defs)
    procs = b._process_groups(budget or BUDGET_ROWS)
    order = [loc for group in procs for p_locs in group for loc in p_locs]
    if order != sorted(order):
        return None
    parts = []
    for group in procs:
        locs = [loc for p_locs in group for loc in p_locs]
        parts.append({"procs": [group], "lo": int(b.offsets[min(locs)]), "hi": int(b.offsets[max(locs) + 1])})
    return parts


def build_part(src, defs: Definitions, part: dict, path, rows: bool = False) -> dict:
    """One part (see plan_parts): with `rows`, its rows of `seg` into a file of its own at
    `path` (the dataset at its whole size, its rows only), and the sums, checkpoints and
    profile of its processes."""
    from popview.cache.chunks import WindowWriter
    from popview.cache.integrity import writing   # no write fails inside HDF5 (a full disk)

    b = _Builder(src, defs, rows)
    with writing(path, "w") as f:
        _, seg, kind = b.create(f)
        sinks = [_WindowSink(WindowWriter(d, part["lo"], part["hi"])) if d is not None else None for d in (seg, kind)]
        built = b.part(part["procs"], *sinks, progress=Progress())
    return {**built, "procs": part["procs"], "lo": part["lo"], "hi": part["hi"], "h5": str(path)}


def join_parts(src, defs: Definitions, dst: h5py.File, built: list[dict], rows: bool = False) -> None:
    """The group from the parts' results, in their order: `seg` joined by `copy_rows` (with
    `rows`), the sums added, the checkpoints and profile parts concatenated: what build()
    writes."""
    b = _Builder(src, defs, rows)
    g, seg, kind = b.create(dst)
    whole = {"totals": np.zeros((b.n_loc, b.width)), "ctr_totals": np.zeros((b.n_loc, b.n_ctr)),
             "ck": {"row": [], "begin": [], "cum": [], "ctr": []}, "prof": _ProfileParts(b.n_loc)}
    for part in built:
        with h5py.File(part["h5"], "r") as f:
            for d in (seg, kind):
                if d is not None:
                    copy_rows(f[d.name], d, part["lo"], part["hi"])
        locs = [loc for group in part["procs"] for p_locs in group for loc in p_locs]
        whole["totals"][locs] = part["totals"][locs]
        whole["ctr_totals"][locs] = part["ctr_totals"][locs]
        for k, v in part["ck"].items():
            whole["ck"][k].extend(v)
        whole["prof"].extend(part["prof"])
    b.write(g, whole)


class _WindowSink:
    """A part's rows of `seg`, location after location, into a WindowWriter."""

    def __init__(self, window):
        self.window = window

    def write(self, lo: int, hi: int, block: np.ndarray) -> None:
        self.window.write(block)

    def close(self) -> None:
        self.window.close()


# ------------------------------------------------------------------ kernels

@njit(cache=True, nogil=True)
def innermost_segments(begin, end, cp):
    """Partition of the time covered by nested intervals (sorted by begin,
    parents first) into segments labelled by the innermost interval."""
    n = len(begin)
    s_begin = np.empty(2 * n, np.int64)
    s_end = np.empty(2 * n, np.int64)
    s_cp = np.empty(2 * n, np.int32)
    st_end = np.empty(n + 1, np.int64)
    st_cp = np.empty(n + 1, np.int32)
    depth = 0
    m = 0
    cur = np.int64(0)
    for i in range(n + 1):
        t = begin[i] if i < n else np.int64(2**62)
        while depth > 0 and st_end[depth - 1] <= t:
            e = st_end[depth - 1]
            if e > cur:
                s_begin[m] = cur
                s_end[m] = e
                s_cp[m] = st_cp[depth - 1]
                m += 1
                cur = e
            depth -= 1
        if i == n:
            break
        if depth > 0 and t > cur:
            s_begin[m] = cur
            s_end[m] = t
            s_cp[m] = st_cp[depth - 1]
            m += 1
        e = max(end[i], t)
        if depth > 0:
            e = min(e, st_end[depth - 1])
        st_end[depth] = e
        st_cp[depth] = cp[i]
        depth += 1
        cur = t
    return s_begin[:m], s_end[:m], s_cp[:m]


@njit(cache=True, nogil=True)
def running_sums(begin, end, cat, reg, ctr, n_cat, n_regions, lo, check):
    """Sums of everything before each checkpoint row (the location's first row
    and every global row index divisible by `check`), and the location's totals.

    A row's duration adds to its category, to its region's time and, when
    useful (category 0 or 1), to its region's useful time."""
    n = len(begin)
    width = n_cat + 2 * n_regions
    n_ctr = ctr.shape[1]
    n_ck = n // check + 2
    ck_row = np.empty(n_ck, np.int64)
    ck_cum = np.zeros((n_ck, width))
    ck_ctr = np.zeros((n_ck, n_ctr))
    acc = np.zeros(width)
    acc_ctr = np.zeros(n_ctr)
    k = 0
    for i in range(n):
        if i == 0 or (lo + i) % check == 0:
            ck_row[k] = lo + i
            for w in range(width):            # element loops: an array assignment compiles numba's
                ck_cum[k, w] = acc[w]         # shape checks and their messages (seconds at first use)
            for c in range(n_ctr):
                ck_ctr[k, c] = acc_ctr[c]
            k += 1
        dur = float(end[i] - begin[i])
        acc[cat[i]] += dur
        if reg[i] >= 0:
            acc[n_cat + reg[i]] += dur
            if cat[i] <= 1:
                acc[n_cat + n_regions + reg[i]] += dur
        for c in range(n_ctr):
            acc_ctr[c] += ctr[i, c]
    return ck_row[:k], ck_cum[:k], ck_ctr[:k], acc, acc_ctr


@njit(cache=True, nogil=True)
def attribute_rows(seg_begin, seg_end, seg_key, n_keys, begin, end, cat, ctr, n_cat):
    """Category time and counters of a location's rows falling in each segment
    (segments sorted and disjoint, rows sorted and disjoint), summed per key;
    row n_keys gets what lies outside every segment.

    A row's time and counts spread evenly over it; a row of no duration goes
    whole to the segment holding its instant."""
    n_ctr = ctr.shape[1]
    sums = np.zeros((n_keys + 1, n_cat))
    csums = np.zeros((n_keys + 1, n_ctr))
    j = 0
    n_seg = len(seg_begin)
    for i in range(len(begin)):
        b, e = begin[i], end[i]
        while j < n_seg and seg_end[j] <= b:
            j += 1
        if e == b:
            key = n_keys
            if j < n_seg and seg_begin[j] <= b < seg_end[j]:
                key = seg_key[j]
            for c in range(n_ctr):
                csums[key, c] += ctr[i, c]
            continue
        covered = 0
        k = j
        while k < n_seg and seg_begin[k] < e:
            overlap = min(e, seg_end[k]) - max(b, seg_begin[k])
            if overlap > 0:
                covered += overlap
                sums[seg_key[k], cat[i]] += overlap
                for c in range(n_ctr):
                    csums[seg_key[k], c] += ctr[i, c] * (overlap / (e - b))
            k += 1
        rest = (e - b) - covered
        if rest > 0:
            sums[n_keys, cat[i]] += rest
            for c in range(n_ctr):
                csums[n_keys, c] += ctr[i, c] * (rest / (e - b))
    return sums, csums


@njit(cache=True, nogil=True)
def _merge_search(a, x, right):
    """np.searchsorted(a, x, side) for x in ascending order, by one merge:
    linear and cache-friendly where binary searches of big arrays are not."""
    out = np.empty(len(x), np.int64)
    j = 0
    for i in range(len(x)):
        if right:
            while j < len(a) and a[j] <= x[i]:
                j += 1
        else:
            while j < len(a) and a[j] < x[i]:
                j += 1
        out[i] = j
    return out


@njit(cache=True, nogil=True)
def add_readings(which, time, raw, is_double, begin, end, cat, useful_last, out, last):
    """out[row, k] += each reading of counter k (which[i]: the counter of event i, -1 for
    none), where row is the row ending at or after the reading and beginning before it,
    if useful; one merge of a location's events (in time order) with its rows. The raw
    int64 values are decoded here, only those of the readings (is_double[k]: they hold
    float64 bits). A reading of k at the time of k's previous one (last[k], updated: kept
    across the calls of one location) closes the zero-length interval between them, not
    the row: Extrae stamps the exit of an MPI call shorter than its clock's tick with its
    entry's time, and that second reading counts the call's instructions (as Paraver's
    Next Evt Val windows count it: in no useful burst)."""
    as_double = raw.view(np.float64)
    j = 0
    for i in range(len(which)):
        k = which[i]
        if k < 0:
            continue
        t = time[i]
        if last[k] == t:
            continue
        last[k] = t
        while j < len(begin) and begin[j] < t:
            j += 1
        row = j - 1
        if row >= 0 and end[row] >= t and cat[row] <= useful_last:
            out[row, k] += as_double[i] if is_double[k] else np.float64(raw[i])


def add_readings_by_run(pieces, codes, is_double, begin, end, cat, useful_last, out) -> None:
    """add_readings of a location's events given as runs (type, time, value) in time order,
    as of their concatenation: each run merged with the rows from the last one beginning
    before its first event (where the merge would be by then), so the same readings are
    added to the same rows in the same order."""
    last = no_reading_yet(len(codes))
    for etype, time, raw in pieces:
        if len(time):
            s = max(int(np.searchsorted(begin, time[0], side="left")) - 1, 0)
            add_readings(code_index(etype, codes), time, raw, is_double, begin[s:], end[s:], cat[s:], useful_last,
                         out[s:], last)


def no_reading_yet(n: int) -> np.ndarray:
    """add_readings' `last` before a location's first event: a time no reading has."""
    return np.full(n, np.iinfo(np.int64).min, np.int64)


def _kept_pieces(events, lo: int, hi: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
    """The events [lo, hi) as (type, time, value) arrays, one triple a run of the rows the
    writer kept in memory (rawtables.SpillColumn.pieces), contiguous, in order; None when
    they are not kept so (in files, in the cache: read in slices)."""
    if not isinstance(events, RawTable):
        return None
    found = []
    for name in ("type", "time", "value"):
        column = events[name]
        pieces = column.pieces(lo, hi) if isinstance(column, SpillColumn) else None
        if pieces is None or (found and len(pieces) != len(found[0])):
            return None
        found.append(pieces)
    return [(np.ascontiguousarray(t), np.ascontiguousarray(x), np.ascontiguousarray(v, np.int64))
            for t, x, v in zip(*found)]


def search_sorted(a: np.ndarray, x: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted, by a merge when the queries are sorted too (they usually are)."""
    if 64 < len(x) and len(a) <= 16 * len(x) and bool((x[1:] >= x[:-1]).all()):
        return _merge_search(a, x, side == "right")
    return np.searchsorted(a, x, side=side)


# ------------------------------------------------------------------ builder

WHOLE_ROWS = 1 << 20       # tables of at most this many rows are read whole, once a column


def _whole_if_small(table):
    """A table (an h5py group or a RawTables table) whose columns are read whole at their first
    use when it is small: the builder reads each location's slices, and one read per column
    and location was most of the sums of small archives (914 spill reads, 0.15 s of CPU as
    Python kernels, for the 64 locations of an 8.6 k-event archive)."""
    return _WholeTable(table) if int(table["offsets"][-1]) <= WHOLE_ROWS else table


class _WholeTable:
    def __init__(self, table):
        self.table, self.columns = table, {}

    def __contains__(self, name: str) -> bool:
        return name in self.table

    def __getitem__(self, name: str) -> "_WholeColumn":
        if name not in self.columns:
            self.columns[name] = _WholeColumn(np.asarray(self.table[name][:]))
        return self.columns[name]


class _WholeColumn:
    """A column in memory; a slice of it is a copy, as the table's own reads are."""

    def __init__(self, values: np.ndarray):
        self.values, self.shape = values, values.shape

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key) -> np.ndarray:
        return self.values[key].copy()


class _Builder:
    def __init__(self, out: h5py.File, defs: Definitions, rows: bool = False, profile: bool = True):
        self.out, self.defs = out, defs
        self.rows, self.profile = rows, profile
        self.states = _whole_if_small(out["states"])
        self.offsets = self.states["offsets"][:]
        self.n_loc = len(self.offsets) - 1
        self.calls = _whole_if_small(out["calls"]) if "calls" in out else None
        self.events = _whole_if_small(out["events"]) if "events" in out else None
        self.call_off = self.calls["offsets"][:] if self.calls is not None else np.zeros(self.n_loc + 1, np.int64)
        self.counter_codes = sorted(c for c, et in defs.event_types.items() if et.kind == "counter"
                                    and et.name in defs.counters) if defs.counters else []
        self.class_of = class_lookup(defs.states, 64)
        # A trace whose events hold no MPI (its reader found the paradigms, MPI not among them): its
        # MPI-class states are the tracer's own synchronisation of the other paradigm, not MPI:
        # Extrae writes state 5 "Synchronization" while a thread takes or releases an OpenMP lock
        # (60000006), in the serial part too, and that is OpenMP synchronisation.
        self.no_mpi = bool(defs.paradigms) and "mpi" not in defs.paradigms
        self.sync_outside_mpi = CAT["omp_sync"] if "openmp" in defs.paradigms else CAT["other"]
        self.counter_codes_array = np.asarray(self.counter_codes, np.int64)
        self.counter_doubles = np.array([defs.event_types[c].value_type == "double" for c in self.counter_codes], bool)
        self._callpath_tables()
        # outlined functions first: an instance is keyed by its outlined function when it has one
        keys = np.concatenate([np.flatnonzero(self.cp_outlined), np.flatnonzero(self.cp_parallel & ~self.cp_outlined)])
        # regions: the outlined functions when the trace has them (Extrae), else the constructs
        n_outlined = int(self.cp_outlined.sum())
        self.n_keys = n_outlined or len(keys)
        self.too_many_regions = self.n_keys > MAX_REGIONS
        self.region_keys = keys[:MAX_REGIONS]
        self.n_regions = len(self.region_keys)
        self.key_col = np.full(len(self.cp_outlined) + 1, -1, np.int64)
        self.key_col[self.region_keys] = np.arange(self.n_regions)
        self.width = N_CAT + 2 * self.n_regions
        self.own_paths = bool(defs.flags.get("threads_grafted"))   # the reader nested threads' visits

    def _callpath_tables(self) -> None:
        d = self.defs
        n_cp = len(d.callpath_parent)
        self.cp_mpi_cat = np.full(n_cp, -1, np.int8)
        self.cp_omp = np.zeros(n_cp, bool)
        self.cp_parallel = np.zeros(n_cp, bool)
        self.cp_outlined = np.zeros(n_cp, bool)
        self.cp_flush = np.zeros(n_cp, bool)          # the tracer writing its buffers (Extrae 40000003)
        for cp in range(n_cp):
            r = d.regions[d.callpath_region[cp]]
            if r.paradigm == "mpi":
                self.cp_mpi_cat[cp] = CAT[MPI_ROLE_CATEGORY.get(r.role, "mpi_other")]
            self.cp_omp[cp] = r.paradigm == "openmp" or r.role == "outlined"
            self.cp_parallel[cp] = r.paradigm == "openmp" and r.role == "parallel"
            self.cp_outlined[cp] = r.role == "outlined"
            self.cp_flush[cp] = r.role == "flush"

    # -------------------------------------------------------------- run
    def run(self, progress: Progress, dst: h5py.File) -> None:
        g, seg, kind = self.create(dst)
        procs = self._process_groups()
        halves = self._halves(procs) if seg is None else None
        if halves is None:
            part = self.part(procs, *(_SegmentSink(d, procs) if d is not None else None for d in (seg, kind)),
                             progress=progress)
        else:
            part = self._on_two_threads(halves, _SegmentSink(kind, procs) if kind is not None else None, progress)
        if hasattr(self.out, "done_reading"):      # RawTables: rows kept in memory can go before the write
            self.out.done_reading()
        self.write(g, part)

    def _halves(self, procs: list[list[list[int]]]) -> tuple[list, list] | None:
        """The processes in two consecutive halves of about equal work, for two threads
        (_on_two_threads), or None: one thread (fewer than two processes, fewer than
        SPLIT_ROWS state rows, the kernels run as Python under one GIL)."""
        from popview import jit

        processes = [p_locs for group in procs for p_locs in group]
        if len(processes) < 2 or int(self.offsets[-1]) < SPLIT_ROWS or jit.is_interpreted():
            return None
        ev_off = self._event_offsets() if self.events is not None else np.zeros(self.n_loc + 1, np.int64)
        weight = np.array([sum(int(self.offsets[loc + 1] - self.offsets[loc])
                               + int(ev_off[loc + 1] - ev_off[loc]) // EVENTS_PER_STATE for loc in p_locs)
                           for p_locs in processes], np.float64)
        # the cut nearest the half (the first cumulative weight reaching it put 7 of 16 equal
        # processes in the first half and 9 in the second)
        cut = int(np.argmin(np.abs(np.cumsum(weight)[:-1] - weight.sum() / 2))) + 1
        return processes[:cut], processes[cut:]

    def _on_two_threads(self, halves: tuple[list, list], kinds, progress: Progress) -> dict:
        """part() of each half of the processes, the second by a thread of its own (the
        kernels and numpy's work on whole columns release the GIL): the sums of a conversion
        ran on one core after the tables (0.17 s of the 143 MB trace's 1 s, 1.3 s at 1 GB).
        The second half's `kind` rows are kept (2 bytes a state row) and written after the
        first's, so the dataset is written in row order as before; the results are joined
        in order, as join_parts does: the same group as part() of all the processes. The
        thread reports no progress but sees a cancel, and is stopped and waited for when
        this half fails."""
        from popview import jit
        from popview.threads import Pool

        self._read_whole_once()
        stop = threading.Event()
        quiet = Progress(None, _Either(progress.cancel, stop))
        later = _KeptRows() if kinds is not None else None
        with Pool(1, thread_name_prefix="popview-sums") as pool:
            job = None
            try:
                job = pool.submit(jit.carry(self.part), [halves[1]], None, later, quiet)
                first = self.part([halves[0]], None, _Unclosed(kinds) if kinds is not None else None, progress)
                second = job.result()
            except BaseException:
                stop.set()
                if job is not None:
                    job.exception()          # waited for: it reads what the conversion removes next
                raise
        if kinds is not None:
            later.replay(kinds)
            kinds.close()
        return self.joined(halves, [first, second])

    def _read_whole_once(self) -> None:
        """The columns of tables read whole (_WholeTable), read now: once, not by each thread."""
        for table in (self.states, self.events, self.calls):
            if isinstance(table, _WholeTable):
                for name in ("begin", "end", "state", "time", "type", "value", "callpath"):
                    if name in table:
                        table[name]
        if self.events is not None:
            self._event_offsets()

    def joined(self, halves: list, parts: list[dict]) -> dict:
        """part()'s results of consecutive runs of processes joined in order (as join_parts does):
        what part() of all of them gives."""
        whole = parts[0]
        for procs, part in zip(halves[1:], parts[1:]):
            locs = [loc for p_locs in procs for loc in p_locs]
            whole["totals"][locs] = part["totals"][locs]
            whole["ctr_totals"][locs] = part["ctr_totals"][locs]
            for k, v in part["ck"].items():
                whole["ck"][k].extend(v)
            whole["prof"].extend(part["prof"])
        return whole

    def create(self, dst: h5py.File) -> tuple[h5py.Group, h5py.Dataset | None, h5py.Dataset | None]:
        """The group with its attributes and, sized for every state row, with the rows its `seg`
        dataset, with the profile its `kind` (each row's category and region: seg's word
        column without the duration, `(region + 1) << 8 | category` as uint16, what the
        replay reads: the whole-run metrics need no window sums)."""
        n = int(self.offsets[-1])
        n_ctr = self.n_ctr
        g = dst.create_group("cumulative")
        g.attrs["categories"] = json.dumps(CATEGORIES)
        g.attrs["counters"] = json.dumps([self.defs.event_types[c].name for c in self.counter_codes]
                                         + list(PSEUDO_COUNTERS))
        g.attrs["regions"] = json.dumps([int(k) for k in self.region_keys])
        g.attrs["check"] = CHECK
        if self.too_many_regions and self.profile:        # said once, by the conversion
            self.defs.flags["parallel_regions_without_sums"] = int(self.n_keys - MAX_REGIONS)
            self.defs.warn(f"{self.n_keys} OpenMP parallel regions, more than {MAX_REGIONS}: per-region figures "
                           f"cover the first {MAX_REGIONS}, the others are under 'Outside the listed regions'")
        # Zstd without the shuffle filter: as small here, and a window's slab reads decompress 3x faster;
        # level -1 compresses these rows 1.6x faster than 1 (2.2x than 3), for 5 % more bytes
        kind = None
        if self.profile:
            kind = g.create_dataset("kind", shape=(n,), dtype=np.uint16, chunks=(max(1, min(KIND_CHUNK, n)),),
                                    **compression())
        if not self.rows:
            return g, None, kind
        seg = g.create_dataset("seg", shape=(n, 2 + n_ctr), dtype=np.int64,
                               chunks=(min(CHECK, max(n, 1)), 2 + n_ctr), **hdf5plugin.Zstd(clevel=-1), **checked())
        return g, seg, kind

    @property
    def n_ctr(self) -> int:
        return len(self.counter_codes) + len(PSEUDO_COUNTERS)

    def part(self, procs: list[list[list[int]]], sink, kinds=None, progress: Progress | None = None) -> dict:
        """The rows of `seg` of the processes `procs` (groups of processes, each its locations,
        master first) into `sink` (None: without the rows), their `kind` into `kinds` (None:
        without), and what the other datasets gather of them."""
        progress = progress or Progress()
        n_ctr = self.n_ctr
        totals = np.zeros((self.n_loc, self.width))
        ctr_totals = np.zeros((self.n_loc, n_ctr))
        ck = {"row": [], "begin": [], "cum": [], "ctr": []}
        prof = _ProfileParts(self.n_loc)
        for gi, locs in enumerate(procs):
            # each process reported (and a cancel seen there): a run's processes are often one group,
            # whose one report left the window's bar at 0 % and its Cancel unseen until the end
            for pi, p_locs in enumerate(locs):
                progress((gi + pi / max(len(locs), 1)) / max(len(procs), 1), "cumulative sums")
                master = self._calls(p_locs[0])
                instances = self._instances(master, [self._calls(loc) for loc in p_locs[1:]],
                                            self._fork_rows(p_locs[0]), self._join_times(p_locs[0]))
                per_loc = {}
                for loc in p_locs:
                    lo, hi = int(self.offsets[loc]), int(self.offsets[loc + 1])
                    rows = self._location_rows(loc, lo, hi, instances)
                    per_loc[loc] = rows
                    if hi > lo and kinds is not None:
                        kinds.write(lo, hi, ((rows["reg"] + 1) << 8 | rows["cat"]).astype(np.uint16))
                    if hi > lo and sink is not None:
                        block = np.empty((hi - lo, 2 + n_ctr), np.int64)
                        block[:, 0] = rows["begin"]
                        block[:, 1] = ((rows["end"] - rows["begin"]) << 16) | ((rows["reg"] + 1) << 8) | rows["cat"]
                        block[:, 2:] = rows["ctr"].view(np.int64)     # float64 bits: double metrics stay exact
                        sink.write(lo, hi, block)
                    totals[loc] = rows["total"]
                    ctr_totals[loc] = rows["ctr_total"]
                    if sink is not None:
                        _checkpoints(ck, lo, rows)
                if self.profile:
                    self._profile_process(p_locs, per_loc, master, prof)
        for s in (sink, kinds):
            if s is not None:
                s.close()
        return {"totals": totals, "ctr_totals": ctr_totals, "ck": ck, "prof": prof}

    def write(self, g: h5py.Group, part: dict) -> None:
        """The datasets besides `seg` from the part (or the parts joined: join_parts): the
        checkpoints with the rows, the whole-run sums and the profile with the profile."""
        if self.rows:
            _write_checkpoints(g, part["ck"], self.n_ctr, self.width)
        if self.profile:
            g.create_dataset("totals", data=part["totals"], **checked())
            g.create_dataset("ctr_totals", data=part["ctr_totals"], **checked())
            part["prof"].write(g, self)

    def _fork_rows(self, loc: int) -> tuple[np.ndarray, np.ndarray]:
        """(begin, end) of the location's Scheduling and Fork/Join state rows."""
        lo, hi = int(self.offsets[loc]), int(self.offsets[loc + 1])
        state = self.states["state"][lo:hi]
        rows = np.flatnonzero(state == FORK_JOIN)
        return self.states["begin"][lo:hi][rows], self.states["end"][lo:hi][rows]

    def _join_times(self, loc: int) -> np.ndarray:
        """Sorted times of the location's join records (events with the role THREAD_JOIN)."""
        codes = self.defs.event_codes(THREAD_JOIN)
        if not codes or self.events is None:
            return np.zeros(0, np.int64)
        off = self._event_offsets()
        lo, hi = int(off[loc]), int(off[loc + 1])
        ev = self.events
        keep = _any_of(ev["type"][lo:hi], codes)
        return np.sort(ev["time"][lo:hi][keep].astype(np.int64))

    def _instances(self, master: dict, workers: list[dict], forks: tuple, joins: np.ndarray) -> dict:
        """The process's outermost parallel-region instances with their region column.

        An instance is the master's visit of the parallel construct (outlined function
        when there is none), begun at the earliest enter of its team, and at the start
        of the master's fork state touching that: between the fork and the join, a
        worker may enter the region, even its barrier, before the master's enter is
        stamped, and a descheduled master may stamp its enter long after its fork.
        It ends at the master's join record after its leave (OTF2 ThreadJoin), when
        that comes before the master's next visit: between its team end and the join
        the master waits for its team, whose descheduled workers may stamp their
        barrier's end long after the master's leave. The master's visit of the
        construct is stretched the same way, so that a call-path focus on the region
        holds its whole team's time, the master's included."""
        empty = {"begin": np.zeros(0, np.int64), "end": np.zeros(0, np.int64), "col": np.zeros(0, np.int64)}
        cp = master["callpath"].astype(np.int64)
        idx = self._outermost_regions(master)
        if not len(idx):
            return empty
        mb, me = master["begin"], master["end"]
        key = cp[idx].copy()
        outl = np.flatnonzero(self.cp_outlined[cp])
        if len(outl):
            j = np.searchsorted(mb[outl], mb[idx], side="left")
            ok = j < len(outl)
            ok[ok] &= mb[outl[j[ok]]] < me[idx[ok]]
            key[ok] = cp[outl[j[ok]]]
        begin, end = mb[idx].astype(np.int64), me[idx].astype(np.int64)
        if len(joins):
            starts = np.sort(mb)
            nxt = np.searchsorted(starts, end, side="left")          # the master's next visit after the leave
            bound = np.where(nxt < len(starts), starts[np.minimum(nxt, len(starts) - 1)], np.iinfo(np.int64).max)
            j = np.searchsorted(joins, end, side="left")
            ok = j < len(joins)
            ok[ok] &= joins[j[ok]] <= bound[ok]
            end[ok] = joins[j[ok]]
        for calls in workers:
            w = self._outermost_regions(calls)
            if len(w):
                _widen(begin, end, calls["begin"][w].astype(np.int64), calls["end"][w].astype(np.int64))
        ends = np.sort(me)
        before = np.searchsorted(ends, mb[idx], side="right") - 1          # the master's last leave before
        last_leave = np.where(before >= 0, ends[np.maximum(before, 0)], np.iinfo(np.int64).min)
        _to_forks(begin, last_leave, *forks)
        np.maximum(begin, last_leave, out=begin)
        master["begin"] = mb.copy()
        master["begin"][idx] = begin            # the profile and the visits see the same instance
        master["end"] = me.copy()
        master["end"][idx] = end
        return {"begin": begin, "end": end, "col": self.key_col[key]}

    def _outermost_regions(self, calls: dict) -> np.ndarray:
        """Rows of `calls` that are outermost parallel constructs (outlined functions when none)."""
        cp = calls["callpath"].astype(np.int64)
        if not len(cp):
            return np.zeros(0, np.int64)
        par = self.cp_parallel[cp]
        if not par.any():
            par = self.cp_outlined[cp]
        idx = np.flatnonzero(par)
        if not len(idx):
            return idx
        runmax = np.maximum.accumulate(calls["end"][idx])
        outer = np.ones(len(idx), bool)
        outer[1:] = calls["begin"][idx[1:]] >= runmax[:-1]
        return idx[outer]

    def _process_groups(self, budget: int = BUDGET_ROWS) -> list[list[list[int]]]:
        """Processes (their locations, master first) in groups within the row budget."""
        proc = self.defs.location_process() if self.defs.locations else np.arange(self.n_loc)
        counts = np.diff(self.offsets)
        thread = self.defs.location_thread() if self.defs.locations else np.zeros(self.n_loc, np.int64)
        processes = []
        for p in sorted(set(proc.tolist())):          # not np.unique: it imports numpy.ma (16 ms)
            locs = np.flatnonzero(proc == p)
            processes.append(locs[np.argsort(thread[locs], kind="stable")].tolist())
        return by_budget(processes, [int(counts[locs].sum()) for locs in processes], budget)

    # -------------------------------------------------------------- per location
    def _location_rows(self, loc: int, lo: int, hi: int, instances: dict) -> dict:
        st = self.states
        begin, end = st["begin"][lo:hi], st["end"][lo:hi]
        state = st["state"][lo:hi]
        calls = self._calls(loc)
        mid = begin + (end - begin) // 2
        reg = _inside(instances, np.ones(len(instances["begin"]), bool), mid, instances["col"], -1)
        reg = np.where(reg >= 0, reg, -1)
        cat = self._categories(loc, begin, end, state, calls, reg >= 0)
        if (self.defs.locations[loc].thread if self.defs.locations else 0) > 0:
            _late_worker_rows(reg, cat, mid, instances)
        n_ctr = len(self.counter_codes)          # one array for both: no hstack copy (0.26 s at 10^7)
        ctr = np.zeros((len(begin), n_ctr + len(PSEUDO_COUNTERS)))
        self._counters(loc, begin, end, cat, ctr)
        self._mpi_call_counts(begin, calls, ctr[:, n_ctr:])
        ck_row, ck_cum, ck_ctr, total, ctr_total = running_sums(begin, end, cat.astype(np.int64), reg, ctr, N_CAT,
                                                                self.n_regions, lo, CHECK)
        return {"begin": begin, "end": end, "cat": cat, "reg": reg, "ctr": ctr, "ck_row": ck_row,
                "ck_cum": ck_cum, "ck_ctr": ck_ctr, "total": total, "ctr_total": ctr_total, "calls": calls}

    def _calls(self, loc: int) -> dict:
        if self.calls is None:
            return {k: np.zeros(0, np.int64) for k in ("begin", "end", "callpath")}
        lo, hi = int(self.call_off[loc]), int(self.call_off[loc + 1])
        return {k: self.calls[k][lo:hi] for k in ("begin", "end", "callpath")}

    def _categories(self, loc, begin, end, state, calls, in_instance) -> np.ndarray:
        """Each row's category; a row in a parallel-region instance (`in_instance`: from the
        fork, before the master's enter too) is in OpenMP."""
        mid = begin + (end - begin) // 2
        cls = self.class_of[np.clip(state, 0, len(self.class_of) - 1)]
        cp = calls["callpath"].astype(np.int64)
        mpi_cat = _inside(calls, self.cp_mpi_cat[cp] >= 0, mid, self.cp_mpi_cat[cp], CAT["mpi_other"])
        in_omp = (_inside(calls, self.cp_omp[cp], mid, None) >= 0) | in_instance
        thread = self.defs.locations[loc].thread if self.defs.locations else 0
        cat = np.full(len(begin), CAT["other"], np.int8)
        cat[(cls == StateClass.GPU)] = CAT["gpu"]
        io = cls == StateClass.IO
        if self.cp_flush.any() and io.any():
            # the tracer writing its buffers (Extrae's I/O state inside its flush event) is measurement
            # overhead, not the program's file I/O: EPOCH's whole "POSIX I/O share" was Extrae's flushes
            io &= ~(_inside(calls, self.cp_flush[cp], mid, None) >= 0)
        cat[io] = CAT["io"]
        idle = cls == StateClass.IDLE
        cat[idle] = np.where(in_omp[idle] | (thread > 0), CAT["omp_idle"], CAT["idle"])
        omp_state = cls == StateClass.OPENMP
        cat[omp_state] = np.where(_any_of(state[omp_state], _OMP_SYNC_STATES), CAT["omp_sync"], CAT["omp_management"])
        mpi_state = cls == StateClass.MPI
        outside = self.sync_outside_mpi if self.no_mpi else CAT["mpi_other"]
        cat[mpi_state] = np.where(in_omp[mpi_state], CAT["omp_sync"], outside)
        in_mpi = (mpi_cat >= 0) & (cls != StateClass.USEFUL)
        cat[in_mpi] = mpi_cat[in_mpi]
        useful = cls == StateClass.USEFUL
        cat[useful] = np.where(in_omp[useful], CAT["comp_parallel"], CAT["comp_serial"])
        return cat

    def _counters(self, loc, begin, end, cat, out: np.ndarray) -> None:
        """Counter deltas of each useful row into out[:, k] (counter k; out zeros, C order, as
        wide as the counters or wider): a reading at t belongs to the row ending at t."""
        n_ctr = len(self.counter_codes)
        if not n_ctr or not len(begin):
            return
        ev = self.events
        off = self._event_offsets()
        pieces = _kept_pieces(ev, int(off[loc]), int(off[loc + 1]))
        if pieces is not None:      # without copying the events (the 143 MB trace's 150 MB: 40-60 ms of CPU)
            add_readings_by_run(pieces, self.counter_codes_array, self.counter_doubles, begin, end, cat,
                                CAT["comp_parallel"], out)
            return
        last = no_reading_yet(n_ctr)
        for lo in range(int(off[loc]), int(off[loc + 1]), EVENT_SLICE):   # in slices: bounded memory
            hi = min(lo + EVENT_SLICE, int(off[loc + 1]))
            etype, time, raw = ev["type"][lo:hi], ev["time"][lo:hi], ev["value"][lo:hi]
            add_readings(code_index(etype, self.counter_codes_array), time, np.ascontiguousarray(raw, np.int64),
                         self.counter_doubles, begin, end, cat, CAT["comp_parallel"], out, last)

    def _mpi_call_counts(self, begin, calls, out: np.ndarray) -> None:
        """Pseudo counters into out's two columns: MPI calls (all, collective) entered during each row."""
        cp = calls["callpath"].astype(np.int64)
        if not len(cp) or not len(begin):
            return
        mcat = self.cp_mpi_cat[cp]
        row = search_sorted(begin, calls["begin"], side="right") - 1
        ok = (row >= 0) & (mcat >= 0)
        out[:, 0] = np.bincount(row[ok], minlength=len(begin))
        coll = ok & ((mcat == CAT["mpi_collective"]) | (mcat == CAT["mpi_sync"]))
        out[:, 1] = np.bincount(row[coll], minlength=len(begin))

    def _is_worker(self, loc: int) -> bool:
        """A CPU thread other than its process's first (not a GPU stream or metric source)."""
        if not self.defs.locations:
            return False
        where = self.defs.locations[loc]
        return where.kind == "thread" and where.thread > 0

    def _event_offsets(self) -> np.ndarray:
        if not hasattr(self, "_ev_off"):
            self._ev_off = self.events["offsets"][:]
        return self._ev_off

    # -------------------------------------------------------------- profile
    def _profile_process(self, locs: list[int], per_loc: dict, master: dict, prof: "_ProfileParts") -> None:
        """Each thread's time goes to its process's master call path at that moment, or,
        where the reader grafted the threads' own visits below the master's fork (and
        tasks below TASKS), to the thread's own innermost call path, the master's
        filling its gaps."""
        master_segments = master_segments_of(master)
        for loc in locs:
            own = self.own_paths and loc != locs[0]
            segments = thread_segments(master_segments, per_loc[loc]["calls"] if own else None)
            rows = per_loc[loc]
            if loc != locs[0] and self._is_worker(loc):
                rows = with_idle_gaps(rows, 0, int(self.defs.t_end))
            prof.add_location(loc, rows, *segments, own_visits=own or loc == locs[0])
        p = self.defs.locations[locs[0]].process if self.defs.locations else locs[0]
        prof.add_master_calls(p, master)


def _any_of(values: np.ndarray, codes) -> np.ndarray:
    """np.isin(values, codes) for a few codes, without isin's fixed cost (about 0.1 ms a call:
    three calls a location were 5 % of a 64-location archive's conversion)."""
    codes = list(codes)
    if len(codes) > 8:
        return np.isin(values, codes)
    out = np.zeros(len(values), bool)
    for code in codes:
        out |= values == code
    return out


def with_idle_gaps(rows: dict, t_begin: int, t_end: int) -> dict:
    """A worker thread's rows for the profile, with the time of the run its records leave
    uncovered (before its first, between two, after its last) as rows of OpenMP idle time:
    Extrae writes nothing while an OpenMP worker waits for work, where the OTF2 reader
    gives a worker an Idle state from the run's begin to its end (categorised OpenMP idle,
    as every worker's idle state is). Rows sorted by begin; the counters of the gaps are 0.
    Only the profile gets these rows: `seg` and the sums keep the records as they are."""
    begin, end = rows["begin"], rows["end"]
    covered = np.maximum.accumulate(np.concatenate(([t_begin], end.astype(np.int64))))
    g_begin = covered
    g_end = np.concatenate((begin.astype(np.int64), [max(t_end, int(covered[-1]))]))
    gap = g_end > g_begin
    if not gap.any():
        return rows
    n_gap = int(gap.sum())
    g_begin, g_end = g_begin[gap], g_end[gap]
    at = np.flatnonzero(gap)                 # gap k lies before row at[k] (after the last when at[k] == len)
    pos = at + np.arange(n_gap)              # its index among the merged rows
    n = len(begin) + n_gap
    is_gap = np.zeros(n, bool)
    is_gap[pos] = True
    out = dict(rows)
    out["begin"] = np.empty(n, np.int64)
    out["end"] = np.empty(n, np.int64)
    out["cat"] = np.empty(n, rows["cat"].dtype)
    out["ctr"] = np.zeros((n, rows["ctr"].shape[1]))
    out["begin"][is_gap], out["begin"][~is_gap] = g_begin, begin
    out["end"][is_gap], out["end"][~is_gap] = g_end, end
    out["cat"][is_gap], out["cat"][~is_gap] = CAT["omp_idle"], rows["cat"]
    out["ctr"][~is_gap] = rows["ctr"]
    return out


def thread_segments(master_segments: tuple, own_calls: dict | None = None) -> tuple:
    """(begin, end, call path) of a thread's time by the call path the profile gives it:
    its process master's innermost call path (`master_segments`, from `master_segments_of`),
    under the thread's own innermost visits where the reader grafted them (`own_calls`).
    A call-path focus (the replay's too) keeps exactly these segments."""
    return master_segments if own_calls is None else _overlay(_innermost(own_calls), master_segments)


def master_segments_of(master_calls: dict) -> tuple:
    """Segments of a master's visits (begin, end, callpath; the instances of parallel
    regions begun at their fork, as the cache's `master_calls` store them)."""
    return _innermost(master_calls)


def _innermost(calls: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments of a location's time labelled by its innermost open call path."""
    begin, end = calls["begin"], calls["end"]
    if _parents_first(begin, end):
        return innermost_segments(begin, end, calls["callpath"].astype(np.int32))
    order = np.lexsort((-(end - begin), begin))
    return innermost_segments(calls["begin"][order], calls["end"][order], calls["callpath"][order].astype(np.int32))


@njit(cache=True, nogil=True)
def _parents_first(begin, end):
    """Whether intervals are sorted by begin, the longer first on equal begins."""
    for i in range(1, len(begin)):
        if begin[i] < begin[i - 1] or (begin[i] == begin[i - 1] and end[i] > end[i - 1]):
            return False
    return True


def _overlay(top: tuple, under: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The `top` segments, and the `under` ones where no top segment lies: sorted, disjoint."""
    rest = _uncovered(*under, top[0], top[1])
    begin = np.concatenate((top[0], rest[0]))
    order = np.argsort(begin, kind="stable")
    return begin[order], np.concatenate((top[1], rest[1]))[order], np.concatenate((top[2], rest[2]))[order]


@njit(cache=True, nogil=True)
def _uncovered(b, e, label, cover_b, cover_e):
    """The parts of segments [b, e) that no cover segment overlaps (both sorted and disjoint)."""
    n = len(b) + len(cover_b) + 1
    o_b = np.empty(n, np.int64)
    o_e = np.empty(n, np.int64)
    o_l = np.empty(n, np.int32)
    m = 0
    j = 0
    for i in range(len(b)):
        while j < len(cover_b) and cover_e[j] <= b[i]:
            j += 1
        cur = b[i]
        k = j
        while k < len(cover_b) and cover_b[k] < e[i]:
            if cover_b[k] > cur:
                o_b[m], o_e[m], o_l[m] = cur, cover_b[k], label[i]
                m += 1
            cur = max(cur, cover_e[k])
            k += 1
        if cur < e[i]:
            o_b[m], o_e[m], o_l[m] = cur, e[i], label[i]
            m += 1
    return o_b[:m], o_e[:m], o_l[:m]


def _late_worker_rows(reg: np.ndarray, cat: np.ndarray, mid: np.ndarray, instances: dict) -> None:
    """A worker's computation in a parallel region after its master's leave (a worker
    descheduled after the join stamps its records late) belongs to the instance it
    follows, so that each region holds all its team's useful time."""
    late = (reg < 0) & (cat == CAT["comp_parallel"])
    if not late.any() or not len(instances["begin"]):
        return
    k = np.searchsorted(instances["begin"], mid[late], side="right") - 1
    reg[np.flatnonzero(late)[k >= 0]] = instances["col"][k[k >= 0]]


def _to_forks(begin: np.ndarray, last_leave: np.ndarray, fork_begin: np.ndarray, fork_end: np.ndarray) -> None:
    """Moves each instance's begin back to the master's latest fork-state row starting
    before it, when that row lies after the master's last leave before the instance
    (fork rows sorted, disjoint): the fork of this region, not a state of an earlier one."""
    if not len(fork_begin) or not len(begin):
        return
    k = np.searchsorted(fork_begin, begin, side="right") - 1
    ok = k >= 0
    ok[ok] &= fork_begin[k[ok]] >= last_leave[ok]
    begin[ok] = np.minimum(begin[ok], fork_begin[k[ok]])


def _widen(begin: np.ndarray, end: np.ndarray, w_begin: np.ndarray, w_end: np.ndarray) -> None:
    """Moves the begin of the sorted, disjoint instances [begin, end) in place back to the
    earliest worker visit overlapping them (each visit goes to the first instance ending
    after its begin), keeping them disjoint. The end stays the master's: it leaves after the
    join, while a descheduled worker may stamp its leave long after."""
    k = np.searchsorted(end, w_begin, side="right")
    ok = k < len(begin)
    ok[ok] &= begin[k[ok]] < w_end[ok]
    np.minimum.at(begin, k[ok], w_begin[ok])
    if len(begin) > 1:
        np.maximum(begin[1:], end[:-1], out=begin[1:])


def _inside(calls: dict, select: np.ndarray, x: np.ndarray, label: np.ndarray | None,
            fallback: int = 0) -> np.ndarray:
    """For each time x: the label of the latest-starting selected interval
    containing it (`fallback` when only an enclosing one does), or -1."""
    if not len(select) or not select.any():
        return np.full(len(x), -1, np.int64)
    lab = np.zeros(len(select), np.int64) if label is None else label.astype(np.int64)
    b, e = calls["begin"], calls["end"]
    if len(x) > 1 and not bool((x[1:] >= x[:-1]).all()):
        order = np.argsort(x, kind="stable")
        out = np.empty(len(x), np.int64)
        out[order] = _inside_sorted(b, e, select, lab, x[order], fallback)
        return out
    return _inside_sorted(b, e, select, lab, x, fallback)


@njit(cache=True, nogil=True)
def _inside_sorted(b, e, select, label, x, fallback):
    """_inside for times in ascending order and intervals sorted by begin: one merge."""
    out = np.full(len(x), -1, np.int64)
    j = 0
    last = -1
    runmax = np.iinfo(np.int64).min
    for i in range(len(x)):
        while j < len(b) and b[j] <= x[i]:
            if select[j]:
                last = j
                runmax = max(runmax, e[j])
            j += 1
        if last >= 0:
            if e[last] > x[i]:
                out[i] = label[last]
            elif runmax > x[i]:
                out[i] = fallback
    return out


class _KeptRows:
    """A sink that keeps the rows written to it, to be written into another in order later."""

    def __init__(self):
        self.rows: list[tuple[int, int, np.ndarray]] = []

    def write(self, lo: int, hi: int, block: np.ndarray) -> None:
        self.rows.append((lo, hi, block))

    def close(self) -> None:
        pass

    def replay(self, sink) -> None:
        for lo, hi, block in self.rows:
            sink.write(lo, hi, block)
        self.rows = []


class _Unclosed:
    """A sink whose close() is left to its owner (more rows follow)."""

    def __init__(self, sink):
        self.sink = sink

    def write(self, lo: int, hi: int, block: np.ndarray) -> None:
        self.sink.write(lo, hi, block)

    def close(self) -> None:
        pass


class _SegmentSink:
    """Writes the rows of `seg` location by location: by compressed chunks in threads
    when the locations come in row order (they do unless a process's threads are
    numbered apart), else through h5py."""

    def __init__(self, seg: h5py.Dataset, procs: list[list[list[int]]]):
        order = [loc for group in procs for p_locs in group for loc in p_locs]
        self.seg = seg
        self.chunked = ChunkedWriter(seg) if order == sorted(order) else None

    def write(self, lo: int, hi: int, block: np.ndarray) -> None:
        if self.chunked is not None:
            self.chunked.write(block)
        else:
            self.seg[lo:hi] = block

    def close(self) -> None:
        if self.chunked is not None:
            self.chunked.close()


def _dense_ids(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(ids, return_inverse=True) for small non-negative ids (call paths),
    by a lookup table instead of a sort."""
    if not len(ids) or ids.min() < 0:
        unique, inverse = np.unique(ids, return_inverse=True)
        return unique, inverse.astype(np.int64)
    present = np.zeros(int(ids.max()) + 1, bool)
    present[ids] = True
    unique = np.flatnonzero(present)
    rank = np.cumsum(present) - 1
    return unique, rank[ids]


def _checkpoints(ck: dict, lo: int, rows: dict) -> None:
    if len(rows["begin"]):
        ck["row"].append(rows["ck_row"])
        ck["begin"].append(rows["begin"][rows["ck_row"] - lo])
        ck["cum"].append(rows["ck_cum"])
        ck["ctr"].append(rows["ck_ctr"])


def _write_checkpoints(g: h5py.Group, ck: dict, n_ctr: int, width: int) -> None:
    def cat(parts, shape, dtype):
        return np.concatenate(parts) if parts else np.zeros(shape, dtype)
    g.create_dataset("ck_row", data=cat(ck["row"], (0,), np.int64), **checked())
    g.create_dataset("ck_begin", data=cat(ck["begin"], (0,), np.int64), **checked())
    g.create_dataset("ck_cum", data=cat(ck["cum"], (0, width), np.float64), **checked())
    g.create_dataset("ck_ctr", data=cat(ck["ctr"], (0, n_ctr), np.float64), **checked())


class _ProfileParts:
    """Exclusive category time, counters and visits per (master call path, location)."""

    def __init__(self, n_loc: int):
        self.n_loc = n_loc
        self.cp, self.loc, self.cat_values, self.ctr_values = [], [], [], []
        # visits counted per location where the location is added (the part's thread): (call path,
        # -1 outside every one; location; count), one entry a call path the location entered
        self.visits_cp, self.visits_loc, self.visits_n = [], [], []
        self.master = {k: [] for k in ("callpath", "proc", "begin", "end")}

    def extend(self, other: "_ProfileParts") -> None:
        """Another part's processes after these (a distributed finish's parts, in order)."""
        for name in ("cp", "loc", "cat_values", "ctr_values", "visits_cp", "visits_loc", "visits_n"):
            getattr(self, name).extend(getattr(other, name))
        for k, v in other.master.items():
            self.master[k].extend(v)

    def add_master_calls(self, p: int, master: dict) -> None:
        self.master["callpath"].append(master["callpath"].astype(np.int32))
        self.master["proc"].append(np.full(len(master["begin"]), p, np.int32))
        self.master["begin"].append(master["begin"])
        self.master["end"].append(master["end"])

    def add_location(self, loc, rows, sb, se, scp, own_visits: bool) -> None:
        ucp, key = _dense_ids(scp)
        sums, csums = attribute_rows(sb, se, key.astype(np.int64), len(ucp), rows["begin"], rows["end"],
                                     rows["cat"].astype(np.int64), rows["ctr"], N_CAT)
        self.cp.append(np.concatenate((ucp, [-1])))
        self.loc.append(np.full(len(ucp) + 1, loc))
        self.cat_values.append(sums)
        self.ctr_values.append(csums)
        calls = rows["calls"]
        if own_visits:
            visits = calls["callpath"].astype(np.int64)
        elif len(calls["begin"]) and len(sb):
            # a worker's own calls count as visits of the master's call path at their start
            i = np.searchsorted(sb, calls["begin"], side="right") - 1
            ok = (i >= 0)
            ok[ok] &= se[i[ok]] > calls["begin"][ok]
            visits = np.where(ok, scp[np.maximum(i, 0)], -1).astype(np.int64)
        else:
            visits = np.full(len(calls["begin"]), -1, np.int64)
        # counted here, in the part's thread: the whole run's visits (3 M at 10^7 OTF2 events) were
        # concatenated and counted after every part, on one core, while the other idled
        visited, count = _counted(visits + 1, int(visits.max(initial=-1)) + 2)
        self.visits_cp.append(visited - 1)
        self.visits_loc.append(np.full(len(visited), loc, np.int64))
        self.visits_n.append(count)

    def write(self, g: h5py.Group, b: _Builder) -> None:
        from popview.cache.profile_store import write_profile
        profile = build_profile(b.defs, self.n_loc, np.concatenate(self.cp), np.concatenate(self.loc),
                                np.vstack(self.cat_values), np.vstack(self.ctr_values),
                                np.concatenate(self.visits_cp), np.concatenate(self.visits_loc),
                                np.concatenate(self.visits_n), json.loads(g.attrs["counters"]))
        write_profile(g.create_group("profile"), profile)
        self._write_master_calls(g.create_group("master_calls"), len(b.defs.callpath_parent))

    def _write_master_calls(self, g: h5py.Group, n_cp: int) -> None:
        """Master-thread visits sorted by (call path, process, begin): iterations of a region are one slice.
        Large columns are gathered a chunk at a time, each chunk compressed by the writer's threads
        (ChunkedWriter): gathered whole (fresh memory) and compressed by HDF5, the 3 M visits of the
        10^7-event OTF2 archive took 0.15-0.25 s of CPU on one core after every other part of the sums."""
        cols = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in self.master.items()}
        order = _by_callpath(cols["callpath"], cols["proc"], cols["begin"], n_cp)
        offsets = np.zeros(n_cp + 1, np.int64)
        np.cumsum(np.bincount(cols["callpath"], minlength=n_cp)[:n_cp], out=offsets[1:])
        g.create_dataset("cp_offsets", data=offsets, **checked())
        if len(order) <= 4096:
            for k in ("proc", "begin", "end"):
                g.create_dataset(k, data=cols[k][order], **checked())
            return
        sinks = []
        for k in ("proc", "begin", "end"):
            # as the tables' columns are (their chunks, each compressed by a thread): through HDF5's
            # filters, the 143 MB trace's 0.3 M visits took 16-19 ms on one core
            sinks.append((cols[k], ChunkedWriter(create_column(g, k, cols[k].dtype, len(order)))))
        for lo in range(0, len(order), MASTER_BLOCK):      # gathered in blocks: no whole fresh column
            rows = order[lo:lo + MASTER_BLOCK]
            for col, sink in sinks:
                sink.write(col[rows])
        for _, sink in sinks:
            sink.close()


def _by_callpath(callpath: np.ndarray, proc: np.ndarray, begin: np.ndarray, n_cp: int) -> np.ndarray:
    """Order by (call path, process, begin). Visits arrive by process, then begin (the
    calls table's order), so a stable sort by call path suffices: a radix sort when
    the call paths fit 16 bits."""
    if len(proc) > 1 and not _by_process_then_begin(proc, begin):
        return np.lexsort((begin, proc, callpath))
    keys = callpath.astype(np.uint16) if n_cp <= 1 << 16 else callpath
    return np.argsort(keys, kind="stable")


@njit(cache=True, nogil=True)
def _by_process_then_begin(proc, begin):
    for i in range(1, len(proc)):
        if proc[i] < proc[i - 1] or (proc[i] == proc[i - 1] and begin[i] < begin[i - 1]):
            return False
    return True


# ------------------------------------------------------------------ profile

def _counted(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_counts=True) for keys in [0, n_keys): by counting where the
    keys are few against the rows (no sort: 0.23 s on 3 M visits), else by np.unique."""
    if n_keys > max(4 * len(keys), 1 << 16):
        return np.unique(keys, return_counts=True)
    counts = np.bincount(keys, minlength=n_keys)
    present = np.flatnonzero(counts)
    return present, counts[present]


def build_profile(defs: Definitions, n_loc: int, cp, loc, cat_values, ctr_values, visits_cp, visits_loc, visits_n,
                  counter_names: list[str]):
    """A Profile over the master threads' call paths plus one root for time outside every region.
    Visits come counted: `visits_n` visits of call path `visits_cp` (-1: outside every one) by
    location `visits_loc`, one entry a pair."""
    from popview.model.definitions import Region
    from popview.model.profile import MetricDef, MetricValues, Profile, preorder

    parent = np.concatenate((np.asarray(defs.callpath_parent, np.int64), [-1]))
    regions = list(defs.regions) + [Region(name=OUTSIDE, paradigm="measurement", role="artificial")]
    region = np.concatenate((np.asarray(defs.callpath_region, np.int64), [len(regions) - 1]))
    outside = len(parent) - 1
    new = preorder(parent)
    inv = np.empty_like(new)
    inv[new] = np.arange(len(new))
    new_parent = np.where(parent[inv] >= 0, new[np.maximum(parent[inv], 0)], -1)
    n_cp = len(parent)
    cp = new[np.where(cp < 0, outside, cp)]
    metrics, values = [], {}
    for ident, name, par, cats in PROFILE_METRICS:
        v = cat_values[:, [CAT[c] for c in cats]].sum(axis=1) / 1e9
        if ident != "time" and not v.any():
            continue
        metrics.append(MetricDef(ident, name, "sec", CATEGORY_DESCRIPTIONS.get(ident, name), par, "derived"))
        values[ident] = MetricValues.from_coo(n_cp, cp, loc, v)
    vcp = new[np.where(visits_cp < 0, outside, visits_cp)]
    pair = vcp * n_loc + np.asarray(visits_loc, np.int64)      # one entry a pair: in their order
    order = np.argsort(pair, kind="stable")
    pair, count = pair[order], np.asarray(visits_n)[order]
    metrics.append(MetricDef("visits", "Visits", "occ", "Number of times a call path was entered"))
    values["visits"] = MetricValues.from_coo(n_cp, pair // n_loc, pair % n_loc, count.astype(np.float64))
    for k, name in enumerate(counter_names):
        text = (f"{name} counted during useful computation" if name not in PSEUDO_COUNTERS
                else "MPI calls entered" if name == "mpi_calls" else "MPI collective calls entered")
        metrics.append(MetricDef(name, name, "occ", text))
        values[name] = MetricValues.from_coo(n_cp, cp, loc, ctr_values[:, k])
    for mv in values.values():
        keep = mv.value != 0
        if not keep.all():
            rows = np.repeat(np.arange(n_cp), np.diff(mv.row_offsets))[keep]
            mv.row_offsets = np.zeros(n_cp + 1, np.int64)
            np.cumsum(np.bincount(rows, minlength=n_cp), out=mv.row_offsets[1:])
            mv.loc, mv.value = mv.loc[keep], mv.value[keep]
    return Profile(regions=regions, callpath_parent=new_parent, callpath_region=region[inv], n_locations=n_loc,
                   metrics=metrics, values=values)
