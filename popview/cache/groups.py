"""The end of a conversion on Dask: the tables sorted and written by location groups,
each group a task (docs/dask.md).

`Writer.finish` regroups every table by location, sorts it, compresses it and
derives from it, on one machine. With a Dask client (`Writer.finish_on`) the
regrouping, sorting and compressing run on the workers instead: a task a
group of consecutive locations of a table (the groups of the one-machine
finish: at most `SORT_BUDGET_ROWS` rows each), which

- gathers its locations' rows from every source where it lies (the pieces the
  parse tasks spilled, or the driver's own staging: all in the conversion's
  scratch folder, which the workers share), in arrival order within each
  location, and sorts them by time where they did not arrive in order;
- writes its rows into an HDF5 file of its own holding the table's columns at
  their final size (only its rows stored: whole chunks compressed and
  Fletcher32-checksummed exactly as the cache's, the chunk it shares with the
  group before or after it, if any, partially), and a raw copy of them for the
  derived builders;
- returns the sparse index of its rows and, for the events of a Paraver trace,
  the call-path visits of its region events with a call-path table of its own.

The driver joins the groups' files into the cache in location order: every
whole chunk is copied as it is stored (`read_direct_chunk` /
`write_direct_chunk`: nothing decompressed), only the chunks two groups share
are read and written through HDF5. The call-path tables are merged in group
order, which numbers every call path as the one-machine builder does (a path
new to the merge gets the next number, in the order its group met it). The
derived data are then built by parts on the workers from the groups' raw
copies (linked as segments of one column: `rawtables.SortedCopy.adopt_segments`):
the cumulative sums' whole-run part (their rows, the window sums, are built
when first needed: window_sums.py) by groups of whole processes, the timeline pyramid by
location groups, then its tiles by ranges of time blocks, each part into files
of its own, joined here the same way (`cumulative.build_part` / `join_parts`,
`pyramid.build_part` / `join_parts` / `write_tile_part` / `join_tile_parts`).
A write failure of the timeline overview's parts or file (a full disk) drops the overview
only, as on one machine: the cache is written and placed without it (`_derived_on_dask`).
The cache is renamed into place only once signed, as always; a task rerun
after a lost worker writes files of new names, and only those named by the
results that reached the driver are read.
"""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import h5py
import numpy as np

from popview.cache import schema
from popview.cache.chunks import copy_rows, write_window
from popview.cache.integrity import writing
from popview.cache.progress import Progress
from popview.cache.rawtables import RawTables, SortedCopy
from popview.cache.runs import RunIndex, save_raw
from popview.cache.sparse import SparseIndex
from popview.cache.writer import (_location_groups, _maybe_writing, _offsets, _write_sorted,
                                  create_column)


# ---- on a worker -------------------------------------------------------------------------
def slice_sources(sources, n_loc: int, groups: list[tuple[int, int]]) -> list[list]:
    """For each location group [a, b), the runs of its rows in each source (column files,
    chunks with their rows counted from the files' start): [(paths, (loc, start, length))],
    sources without rows there left out. Made once on the driver, so that a task receives
    only its own runs, not every source's chunks."""
    out = [[] for _ in groups]
    first = np.array([a for a, _ in groups], np.int64)
    last = np.array([b for _, b in groups], np.int64)
    for paths, chunks in sources:
        runs = RunIndex.from_chunks(chunks, n_loc)
        r0, r1 = runs.loc_first_run[first], runs.loc_first_run[last]
        for g in np.flatnonzero(r1 > r0).tolist():
            k = slice(int(r0[g]), int(r1[g]))
            out[g].append((paths, (runs.loc[k].copy(), runs.start[k].copy(), runs.length[k].copy())))
    return out


def gather_sources(table: str, sources, a: int, b: int) -> dict[str, np.ndarray]:
    """The rows of locations [a, b) of `table` from its sources (slice_sources: each source's
    runs of those locations, by location then arrival), by location, in arrival order
    within each (sources in their order): what `_Staging.gather` reads from one spill."""
    from popview.cache.order import place_runs
    from popview.cache.runs import read_listed

    loc_col, _, cols = schema.TABLES[table]
    reads = []
    for paths, (loc, start, length) in sources:
        counts = np.bincount(loc - a, weights=length, minlength=b - a).astype(np.int64)
        data = {name: read_listed(None if name == loc_col else Path(paths[name]), dtype, loc, start, length)
                for name, dtype in cols}
        reads.append((data, counts))
    if not reads:
        return schema.empty(table)
    if len(reads) == 1:
        return reads[0][0]
    counts = np.stack([c for _, c in reads])                       # (sources, locations)
    per_loc = counts.sum(axis=0)
    loc_start = np.concatenate(([0], np.cumsum(per_loc)[:-1]))
    dst = loc_start + np.concatenate((np.zeros((1, b - a), np.int64), np.cumsum(counts, axis=0)[:-1]))
    src = np.concatenate((np.zeros((len(reads), 1), np.int64), np.cumsum(counts, axis=1)[:, :-1]), axis=1)
    out = {name: np.empty(int(per_loc.sum()), dtype) for name, dtype in cols}
    for s, (data, _) in enumerate(reads):
        for name, _ in cols:
            place_runs(data[name], src[s], counts[s], out[name], dst[s])
    return out


def sort_group(spec: dict) -> dict:
    """A Dask task: one location group of one table gathered, sorted, written (see the
    module's text). Returns the names of its files and what the driver joins."""
    table, a, b, lo, hi = spec["table"], spec["a"], spec["b"], spec["lo"], spec["hi"]
    loc_col, time_col, cols = schema.TABLES[table]
    data = gather_sources(table, spec["sources"], a, b)
    if len(data[loc_col]) != hi - lo:
        raise RuntimeError(f"{table}: locations [{a}, {b}) gave {len(data[loc_col])} rows, not {hi - lo}")
    if not spec["time_sorted"]:
        order = np.lexsort((data[time_col], data[loc_col]))
        data = {name: column[order] for name, column in data.items()}
    stem = Path(spec["folder"]) / f"{table}.{spec['index']:05d}-{secrets.token_hex(4)}"
    h5 = stem.with_name(stem.name + ".h5")
    with writing(h5, "w") as f:
        for name, dtype in cols:
            write_window(create_column(f, name, dtype, spec["total"]), lo, data[name])
    raw = {}
    for name, dtype in cols:
        raw[name] = str(stem.with_name(f"{stem.name}.{name}"))
        save_raw(raw[name], np.ascontiguousarray(data[name], dtype))
    index = SparseIndex(table)
    index.add(lo, data)
    result = {"h5": str(h5), "raw": raw, "lo": lo, "hi": hi, "sparse": index.samples()}
    if spec.get("defs") is not None:
        result["calls"] = _local_call_paths(_definitions(spec["defs"]), data)
    return result


def _local_call_paths(defs, events: dict) -> dict:
    """The call-path visits of a group's region events, numbered by a table of the group's
    own, with the regions the group found undeclared (the driver renumbers both)."""
    from popview.cache.derived import CallPathCollector

    declared = len(defs.regions)
    collector = CallPathCollector(defs)
    collector.add(events)
    parent, region = collector.builder.table()
    return {"parts": collector.parts, "parent": parent, "region": region, "unmatched": collector.builder.unmatched,
            "unclosed": collector.builder.unclosed, "new_regions": defs.regions[declared:]}


# ---- on the driver ---------------------------------------------------------------------------
class _CallPathMerge:
    """The groups' call-path tables merged in group order (see the module's text)."""

    def __init__(self, defs):
        self.defs = defs
        self.declared = len(defs.regions)
        self.added: dict[tuple[int, int], int] = {}
        self.ids: dict[tuple[int, int], int] = {}
        self.parent: list[int] = []
        self.region: list[int] = []
        self.parts: list[dict] = []
        self.unmatched = 0
        self.unclosed: list[np.ndarray] = []

    def add(self, found: dict) -> None:
        regions = np.arange(self.declared + len(found["new_regions"]), dtype=np.int64)
        for k, r in enumerate(found["new_regions"]):
            key = (r.event_type, r.event_value)
            if key not in self.added:
                self.defs.regions.append(r)
                self.added[key] = len(self.defs.regions) - 1
            regions[self.declared + k] = self.added[key]
        renumber = np.empty(len(found["parent"]), np.int32)
        for i, (p, r) in enumerate(zip(found["parent"].tolist(), found["region"].tolist())):   # call paths
            key = (int(renumber[p]) if p >= 0 else -1, int(regions[r]))
            if key not in self.ids:
                self.ids[key] = len(self.parent)
                self.parent.append(key[0])
                self.region.append(key[1])
            renumber[i] = self.ids[key]
        for part in found["parts"]:
            part["callpath"] = renumber[part["callpath"]] if len(part["callpath"]) else part["callpath"]
            self.parts.append(part)
        self.unmatched += found["unmatched"]
        self.unclosed.extend(renumber[u] for u in found["unclosed"])

    def collector(self):
        """A CallPathCollector holding the merged visits and table, to write them."""
        from popview.cache.derived import CallPathCollector

        collector = CallPathCollector(self.defs)
        b = collector.builder
        b.parent, b.region = np.asarray(self.parent, np.int32), np.asarray(self.region, np.int32)
        b.n, b.unmatched, b.unclosed = len(self.parent), self.unmatched, self.unclosed
        collector.parts = self.parts
        return collector


def finish_on_dask(writer, client, progress: Progress) -> Path:
    """Writer.finish with the tables sorted and written by location groups, and the derived
    data built by parts, on the Dask cluster of `client` (see the module's text)."""
    from popview import cluster

    defs = writer.definitions
    n_loc = max(defs.n_locations, 1)
    tmp_path = writer._scratch.path / "cache.h5"
    folder = writer._scratch.path / "groups"
    folder.mkdir(exist_ok=True)
    stages = writer._tables
    copy = SortedCopy(writer._staging_dir / "sorted")
    merge = _CallPathMerge(defs) if not writer.count("calls") else None
    try:
        tasks, planned = _tasks(writer, n_loc, folder, merge is not None)
        with writing(tmp_path, "w", writer.abort) as out:
            for table in schema.TABLES:
                stage = stages.get(table)
                if table not in planned:
                    _write_sorted(out, table, stage, n_loc, Progress(), copy)
                elif not stage.time_sorted:
                    writer.unsorted_tables.append(table)
            outs = {table: _TableOut(out, table, _offsets(stages[table], n_loc)) for table in planned}
            window = max(4 * cluster.workers(client), 8)
            results = cluster.in_order(client, tasks, progress.sub(0.0, 0.55), window,
                                       "sorting the tables on Dask", sum(w for _, _, w in tasks))
            for (_, (spec,), _), result in zip(tasks, results):
                outs[spec["table"]].add(result)
                if "calls" in result:
                    merge.add(result["calls"])
            for table, table_out in outs.items():
                table_out.close(copy)
            for table in writer.unsorted_tables:
                defs.warn(f"{table} records were not in time order per location; sorted")
            for write in writer.extra_writers:
                write(out)
            if merge is not None:
                progress(0.55, "writing call paths")
                merge.collector().write(out, n_loc, copy)
            timeline = writer.timeline_path()
            failed = _derived_on_dask(client, copy.folder, out, defs, folder, progress.sub(0.6, 0.98),
                                      writer._part_rows, timeline)
        if failed is not None:          # only the overview: the cache goes on without it (a full disk)
            writer._overview_failed(failed, timeline)
        writer._complete(tmp_path, timeline, progress)
    finally:
        writer.abort()
    progress(1.0, "done")
    return writer.final_path


def _derived_on_dask(client, tables: Path, out: h5py.File, defs, folder: Path, progress: Progress,
                     budget: int | None = None, timeline: Path | None = None) -> OSError | None:
    """The derived data (derived.OPTIONAL_BUILDERS: the cumulative sums, and the timeline
    pyramid when there is a `timeline` companion to write, at that path) built by parts on
    the workers from the raw sorted tables in `tables` (in the shared scratch folder), joined
    here into `out` (the pyramid into a new file at `timeline`); a builder that cannot be cut
    into parts is built here. `budget`: rows a part (default: the builders' own groups).
    A write failure of the timeline overview (a pyramid or tile part's files on a worker, or
    the overview's file here: a full disk) does not stop the cache's, as on one machine
    (Writer.finish): the overview is dropped and the failure returned, naming `timeline`
    (None: it was written, or none was asked for)."""
    from popview import cluster
    from popview.cache import cumulative, derived, pyramid

    if tuple(derived.optional_builders()) != ("popview.cache.cumulative", "popview.cache.pyramid"):
        try:                                  # builders this module does not know
            with _maybe_writing(timeline, None) as overview_out:
                derived.build_all(RawTables(tables), out, defs, progress, overview_out)
        except OSError as exc:
            return _overview_failure(exc, timeline, exc.filename == str(timeline))
        return None
    src = RawTables(tables)
    blob = _definitions_blob(defs)
    sums = cumulative.plan_parts(src, defs, budget)
    plan = pyramid.layout(src, defs, budget=budget) if timeline is not None else {"groups": []}
    tasks = [(_pyramid_part, (str(tables), blob, plan, gi, str(folder)), b - a)
             for gi, (a, b) in enumerate(plan["groups"])]
    tasks += [(_cumulative_part, (str(tables), blob, part, str(folder)), part["hi"] - part["lo"])
              for part in sums or []]
    results = list(cluster.in_order(client, tasks, progress.sub(0.0, 0.7), max(4 * cluster.workers(client), 8),
                                    "building derived data on Dask", sum(w for _, _, w in tasks)))
    built_pyramid, built_sums = results[:len(plan["groups"])], results[len(plan["groups"]):]
    failed = next((part["failed"] for part in built_pyramid if "failed" in part), None)
    if failed is not None:                   # the other parts' files go at once: room for the cache's
        _remove_parts(built_pyramid)
    if sums is None:
        cumulative.build(src, defs, progress.sub(0.7, 0.8), dst=out)
    elif sums:
        cumulative.join_parts(src, defs, out, built_sums)
        for part in built_sums:
            if part["h5"]:                      # the rows (seg): built on demand, not here (window_sums.py)
                Path(part["h5"]).unlink()
    if timeline is None:
        return None
    if failed is not None:
        return _overview_failure(OSError(failed, os.strerror(failed)), timeline, True)
    try:
        with writing(timeline, "w") as overview_out:   # no make_room: a failure here is the overview's only
            specs = pyramid.join_parts(src, defs, overview_out, plan, built_pyramid, progress.sub(0.7, 0.75))
            tasks = [(_tile_part, (spec, str(folder)), spec["hi"] - spec["lo"]) for spec in specs]
            tiles = []
            results = cluster.in_order(client, tasks, progress.sub(0.75, 1.0), max(4 * cluster.workers(client), 8),
                                       "writing the timeline's tiles on Dask", sum(w for _, _, w in tasks))
            try:
                for part in results:
                    tiles.append(part)
                    if "failed" in part:
                        break
            finally:
                results.close()              # the tasks not done yet cancelled when one failed
            failed = next((part["failed"] for part in tiles if "failed" in part), None)
            if failed is not None:
                _remove_parts(tiles)
                raise OSError(failed, os.strerror(failed), str(timeline))
            pyramid.join_tile_parts(overview_out, tiles)
    except OSError as exc:
        return _overview_failure(exc, timeline, True)
    return None


def _overview_failure(exc: OSError, timeline: Path | None, overviews: bool) -> OSError:
    """`exc`, a failure while the timeline overview was built, as the overview's (its file at
    `timeline` removed) when it is a write failure (a full disk) of the overview's (`overviews`);
    raised again otherwise."""
    from popview.cache import location

    if timeline is None or not overviews or not location.is_write_failure(exc):
        raise exc
    Path(timeline).unlink(missing_ok=True)
    return OSError(exc.errno, os.strerror(exc.errno), str(timeline))


def _remove_parts(parts: list[dict]) -> None:
    """The files of the overview's parts built (pyramid_part, tile_part), once it is dropped:
    a full disk's room back for the cache's own files."""
    for part in parts:
        if part.get("h5"):
            Path(part["h5"]).unlink(missing_ok=True)
        for channel in part.get("tiles", {}).values():
            for path in channel["files"].values():
                Path(path).unlink(missing_ok=True)


def _overview_part(build, *paths: Path) -> dict:
    """A part of the timeline overview built on a worker (`build()`), or, when it could not be
    written there (a full disk: everything such a task writes is the overview's), its files
    removed and {"failed": errno}: the driver drops the overview and keeps the cache, as the
    conversion on one machine does; a task's exception would end the whole conversion."""
    import shutil

    from popview.cache import location

    try:
        return build()
    except OSError as exc:
        if not location.is_write_failure(exc):
            raise
        for path in paths:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        return {"failed": exc.errno}


def _definitions_blob(defs) -> bytes:
    """The definitions as the tasks receive them: JSON made once on the driver (as the
    derived-data process receives them), never a pickle."""
    return json.dumps({"definitions": defs.to_json_dict(),
                       "callpath_parent": list(map(int, defs.callpath_parent)),
                       "callpath_region": list(map(int, defs.callpath_region))}).encode()


def _definitions(blob: bytes):
    from popview.model.definitions import Definitions

    d = json.loads(blob)
    return Definitions.from_json_dict(d["definitions"], d["callpath_parent"], d["callpath_region"])


def _tile_part(spec: dict, folder: str) -> dict:
    """A Dask task: a range of blocks of one tile channel (pyramid.write_tile_part)."""
    from popview.cache import pyramid

    path = Path(folder) / f"tiles.{spec['name']}.{spec['k0']}-{secrets.token_hex(4)}.h5"
    return _overview_part(lambda: pyramid.write_tile_part(spec, path), path)


def _cumulative_part(tables: str, defs_blob: bytes, part: dict, folder: str) -> dict:
    """A Dask task: one part of the cumulative sums (cumulative.build_part)."""
    from popview.cache import cumulative

    path = Path(folder) / f"cumulative.{part['lo']}-{secrets.token_hex(4)}.h5"
    return cumulative.build_part(RawTables(Path(tables)), _definitions(defs_blob), part, path)


def _pyramid_part(tables: str, defs_blob: bytes, plan: dict, gi: int, folder: str) -> dict:
    """A Dask task: one location group of the timeline pyramid (pyramid.build_part)."""
    from popview.cache import pyramid

    token = secrets.token_hex(4)
    path, scratch = Path(folder) / f"pyramid.{gi:05d}-{token}.h5", Path(folder) / f"tiles.{gi:05d}-{token}"
    return _overview_part(lambda: pyramid.build_part(RawTables(Path(tables)), _definitions(defs_blob), plan, gi,
                                                     path, scratch), path, scratch)


def _tasks(writer, n_loc: int, folder: Path, call_paths: bool):
    """A task (sort_group, (spec,), rows) a location group of each table with rows, in the
    tables' order; and the tables they cover."""
    tasks, planned = [], []
    defs_blob = _definitions_blob(writer.definitions) if call_paths else None
    for table in schema.TABLES:
        stage = writer._tables.get(table)
        if stage is None or stage.n == 0:
            continue
        planned.append(table)
        offsets = _offsets(stage, n_loc)
        sources = [({k: str(v) for k, v in paths.items()}, chunks) for paths, chunks in stage.all_sources()]
        groups = _location_groups(np.diff(offsets), writer._group_rows)
        for gi, ((a, b), runs) in enumerate(zip(groups, slice_sources(sources, len(offsets) - 1, groups))):
            lo, hi = int(offsets[a]), int(offsets[b])
            if lo == hi:
                continue
            spec = {"table": table, "index": gi, "a": a, "b": b, "lo": lo, "hi": hi, "total": stage.n,
                    "sources": runs, "time_sorted": stage.time_sorted,
                    "folder": str(folder), "defs": defs_blob if table == "events" else None}
            tasks.append((sort_group, (spec,), hi - lo))
    return tasks, planned


class _TableOut:
    """One table of the cache, joined from its groups' files in location order."""

    def __init__(self, out: h5py.File, table: str, offsets: np.ndarray):
        from popview.cache.integrity import checked

        self.table, self.offsets = table, offsets
        self.group = out.create_group(table)
        self.group.create_dataset("offsets", data=offsets, **checked())
        total = int(offsets[-1])
        self.dsets = {name: create_column(self.group, name, dtype, total) for name, dtype in schema.columns(table)}
        self.index = SparseIndex(table)
        self.segments: list[dict[str, Path]] = []
        self.rows: list[int] = []

    def add(self, result: dict) -> None:
        lo, hi = result["lo"], result["hi"]
        with h5py.File(result["h5"], "r") as f:
            for name, dset in self.dsets.items():
                copy_rows(f[name], dset, lo, hi)
        self.index.extend(result["sparse"])
        self.segments.append({name: Path(p) for name, p in result["raw"].items()})
        self.rows.append(hi - lo)
        Path(result["h5"]).unlink()

    def close(self, copy: SortedCopy) -> None:
        if sum(self.rows) != int(self.offsets[-1]):
            raise RuntimeError(f"{self.table}: {sum(self.rows)} rows joined of {int(self.offsets[-1])}")
        self.index.write(self.group)
        copy.adopt_segments(self.table, self.segments, self.rows, self.offsets)
