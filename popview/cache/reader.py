"""Reads a cache: definitions at once, records lazily by location and time."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import h5py
import hdf5plugin  # noqa: F401  (registers the Zstd filter the cache is written with)
import numpy as np

from popview.cache import fingerprint, integrity, schema
from popview.cache.chunk_reads import read_rows
from popview.cache.errors import CacheDamaged, CacheError
from popview.cache.nodes import Group
from popview.cache.profile_store import metric_ids, read_profile
from popview.cache.progress import Progress
from popview.model.definitions import Definitions
from popview.model.profile import Profile


TIMELINE_GROUP = "pyramid"        # pyramid.GROUP (not imported: it loads the numba kernels)
SUMS_GROUP, SUMS_ROWS = "cumulative", "seg"     # window_sums.GROUP, .ROWS


class Reader:
    """Read access to one converted experiment, every checksum of it verified first
    (integrity.py); HDF5 verifies a chunk's again whenever it is read."""

    def __init__(self, path: Path, verify: bool = True):
        self.path = Path(path)
        try:
            self.h5 = h5py.File(self.path, "r")
        except OSError as exc:
            raise CacheDamaged(f"{self.path}: not a readable cache ({integrity.first_line(exc)})") from None
        try:
            self._check_version()
            if verify:
                integrity.verify(self.h5)
            self._load()
        except CacheError:
            self.close()
            raise
        except Exception as exc:        # what the checksums cannot vouch for: bad JSON, missing groups
            self.close()
            raise CacheDamaged(f"{self.path}: cache damaged ({integrity.first_line(exc)})") from None

    def _check_version(self) -> None:
        attrs = self.h5.attrs
        if not attrs.get("complete", False):
            raise CacheError(f"{self.path}: incomplete cache")
        if int(attrs.get("schema_version", -1)) != schema.SCHEMA_VERSION:
            raise CacheError(f"{self.path}: cache schema {attrs.get('schema_version')} != {schema.SCHEMA_VERSION}")

    def _load(self) -> None:
        self._timeline: h5py.File | None = None
        self._timeline_lock = threading.Lock()
        self._sums: h5py.File | None = None
        self._sums_lock = threading.Lock()
        self.window_sums_failure: OSError | None = None   # why they could not be built (window_sums)
        self.fingerprint = str(self.h5.attrs.get("fingerprint", ""))
        g = self.h5["definitions"]
        self.definitions = Definitions.from_json_dict(
            json.loads(bytes(g["json"][:]).decode()), g["callpath_parent"][:], g["callpath_region"][:])
        self._offsets = {t: self.h5[t]["offsets"][:] for t in schema.TABLES if t in self.h5}
        self._sparse: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}

    # ---- basics ---------------------------------------------------------
    def close(self) -> None:
        for f in (getattr(self, "_timeline", None), getattr(self, "_sums", None), self.h5):
            try:
                if f is not None:
                    f.close()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def group(self, name: str) -> Group | None:
        """A derived-data group ("cumulative", a stored profile; the pyramid: see timeline) as
        numpy-only nodes (popview.cache.nodes), or None when the cache has none."""
        if name == TIMELINE_GROUP and name not in self.h5:
            found = self.timeline()
            return Group(found, found.file.filename) if found is not None else None
        return Group(self.h5[name], self.path) if name in self.h5 else None

    def timeline(self, progress: Progress | None = None) -> h5py.Group | None:
        """The timeline overview (the pyramid group: overview.py), built now from this cache
        when it has none yet (`progress` reports and cancels the build); None for a run
        without records. Safe to call from several threads: built once."""
        if TIMELINE_GROUP in self.h5:             # a cache converted before the companion existed
            return self.h5[TIMELINE_GROUP]
        if not self.has_records():
            return None
        with self._timeline_lock:
            if self._timeline is None:
                from popview.cache import overview

                self._timeline = overview.obtain(self.path, self.h5, self.definitions,
                                                 overview.cache_digest_of(self.h5), progress)
            return self._timeline[TIMELINE_GROUP]

    def timeline_found(self) -> bool:
        """Open the timeline overview when a valid one is there (its checks: overview.open_valid),
        never building it; whether timeline() answers at once now."""
        if self.timeline_open():
            return True
        from popview.cache import overview

        with self._timeline_lock:
            if self._timeline is None:
                self._timeline = overview.open_valid(self.path, overview.cache_digest_of(self.h5))
            return self._timeline is not None

    def timeline_open(self) -> bool:
        """Whether timeline() answers at once: the overview is open already (or none is needed)."""
        return TIMELINE_GROUP in self.h5 or self._timeline is not None or not self.has_records()

    def window_sums(self, progress: Progress | None = None, again: bool = False) -> Group | None:
        """The rows of the cumulative sums (the group with `seg` and the checkpoints:
        window_sums.py), built now from this cache when it has none yet (`progress` reports
        and cancels the build); None for a run without them (a profile, no states). Safe to
        call from several threads: built once. A build that cannot be written (a full disk,
        its process killed: location.cannot_build) is remembered (`window_sums_failure`) and
        raised again by the next calls without building again -- every time-window focus of
        a script or a command paid the failed build's seconds again -- unless `again`
        (a request to try again: Experiment.prepare_window_sums, the Advisor's link)."""
        own = self.h5.get(SUMS_GROUP)
        if own is None:
            return None
        if SUMS_ROWS in own:                     # a cache converted before the companion existed
            return Group(own, self.path)
        if not self.has("states"):
            return None
        with self._sums_lock:
            if self._sums is None:
                from popview.cache import companion, location, window_sums

                failed = self.window_sums_failure
                if failed is not None and not again:
                    raise type(failed)(failed.errno, failed.strerror, failed.filename)
                try:
                    self._sums = window_sums.obtain(self.path, self.h5, self.definitions,
                                                    companion.cache_digest_of(self.h5), progress)
                except OSError as exc:
                    if location.cannot_build(exc):
                        self.window_sums_failure = exc
                    raise
                self.window_sums_failure = None
            found = self._sums[SUMS_GROUP]
            return Group(found, found.file.filename)

    def window_sums_open(self) -> bool:
        """Whether window_sums() answers at once: open already, or none is needed."""
        own = self.h5.get(SUMS_GROUP)
        return own is None or SUMS_ROWS in own or self._sums is not None or not self.has("states")

    def has_records(self) -> bool:
        return any(self.has(t) for t in ("states", "events", "messages"))

    def profile(self, name: str = "profile") -> Profile | None:
        """The Profile stored under `name` ("profile" for Cube, "cumulative/profile" for traces)."""
        return read_profile(self.h5[name]) if name in self.h5 else None

    def stored_metric_ids(self) -> list[str]:
        """Ids of the metrics of a stored (Cube) profile, without reading values."""
        return metric_ids(self.h5["profile"]) if "profile" in self.h5 else []

    def has(self, table: str) -> bool:
        return table in self._offsets and self.count(table) > 0

    def count(self, table: str) -> int:
        off = self._offsets.get(table)
        return int(off[-1]) if off is not None and len(off) else 0

    def offsets(self, table: str) -> np.ndarray:
        return self._offsets[table]

    def counts_per_location(self, table: str) -> np.ndarray:
        return np.diff(self._offsets[table])

    # ---- records --------------------------------------------------------
    def read(self, table: str, locations=None, t0: int | None = None, t1: int | None = None,
             columns: list[str] | None = None) -> dict[str, np.ndarray]:
        """Rows of `table` for `locations` (default all) overlapping [t0, t1)."""
        try:
            return self._read(table, locations, t0, t1, columns)
        except OSError as exc:          # HDF5's chunk checksum: the file changed since it was opened
            raise CacheDamaged(f"{self.path}: cache damaged while reading {table} "
                               f"({integrity.first_line(exc)}); it will be converted again") from None

    def rows(self, table: str, column: str, lo: int, hi: int) -> np.ndarray:
        """Rows [lo, hi) of one column of `table`, across locations (a scan by blocks)."""
        try:
            return read_rows(self.h5[table][column], lo, hi)
        except OSError as exc:          # HDF5's chunk checksum: the file changed since it was opened
            raise CacheDamaged(f"{self.path}: cache damaged while reading {table} "
                               f"({integrity.first_line(exc)}); it will be converted again") from None

    def _read(self, table: str, locations, t0, t1, columns) -> dict[str, np.ndarray]:
        names = columns or [c for c, _ in schema.columns(table)]
        g = self.h5[table]
        off = self._offsets[table]
        if locations is None and t0 is None and t1 is None:
            return {c: read_rows(g[c]) for c in names}
        locs = range(len(off) - 1) if locations is None else np.atleast_1d(locations)
        parts = {c: [] for c in names}
        for lo, hi in self._slabs(table, locs, t0, t1):
            if hi <= lo:
                continue
            rows = {c: read_rows(g[c], lo, hi) for c in set(names) | self._filter_columns(table, t0, t1)}
            keep = self._window_mask(table, rows, t0, t1)
            for c in names:
                parts[c].append(rows[c][keep] if keep is not None else rows[c])
        return {c: (np.concatenate(p) if p else np.zeros(0, dict(schema.columns(table))[c])) for c, p in parts.items()}

    def _slabs(self, table: str, locs, t0, t1) -> list[tuple[int, int]]:
        """The row slabs of `locs` in their order, consecutive ones as one (a read each)."""
        out: list[list[int]] = []
        for loc in locs:
            lo, hi = self._row_range(table, int(loc), t0, t1)
            if hi <= lo:
                continue
            if out and out[-1][1] == lo and t0 is None and t1 is None:
                out[-1][1] = hi
            else:
                out.append([lo, hi])
        return [(lo, hi) for lo, hi in out]

    @staticmethod
    def _filter_columns(table: str, t0, t1) -> set[str]:
        if t0 is None and t1 is None:
            return set()
        _, time_col, _ = schema.TABLES[table]
        cols = {time_col}
        if table in schema.INTERVAL_TABLES:
            cols.add("end")
        return cols

    @staticmethod
    def _window_mask(table: str, rows, t0, t1):
        if t0 is None and t1 is None:
            return None
        _, time_col, _ = schema.TABLES[table]
        t = rows[time_col]
        keep = np.ones(len(t), bool)
        if t1 is not None:
            keep &= t < t1
        if t0 is not None:
            keep &= (rows["end"] > t0) if table in schema.INTERVAL_TABLES else (t >= t0)
        return keep

    def _sparse_index(self, table: str):
        if table not in self._sparse:
            g = self.h5[table]
            self._sparse[table] = (g["sparse_time"][:], g["sparse_maxend"][:] if "sparse_maxend" in g else None)
        return self._sparse[table]

    def row_range(self, table: str, loc: int, t0=None, t1=None) -> tuple[int, int]:
        """[lo, hi) rows of one location that may overlap [t0, t1) (filter them by time)."""
        return self._row_range(table, loc, t0, t1)

    def _row_range(self, table: str, loc: int, t0, t1) -> tuple[int, int]:
        """Row slab of one location that may overlap [t0, t1), from the sparse index."""
        off = self._offsets[table]
        lo, hi = int(off[loc]), int(off[loc + 1])
        if hi <= lo or (t0 is None and t1 is None):
            return lo, hi
        step = schema.SPARSE_STEP
        times, maxend = self._sparse_index(table)
        k0, k1 = -(-lo // step), (hi - 1) // step + 1   # sparse entries inside [lo, hi)
        start, stop = lo, hi
        if t0 is not None and k1 > k0:
            key = maxend[k0:k1] if maxend is not None else times[k0:k1]
            j = np.searchsorted(key, t0, side="right")  # first entry ending after t0
            start = max(lo, (k0 + j - 1) * step)
        if t1 is not None and k1 > k0:
            j = np.searchsorted(times[k0:k1], t1, side="left")  # entries beginning before t1
            stop = min(hi, (k0 + j) * step) if j < k1 - k0 else hi
        return start, stop


def open_if_valid(path: Path, files: list[Path] | None, damaged=None) -> Reader | None:
    """The cache at `path` if it is complete, current, intact and of the content of
    `files` (None: of any source). A damaged one is reported to `damaged(message)`."""
    if not Path(path).exists():
        return None
    try:
        reader = Reader(path)
    except CacheDamaged as exc:
        if damaged is not None:
            damaged(str(exc))
        return None
    except CacheError:
        return None
    if files is not None and not fingerprint.matches(reader.fingerprint, files):
        reader.close()
        return None
    return reader
