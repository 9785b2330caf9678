"""The timeline's level of detail (the timeline overview: kept in a companion file of the
cache and built when first needed, or with the conversion when asked: overview.py).

Two structures in the group "pyramid":

* levels: per location and per power-of-two time bin, the dominant value of
  a channel and the share of the bin it covers (categorical channels:
  thread state, innermost call path, MPI call, OpenMP construct), the
  longest useful burst overlapping the bin, and each counter's sum spread
  over the bins. The thread state's levels also hold the share of each bin
  any record covers ("cover"): the time a worker thread has no record (an
  OpenMP worker waiting) competes with the dominant state when the timeline
  draws (analysis/timeline_data.py). Level 0 has bins of `base_ns`, level k of base_ns * 2**k,
  so any zoom draws from about pixels-many bins per row.
* tiles: the records again, grouped by time block then location (states,
  innermost call-path pieces, counter intervals, messages as send -> receive
  intervals valued by the receiver), so the visible window of all locations
  is one contiguous slab when zoomed in.

Everything is computed from the sorted tables in bounded memory by location
groups; numba kernels do the per-record work.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import h5py
import numpy as np

from popview import jit
from popview.cache import schema
from popview.cache.chunks import ChunkedWriter, copy_rows, join_rows
from popview.cache.codes import code_index
from popview.cache.integrity import checked, folder_of
from popview.cache.progress import Progress
from popview.cache.writer import SORT_BUDGET_ROWS, _location_groups, compression
from popview.jit import njit, refcount_free
from popview.model.definitions import Definitions

GROUP = "pyramid"
FINEST_BINS = 16384       # bins per location at level 0 (at most)
COARSEST_BINS = 64        # the last level has at most this many
BLOCK_ROWS = 65536        # about this many tile rows per time block
MAX_BLOCKS = 4096
NONE = -1                 # no value in a bin / no record
CATEGORICAL = ("state", "callpath", "mpi", "openmp")
COVER = "cover"           # the state channel's levels: share of each bin any record covers (x 255)


# ---- kernels shared with popview.analysis.timeline_data ----------------------
ZERO = np.int64(0)          # int64 constants for the kernels' counters: a literal 0 or -1 passed to
NO_INDEX = np.int64(-1)     # a helper compiled it for that literal first, then again for int64

@njit(cache=True)
def dominant_kernel(seg_row, seg_lo, seg_hi, skip_before, begin, end, value, weight, t0, width, n_bins,
                    out_value, out_share):
    """Per (row, bin) the value covering most of the bin and that cover / width.

    Segments (row, [lo, hi)) are visited in order; within a row the records
    must be in time order (overlaps are clipped: the earlier record wins).
    A record of segment s beginning before skip_before[s] is a duplicate and
    skipped, and so is a record without value (negative). weight scales each record's cover (1 for raw records, the share
    when the records are coarser bins).
    """
    slots = 32
    vals = np.empty(slots, np.int64)
    cover = np.empty(slots, np.float64)
    t_stop = t0 + width * n_bins
    cur_row = NO_INDEX          # typed, not literal, constants: numba compiled the helpers twice
    cur_bin = NO_INDEX          # (first for the literal argument, then for int64)
    used = ZERO
    cursor = 0.0
    for s in range(len(seg_row)):
        row = seg_row[s]
        if row != cur_row:
            if used > 0:
                _flush(cur_row, cur_bin, vals, cover, used, width, out_value, out_share)
            cur_row, cur_bin, used, cursor = row, NO_INDEX, ZERO, -1e300
        for i in range(seg_lo[s], seg_hi[s]):
            if begin[i] < skip_before[s] or value[i] < 0:
                continue
            a = max(float(begin[i]), cursor, t0)
            b = min(float(end[i]), t_stop)
            if b <= a:
                continue
            cursor = max(cursor, b)
            first = min(int((a - t0) / width), n_bins - 1)
            last = min(int(np.ceil((b - t0) / width)) - 1, n_bins - 1)
            for k in range(first, last + 1):
                if k != cur_bin:
                    if used > 0:
                        _flush(cur_row, cur_bin, vals, cover, used, width, out_value, out_share)
                    cur_bin, used = k, ZERO
                    if a <= t0 + k * width and b >= t0 + (k + 1) * width:
                        out_value[row, k] = value[i]       # a bin the record covers alone
                        out_share[row, k] = min(weight[i], 1.0)
                        continue
                lo = max(a, t0 + k * width)
                hi = min(b, t0 + (k + 1) * width)
                if hi <= lo:
                    continue
                used = _add_cover(vals, cover, used, value[i], (hi - lo) * weight[i])
    if used > 0:
        _flush(cur_row, cur_bin, vals, cover, used, width, out_value, out_share)


# The helpers called for every record are compiled without reference counting
# (_nrt=False: they allocate nothing). Numba counts the references to the arrays
# passed to a function, inlined or not, with atomic operations, which made the
# kernels calling them four times slower.
@refcount_free
def _add_cover(vals, cover, used, v, c):
    """Add cover c to value v among the bin's `used` slots (a new value takes the
    next free slot; past the last slot it is ignored). Returns the slots used."""
    j = 0
    while j < used and vals[j] != v:
        j += 1
    if j < used:
        cover[j] += c
    elif used < len(vals):
        vals[used] = v
        cover[used] = c
        used += 1
    return used


@refcount_free
def _flush(row, k, vals, cover, used, width, out_value, out_share):
    best = 0
    for j in range(1, used):
        if cover[j] > cover[best]:
            best = j
    out_value[row, k] = vals[best]
    out_share[row, k] = min(cover[best] / width, 1.0)


SLOTS = 64                # distinct values tracked per finest bin


@njit(cache=True)
def finest_covers(seg_row, seg_lo, seg_hi, begin, end, value, width, n_bins):
    """The finest level as sparse histograms: per (row, bin), the time each
    value covers (overlaps clipped, the earlier record wins; records without
    value skipped). Entries come out sorted by row then bin."""
    cap = 1
    for s in range(len(seg_row)):     # a bound on the entries: bins touched, summed over records
        for i in range(seg_lo[s], seg_hi[s]):
            cap += max(min(int(np.ceil(end[i] / width)), n_bins) - max(min(int(begin[i] / width), n_bins - 1), 0), 0) + 1
    e_row = np.empty(cap, np.int32)
    e_bin = np.empty(cap, np.int32)
    e_val = np.empty(cap, np.int64)
    e_cov = np.empty(cap, np.float64)
    vals = np.empty(SLOTS, np.int64)
    cover = np.empty(SLOTS, np.float64)
    m = ZERO                    # typed constants: see dominant_kernel
    t_stop = width * n_bins
    for s in range(len(seg_row)):
        row = seg_row[s]
        cur_bin = NO_INDEX
        used = ZERO
        cursor = -1e300
        for i in range(seg_lo[s], seg_hi[s]):
            if value[i] < 0:
                continue
            a = max(max(float(begin[i]), cursor), 0.0)
            b = min(float(end[i]), t_stop)
            if b <= a:
                continue
            cursor = max(cursor, b)
            v = value[i]
            first = min(int(a / width), n_bins - 1)
            last = min(int(np.ceil(b / width)) - 1, n_bins - 1)
            for k in range(first, last + 1):
                if k != cur_bin:
                    m = _emit(row, cur_bin, vals, cover, used, e_row, e_bin, e_val, e_cov, m)
                    cur_bin = k
                    used = ZERO
                c = min(b, (k + 1) * width) - max(a, k * width)
                if c > 0:
                    used = _add_cover(vals, cover, used, v, c)
        m = _emit(row, cur_bin, vals, cover, used, e_row, e_bin, e_val, e_cov, m)
    return e_row[:m], e_bin[:m], e_val[:m], e_cov[:m]


@refcount_free
def _emit(row, k, vals, cover, used, e_row, e_bin, e_val, e_cov, m):
    for j in range(used):
        e_row[m] = row
        e_bin[m] = k
        e_val[m] = vals[j]
        e_cov[m] = cover[j]
        m += 1
    return m


@njit(cache=True)
def coarser_covers(e_row, e_bin, e_val, e_cov):
    """The next level's histograms: bins paired, covers of equal values added
    (exact: cover is additive, unlike dominance)."""
    n = len(e_row)
    o_row = np.empty(n, np.int32)
    o_bin = np.empty(n, np.int32)
    o_val = np.empty(n, np.int64)
    o_cov = np.empty(n, np.float64)
    m = 0
    start = 0
    for i in range(n):
        row, parent = e_row[i], e_bin[i] // 2
        if m == 0 or o_row[m - 1] != row or o_bin[m - 1] != parent:
            start = m
        j = start
        while j < m and o_val[j] != e_val[i]:
            j += 1
        if j < m:
            o_cov[j] += e_cov[i]
        else:
            o_row[m], o_bin[m], o_val[m], o_cov[m] = row, parent, e_val[i], e_cov[i]
            m += 1
    return o_row[:m], o_bin[:m], o_val[:m], o_cov[:m]


@njit(cache=True)
def dominant_of(e_row, e_bin, e_val, e_cov, width, out_value, out_share):
    """Per (row, bin) of a level's histograms: the value covering most (the
    first seen on a tie) and that cover / width."""
    i, n = 0, len(e_row)
    while i < n:
        j, best = i, i
        while j < n and e_row[j] == e_row[i] and e_bin[j] == e_bin[i]:
            if e_cov[j] > e_cov[best]:
                best = j
            j += 1
        out_value[e_row[i], e_bin[i]] = e_val[best]
        out_share[e_row[i], e_bin[i]] = min(e_cov[best] / width, 1.0)
        i = j


@njit(cache=True)
def reduce_kernel(seg_row, seg_lo, seg_hi, skip_before, begin, end, value, t0, width, n_bins, spread, out):
    """Per (row, bin): the maximum of the values of records overlapping the bin
    (spread False), or the sum of each value spread evenly over its interval
    (spread True, for counters). Records valued NaN are skipped; bins without
    records stay as given (NaN)."""
    t_stop = t0 + width * n_bins
    for s in range(len(seg_row)):
        row = seg_row[s]
        for i in range(seg_lo[s], seg_hi[s]):
            if begin[i] < skip_before[s] or np.isnan(value[i]):
                continue
            a = max(float(begin[i]), t0)
            b = min(float(end[i]), t_stop)
            if b < a or (b == a and end[i] > begin[i]):
                continue
            first = min(int((a - t0) / width), n_bins - 1)
            last = first if b == a else min(int(np.ceil((b - t0) / width)) - 1, n_bins - 1)
            length = float(end[i] - begin[i])
            for k in range(first, last + 1):
                old = out[row, k]
                if spread:
                    lo = max(a, t0 + k * width)
                    hi = min(b, t0 + (k + 1) * width)
                    add = value[i] * (hi - lo) / length if length > 0 else value[i]
                    if length > 0 and hi <= lo:
                        continue
                    out[row, k] = add if np.isnan(old) else old + add
                elif np.isnan(old) or value[i] > old:
                    out[row, k] = value[i]


@njit(cache=True)
def flatten_calls(loc, begin, end, callpath):
    """Nested call intervals (sorted by location, then begin, parents first)
    -> pieces of time where each call path is the innermost one."""
    n = len(loc)
    o_loc = np.empty(2 * n, np.int32)
    o_begin = np.empty(2 * n, np.int64)
    o_end = np.empty(2 * n, np.int64)
    o_cp = np.empty(2 * n, np.int32)
    st_end = np.empty(n + 1, np.int64)     # never deeper than the calls (untouched pages cost nothing)
    st_cp = np.empty(n + 1, np.int32)
    m = 0
    depth = 0
    cursor = 0
    for i in range(n + 1):
        new_loc = i == n or (i > 0 and loc[i] != loc[i - 1])
        stop = np.iinfo(np.int64).max if new_loc else begin[i]
        while depth > 0 and st_end[depth - 1] <= stop:
            depth -= 1
            if st_end[depth] > cursor:
                o_loc[m], o_begin[m], o_end[m], o_cp[m] = loc[i - 1], cursor, st_end[depth], st_cp[depth]
                m += 1
                cursor = st_end[depth]
        if i == n:
            break
        if depth > 0 and begin[i] > cursor:
            o_loc[m], o_begin[m], o_end[m], o_cp[m] = loc[i], cursor, begin[i], st_cp[depth - 1]
            m += 1
        cursor = max(cursor, begin[i]) if depth > 0 else begin[i]
        st_end[depth] = end[i]
        st_cp[depth] = callpath[i]
        depth += 1
    return o_loc[:m], o_begin[:m], o_end[:m], o_cp[:m]


# ---- lookups ------------------------------------------------------------------
def paradigm_lookup(defs: Definitions, paradigm: str) -> np.ndarray:
    """Call path -> its nearest ancestor-or-self whose region has `paradigm` (or NONE)."""
    parent = np.asarray(defs.callpath_parent, np.int64)
    region = np.asarray(defs.callpath_region, np.int64)
    wanted = np.array([r.paradigm == paradigm for r in defs.regions] + [False], bool)
    out = np.full(len(parent), NONE, np.int64)
    for cp in range(len(parent)):          # parents precede children: one pass over the small table
        if wanted[region[cp]]:
            out[cp] = cp
        elif parent[cp] >= 0:
            out[cp] = out[parent[cp]]
    return out


def counter_codes(defs: Definitions) -> list[int]:
    """Event types of the counters the run recorded (all declared ones if unknown)."""
    codes = {defs.counter_code(name) for name in defs.counters} - {None}
    if not defs.counters:
        codes = {code for code, et in defs.event_types.items() if et.kind == "counter"}
    return sorted(codes)


# ---- geometry -----------------------------------------------------------------
def base_width(t_end: int) -> int:
    """Finest bin width: the smallest power of two ns giving at most FINEST_BINS bins."""
    k = 0
    while (max(t_end, 1) + (1 << k) - 1) >> k > FINEST_BINS:
        k += 1
    return 1 << k


def level_bins(t_end: int, base: int) -> list[int]:
    bins, width = [], base
    while True:
        n = max(1, -(-max(t_end, 1) // width))
        bins.append(n)
        if n <= COARSEST_BINS:
            return bins
        width *= 2


# ---- build ----------------------------------------------------------------------
def build(out: h5py.File, defs: Definitions, progress: Progress, dst: h5py.File | None = None,
          channels: str = "all") -> None:
    """(Re)build the pyramid group from a cache's sorted tables, into `dst` (default: the cache).

    channels "counters", "other", "states" or "calls" builds a share (see _share: the
    counters read the events, the others the states, calls and messages) for
    processes that build shares at once; `merge` joins them. Always compiled: its kernels
    loop over the bins of every location (16 k at the finest level), not over records, so
    an interpreted run (popview.jit) of even a tiny trace takes seconds."""
    with jit.interpreted(False):
        _build(out, defs, progress, dst, channels)


def _build(out: h5py.File, defs: Definitions, progress: Progress, dst: h5py.File | None, channels: str) -> None:
    dst = out if dst is None else dst
    plan = layout(out, defs, channels)
    g, dsets = _create(dst, plan)
    if dsets is None:
        return
    sources = _Sources(out, defs)
    groups = plan["groups"]
    parent = folder_of(g.file)      # where the file goes (it may be written in memory)
    with tempfile.TemporaryDirectory(dir=parent, prefix=".popview-tiles-") as scratch:
        tiles = _Tiles(g, sources, plan["t_end"], plan["n_loc"], Path(scratch), plan["sizes"], _share(channels))
        for gi, (a, b) in enumerate(groups):
            progress(0.8 * gi / len(groups), "building the timeline pyramid")
            _fill_group(dsets, plan, sources, a, b)
            tiles.add(a, b)
        tiles.write(progress.sub(0.8, 1.0))


def layout(src, defs: Definitions, channels: str = "all", budget: int | None = None) -> dict:
    """What every location group of the build shares: bins, channels, the groups (of
    `budget` rows: default, a third of the writer's), the tiles' sizes (from the first
    default group, whatever the budget: see _Sources.sizes); no groups for a profile."""
    n_loc = max(len(defs.locations), 1)
    t_end = max(int(defs.t_end), 1)
    base = base_width(t_end)
    plan = {"n_loc": n_loc, "t_end": t_end, "base": base, "bins": level_bins(t_end, base), "share": channels,
            "channels": [], "numeric": [], "groups": []}
    if not any(t in src and src[t][schema.TABLES[t][0]].shape[0] for t in ("states", "events", "messages")):
        return plan                                  # a profile: no records, no timeline
    sources = _Sources(src, defs)
    mine = _share(channels)
    plan["channels"] = [c for c in CATEGORICAL if sources.has(c) and mine(c)]
    plan["numeric"] = [c for c in (["useful"] if sources.has("state") else [])
                       + [f"counter_{c}" for c in sources.counters] if mine(c)]
    counts = sources.counts()
    plan["sizes"] = sources.sizes(*_location_groups(counts, SORT_BUDGET_ROWS // 3)[0])
    plan["groups"] = _location_groups(counts, budget or SORT_BUDGET_ROWS // 3)
    plan["tile_rows"] = budget or _Tiles.BATCH_ROWS        # rows of a part of the tiles (join_parts)
    return plan


def _create(dst: h5py.File, plan: dict, rows: tuple[int, int] | None = None):
    """The group, its attributes and its levels' datasets (None for a profile); `rows`, the
    locations a part fills: when they fill no chunk of 64 locations, the datasets are
    written without filters (see _create_levels)."""
    if GROUP in dst:
        del dst[GROUP]
    g = dst.create_group(GROUP)
    g.attrs.update(base_ns=plan["base"], t_end=plan["t_end"], n_levels=len(plan["bins"]))
    g.attrs["channels"] = ",".join(plan["channels"])
    g.attrs["numeric"] = ",".join(plan["numeric"])
    if not plan["groups"]:
        return g, None
    stored = True
    if rows is not None:
        c, (a, b) = min(plan["n_loc"], 64), rows
        first = -(-a // c) * c
        stored = min(first + c, plan["n_loc"]) <= b         # a whole chunk of locations among them
    return g, _create_levels(g, plan["channels"], plan["numeric"], plan["n_loc"], plan["bins"], stored)


def _fill_group(dsets: dict, plan: dict, sources: "_Sources", a: int, b: int) -> None:
    base, bins = plan["base"], plan["bins"]
    for name in plan["channels"]:
        _fill_categorical(dsets[name], sources.records(name, a, b), a, b, base, bins)
    for name in plan["numeric"]:
        _fill_numeric(dsets[name], name.startswith("counter_"), sources.records(name, a, b), a, b, base, bins)


# ---- by parts (a finish on Dask: popview.cache.groups) ---------------------------------------
def build_part(src, defs: Definitions, plan: dict, gi: int, path, scratch) -> dict:
    """Location group `gi` of `plan` (see layout): its rows of every level into a file of its
    own at `path` (the datasets at their whole size), its tile records into raw files in the
    folder `scratch` (block after block, as _Tiles.add appends them)."""
    from popview.cache.integrity import writing   # no write fails inside HDF5 (a full disk)

    a, b = plan["groups"][gi]
    sources = _Sources(src, defs)
    scratch = Path(scratch)
    scratch.mkdir()
    with writing(path, "w") as f:
        g, dsets = _create(f, plan, (a, b))
        _fill_group(dsets, plan, sources, a, b)
        tiles = _Tiles(g, sources, plan["t_end"], plan["n_loc"], scratch, plan["sizes"], _share(plan["share"]))
        tiles.add(a, b)
        tiles.close()
    return {"h5": str(path), "a": a, "b": b,
            "tiles": {name: {"counts": tiles.counts[name][:, a:b], "runs": tiles.runs[name][0],
                             "files": {c: str(scratch / f"{name}.{c}") for c in _tile_dtypes(name)}}
                      for name in tiles.names}}


def join_parts(src, defs: Definitions, dst: h5py.File, plan: dict, built: list[dict],
               progress: Progress) -> list[dict]:
    """The group from its parts' results, in location order: the levels' rows joined by
    `join_rows` (a dataset from its parts' windows), the tiles' offsets written and their
    columns created, empty. Returns the tiles' parts to write (write_tile_part: a range of
    blocks of one channel each), whose files join_tile_parts then joins."""
    from contextlib import ExitStack

    g, dsets = _create(dst, plan)
    if dsets is None:
        return []
    with ExitStack() as stack:
        files = [stack.enter_context(h5py.File(part["h5"], "r")) for part in built]
        for i, (name, levels) in enumerate(dsets.items()):
            progress(i / max(len(dsets), 1), "joining the timeline pyramid")
            for datasets in levels:
                for dset in datasets:
                    join_rows(dset, [(f[dset.name], part["a"], part["b"]) for f, part in zip(files, built)])
    for part in built:
        Path(part["h5"]).unlink()
    tiles = _Tiles(g, _Sources(src, defs), plan["t_end"], plan["n_loc"], None, plan["sizes"], _share(plan["share"]))
    specs = []
    for name in tiles.names:
        for part in built:
            tiles.counts[name][:, part["a"]:part["b"]] += part["tiles"][name]["counts"]
            tiles.runs[name].append(part["tiles"][name]["runs"])
        tiles._write_offsets(name)
        runs = np.array(tiles.runs[name], np.int64).reshape(len(built), -1)       # (parts, blocks + 1)
        block_rows = runs.sum(axis=0)                                              # rows before each block
        n = int(block_rows[-1])
        for c, dt in _tile_dtypes(name).items():
            _tile_column(tiles.group[name], c, dt, n)
        k0 = 0
        n_blocks = len(block_rows) - 1
        while k0 < n_blocks:
            k1 = k0 + 1
            while k1 < n_blocks and block_rows[k1 + 1] - block_rows[k0] <= plan["tile_rows"]:
                k1 += 1
            if block_rows[k1] > block_rows[k0]:
                specs.append({"name": name, "k0": k0, "k1": k1, "lo": int(block_rows[k0]), "hi": int(block_rows[k1]),
                              "n": n, "runs": runs[:, k0:k1 + 1].copy(),
                              "files": [part["tiles"][name]["files"] for part in built]})
            k0 = k1
    return specs


def write_tile_part(spec: dict, path) -> dict:
    """Blocks [k0, k1) of one tile channel: each part's run of those blocks (one contiguous
    range of its file) taken block by block, part after part, as _Tiles._write_columns
    does, into a file of its own (the columns at their whole size, these rows only)."""
    from popview.cache.chunks import write_window
    from popview.cache.integrity import writing   # no write fails inside HDF5 (a full disk)
    from popview.cache.order import concat_runs
    from popview.cache.runs import read_runs

    runs = np.asarray(spec["runs"], np.int64)                     # (parts, blocks + 1), rows in each file
    sizes = runs[:, -1] - runs[:, 0]
    bases = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    starts = (bases[:, None] + runs[:, :-1] - runs[:, :1]).T.ravel()       # block-major, then part
    lengths = (runs[:, 1:] - runs[:, :-1]).T.ravel()
    lo, hi, n = spec["lo"], spec["hi"], spec["n"]
    with writing(path, "w") as f:
        for c, dt in _tile_dtypes(spec["name"]).items():
            src = np.empty(int(sizes.sum()), dt)
            for files, first, size, base in zip(spec["files"], runs[:, 0], sizes, bases):
                if size:
                    read_runs(Path(files[c]), np.array([first]), np.array([size]), src[base:base + size])
            batch = np.empty(hi - lo, dt)
            concat_runs(src, starts, lengths, batch)
            del src
            write_window(_tile_column(f, c, dt, n), lo, batch)
    return {"h5": str(path), "name": spec["name"], "lo": lo, "hi": hi}


def join_tile_parts(dst: h5py.File, built: list[dict]) -> None:
    """The tiles' columns from write_tile_part's files."""
    for part in built:
        columns = dst[GROUP]["tiles"][part["name"]]
        with h5py.File(part["h5"], "r") as f:
            for c in _tile_dtypes(part["name"]):
                copy_rows(f[c], columns[c], part["lo"], part["hi"])
        Path(part["h5"]).unlink()


def _tile_column(group: h5py.Group, name: str, dtype, n: int) -> h5py.Dataset:
    """A tile column of `n` rows (one chunk when shorter than schema.CHUNK, never empty)."""
    return group.create_dataset(name, shape=(n,), maxshape=(None,), dtype=dtype,
                                chunks=(max(1, min(n, schema.CHUNK)),), **compression())


def _share(channels: str):
    """Whether a channel is built: all of them, the counters only, all but the counters
    ("other"), or the two halves of those: the states' channels ("states") and the
    rest ("calls")."""
    if channels == "all":
        return lambda channel: True

    def counter(channel: str) -> bool:
        return channel.startswith("counter_")

    def states(channel: str) -> bool:
        return channel in ("state", "useful")

    return {"counters": counter, "other": lambda c: not counter(c), "states": states,
            "calls": lambda c: not counter(c) and not states(c)}[channels]


def merge(out: h5py.File, built: h5py.File) -> None:
    """Join a share built apart (see build) into the cache's pyramid group."""
    if GROUP not in out:
        out.copy(built[GROUP], GROUP)
        return
    g, h = out[GROUP], built[GROUP]
    for name in h:
        if name == "tiles" and "tiles" in g:
            for channel in h["tiles"]:
                g["tiles"].copy(h["tiles"][channel], channel)
        else:
            g.copy(h[name], name)
    for key, order in (("channels", list(CATEGORICAL)), ("numeric", None)):
        names = [c for c in str(g.attrs.get(key, "")).split(",") + str(h.attrs.get(key, "")).split(",") if c]
        rank = {c: i for i, c in enumerate(order)} if order else {"useful": -1}
        g.attrs[key] = ",".join(sorted(set(names), key=lambda c: (rank.get(c, 0), _code(c))))


def _code(channel: str) -> int:
    return int(channel.split("_")[1]) if channel.startswith("counter_") else 0


class _Sources:
    """Per-channel records (loc, begin, end, value) of a location range."""

    def __init__(self, out: h5py.File, defs: Definitions):
        self.out, self.defs = out, defs
        self.n_loc = max(len(defs.locations), 1)
        self.counters = counter_codes(defs)
        self.mpi = paradigm_lookup(defs, "mpi")
        self.omp = paradigm_lookup(defs, "openmp")
        self._cache: tuple | None = None
        self._counter_group: tuple[int, int] | None = None
        self._counter_runs: dict = {}
        self._slab_group: tuple[int, int] | None = None
        self._slabs: dict[tuple[str, str], np.ndarray] = {}

    def has(self, channel: str) -> bool:
        table = "states" if channel == "state" else "calls"
        if table not in self.out or self.out[table]["loc"].shape[0] == 0:
            return False
        if channel == "mpi":
            return bool((self.mpi >= 0).any())
        if channel == "openmp":
            return bool((self.omp >= 0).any())
        return True

    def sizes(self, a: int, b: int) -> dict[str, int]:
        """Records per tile channel, near enough to size the blocks: calls stand for
        the innermost call-path pieces; counters are estimated from their share of
        the events of locations [a, b)."""
        sizes = {"state": self._rows("states"), "callpath": self._rows("calls"), "messages": self._rows("messages")}
        if self.counters and "events" in self.out:
            off = self.out["events"]["offsets"]
            in_group = max(int(off[min(b, len(off) - 1)]) - int(off[a]), 1)
            scale = self._rows("events") / in_group
            for code in self.counters:
                sizes[f"counter_{code}"] = int(len(self.counter_intervals(code, a, b)[0]) * scale)
        return sizes

    def _rows(self, table: str) -> int:
        return int(self.out[table]["loc" if table != "messages" else "send_loc"].shape[0]) if table in self.out else 0

    def counts(self) -> np.ndarray:
        total = np.zeros(self.n_loc, np.int64)
        for table in ("states", "calls", "events", "messages"):
            if table in self.out:
                off = self.out[table]["offsets"][:]
                c = np.diff(off)[: self.n_loc]
                total[: len(c)] += c
        return total

    def _slab(self, table: str, a: int, b: int, cols: tuple[str, ...], keep: bool = True) -> dict[str, np.ndarray]:
        """Columns of locations [a, b); the last location group's columns are kept (unless
        `keep` is False), since every channel and level of the group reads them again."""
        g = self.out[table]
        off = g["offsets"]
        lo, hi = int(off[a]), int(off[min(b, len(off) - 1)])
        if not keep:
            return {c: g[c][lo:hi] for c in cols}
        if self._slab_group != (a, b):
            self._slab_group, self._slabs = (a, b), {}
        for c in cols:
            if (table, c) not in self._slabs:
                self._slabs[(table, c)] = g[c][lo:hi]
        return {c: self._slabs[(table, c)] for c in cols}

    def flat_calls(self, a: int, b: int):
        if self._cache is None or self._cache[0] != (a, b):
            c = self._slab("calls", a, b, ("loc", "begin", "end", "callpath"))
            self._cache = ((a, b), flatten_calls(c["loc"], c["begin"], c["end"], c["callpath"]))
        return self._cache[1]

    def records(self, channel: str, a: int, b: int):
        """(loc, begin, end, value) of `channel` for locations [a, b)."""
        if channel in ("state", "useful"):
            s = self._slab("states", a, b, ("loc", "begin", "end", "state"))
            if channel == "state":
                return s["loc"], s["begin"], s["end"], s["state"].astype(np.int64)
            keep = s["state"] == 1
            dur = (s["end"] - s["begin"])[keep].astype(np.float64)
            return s["loc"][keep], s["begin"][keep], s["end"][keep], dur
        if channel.startswith("counter_"):
            return self.counter_intervals(int(channel.split("_")[1]), a, b)
        if channel == "messages":
            m = self._slab("messages", a, b, ("send_loc", "send_time", "recv_time", "recv_loc"))
            return (m["send_loc"], m["send_time"], np.maximum(m["recv_time"], m["send_time"]),
                    m["recv_loc"].astype(np.int64))
        loc, begin, end, cp = self.flat_calls(a, b)
        if channel == "callpath":
            return loc, begin, end, cp.astype(np.int64)
        value = (self.mpi if channel == "mpi" else self.omp)[cp]
        keep = value >= 0
        return loc[keep], begin[keep], end[keep], value[keep]

    def counter_intervals(self, code: int, a: int, b: int):
        """Each reading as the interval since the previous one on its location."""
        if self._counter_group != (a, b):
            self._counter_group, self._counter_runs = None, {}      # the last group's go first
            self._counter_runs, self._counter_group = self._split_counters(a, b), (a, b)
        return self._counter_runs.get(code, (np.zeros(0, np.int32),) + (np.zeros(0, np.int64),) * 2
                                      + (np.zeros(0, np.float64),))

    def _split_counters(self, a: int, b: int) -> dict:
        """All counters' intervals of a location group in one pass over its events (read
        for this pass only: kept, they held 82 MB a location of the 1 GB trace while the
        group's channels were built from these intervals)."""
        e = self._slab("events", a, b, ("loc", "time", "type", "value"), keep=False)
        codes = np.asarray(self.counters, np.int64)
        starts, loc, prev, t, raw = split_counters(e["loc"], e["time"], code_index(e["type"], codes), e["value"],
                                                   len(codes))
        return {int(code): (loc[lo:hi], prev[lo:hi], t[lo:hi], self.defs.event_types[int(code)].decode(raw[lo:hi]))
                for code, lo, hi in zip(codes, starts[:-1], starts[1:])}


@njit(cache=True)
def split_counters(loc, time, which, value, n_codes):
    """The readings of each counter (which[i]: the counter of event i, -1 for none), one
    run per counter in (location, time) order, with the time of the previous reading of
    that counter on the location (0 for the first): a reading covers [prev, time)."""
    counts = np.zeros(n_codes + 1, np.int64)
    for i in range(len(which)):
        counts[which[i] + 1] += 1
    counts[0] = 0                        # the events of no counter
    starts = np.cumsum(counts)
    cursor = starts[:-1].copy()
    o_loc = np.empty(starts[-1], loc.dtype)
    o_prev = np.empty(starts[-1], np.int64)
    o_time = np.empty(starts[-1], np.int64)
    o_value = np.empty(starts[-1], np.int64)
    last = np.zeros(n_codes, np.int64)
    current = -1
    for i in range(len(which)):
        if loc[i] != current:
            current = loc[i]
            for k in range(n_codes):
                last[k] = 0
        k = which[i]
        if k < 0:
            continue
        j = cursor[k]
        cursor[k] += 1
        o_loc[j] = loc[i]
        o_prev[j] = last[k]
        o_time[j] = time[i]
        o_value[j] = value[i]
        last[k] = time[i]
    return starts, o_loc, o_prev, o_time, o_value


def _create_levels(g: h5py.Group, channels, numeric, n_loc: int, bins: list[int], stored: bool = True) -> dict:
    """The levels' datasets; not `stored` (a part's file whose rows fill no chunk: every
    chunk is gathered again when the parts are joined), without filters, so that neither
    its task compresses them nor the join decompresses them."""
    filters = compression() if stored else {}
    dsets = {}
    for name in channels + numeric:
        cg = g.create_group(name)
        dsets[name] = []
        for level, n in enumerate(bins):
            lg = cg.create_group(str(level))
            chunks = (min(n_loc, 64), min(n, 1024))
            if name in channels:
                v = lg.create_dataset("value", shape=(n_loc, n), dtype=np.int32, chunks=chunks,
                                      fillvalue=NONE, **filters)
                s = lg.create_dataset("share", shape=(n_loc, n), dtype=np.uint8, chunks=chunks, **filters)
                if name == "state":
                    c = lg.create_dataset(COVER, shape=(n_loc, n), dtype=np.uint8, chunks=chunks, **filters)
                    dsets[name].append((v, s, c))
                else:
                    dsets[name].append((v, s))
            else:
                v = lg.create_dataset("value", shape=(n_loc, n), dtype=np.float32, chunks=chunks,
                                      fillvalue=np.nan, **filters)
                dsets[name].append((v,))
    return dsets


def segments_by_location(loc: np.ndarray, a: int, b: int):
    """One segment per location of a (loc-sorted) slab: rows relative to a."""
    bounds = np.searchsorted(loc, np.arange(a, b + 1))
    rows = np.arange(b - a, dtype=np.int64)
    return rows, bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64), np.full(b - a, np.iinfo(np.int64).min)


def _fill_categorical(levels, recs, a: int, b: int, base: int, bins: list[int]) -> None:
    """Every level of a categorical channel: histograms of the finest bins from the
    records, each coarser level's by pairing bins, the dominant value of each."""
    loc, begin, end, value = recs
    rows, lo, hi, _ = segments_by_location(loc, a, b)
    hist = finest_covers(rows, lo, hi, begin, end, value, float(base), bins[0])
    for level, n in enumerate(bins):
        if level:
            hist = coarser_covers(*hist)
        out_v = np.full((b - a, n), NONE, np.int64)
        out_s = np.zeros((b - a, n), np.float64)
        dominant_of(*hist, float(base << level), out_v, out_s)
        levels[level][0][a:b] = out_v.astype(np.int32)
        levels[level][1][a:b] = np.round(out_s * 255).astype(np.uint8)
        if len(levels[level]) > 2:             # the share of each bin the records cover, whatever their value
            e_row, e_bin, _, e_cov = hist
            cover = np.bincount(e_row.astype(np.int64) * n + e_bin, weights=e_cov, minlength=(b - a) * n)
            levels[level][2][a:b] = np.round(np.clip(cover.reshape(b - a, n) / float(base << level), 0.0, 1.0)
                                             * 255).astype(np.uint8)


def _fill_numeric(levels, spread: bool, recs, a: int, b: int, base: int, bins: list[int]) -> None:
    """Level 0 of a numeric channel from the records; each coarser level from the one
    below (sums add up, maxima of maxima are maxima: exact either way)."""
    loc, begin, end, value = recs
    _, lo, hi, skip = segments_by_location(loc, a, b)
    active = np.flatnonzero(hi > lo)      # rows with records; the others are NaN at every level
    out = np.full((len(active), bins[0]), np.nan, np.float64)
    reduce_kernel(np.arange(len(active), dtype=np.int64), lo[active], hi[active], skip[active], begin, end,
                  np.asarray(value, np.float64), 0.0, float(base), bins[0], spread, out)
    levels[0][0][a:b] = _all_rows(out, active, b - a)
    for level in range(1, len(bins)):
        if out.shape[1] % 2:
            out = np.pad(out, ((0, 0), (0, 1)), constant_values=np.nan)
        out = _pair_bins(out[:, 0::2], out[:, 1::2], spread)[:, : bins[level]]
        levels[level][0][a:b] = _all_rows(out, active, b - a)


def _all_rows(values: np.ndarray, active: np.ndarray, n: int) -> np.ndarray:
    """A level's rows as stored (float32): those computed at `active`, NaN elsewhere. A
    counter is read on its own locations only (the mi300 archive: each of its 29 metrics
    on one location of 32), so only their rows are reduced and paired."""
    if len(active) == n:
        return values.astype(np.float32)
    rows = np.full((n, values.shape[1]), np.nan, np.float32)
    rows[active] = values
    return rows


def _pair_bins(left: np.ndarray, right: np.ndarray, spread: bool) -> np.ndarray:
    """Two neighbouring bins made one, NaN (no value) only where both are: their sum
    (spread) or their maximum. As np.nansum / np.nanmax over the pair computed it
    (NaN read as 0 in a sum; fmax), bit for bit, without their reductions over an axis
    of two (2.2 s of a 72 k-event archive's 8 s, its metric channels' levels)."""
    if spread:
        both = np.isnan(left) & np.isnan(right)
        out = np.where(np.isnan(left), 0.0, left)
        out += 0.0                           # numpy's sum starts from +0.0: -0.0 + -0.0 sums to 0.0
        out += np.where(np.isnan(right), 0.0, right)
        out[both] = np.nan
        return out
    with np.errstate(invalid="ignore"):
        keep_left = left >= right              # on a tie the left one, as np.nanmax's reduction (signed zeros)
    keep_left |= np.isnan(right)
    return np.where(keep_left, left, right)


# ---- tiles --------------------------------------------------------------------------
TILE_CHANNELS = ("state", "callpath")


class _Tiles:
    """Records regrouped by (time block, location): a window of all rows is one slab.

    While the levels are built, each location group's records are placed in
    (block, location, time) order and appended to scratch files, remembering
    where each block's run starts; the tiles are then written block by block,
    taking the runs of every group in turn. A channel's block length gives
    about BLOCK_ROWS rows per block."""

    BATCH_ROWS = 1 << 22         # rows gathered from the scratch files per write

    def __init__(self, g: h5py.Group, sources: _Sources, t_end: int, n_loc: int, scratch: Path,
                 sizes: dict[str, int], mine=lambda channel: True):
        self.sources, self.n_loc, self.scratch = sources, n_loc, scratch
        self.group = g.create_group("tiles")
        self.names = [c for c in TILE_CHANNELS if sources.has(c)] + [f"counter_{c}" for c in sources.counters]
        if sizes.get("messages"):
            self.names.append("messages")    # send -> receive, as intervals: the lines crossing a window
        self.names = [c for c in self.names if mine(c)]
        self.blocks = {}
        for name in self.names:
            n_blocks = int(min(MAX_BLOCKS, 1 << int(np.ceil(np.log2(max(1.0, sizes.get(name, 0) / BLOCK_ROWS))))))
            self.blocks[name] = (n_blocks, -(-t_end // n_blocks))
        self.counts = {name: np.zeros((self.blocks[name][0], n_loc), np.int64) for name in self.names}
        self.runs: dict[str, list[np.ndarray]] = {name: [] for name in self.names}   # per group: block starts
        self.files = {name: {c: open(scratch / f"{name}.{c}", "wb") for c in _tile_dtypes(name)}
                      for name in self.names} if scratch is not None else {}     # None: the layout only

    def add(self, a: int, b: int) -> None:
        """One location group's records, placed in (block, location, time) order."""
        for name in self.names:
            n_blocks, block_ns = self.blocks[name]
            loc, begin, end, value = self.sources.records(name, a, b)
            counts = np.zeros(n_blocks * (b - a), np.int64)
            count_blocks(loc - a, begin, end, block_ns, n_blocks, b - a, counts)
            counts = counts.reshape(n_blocks, b - a)
            self.counts[name][:, a:b] += counts
            starts = np.zeros(counts.size + 1, np.int64)
            np.cumsum(counts, out=starts[1:])
            out = {c: np.empty(starts[-1], dt) for c, dt in _tile_dtypes(name).items()}
            scatter_tiles(loc, begin, end, value, block_ns, n_blocks, starts[:-1].reshape(n_blocks, b - a).copy(), a,
                          out["loc"], out["begin"], out["end"], out["value"])
            self.runs[name].append(starts[::b - a])          # where each block's run starts, and the end
            for c, f in self.files[name].items():
                f.write(out[c].data)

    def close(self) -> None:
        for f in (f for files in self.files.values() for f in files.values()):
            f.close()

    def write(self, progress: Progress) -> None:
        self.close()
        for ni, name in enumerate(self.names):
            progress(ni / len(self.names), f"writing {name} tiles")
            self._write_offsets(name)
            self._write_columns(name)

    def _write_offsets(self, name: str) -> None:
        """Start row of every (block, location), the block's end last."""
        n_blocks, block_ns = self.blocks[name]
        off = np.zeros((n_blocks, self.n_loc + 1), np.int64)
        off[:, 1:] = np.cumsum(self.counts[name]).reshape(n_blocks, self.n_loc)
        off[1:, 0] = off[:-1, -1]
        cg = self.group.create_group(name)
        cg.attrs["block_ns"] = block_ns
        cg.create_dataset("offsets", data=off, **checked())

    def _write_columns(self, name: str) -> None:
        """Block by block, each group's run of the block (the groups are in location
        order), read a few million rows at a time: long runs by one pread each (the kernel
        copies from the page cache; faulting a memory map in cost twice that), short ones
        through a memory map (runs.read_runs)."""
        from popview.cache.runs import _pread_runs as read_runs

        runs = np.array(self.runs[name], np.int64).reshape(len(self.runs[name]), -1)   # (groups, blocks + 1)
        bases = np.cumsum([0] + [int(r[-1]) for r in runs])
        n = int(bases[-1])
        starts = (bases[:-1, None] + runs[:, :-1]).T.ravel()        # block-major, then group
        lengths = (runs[:, 1:] - runs[:, :-1]).T.ravel()
        keep = lengths > 0
        starts, lengths = starts[keep], lengths[keep]
        batch_ends = np.searchsorted(np.cumsum(lengths), np.arange(1, n // self.BATCH_ROWS + 2) * self.BATCH_ROWS)
        for c, dt in _tile_dtypes(name).items():
            path = self.scratch / f"{name}.{c}"
            ds = _tile_column(self.group[name], c, dt, n)
            sink, first = ChunkedWriter(ds), 0
            for last in batch_ends:
                last = min(int(last) + 1, len(starts))
                if last <= first:
                    continue
                batch = np.empty(int(lengths[first:last].sum()), dt)
                read_runs(path, starts[first:last], lengths[first:last], batch)
                sink.write(batch)
                first = last
            sink.close()
            path.unlink()


@njit(cache=True)
def _block_bounds(x, block_ns, q, lo, hi):
    """(x // block_ns, its block's bounds [lo, hi)), reusing the last ones (q, lo, hi) when
    x lies in that block: records come in time order per location, so most fall in the
    blocks of the one before and need no division (two 64-bit divisions a record were most
    of the tile kernels' time). Exact: a quotient is reused only inside its block."""
    if x < lo or x >= hi:
        q = x // block_ns
        lo = q * block_ns
        hi = lo + block_ns
    return q, lo, hi


@njit(cache=True)
def count_blocks(loc, begin, end, block_ns, n_blocks, n_loc, counts):
    """counts[block * n_loc + loc] += 1 for every block each record overlaps."""
    q0, lo0, hi0 = ZERO, ZERO, ZERO        # empty blocks: the first record divides
    q1, lo1, hi1 = ZERO, ZERO, ZERO
    for i in range(len(loc)):
        q0, lo0, hi0 = _block_bounds(begin[i], block_ns, q0, lo0, hi0)
        q1, lo1, hi1 = _block_bounds(max(end[i] - 1, begin[i]), block_ns, q1, lo1, hi1)
        for k in range(min(max(q0, 0), n_blocks - 1), min(max(q1, 0), n_blocks - 1) + 1):
            counts[k * n_loc + loc[i]] += 1


@njit(cache=True)
def scatter_tiles(loc, begin, end, value, block_ns, n_blocks, cursor, a, o_loc, o_begin, o_end, o_value):
    """Copy each record into every block it overlaps, at the cursor of its
    (block, location): records come sorted by location then time, so that
    order holds inside each block without sorting. Returns the copies made."""
    m = 0
    q0, lo0, hi0 = ZERO, ZERO, ZERO
    q1, lo1, hi1 = ZERO, ZERO, ZERO
    for i in range(len(loc)):
        q0, lo0, hi0 = _block_bounds(begin[i], block_ns, q0, lo0, hi0)
        q1, lo1, hi1 = _block_bounds(max(end[i] - 1, begin[i]), block_ns, q1, lo1, hi1)
        for k in range(min(max(q0, 0), n_blocks - 1), min(max(q1, 0), n_blocks - 1) + 1):
            dst = cursor[k, loc[i] - a]
            cursor[k, loc[i] - a] += 1
            o_loc[dst] = loc[i]
            o_begin[dst] = begin[i]
            o_end[dst] = end[i]
            o_value[dst] = value[i]
            m += 1
    return m


def _tile_dtypes(name: str) -> dict:
    value = np.float64 if name.startswith("counter_") else np.int32
    return {"loc": np.int32, "begin": np.int64, "end": np.int64, "value": value}
