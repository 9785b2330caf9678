"""Data derived from the sorted records at conversion time, so that opening
and querying never rescans them: call-path intervals and whatever optional
builders (cumulative sums; the timeline pyramid when asked for, into its
companion file: overview.py) are installed, in one process or two."""
from __future__ import annotations

import importlib
import os
from pathlib import Path

import h5py
import numpy as np

from popview.cache import heap, schema
from popview.cache.callpaths import LEAVE, CallPathBuilder
from popview.cache.chunks import ChunkedWriter
from popview.cache.codes import member_rows
from popview.cache.grafting import graft_workers
from popview.cache.integrity import checked, writing
from popview.cache.progress import Progress
from popview.cache.rawtables import RawTables, SortedCopy
from popview.cache.sidecar import SideBuilder
from popview.cache.sparse import SparseIndex
from popview.cache.writer import create_column
from popview.model.definitions import Definitions, Region

# Modules with a build(out, defs, progress) function, run after the core ones.
OPTIONAL_BUILDERS = ("popview.cache.cumulative", "popview.cache.pyramid")
# The one of them that only the timeline reads: built when asked for (a conversion with the
# timeline overview, or its first use: overview.py), into the companion file, not the cache.
TIMELINE_BUILDER = "popview.cache.pyramid"


def build_all(src, out: h5py.File, defs: Definitions, progress: Progress, timeline: h5py.File | None = None) -> None:
    """The optional builders, one after the other, reading the tables from `src`
    (the raw sorted copy, or the cache itself) and writing into `out`; the timeline's
    into `timeline` (the companion being written), not built without one."""
    builders = builders_for(timeline is not None)
    for i, name in enumerate(builders):
        importlib.import_module(name).build(src, defs, progress.sub(i / len(builders), (i + 1) / len(builders)),
                                            dst=timeline if name == TIMELINE_BUILDER else out)


def build_core(out: h5py.File, defs: Definitions, progress: Progress, collected: CallPathCollector | None,
               copy: SortedCopy) -> None:
    """What the optional builders read beyond the reader's tables: the call-path
    intervals collected while the events were sorted (none when the reader wrote
    them, or without region events, as in Cube profiles, whose reader's call tree
    stays)."""
    if collected is not None:
        progress(0.0, "writing call paths")
        collected.write(out, max(defs.n_locations, 1), copy)


def optional_builders() -> list[str]:
    """The builder modules run after the core ones (each imported here: a missing one is
    an error naming it, never skipped)."""
    for name in OPTIONAL_BUILDERS:
        importlib.import_module(name)
    return list(OPTIONAL_BUILDERS)


def builders_for(timeline: bool) -> list[str]:
    """The optional builders a conversion runs: all of them with the timeline overview,
    all but its builder without."""
    return [name for name in optional_builders() if timeline or name != TIMELINE_BUILDER]


def start_early(side: SideBuilder, tables: Path, defs: Definitions) -> Path | None:
    """Give the side process the pyramid's counters before the sort when they weigh
    most (EPOCH-like runs with many counters): they read only the events, adopted
    from the spill. It builds the channels of the calls after the sort, while this
    process builds the cumulative sums and the channels of the states. Returns the
    part file it writes, or None when the counters are not worth it (see _side_share)."""
    builders = optional_builders()
    if not builders or builders[-1] != TIMELINE_BUILDER or not hasattr(importlib.import_module(builders[-1]), "merge"):
        return None
    src = RawTables(tables)
    region_events = _estimate(src, [c for c, et in defs.event_types.items() if et.kind == "region"])
    if _side_share(src, defs, calls_estimate=region_events) != "counters":
        return None
    part = tables / "early.part"
    side.submit(builders[-1], tables, part, defs, {"channels": "counters"})
    return part


def build_optional_in_parallel(tables: Path, path: Path, defs: Definitions, progress: Progress,
                               side: SideBuilder, early: Path | None = None, make_room=None,
                               timeline: Path | None = None) -> OSError | None:
    """The optional builders, some in the side process and the others here, all reading
    the raw sorted tables in the folder `tables` and writing part files whose groups
    are then joined into the cache at `path` (the timeline's into a new companion file at
    `timeline`; without one, it is not built). A last builder built in shares (with a
    `merge` function: the pyramid) builds its larger share there (see _side_share) and
    the other here, after the other builders; when the side process was given the
    counters early (its part file: `early`), it builds the channels of the calls too,
    and this process the other builders and the channels of the states (which balances
    the two on EPOCH-like runs). A write failure of the timeline overview (its part files,
    here or there, or its file: a full disk) does not stop the cache's: the overview is
    dropped and the failure returned, naming `timeline` (None: it was written)."""
    builders = builders_for(timeline is not None)
    if not builders:
        return None
    src = RawTables(tables)
    last = importlib.import_module(builders[-1])
    if early is not None:
        side_jobs = [{"channels": "calls"}]
        jobs = [(name, {}) for name in builders[:-1]] + [(builders[-1], {"channels": "states"})]
    else:
        shared = hasattr(last, "merge")       # built in shares; otherwise all of it there
        there = _side_share(src, defs) if shared else "all"
        here = {"counters": "other", "other": "counters"}.get(there)
        side_jobs = [{"channels": there} if shared else {}]
        jobs = [(name, {}) for name in builders[:-1]] + ([(builders[-1], {"channels": here})] if here else [])
    parts = [path.with_name(f"{path.name}.{i}.part") for i in range(len(jobs) + len(side_jobs))]
    joined = jobs + [(builders[-1], options) for options in side_jobs]
    if early is not None:
        parts.append(early)
        joined.append((builders[-1], {}))
    overview_files = {str(part) for (name, _), part in zip(joined, parts) if name == TIMELINE_BUILDER} | {str(timeline)}
    failed: list[OSError] = []

    def overview_failed(exc: OSError) -> bool:
        """Whether `exc` is a write failure of the overview's (kept in `failed`): the cache goes on."""
        from popview.cache import location

        if timeline is None or not location.is_write_failure(exc) or str(exc.filename) not in overview_files:
            return False
        failed.append(exc)
        return True

    try:
        for options, part in zip(side_jobs, parts[len(jobs):]):
            side.submit(builders[-1], tables, part, defs, options)
        side.no_more_jobs()
        for i, (name, options) in enumerate(jobs):
            overview = name == TIMELINE_BUILDER
            if overview and failed:
                continue
            try:
                with writing(parts[i], "w", None if overview else make_room) as dst:
                    step = progress.sub(0.6 * i / len(jobs), 0.6 * (i + 1) / len(jobs))
                    importlib.import_module(name).build(src, defs, step, dst=dst, **options)
            except OSError as exc:
                if not (overview and overview_failed(exc)):
                    raise
            heap.release_free_memory()       # what this builder freed: the next one peaks with the other process
        try:
            side.wait(progress.sub(0.6, 0.95))
        except OSError as exc:               # its jobs are the overview's: the cache's parts are here
            if not overview_failed(exc):
                raise
        progress(0.95, "gathering derived data")
        for target, mode, timeline_parts in ((path, "r+", False), (timeline, "w", True)):
            mine = [(name, part) for (name, _), part in zip(joined, parts)
                    if (name == TIMELINE_BUILDER) is timeline_parts]
            if target is None or not mine or (timeline_parts and failed):
                continue
            try:
                with writing(target, mode, None if timeline_parts else make_room) as out:
                    for name, part in mine:
                        progress.check()
                        with h5py.File(part, "r") as built:
                            _join(out, built, importlib.import_module(name))
            except OSError as exc:
                if not (timeline_parts and overview_failed(exc)):
                    raise
    finally:
        for part in parts:
            part.unlink(missing_ok=True)
    if not failed:
        return None
    Path(timeline).unlink(missing_ok=True)
    return OSError(failed[0].errno, os.strerror(failed[0].errno), str(timeline))


def _side_share(src: RawTables, defs: Definitions, calls_estimate: int | None = None) -> str:
    """The pyramid's share for the side process, while this one builds the cumulative
    sums and then the rest: without counters, all of it; when counter readings
    outnumber states and visits twice, the counters (they then weigh about as much
    as everything else); otherwise all channels but the counters (measured on EPOCH-
    and Score-P-shaped runs). Readings are estimated from the first location; visits
    are counted, or bounded by `calls_estimate` before they exist."""
    codes = [c for c, et in defs.event_types.items() if et.kind == "counter"]
    if not codes or "events" not in src:
        return "all"
    readings = _estimate(src, codes)
    others = sum(src[t]["loc"].shape[0] for t in ("states", "calls") if t in src) + (calls_estimate or 0)
    if not readings:
        return "all"
    return "counters" if readings > 2 * others else "other"


def _estimate(src: RawTables, codes: list[int]) -> float:
    """Events of these types in the whole table, from their share in the first location's."""
    if not codes:
        return 0.0
    ev = src["events"]
    off = ev["offsets"]
    first = int(np.argmax(np.diff(off) > 0))
    sample = ev["type"][int(off[first]):int(off[first + 1])]
    return float(np.isin(sample, codes).mean() * ev["type"].shape[0]) if len(sample) else 0.0


def _join(out: h5py.File, built: h5py.File, module) -> None:
    if hasattr(module, "merge"):
        module.merge(out, built)
    else:
        for group in built:
            out.copy(built[group], group)


def region_ids(defs: Definitions, etype: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Region id of each (type, value) enter event; adds regions never declared."""
    known = np.array([(r.event_type << 32) | (r.event_value & 0xFFFFFFFF) for r in defs.regions], dtype=np.int64)
    keys = (etype.astype(np.int64) << 32) | (value.astype(np.int64) & 0xFFFFFFFF)
    order = np.argsort(known)
    pos = np.searchsorted(known[order], keys)
    pos = np.minimum(pos, max(len(known) - 1, 0))
    found = (known[order][pos] == keys) if len(known) else np.zeros(len(keys), bool)
    ids = np.where(found, order[pos] if len(known) else 0, -1).astype(np.int64)
    if not found.all():
        for key in np.unique(keys[~found]):
            t, v = int(key >> 32), int(np.int64(key) & 0xFFFFFFFF)
            et = defs.event_types.get(t)
            label = et.values.get(v) if et else None
            name = label or f"{et.name if et else t} {v}"
            defs.regions.append(Region(name=name, paradigm=et.paradigm if et else "user",
                                       role=(et.region_role if et else "") or "function", event_type=t, event_value=v))
            ids[keys == key] = len(defs.regions) - 1
    return ids.astype(np.int32)


class CallPathCollector:
    """Call-path intervals built from the region events of each sorted location group
    as the writer sorts the events, so they are not read back afterwards."""

    def __init__(self, defs: Definitions):
        self.defs = defs
        self.region_types = np.array(sorted(c for c, et in defs.event_types.items() if et.kind == "region"),
                                     dtype=np.int32)
        self.builder = CallPathBuilder()
        self.parts: list[dict] = []

    def add(self, data: dict[str, np.ndarray]) -> None:
        """Events of whole locations, sorted by location then time."""
        if not len(self.region_types):
            return
        sel = member_rows(data["type"], self.region_types)
        if not len(sel):
            return
        etype, value = data["type"][sel], data["value"][sel]
        region = np.full(len(etype), LEAVE, dtype=np.int32)
        enter = value != 0
        region[enter] = region_ids(self.defs, etype[enter], value[enter])
        self.parts.append(self.builder.build(data["loc"][sel], data["time"][sel], etype, region, self.defs.t_end))

    def write(self, out: h5py.File, n_loc: int, copy: SortedCopy) -> None:
        self.prepare(n_loc, copy)
        self.store(out)

    def prepare(self, n_loc: int, copy: SortedCopy, in_memory: bool = False) -> None:
        """What the derived builders read of the call paths: their table (the workers'
        visits grafted) in the definitions and the calls in the raw copy (`in_memory`: held
        there as they are, for readers in this process only: SortedCopy.keep)."""
        if len(self.region_types):
            parent, region = self.builder.table()
            parent, region, grafted = graft_workers(self.parts, parent, region, self.defs)
            self.defs.callpath_parent, self.defs.callpath_region = parent, region
            if grafted:
                self.defs.flags["threads_grafted"] = True    # profiles follow the workers' own call paths
        self._offsets = _copy_table(copy, "calls", self.parts, n_loc, in_memory)

    def store(self, out: h5py.File) -> None:
        """The calls into the cache (after prepare), and what was found wrong in them."""
        _store_table(out, "calls", self.parts, sum(len(p["loc"]) for p in self.parts), self._offsets)
        if self.builder.unmatched:
            self.defs.warn(f"{self.builder.unmatched} region exits without a matching entry were ignored")
        if self.builder.unclosed:
            self._warn_unclosed(np.concatenate(self.builder.unclosed))

    def _warn_unclosed(self, cps: np.ndarray) -> None:
        """Visits without an exit of their own, closed at an enclosing region's exit or at the end
        of their thread: parallel regions (a fork without its join record) said apart, as what
        follows such a fork then counts inside the region."""
        d = self.defs
        region = np.asarray(d.callpath_region)[cps]
        parallel = np.array([d.regions[r].paradigm == "openmp" and d.regions[r].role == "parallel" for r in region],
                            bool)
        if parallel.any():
            d.warn(f"{int(parallel.sum())} OpenMP parallel region visits have no join (closing) record: each is "
                   "closed at the exit of the region enclosing it or at the end of its thread, and what follows "
                   "its fork until then (the next fork too) counts inside it; the trace may be cut or its tracer "
                   "stopped early")
        if (~parallel).any():
            d.warn(f"{int((~parallel).sum())} region visits have no exit record: each is closed at the exit of the "
                   "region enclosing it or at the end of its thread")


def _copy_table(copy: SortedCopy, table: str, parts: list[dict], n_loc: int, in_memory: bool = False) -> np.ndarray:
    """The table from sorted parts of whole locations into the raw copy (`in_memory`: held
    there, not written); returns its offsets."""
    counts = np.zeros(n_loc, dtype=np.int64)
    for p in parts:
        counts += np.bincount(p["loc"], minlength=n_loc)[:n_loc]
    offsets = np.zeros(n_loc + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if in_memory:
        copy.keep(table, parts, offsets)
        return offsets
    copy.begin(table)
    for p in parts:
        copy.append(table, p)
    copy.finish(table, offsets)
    return offsets


def _store_table(out: h5py.File, table: str, parts: list[dict], n: int, offsets: np.ndarray) -> None:
    """The table from sorted parts of whole locations into the cache, in place of the one there."""
    if table in out:
        del out[table]
    g = out.create_group(table)
    pos = 0
    cols = schema.columns(table)
    sinks = {name: ChunkedWriter(create_column(g, name, dt, n)) for name, dt in cols}
    index = SparseIndex(table)
    for p in parts:
        for name, _ in cols:
            sinks[name].write(p[name])
        index.add(pos, p)
        pos += len(p["loc"])
    for sink in sinks.values():
        sink.close()
    index.write(g)
    g.create_dataset("offsets", data=offsets, **checked())
