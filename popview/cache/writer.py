"""Writes a cache: records arrive in any order, in chunks; finish() sorts
them by location then time in bounded memory and renames the file into
place only when everything, derived data included, is written."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import h5py
import hdf5plugin
import numpy as np

from popview._version import __version__
from popview.cache import schema
from popview.cache.progress import Progress
from popview.model.definitions import Definitions

# Rows sorted in memory at once; bounds the peak memory of finish().
SORT_BUDGET_ROWS = 4_000_000


def compression() -> dict:
    """Zstd + shuffle: ~5x faster to write than gzip at the same ratio (see docs/cache.md)."""
    return dict(**hdf5plugin.Zstd(clevel=3), shuffle=True)


def create_column(group: h5py.Group, name: str, dtype, size: int) -> h5py.Dataset:
    chunk = max(1, min(schema.CHUNK, size)) if size else schema.CHUNK
    return group.create_dataset(name, shape=(size,), maxshape=(None,), dtype=dtype,
                                chunks=(chunk,), **compression())


class _Staging:
    """Unsorted records of one table, spilled uncompressed to a scratch file."""

    def __init__(self, h5: h5py.File, table: str, n_locations_hint: int = 0):
        self.table = table
        self.group = h5.require_group(table)
        self.n = 0
        self.loc_counts = np.zeros(max(n_locations_hint, 1), dtype=np.int64)
        self.last_time: dict[int, int] = {}
        self.time_sorted = True
        self.loc_sorted = True       # locations never decrease in arrival order
        self._last_loc = -1
        self.t_max = np.iinfo(np.int64).min
        for name, dtype in schema.columns(table):
            self.group.create_dataset(name, shape=(0,), maxshape=(None,), dtype=dtype, chunks=(1 << 18,))

    def append(self, cols: dict[str, np.ndarray]) -> None:
        loc_col, time_col, _ = schema.TABLES[self.table]
        n = len(cols[loc_col])
        if n == 0:
            return
        for name, dtype in schema.columns(self.table):
            ds = self.group[name]
            ds.resize((self.n + n,))
            ds[self.n:] = np.asarray(cols[name], dtype=dtype)
        self.n += n
        locs = np.asarray(cols[loc_col], dtype=np.int64)
        if self.loc_sorted:
            self.loc_sorted = locs[0] >= self._last_loc and bool((locs[1:] >= locs[:-1]).all())
        self._last_loc = int(locs[-1])
        counts = np.bincount(locs)
        if len(counts) > len(self.loc_counts):
            self.loc_counts = np.pad(self.loc_counts, (0, len(counts) - len(self.loc_counts)))
        self.loc_counts[: len(counts)] += counts
        times = np.asarray(cols[time_col])
        self.t_max = max(self.t_max, int(times.max()))
        if self.time_sorted:
            self.time_sorted = _sorted_within_locations(locs, times, self.last_time)


def _sorted_within_locations(locs: np.ndarray, times: np.ndarray, last: dict[int, int]) -> bool:
    """True if times are non-decreasing per location, also across chunks."""
    top = int(locs.max()) + 1
    prev = np.full(max(top, max(last, default=-1) + 1), np.iinfo(np.int64).min, np.int64)
    for loc, t in last.items():
        prev[loc] = t
    from popview.cache.order import check_order  # numba loads only when writing

    ok = check_order(locs, times, prev)
    seen = np.flatnonzero(prev > np.iinfo(np.int64).min)
    last.update(zip(seen.tolist(), prev[seen].tolist()))
    return ok


class Writer:
    """Builds one cache file atomically.

    Use as a context manager: an exception (or a cancel) removes every
    temporary file, so a half-written cache is never found later.
    """

    def __init__(self, final_path: Path, fingerprint: str, n_locations_hint: int = 0):
        self.final_path = Path(final_path)
        self.final_path.parent.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        fd, tmp = tempfile.mkstemp(prefix=self.final_path.name + ".", suffix=".staging.tmp",
                                   dir=self.final_path.parent)
        os.close(fd)
        self._staging_path = Path(tmp)
        self._staging = h5py.File(self._staging_path, "w")
        self._tables: dict[str, _Staging] = {}
        self._hint = n_locations_hint
        self.definitions: Definitions | None = None
        self.extra_writers: list = []   # callables(h5py.File) writing format-specific groups
        self.unsorted_tables: list[str] = []

    # ---- input ----------------------------------------------------------
    def append(self, table: str, cols: dict[str, np.ndarray]) -> None:
        if table not in self._tables:
            self._tables[table] = _Staging(self._staging, table, self._hint)
        self._tables[table].append(cols)

    def set_definitions(self, defs: Definitions) -> None:
        self.definitions = defs

    def count(self, table: str) -> int:
        return self._tables[table].n if table in self._tables else 0

    def time_max(self) -> int:
        return max([t.t_max for t in self._tables.values()] + [0])

    # ---- output ---------------------------------------------------------
    def finish(self, progress: Progress | None = None) -> Path:
        """Sort, derive, write and rename. Returns the final path."""
        from popview.cache import derived

        progress = progress or Progress()
        if self.definitions is None:
            raise ValueError("definitions were never set")
        fd, tmp = tempfile.mkstemp(prefix=self.final_path.name + ".", suffix=".tmp", dir=self.final_path.parent)
        os.close(fd)
        tmp_path = Path(tmp)
        side = _start_side_builder(sum(t.n for t in self._tables.values()))
        try:
            with h5py.File(tmp_path, "w") as out:
                calls = self._write_tables(out, progress.sub(0.0, 0.6))
                if side is None:
                    derived.build_all(out, self.definitions, progress.sub(0.6, 0.98), calls)
                else:
                    derived.build_core(out, self.definitions, progress.sub(0.6, 0.7), calls)
            if side is not None:
                derived.build_optional_in_parallel(tmp_path, self.definitions, progress.sub(0.7, 0.98), side)
            with h5py.File(tmp_path, "r+") as out:
                _write_definitions(out, self.definitions)
                out.attrs["schema_version"] = schema.SCHEMA_VERSION
                out.attrs["popview_version"] = __version__
                out.attrs["fingerprint"] = self.fingerprint
                out.attrs["complete"] = True
            os.replace(tmp_path, self.final_path)
        except BaseException:
            tmp_path.unlink(missing_ok=True)
            self.abort()
            raise
        finally:
            if side is not None:
                side.close()
        progress(1.0, "done")
        return self.final_path

    def _write_tables(self, out: h5py.File, progress: Progress):
        """The sorted tables; returns the call paths collected from the events on the way
        (None when the reader wrote the calls itself)."""
        from popview.cache.derived import CallPathCollector

        n_loc = max(self.definitions.n_locations, 1)
        calls = None if self.count("calls") else CallPathCollector(self.definitions)
        tables = list(schema.TABLES)
        for i, table in enumerate(tables):
            stage = self._tables.get(table)
            if stage is not None and not stage.time_sorted:
                self.unsorted_tables.append(table)
            _write_sorted(out, table, stage, n_loc, progress.sub(i / len(tables), (i + 1) / len(tables)),
                          calls.add if calls is not None and table == "events" else None)
        self._close_staging()
        for table in self.unsorted_tables:
            self.definitions.warn(f"{table} records were not in time order per location; sorted")
        for write in self.extra_writers:
            write(out)
        return calls

    def _close_staging(self) -> None:
        if self._staging is not None:
            self._staging.close()
            self._staging = None
        self._staging_path.unlink(missing_ok=True)

    def abort(self) -> None:
        self._close_staging()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        return False


def _start_side_builder(rows: int):
    """A second process for derived data when the trace is big enough to gain from it."""
    from popview.cache import sidecar

    if rows < sidecar.MIN_ROWS or not sidecar.available():
        return None
    try:
        return sidecar.SideBuilder()
    except OSError:       # no process can be started here: build everything in this one
        return None


def _write_definitions(out: h5py.File, defs: Definitions) -> None:
    g = out.require_group("definitions")
    payload = json.dumps(defs.to_json_dict(), separators=(",", ":")).encode()
    g.create_dataset("json", data=np.frombuffer(payload, dtype=np.uint8), **compression())
    g.create_dataset("callpath_parent", data=np.asarray(defs.callpath_parent, np.int32))
    g.create_dataset("callpath_region", data=np.asarray(defs.callpath_region, np.int32))


def _location_groups(counts: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive location ranges [a, b) holding at most `budget` rows each
    (a single location larger than the budget forms a group of its own)."""
    groups, start, acc = [], 0, 0
    for loc, c in enumerate(counts):
        if acc and acc + c > budget:
            groups.append((start, loc))
            start, acc = loc, 0
        acc += c
    groups.append((start, len(counts)))
    return groups


def _write_sorted(out: h5py.File, table: str, stage: _Staging | None, n_loc: int, progress: Progress,
                  consumer=None) -> None:
    """The table sorted by location then time; `consumer` also gets each sorted group of
    whole locations (the call paths are built from the events that way)."""
    loc_col, time_col, cols = schema.TABLES[table]
    group = out.create_group(table)
    total = stage.n if stage is not None else 0
    counts = np.zeros(n_loc, dtype=np.int64)
    if stage is not None:
        c = stage.loc_counts[: max(n_loc, len(stage.loc_counts))]
        counts = np.pad(c, (0, max(0, n_loc - len(c))))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    group.create_dataset("offsets", data=offsets)
    dsets = {name: create_column(group, name, dtype, total) for name, dtype in cols}
    if total == 0:
        return
    groups = _location_groups(counts, SORT_BUDGET_ROWS)
    if stage.loc_sorted and stage.time_sorted:      # arrived in order: copied as it is
        for gi, (a, b) in enumerate(groups):
            progress(gi / len(groups), f"writing {table}")
            lo, hi = offsets[a], offsets[b]
            data = {name: stage.group[name][lo:hi] for name, _ in cols}
            for name, _ in cols:
                dsets[name][lo:hi] = data[name]
            if consumer is not None and hi > lo:
                consumer(data)
        progress(1.0, f"wrote {table}")
        return
    with tempfile.TemporaryDirectory(dir=Path(out.filename).parent, prefix=".popview-sort-") as scratch:
        buckets = _Buckets(stage.group, cols, loc_col, groups, stage.n, Path(scratch)) if len(groups) > 1 else None
        for gi, (a, b) in enumerate(groups):
            progress(gi / len(groups), f"sorting {table}")
            lo, hi = offsets[a], offsets[b]
            if lo == hi:
                continue
            data = buckets.read(gi) if buckets else {name: stage.group[name][:] for name, _ in cols}
            order = _sort_order(data[loc_col], data[time_col], a, b, stage.time_sorted)
            data = {name: column[order] for name, column in data.items()}
            for name, _ in cols:
                dsets[name][lo:hi] = data[name]
            if consumer is not None:
                consumer(data)
            del data, order
    progress(1.0, f"sorted {table}")


def _sort_order(loc: np.ndarray, time: np.ndarray, a: int, b: int, time_sorted: bool) -> np.ndarray:
    """Order by location then time. Rows already in time order per location need
    only a stable sort by location: a radix sort when the group spans few locations."""
    if not time_sorted:
        return np.lexsort((time, loc))
    if b - a <= 1 << 16:
        return np.argsort((loc - a).astype(np.uint16), kind="stable")
    return np.argsort(loc, kind="stable")


class _Buckets:
    """The staging rows split by location group into raw scratch files, in one
    pass: each group is then read back whole, never by rescanning the table."""

    SLAB = 1 << 22

    def __init__(self, src: h5py.Group, cols, loc_col: str, groups: list[tuple[int, int]], n: int, scratch: Path):
        self.cols, self.scratch = cols, scratch
        key_type = np.uint16 if len(groups) <= 1 << 16 else np.int64     # small keys: a radix sort
        group_of = np.repeat(np.arange(len(groups)), [b - a for a, b in groups]).astype(key_type)
        files = {}
        try:
            for s in range(0, n, self.SLAB):
                data = {name: src[name][s:s + self.SLAB] for name, _ in cols}
                group = group_of[data[loc_col]]
                order = np.argsort(group, kind="stable")
                group = group[order]
                bounds = np.flatnonzero(np.r_[True, group[1:] != group[:-1], True])
                for name, _ in cols:
                    column = data[name][order]
                    for i in range(len(bounds) - 1):
                        g = int(group[bounds[i]])
                        key = (g, name)
                        if key not in files:
                            files[key] = open(self._path(g, name), "wb")
                        files[key].write(column[bounds[i]:bounds[i + 1]].tobytes())
        finally:
            for f in files.values():
                f.close()

    def _path(self, g: int, name: str) -> Path:
        return self.scratch / f"{g}.{name}"

    def read(self, g: int) -> dict[str, np.ndarray]:
        return {name: np.fromfile(self._path(g, name), dtype=dt) if self._path(g, name).exists()
                else np.zeros(0, dt) for name, dt in self.cols}
