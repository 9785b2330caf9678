"""Writes a cache: records arrive in any order, in chunks; finish() sorts
them by location then time in bounded memory and renames the file into
place only when everything, derived data included, is written."""
from __future__ import annotations

import importlib
import json
import os
import shutil
import threading
from collections import deque
from contextlib import closing, contextmanager
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from popview import atomic, jit, threads
from popview._version import __version__
from popview.cache import heap, location, schema
from popview.cache.kept import Budget, KeptColumn
from popview.cache.narrow import CODED, NARROW, ColumnLayout, RunBases, SpillFile
from popview.cache.progress import Progress
from popview.cache.rawtables import RawTables, SortedCopy
from popview.cache.runs import RunIndex
from popview.cache.scratch import Scratch
from popview.model.definitions import Definitions
from popview.threads import Pool

if TYPE_CHECKING:
    import h5py

# Rows sorted in memory at once; bounds the peak memory of finish().
SORT_BUDGET_ROWS = 4_000_000
# The next group is read ahead while this one is written when the two hold at most this many
# budgets: a location of the 1 GB trace (3.4 M events, 70 MB) was read alone, by the main thread.
READ_AHEAD = 2
# Sources of at least this many bytes start the derived-data process with the conversion
# (Paraver text holds about 100 bytes a record: well above its 2 million records).
SIDE_AT_START_BYTES = 256 << 20
# What the finish imports (h5py, hdf5plugin, the derived builders: 40-70 ms), imported at the
# first append, while the reader's threads parse, instead of before the parse starts or after it.
FINISH_MODULES = ("h5py", "hdf5plugin", "popview.cache.chunks", "popview.cache.integrity", "popview.cache.sparse",
                  "popview.cache.derived", "popview.cache.cumulative", "popview.cache.reader",
                  "popview.cache.companion", "popview.cache.overview", "popview.cache.window_sums")


def compression(level: int = 1, shuffle: bool = True) -> dict:
    """Zstd + shuffle: ~5x faster to write than gzip at the same ratio (see docs/cache.md);
    each stored chunk checksummed (integrity.py)."""
    import hdf5plugin

    from popview.cache.integrity import checked

    return dict(**hdf5plugin.Zstd(clevel=level), shuffle=shuffle, **checked())


# Zstd's level for a table's column by its item size: the 8-byte columns (times, values: most
# of the bytes compressed) at the fast level -1, 1.3-1.5x faster than level 1 for the same
# size of times (events' values 6 % larger); the 4-byte ones (locations, types, states) stay
# at 1, where -1 left the event types three times larger (docs/cache.md, Compression).
COLUMN_LEVEL = {8: -1}
# Columns stored without the byte shuffle, by name, with their level (issue 25's eleventh
# pass): the events' types (few distinct values: on the 1 GB trace 0.4 ns a row at 640 times
# smaller, against 1.3 ns + 0.3 ns of shuffle at 155). Not the times: unshuffled they cost
# 2.6 ns a row instead of 3.8 + 1-2 at the same size on the EPOCH traces, but were 4 times
# larger on the 10^7-event OTF2 archive's regular times (docs/cache.md, the eleventh pass).
UNSHUFFLED = {"type": -1}


def create_column(group: h5py.Group, name: str, dtype, size: int) -> h5py.Dataset:
    chunk = max(1, min(schema.CHUNK, size)) if size else schema.CHUNK
    if name in UNSHUFFLED:
        filters = compression(UNSHUFFLED[name], shuffle=False)
    else:
        filters = compression(COLUMN_LEVEL.get(np.dtype(dtype).itemsize, 1))
    return group.create_dataset(name, shape=(size,), maxshape=(None,), dtype=dtype,
                                chunks=(chunk,), **filters)


class PreparedChunk:
    """An appended chunk ordered (stably) by location, with what the staging keeps of
    it. Made apart from the staging so that a reader can prepare its chunks in its
    worker threads (the kernels release the GIL)."""

    def __init__(self, table: str, cols: dict[str, np.ndarray], narrow: bool = False):
        """`narrow`: the 8-byte columns of narrow.NARROW stored in 4 bytes a row where they fit
        (narrow.py), for a staging that spills them (a staging that keeps its rows in memory
        widens them back)."""
        from popview.cache.order import location_order, order_three, summarize_chunk, take   # numba: only when writing

        loc_col, time_col, columns = schema.TABLES[table]
        locs = np.ascontiguousarray(cols[loc_col], dict(columns)[loc_col])   # the schema's int32: one signature
        self.n = len(locs)
        self.narrow: dict[str, tuple[np.ndarray, np.ndarray]] = {}    # narrowed column -> its exceptions
        self.bases: np.ndarray | None = None                          # each run's first time (narrow)
        self.tables: dict[str, np.ndarray] = {}                       # coded column -> its values' table
        if self.n == 0:
            return
        (self.counts, first, last, self.in_order, self.times_ok,
         t_max) = summarize_chunk(locs, np.ascontiguousarray(cols[time_col], np.int64), int(locs.max()) + 1)
        self.t_max = int(t_max)
        self.present = np.flatnonzero(self.counts)
        self.first, self.last = first, last
        self.starts = (np.cumsum(self.counts) - self.counts)[self.present]
        # the staging keeps the locations as runs
        kept = {name: np.ascontiguousarray(cols[name], dtype=dtype) for name, dtype in columns if name != loc_col}
        if self.in_order:
            self.columns = kept
        elif len(kept) == 3:
            self.columns = dict(zip(kept, order_three(locs, self.counts, *kept.values())))
        else:
            order = location_order(locs, self.counts)
            self.columns = {name: take(column, order) for name, column in kept.items()}
        if narrow and (table in NARROW or table in CODED):
            self._narrow(table)

    def _narrow(self, table: str) -> None:
        from popview.cache.narrow import BASED, encode, encode_codes, lo_of

        for name in CODED.get(table, ()):
            got = encode_codes(self.columns[name])
            if got is not None:
                self.columns[name], self.tables[name] = got
        if table not in NARROW:
            return
        bases = np.ascontiguousarray(self.first[self.present], np.int64)
        for name in NARROW[table]:
            got = encode(self.columns[name], self.starts, bases if name in BASED else None, lo_of(name))
            if got is not None:
                self.columns[name], rows, values = got
                self.narrow[name] = (rows, values)
        if self.narrow:
            self.bases = bases

    def widened(self) -> "PreparedChunk":
        """The chunk with its narrowed columns back at 8 bytes a row and its coded ones at 4 (for
        rows kept in memory)."""
        if not self.narrow and not self.tables:
            return self
        from popview.cache.narrow import BASED, decode, lo_of

        out = object.__new__(PreparedChunk)
        out.__dict__.update(self.__dict__)
        out.columns = dict(self.columns)
        for name, (rows, values) in self.narrow.items():
            out.columns[name] = decode(self.columns[name], self.starts, self.bases if name in BASED else None,
                                       lo_of(name), rows, values)
        for name, values in self.tables.items():
            out.columns[name] = values[self.columns[name]]
        out.narrow, out.bases, out.tables = {}, None, {}
        return out

    def summary(self) -> "PreparedChunk":
        """The chunk without its rows: what a staging notes of it (a piece returns these)."""
        out = object.__new__(PreparedChunk)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "columns"})
        return out


class SpillWrites:
    """The staging's column writes, made by a thread of their own at offsets reserved in
    arrival order: the caller (a reader's main thread, which takes its parsed blocks in
    file order) goes on at once. Writing a gigabyte of trace's columns into the page
    cache cost that thread about 1.4 s of CPU, during which the parser had one block
    to parse and one of the two cores idled. At most AHEAD writes wait (their chunks
    stay in memory until written); a failed write (a full disk) is raised by the next
    write or by drain().

    A write is forgotten only once it is done: a caller interrupted while it waits
    (Ctrl-C) leaves it pending, so that settle() still waits for it before the staging
    closes the file (a write after that would land in whatever file took the descriptor's
    number). The thread is started here, not by the first write, for the same reason:
    an interrupted thread start leaves a thread the pool does not know of."""

    AHEAD = 8

    def __init__(self):
        self._pool = Pool(1, thread_name_prefix="popview-spill")
        try:
            self._pool.submit(int).result()
        except BaseException:                # Ctrl-C as it starts: no owner will shut it down but here
            self._pool.shutdown()
            raise
        self._pending: deque[Future] = deque()

    def write(self, fd: int, data: np.ndarray, offset: int) -> None:
        self._pending.append(self._pool.submit(_pwrite_all, fd, data, offset))
        while len(self._pending) > self.AHEAD:
            self._done_oldest()

    def drain(self) -> None:
        """Every write submitted is done (its error raised)."""
        while self._pending:
            self._done_oldest()

    def _done_oldest(self) -> None:
        self._pending[0].result()
        self._pending.popleft()

    def settle(self) -> None:
        """The writes waited for, their errors dropped (after a failure: the files go; a
        file is never closed under a write, whose descriptor could be another file's by then)."""
        while self._pending:
            self._pending[0].exception()
            self._pending.popleft()

    def close(self) -> None:
        self.settle()
        self._pool.shutdown()


def _pwrite_all(fd: int, data: np.ndarray, offset: int) -> None:
    view = memoryview(data).cast("B")
    while len(view):
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


class _Staging:
    """Unsorted records of one table, spilled uncompressed to raw column files. Each
    appended chunk is first ordered (stably) by location and its location runs kept,
    so a group of locations is later read with one slice per chunk and put in
    location order by copying runs, without sorting or a pass over the whole table.
    With `spill` the column files are written by its thread (SpillWrites), the rows of
    each chunk at their place in arrival order. With `keep` the chunks' columns are kept
    in memory instead while the budget lasts (kept.py), written into the files only when it
    is passed (spill_kept)."""

    def __init__(self, scratch: Path, table: str, n_locations_hint: int = 0, spill: SpillWrites | None = None,
                 keep: Budget | None = None):
        self.table = table
        self._spill = spill
        self.n = 0
        self.loc_counts = np.zeros(max(n_locations_hint, 1), dtype=np.int64)
        self.prev_time = np.full(max(n_locations_hint, 1), np.iinfo(np.int64).min, np.int64)
        self.time_sorted = True
        self.loc_sorted = True       # locations never decrease in arrival order
        self._last_loc = -1
        self.t_max = np.iinfo(np.int64).min
        self.chunks: list[tuple[int, int, np.ndarray, np.ndarray]] = []   # first row, rows, locations, starts
        # pieces adopted where they lie (a finish on Dask reads them there), each (its column
        # files, its chunks with rows counted from its files' start); `chunks` then numbers the
        # rows of every source one after the other, as if they had been copied here
        self.sources: list[tuple[dict[str, Path], list[tuple[int, int, np.ndarray, np.ndarray]]]] = []
        self.own_rows = 0
        self.own_chunks: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        self.loc_col = schema.TABLES[table][0]      # not spilled: the run index tells it
        self.paths = {name: scratch / f"{table}.{name}" for name, _ in schema.columns(table) if name != self.loc_col}
        self._files = {name: open(path, "w+b") for name, path in self.paths.items()}
        self._bytes = dict.fromkeys(self.paths, 0)     # where each file's next chunk goes
        # where the chunks of the 8-byte columns that may be narrow lie, and their runs' first times
        self.layouts = {name: ColumnLayout(name) for name in NARROW.get(table, ()) if name in self.paths}
        self.layouts.update({name: ColumnLayout(name, coded=True) for name in CODED.get(table, ()) if name in self.paths})
        self.run_bases = RunBases()
        self._runs: RunIndex | None = None
        self._budget = keep
        self.kept: dict[str, KeptColumn] | None = None
        if keep is not None and keep.limit:
            self.kept = {name: KeptColumn(path.name, dict(schema.columns(table))[name])
                         for name, path in self.paths.items()}
            keep.stagings.append(self)

    def append(self, chunk: "PreparedChunk") -> None:
        if chunk.n == 0:
            return
        if self.kept is not None:
            chunk = chunk.widened()
            if not self._budget.take(sum(chunk.columns[name].nbytes for name in self.kept)):
                self._budget.give_up()         # this staging's kept rows too
        at = self.own_rows
        self._note(chunk)
        self._note_own(chunk)
        for name, f in self._files.items():
            if self.kept is not None:
                self.kept[name].append(chunk.columns[name])
            else:
                self._write(f, chunk.columns[name], self._place(name, at, chunk.columns[name], chunk))
        if chunk.narrow and self.kept is None:
            self.run_bases.add(at + chunk.starts, chunk.bases)
        self.n += chunk.n

    def _place(self, name: str, row0: int, column: np.ndarray, chunk: "PreparedChunk | None" = None) -> int:
        """Where a chunk's column (its first row `row0`) goes in its file, right after the chunk
        before, noted in the column's layout (narrow.py: 8 or 4 bytes a row, or 4 or 1)."""
        at = self._bytes[name]
        layout = self.layouts.get(name)
        if layout is None:
            self._bytes[name] = at + column.nbytes
            return at
        if chunk is not None and name in chunk.narrow:
            layout.add(row0, at, 4, *chunk.narrow[name])
        elif chunk is not None and name in chunk.tables:
            layout.add(row0, at, 1, table=chunk.tables[name])
        else:
            layout.add(row0, at, layout.full)
        self._bytes[name] = at + column.nbytes
        return at

    def _write(self, f, column: np.ndarray, at: int) -> None:
        """A chunk's column into its file, at byte `at`."""
        if self._spill is None or jit.is_interpreted():   # a small source: handing each write to a thread cost more
            _pwrite_all(f.fileno(), column, at)
        else:
            self._spill.write(f.fileno(), column, at)

    def spill_kept(self) -> None:
        """The rows kept in memory written into the files, where they would have been
        spilled; from now on every chunk is spilled."""
        kept, self.kept = self.kept, None
        for name, column in (kept or {}).items():
            at = 0
            for part in column.parts:
                self._write(self._files[name], part, self._place(name, at, part))
                at += len(part)

    def _note_own(self, chunk: "PreparedChunk") -> None:
        self.own_chunks.append((self.own_rows, chunk.n, chunk.present, chunk.starts))
        self.own_rows += chunk.n

    def append_spilled(self, chunks: "list[PreparedChunk]", paths: dict[str, Path], copy: bool = True) -> None:
        """Chunks another staging spilled (a piece a Dask worker wrote: popview.cache.pieces),
        their column files copied behind this staging's: as if appended here in that order.
        Without `copy` (a finish on Dask, which reads them where they lie) they are noted as a
        source of their own, unless this staging holds rows of its own already (then copied,
        so that the arrival order stays that of the sources then this staging's file)."""
        copy = copy or self.own_rows > 0
        self.spill_kept()
        local, first, row0 = [], 0, self.own_rows
        for chunk in chunks:
            if chunk.n:
                self._note(chunk)
                self.n += chunk.n
                if copy:
                    self._note_own(chunk)
                else:
                    local.append((first, chunk.n, chunk.present, chunk.starts))
                    first += chunk.n
        if not copy:
            self.sources.append((dict(paths), local))
            return
        self._written()
        for name, f in self._files.items():
            f.seek(0, os.SEEK_END)
            _copy_file(paths[name], f)
            at, size = self._bytes[name], os.fstat(f.fileno()).st_size - self._bytes[name]
            if name in self.layouts:          # a piece's chunks are as wide as their type, one after the other
                full, rows = self.layouts[name].full, row0
                for chunk in chunks:
                    if chunk.n:
                        self.layouts[name].add(rows, at + (rows - row0) * full, full)
                        rows += chunk.n
            self._bytes[name] = at + size

    def _note(self, chunk: "PreparedChunk") -> None:
        """What the staging keeps of a chunk besides its rows: counts, order, its runs."""
        top = len(chunk.counts)
        if top > len(self.prev_time):
            grow = top - len(self.prev_time)
            self.prev_time = np.pad(self.prev_time, (0, grow), constant_values=np.iinfo(np.int64).min)
            self.loc_counts = np.pad(self.loc_counts, (0, grow))
        present = chunk.present
        if self.time_sorted:
            self.time_sorted = chunk.times_ok and bool((chunk.first[present] >= self.prev_time[present]).all())
        self.prev_time[present] = chunk.last[present]
        if self.loc_sorted:
            self.loc_sorted = chunk.in_order and int(present[0]) >= self._last_loc
        self._last_loc = int(present[-1])
        self.loc_counts[:top] += chunk.counts
        self.t_max = max(self.t_max, chunk.t_max)
        self.chunks.append((self.n, chunk.n, present, chunk.starts))

    def all_sources(self) -> list[tuple[dict[str, Path], list[tuple[int, int, np.ndarray, np.ndarray]]]]:
        """Every source of rows in arrival order: the pieces adopted where they lie, then this
        staging's own files (flushed)."""
        self.spill_kept()
        self._written()
        if any(layout.narrow_chunks for layout in self.layouts.values()):
            raise RuntimeError(f"{self.table}: a narrow spill is read through its run index only")
        return self.sources + ([(dict(self.paths), self.own_chunks)] if self.own_rows else [])

    def runs(self, n_loc: int) -> RunIndex:
        """Where each location's rows lie in the spill files (made once all is appended)."""
        if self.sources:
            raise RuntimeError(f"{self.table}: pieces adopted where they lie are read by the finish on Dask")
        if self._runs is None:
            self._written()
            self._runs = RunIndex.from_chunks(self.chunks, max(n_loc, len(self.loc_counts)))
        return self._runs

    def gather(self, runs: RunIndex, a: int, b: int) -> dict[str, np.ndarray]:
        """The rows of locations [a, b), by location, in arrival order within each (rows kept
        in memory: a single run is the kept array's slice, to be read only)."""
        return {name: runs.read(self.source(name), dtype, a, b, copy=False) for name, dtype in schema.columns(self.table)}

    def source(self, name: str) -> Path | KeptColumn | None:
        """Where the column's rows are: its file, its arrays kept in memory, or nowhere (the
        location column: told by the runs)."""
        if self.kept is not None:
            return self.kept.get(name)
        return self.spill_file(name)

    def spill_file(self, name: str) -> Path | SpillFile | None:
        """The column's spill file (with its layout where it has narrow chunks: narrow.py)."""
        layout = self.layouts.get(name)
        if layout is not None and layout.narrow_chunks:
            return SpillFile(self.paths[name], layout, self.run_bases)
        return self.paths.get(name)

    def narrow_layouts(self) -> dict[str, ColumnLayout]:
        """The layouts of the columns that have narrow chunks (none when kept in memory)."""
        if self.kept is not None:
            return {}
        return {name: layout for name, layout in self.layouts.items() if layout.narrow_chunks}

    def _written(self) -> None:
        """Every row appended is in the files."""
        if self._spill is not None:
            self._spill.drain()
        for f in self._files.values():
            f.flush()

    def close(self, remove: bool = False) -> None:
        self.kept = None
        if self._spill is not None:
            self._spill.settle()
        for f in self._files.values():
            f.close()
        if remove:
            for path in self.paths.values():
                path.unlink(missing_ok=True)


class Writer:
    """Builds one cache file atomically.

    Use as a context manager: an exception (or a cancel) removes every
    temporary file, so a half-written cache is never found later. All of them
    live in one scratch folder beside the cache (scratch.py), which a later
    conversion removes if this process is killed.
    """

    def __init__(self, final_path: Path, fingerprint: str, n_locations_hint: int = 0, source_bytes: int = 0,
                 timeline: bool = False):
        """`timeline`: also build the timeline overview (its companion file: overview.py),
        which is otherwise built when first needed."""
        self.final_path = Path(final_path)
        self.timeline = timeline
        self.final_path.parent.mkdir(parents=True, exist_ok=True)
        self.fingerprint = fingerprint
        self._scratch = Scratch(self.final_path.parent)
        try:
            self._staging_dir = self._scratch.path / "staging"
            self._staging_dir.mkdir()
            self._spill = SpillWrites()
        except BaseException:          # Ctrl-C as the spill's thread starts, say: no owner to clean up but here
            self._scratch.remove()
            raise
        self._tables: dict[str, _Staging] = {}
        self._hint = n_locations_hint
        self.definitions: Definitions | None = None
        self.extra_writers: list = []   # callables(h5py.File) writing format-specific groups
        self.unsorted_tables: list[str] = []
        # A source this large will want the derived-data process (for the timeline overview's
        # share: without it there is nothing to share): started now, its start (imports,
        # numba's) overlaps this process's own, before the parsing uses both cores.
        self._side = _start_side_builder(None) if timeline and source_bytes >= SIDE_AT_START_BYTES else None
        self._client = None        # a Dask client: finish() sorts and writes by location groups there
        self._written_back = _WriteBack()
        self._tidy: threading.Thread | None = None       # _let_go's
        self.timeline_failure: OSError | None = None   # why the overview asked for was not written (a full disk)
        self._keep: Budget | None = None
        self._imports: threading.Thread | None = None       # importing FINISH_MODULES
        self._early: _Beside | None = None  # the derived data begun before finish() (begin_derived)

    def finish_on(self, client, group_rows: int | None = None) -> None:
        """Sort and write the tables on the Dask cluster of `client` (popview.cache.groups),
        by location groups of at most `group_rows` rows (default: SORT_BUDGET_ROWS, the groups
        of the one-machine finish); adopted pieces then stay where they lie, read there."""
        self._client = client
        self._group_rows = group_rows or SORT_BUDGET_ROWS
        self._part_rows = group_rows          # the derived data's parts too (None: their own budgets)
        if self._side is not None:            # the derived data are built on the workers
            self._side.close()
            self._side = None

    # ---- input ----------------------------------------------------------
    def append(self, table: str, cols: "dict[str, np.ndarray] | PreparedChunk") -> None:
        """Records of `table` in any order: columns, or a chunk prepared from them. The
        arrays may be written later by the spill's thread (SpillWrites), as they are: the
        caller must not change them afterwards."""
        if table not in self._tables:
            self._tables[table] = _Staging(self._staging_dir, table, self._hint, self._spill, self._keep)
        self._tables[table].append(cols if isinstance(cols, PreparedChunk) else PreparedChunk(table, cols))
        if self._imports is None:
            # by a thread: the caller goes on taking the parsed blocks and handing out the next ones
            # meanwhile (imported on this thread, the 50-60 ms left the parse threads without work)
            self._imports = threading.Thread(target=_import_finish_modules, name="popview-imports", daemon=True)
            threads.start(self._imports)

    def _imported(self) -> None:
        """FINISH_MODULES imported: the thread's imports waited for; a module it could not
        import is imported here again, its error raised here."""
        if self._imports is not None:
            self._imports.join()
        for name in FINISH_MODULES:
            importlib.import_module(name)

    def keep_in_memory(self, limit: int) -> None:
        """Keep the staged rows in memory rather than spilling them, up to `limit` bytes in
        all (kept.py), for the tables begun from now on; past it they are written out and
        spilled. For a reader whose rows arrive in order per location: those are read where
        they are kept; rows to sort are copied as the spill's would be. The finish writes them
        out for a derived-data process (another process reads files)."""
        self._keep = Budget(limit)

    def spills_narrow(self) -> bool:
        """Whether chunks prepared narrow (PreparedChunk(narrow=True): narrow.py) are spilled so
        from now on: not where the rows are kept in memory (they would be widened back) nor
        for a finish on Dask (its tasks read the spill files as plain columns)."""
        return self._client is None and (self._keep is None or not self._keep.limit)

    def adopt(self, piece) -> None:
        """A piece of the staging a Dask worker spilled (popview.cache.pieces.Piece), taken
        as if its chunks were appended here now; its files are removed once copied."""
        for table, (paths, chunks) in piece.tables.items():
            if table not in self._tables:
                self._tables[table] = _Staging(self._staging_dir, table, self._hint, self._spill)
            self._tables[table].append_spilled(chunks, paths, copy=self._client is None)
        if self._client is None:
            piece.remove()

    def pieces_folder(self) -> Path:
        """A folder in this conversion's scratch folder for the pieces Dask workers write
        (on a cluster it must be one all workers share: the cache directory's file system)."""
        folder = self._scratch.path / "pieces"
        folder.mkdir(exist_ok=True)
        return folder

    def expect_locations(self, n: int) -> None:
        """The number of locations, when a reader knows it before its records: the stagings'
        per-location arrays are made that long at once (grown location by location, the 64
        locations of an 8.6 k-event OTF2 archive cost 0.02 s of np.pad)."""
        self._hint = max(self._hint, int(n))

    def set_definitions(self, defs: Definitions) -> None:
        self.definitions = defs

    def count(self, table: str) -> int:
        return self._tables[table].n if table in self._tables else 0

    def time_max(self) -> int:
        return max([t.t_max for t in self._tables.values()] + [0])

    def begin_derived(self, progress: Progress) -> bool:
        """The derived data (the cumulative sums) begun now, by a thread, from the tables appended
        so far, while the reader finishes its own work on this thread (the OTF2 reader's message
        matching: 0.13-0.2 s after its last location at 10^7 events, with the other core idle);
        finish() then writes the tables beside them as it does when it begins them itself
        (_tables_beside_derived). Only where finish() would run them so (the reader's tables
        that they read arrived in order, no timeline overview, no Dask, the kernels compiled),
        and with the definitions set: what the derived data read of them must not change after
        (the reader may still add what they do not read), nor may the tables they read (states,
        events, calls) get rows. Returns whether they were begun."""
        if self._early is not None:
            return True
        if self.definitions is None or not self.derived_can_begin():
            return False
        self._imported()
        copy = SortedCopy(self._staging_dir / "sorted")
        adopted = self._adopt_in_order(copy)
        self._early = _Beside(self, copy, adopted, progress)
        return True

    def derived_can_begin(self) -> bool:
        """Whether begin_derived() would begin the derived data now (given the definitions)."""
        return self._client is None and not self.timeline and self._side is None and not jit.is_interpreted() \
            and derived_builders() == [SUMS_BUILDER] and _sums_read_in_order(self._in_order())

    # ---- output ---------------------------------------------------------
    def finish(self, progress: Progress | None = None) -> Path:
        """Sort, derive, write and rename. Returns the final path."""
        from popview.cache import derived
        from popview.cache.integrity import writing

        progress = progress or Progress()
        self._imported()
        if self.definitions is None:
            raise ValueError("definitions were never set")
        if self._client is not None:
            from popview.cache.groups import finish_on_dask

            return finish_on_dask(self, self._client, progress)
        tmp_path = self._scratch.path / "cache.h5"
        timeline = self.timeline_path()
        side = self._side = self._side or (_start_side_builder(sum(t.n for t in self._tables.values()))
                                           if self.timeline else None)
        begun = self._early
        copy = SortedCopy(self._staging_dir / "sorted") if begun is None else begun.copy
        try:
            if side is not None and self._keep is not None:
                self._keep.give_up()             # the side process reads files
            if begun is None:
                adopted = self._adopt_in_order(copy)
            else:   # the tables appended since: in order ones need no copy (the derived data do not read them)
                adopted = begun.adopted | {t for t, stage in self._tables.items()
                                           if t not in begun.adopted and stage.time_sorted}
            early = derived.start_early(side, copy.folder, self.definitions) \
                if side is not None and "events" in adopted else None
            beside = begun is not None or (side is None and timeline is None and _sums_read_in_order(adopted)
                                           and not jit.is_interpreted())
            sums_ahead = side is None and timeline is None and not beside and not jit.is_interpreted() \
                and derived.builders_for(False) == [SUMS_BUILDER]
            with writing(tmp_path, "w", self.abort) as out:
                if beside:
                    self._tables_beside_derived(out, copy, progress, adopted)
                elif sums_ahead:
                    self._sums_beside_calls(out, tmp_path, copy, progress, adopted)
                else:
                    calls = self._write_tables(out, copy, progress.sub(0.0, 0.6), adopted)
                    heap.release_free_memory()   # the sort's freed arrays: the derived data peaks next
                    derived.build_core(out, self.definitions, progress.sub(0.6, 0.65), calls, copy)
                if not sums_ahead:
                    self._written_back.start(tmp_path)     # the tables, while the derived data are built
                if side is None and not beside and not sums_ahead:
                    try:
                        with _maybe_writing(timeline, None) as overview_out:
                            derived.build_all(RawTables(copy.folder, copy.kept), out, self.definitions,
                                              progress.sub(0.65, 0.98),
                                              overview_out)
                    except OSError as exc:
                        self._overview_failed(exc, timeline)
            if side is not None:
                failed = derived.build_optional_in_parallel(copy.folder, tmp_path, self.definitions,
                                                            progress.sub(0.65, 0.98), side, early, self.abort,
                                                            timeline)
                if failed is not None:
                    self._overview_failed(failed, timeline)
            self._complete(tmp_path, timeline, progress)
        finally:
            self.abort()
        progress(1.0, "done")
        return self.final_path

    def _tables_beside_derived(self, out: h5py.File, copy: SortedCopy, progress: Progress, adopted: set[str]) -> None:
        """The derived data (the cumulative sums) built by a thread while this one writes the
        tables: possible when what they read arrived in order (adopted before the sort: the
        OTF2 reader's tables), the reader wrote the calls and the kernels run compiled (as
        Python, under one GIL, the two would only take turns). The tables' writing mostly waits
        for its compression threads; on the 10^7-event OTF2 archive it took 0.35 s of wall
        and the sums 0.8 s after it, on one core. The sums are written into a part file of
        their own, joined into the cache once the tables are there (as the side process's
        parts are: derived._join): two threads writing into one HDF5 file place its objects
        in the order they happen to come, and the same archive gave a different cache (digest)
        at every conversion. The sums report no progress of their own (the tables' fraction
        would go back and forth) but see a cancel, and are stopped and waited for when the
        tables fail."""
        import h5py

        beside = self._early or _Beside(self, copy, adopted, progress)
        try:
            self._write_tables(out, copy, progress.sub(0.0, 0.6), adopted)   # no calls to collect: adopted
        except BaseException:
            beside.close()           # a Ctrl-C as its thread starts too: it stops at once
            raise
        progress(0.65, "cumulative sums")
        part = beside.result()
        self._early = None
        progress.check()
        with h5py.File(part, "r") as built:       # builders_for(False): none built in shares (merge)
            for group in built:
                out.copy(built[group], group)
        part.unlink()
        self._tidy_in_background()   # the memory freed given back while the cache is sealed (0.03 s at 10^7 events)

    def _sums_beside_calls(self, out: h5py.File, tmp_path: Path, copy: SortedCopy, progress: Progress,
                           adopted: set[str]) -> None:
        """A default conversion's finish when the reader left the call paths to the writer (the
        Paraver reader): once the tables are written and the call paths collected, the
        cumulative sums (its one derived builder) are computed by threads from the raw copy
        (cumulative.Ahead) while this thread writes the call paths into the cache (0.03 s of
        the 143 MB trace, 0.1 s at 1 GB, on one core), then written after them: the cache of
        the one-step-after-the-other finish (tested), its objects in the same order."""
        from popview.cache import cumulative

        calls = self._write_tables(out, copy, progress.sub(0.0, 0.6), adopted)
        self._tidy_in_background()   # the sort's freed arrays given back (the derived data peaks next)
        if calls is not None:
            progress.sub(0.6, 0.65)(0.0, "writing call paths")
            calls.prepare(max(self.definitions.n_locations, 1), copy, in_memory=True)    # the sums' threads read them
        with cumulative.Ahead(RawTables(copy.folder, copy.kept), self.definitions, progress) as sums:
            if calls is not None:
                calls.store(out)
            self._written_back.start(tmp_path)     # the tables, while the sums are written
            sums.write(out, progress.sub(0.65, 0.98), read_done=lambda: self._let_go(copy))

    def _let_go(self, copy: SortedCopy) -> None:
        """Once the derived data have read the raw copy: the rows kept in memory let go of (what
        is written next reuses their memory), and the copy's files removed by a thread while this
        one writes the derived data and seals the cache. (Giving their memory back to the system
        there too, so that the exit unmaps less, cost more than it saved: the trim holds glibc's
        one heap while this thread allocates, which then faults fresh pages in.)"""
        copy.release_kept()
        self._tidy_in_background(copy.folder)

    def _tidy_in_background(self, folder: Path | None = None) -> None:
        """The memory glibc holds free given back to the system (heap.release_free_memory: not
        in `popview convert`'s process, which keeps it for its next steps), then `folder`
        removed, by a thread (after the one started before): the kernel's unmapping (8 ms after
        the 143 MB trace's sort, in a process that trims) beside this thread's work. Joined by
        abort()."""
        previous = self._tidy
        self._tidy = threading.Thread(target=_tidy, args=(previous, folder), name="popview-tidy", daemon=True)
        threads.start(self._tidy)

    def _overview_failed(self, exc: OSError, timeline: Path | None, any_file: bool = False) -> None:
        """The timeline overview's file at `timeline` could not be written (`exc`: a full disk):
        dropped, the cache goes on without it (built when first needed) and `timeline_failure`
        says why, naming the overview's file; `exc` raised again when it is another failure (or
        another file's but with `any_file`)."""
        from popview.cache.errors import CompanionFailed

        if timeline is None or not location.is_write_failure(exc) or not (any_file or exc.filename == str(timeline)):
            raise exc
        timeline.unlink(missing_ok=True)
        self.timeline_failure = CompanionFailed(exc.errno, f"cannot write the timeline overview: "
                                                           f"{os.strerror(exc.errno)}",
                                                str(location.overview_path(self.final_path)))

    def timeline_path(self) -> Path | None:
        """Where the timeline overview is written before it is complete (None: not built)."""
        has_records = any(self.count(t) for t in ("states", "events", "messages"))   # a profile has no timeline
        return self._scratch.path / "timeline.h5" if self.timeline and has_records else None

    def _complete(self, tmp_path: Path, timeline: Path | None = None, progress: Progress | None = None) -> None:
        """The definitions and attributes written last, the digests signed, the file renamed
        into place: only a cache that got here is ever found. A cancel (`progress`) until the
        rename is honoured: the conversion stops, leaving no new cache (and the companions of
        a cache replaced are untouched when it comes before they are settled); after it, the
        cache is there and the conversion done. The timeline overview built
        with it (at `timeline`) is sealed as its companion and put in place first; without
        one, the old cache's companion (overview.py) and its window sums (window_sums.py)
        are removed unless they belong to the new cache: the same digest (a trace converted
        again unchanged gives the same bytes), else built from the new cache when first needed."""
        from popview.cache import companion, overview, window_sums
        from popview.cache.integrity import seal, sign, stored_digest, writing

        progress = progress or Progress()
        progress(0.99, "sealing the cache")     # a cancel pressed after the derived data is seen here
        self._written_back.start(tmp_path)       # the derived data, while signed and sealed
        with writing(tmp_path, "r+", self.abort) as out:
            _write_definitions(out, self.definitions)
            out.attrs["schema_version"] = schema.SCHEMA_VERSION
            out.attrs["popview_version"] = __version__
            out.attrs["fingerprint"] = self.fingerprint
            out.attrs["complete"] = True
            sign(out)
        seal(tmp_path, _summary(tmp_path, self.fingerprint))
        self._written_back.join()
        progress.check()                         # nothing replaced yet: a cancel leaves all as it was
        digest = stored_digest(tmp_path)
        placed = False
        if timeline is not None and timeline.exists():
            try:
                overview.complete(timeline, digest)
                atomic.put_in_place(timeline, overview.path_of(self.final_path))
                placed = True
            except OSError as exc:              # its seal's plain writes name no file: it is the overview's
                self._overview_failed(exc, timeline, any_file=True)
        if not placed:
            companion.keep_if_still_valid(overview.PART, self.final_path, digest)
        companion.keep_if_still_valid(window_sums.PART, self.final_path, digest)
        progress.check()                         # the last moment a cancel can leave no cache
        atomic.put_in_place(tmp_path, self.final_path)   # made 0600 in a private folder; shared as the umask says

    def _adopt_in_order(self, copy: SortedCopy) -> set[str]:
        """The tables whose rows arrived in time order per location: they read back from the
        spill sorted already, so the derived builders read them there (the spill is linked
        into the copy) and no sorted copy of them is written. Done before the sort, so that
        the side process can start on them at once."""
        n_loc = max(self.definitions.n_locations, 1)
        adopted = set()
        for table in self._in_order():
            stage = self._tables[table]
            offsets = _offsets(stage, n_loc)
            copy.adopt(table, stage.kept if stage.kept is not None else stage.paths, stage.runs(len(offsets) - 1),
                       offsets, stage.narrow_layouts(), stage.run_bases)
            adopted.add(table)
        return adopted

    def _in_order(self) -> list[str]:
        """The tables with rows that arrived in time order per location (what _adopt_in_order
        adopts), in the order they were begun."""
        return [table for table, stage in self._tables.items() if stage.time_sorted and stage.n]

    def _write_tables(self, out: h5py.File, copy: SortedCopy, progress: Progress, adopted: set[str]):
        """The sorted tables, into the cache and, but those adopted already, as a raw copy for
        the derived builders; returns the call paths collected from the events on the way
        (None when the reader wrote the calls itself)."""
        from popview.cache.derived import CallPathCollector

        n_loc = max(self.definitions.n_locations, 1)
        calls = None if self.count("calls") else CallPathCollector(self.definitions)
        tables = list(schema.TABLES)
        with Pool(1, thread_name_prefix="popview-read") as pool:
            first = None
            for i, table in enumerate(tables):
                stage = self._tables.get(table)
                if stage is not None and not stage.time_sorted:
                    self.unsorted_tables.append(table)
                ahead = _first_group_ahead(pool, self._tables.get(tables[i + 1]) if i + 1 < len(tables) else None,
                                           tables[i + 1] if i + 1 < len(tables) else None, n_loc,
                                           stage.n if stage is not None else 0)
                _write_sorted(out, table, stage, n_loc, progress.sub(i / len(tables), (i + 1) / len(tables)),
                              None if table in adopted else copy,
                              calls.add if calls is not None and table == "events" else None, first)
                first = ahead
                if stage is not None:
                    stage.close(remove=True)       # an adopted spill lives on as the copy's links
        for table in self.unsorted_tables:
            self.definitions.warn(f"{table} records were not in time order per location; sorted")
        for write in self.extra_writers:
            write(out)
        return calls

    def _close_staging(self) -> None:
        for stage in self._tables.values():
            stage.close()
        self._spill.close()
        self._scratch.remove()

    def abort(self) -> None:
        """Stop the derived-data process (or thread) and remove every scratch file (the cache
        being written too: this also makes room on a full disk)."""
        if self._side is not None:
            self._side.close()
            self._side = None
        if self._early is not None:
            self._early.close()       # waited for: its file is closed before the scratch goes
            self._early = None
        self._written_back.join()      # its file goes next: no thread outlives the conversion
        if self._imports is not None:
            self._imports.join()
        if self._tidy is not None:
            self._tidy.join()
            self._tidy = None
        self._close_staging()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        return False


# What the derived builders read: when all of it arrived in order (adopted), they can start
# before the tables are written (Writer._tables_beside_derived).
DERIVED_READS = {"states", "events", "calls"}


def _sums_read_in_order(in_order) -> bool:
    """Whether every table the cumulative sums read (DERIVED_READS) is among `in_order`, the
    tables whose rows arrived in time order per location: asked before they are adopted
    (Writer.derived_can_begin, Writer._in_order) and of the set adopted (Writer.finish)."""
    return DERIVED_READS <= set(in_order)


# The derived builder of a default conversion (derived.builders_for(False)): computed while the
# call paths are written (Writer._sums_beside_calls).
SUMS_BUILDER = "popview.cache.cumulative"


def derived_builders() -> list[str]:
    from popview.cache import derived

    return derived.builders_for(False)


class _Beside:
    """The derived data (the cumulative sums) built by a thread from the tables adopted into
    `copy`, into a part file of its own in the scratch folder (Writer._tables_beside_derived):
    begun when made, by finish() or before it (Writer.begin_derived). The thread reports no
    progress but sees a cancel, and close() stops it and waits for it."""

    def __init__(self, writer: "Writer", copy: SortedCopy, adopted: set[str], progress: Progress):
        from popview.cache import derived
        from popview.cache.integrity import writing

        self.copy, self.adopted = copy, adopted
        self.part = writer._scratch.path / "beside.part"
        self._stop = threading.Event()
        quiet = Progress(None, _Either(progress.cancel, self._stop))
        # the tables it reads as adopted now: the copy's own dict gets the tables adopted later
        tables = RawTables(copy.folder, dict(copy.kept), sole_reader=True)
        definitions, part = writer.definitions, self.part

        def sums() -> None:
            with writing(part, "w") as dst:
                # the only builder here (builders_for(False)): the kept rows it read go once it has read them
                derived.build_all(tables, dst, definitions, quiet)

        self._pool = Pool(1, thread_name_prefix="popview-derived")
        self._job = self._pool.submit(jit.carry(sums))

    def result(self) -> Path:
        """Its part file, once the thread is done (its failure raised here)."""
        try:
            self._job.result()
        finally:
            self._pool.shutdown()
        return self.part

    def close(self) -> None:
        """The thread stopped (when not done) and waited for; its failure dropped."""
        self._stop.set()
        self._job.exception()
        self._pool.shutdown()


class _Either:
    """A cancel flag set when either of two is (None: never)."""

    def __init__(self, *events):
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


@contextmanager
def _maybe_writing(path: Path | None, make_room):
    """integrity.writing(path, "w") when there is a path, else None."""
    from popview.cache.integrity import writing

    if path is None:
        yield None
        return
    with writing(path, "w", make_room) as f:
        yield f


class _WriteBack:
    """Has a file's pages written to disk (fsync) by a thread while the conversion goes
    on: the fsync that makes the finished cache durable (atomic.put_in_place) then writes
    only what came last (it wrote the whole 441 MB cache of a 1 GB trace: 0.16-0.3 s).
    A hint only: a failure here is the final fsync's to report."""

    def __init__(self):
        self._thread: threading.Thread | None = None

    def start(self, path: Path) -> None:
        self.join()
        self._thread = threading.Thread(target=atomic.sync_path, args=(path,), name="popview-writeback",
                                        daemon=True)
        threads.start(self._thread)         # known before it starts: join() waits for it

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def _import_finish_modules() -> None:
    """Writer.append's thread: FINISH_MODULES imported (a failure is the finish's to raise)."""
    for name in FINISH_MODULES:
        try:
            importlib.import_module(name)
        except BaseException:        # noqa: BLE001 - imported again by Writer._imported, which raises
            return


def _tidy(previous: threading.Thread | None, folder: Path | None) -> None:
    """Writer._tidy_in_background's thread."""
    if previous is not None:
        previous.join()
    heap.release_free_memory()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _start_side_builder(rows: int | None):
    """A second process for derived data when the trace is big enough to gain from it
    (rows None: known to be)."""
    from popview.cache import sidecar

    if (rows is not None and rows < sidecar.MIN_ROWS) or not sidecar.available():
        return None
    try:
        return sidecar.SideBuilder()
    except OSError:       # no process can be started here: build everything in this one
        return None


def _copy_file(src: Path, dst) -> None:
    """The whole of `src` appended to the open file `dst`, in the kernel where it can."""
    dst.flush()
    at = os.lseek(dst.fileno(), 0, os.SEEK_END)
    with open(src, "rb") as f:
        size, done = os.fstat(f.fileno()).st_size, 0
        try:
            while done < size:
                n = os.copy_file_range(f.fileno(), dst.fileno(), size - done, done, at + done)
                if n == 0:
                    break
                done += n
        except OSError:
            pass                      # no copy_file_range across these file systems
        dst.seek(at + done)
        f.seek(done)
        while block := f.read(16 << 20):
            dst.write(block)
    dst.seek(0, os.SEEK_END)


def _write_definitions(out: h5py.File, defs: Definitions) -> None:
    from popview.cache.integrity import checked

    g = out.require_group("definitions")
    payload = json.dumps(defs.to_json_dict(), separators=(",", ":")).encode()
    g.create_dataset("json", data=np.frombuffer(payload, dtype=np.uint8), **compression())
    g.create_dataset("callpath_parent", data=np.asarray(defs.callpath_parent, np.int32), **checked())
    g.create_dataset("callpath_region", data=np.asarray(defs.callpath_region, np.int32), **checked())


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


def _offsets(stage: _Staging | None, n_loc: int) -> np.ndarray:
    """Where each location's rows start in the sorted table (n_loc + 1 entries at least)."""
    counts = np.zeros(n_loc, dtype=np.int64)
    if stage is not None:
        c = stage.loc_counts[: max(n_loc, len(stage.loc_counts))]
        counts = np.pad(c, (0, max(0, n_loc - len(c))))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _first_group_ahead(pool: Pool, stage: _Staging | None, table: str | None, n_loc: int,
                       now_rows: int) -> Future | None:
    """The first group of the next table read by `pool`'s thread while this one (of
    `now_rows` rows) is written, when the two fit the read-ahead's budget (READ_AHEAD sort
    budgets: the 1 GB trace's 4.4 M states and its first 3.4 M-event location do); None
    otherwise. The events' first group was read by the main thread after the states."""
    if stage is None or not stage.n:
        return None
    reads = _group_reads(table, stage, n_loc)
    if reads is None or now_rows + reads[2][0] > READ_AHEAD * SORT_BUDGET_ROWS:
        return None
    full, _, _, read = reads
    return pool.submit(jit.carry(read), full[0])


def _group_reads(table: str, stage: _Staging, n_loc: int):
    """How the table's location groups are read: (the groups holding rows, each (index, first
    location, end), all the groups, their rows, read(group) giving its rows by location and
    time), or None when it has no rows."""
    loc_col, time_col, _ = schema.TABLES[table]
    offsets = _offsets(stage, n_loc)
    counts = np.diff(offsets)
    if not stage.n:
        return None
    groups = _location_groups(counts, SORT_BUDGET_ROWS // 2)    # two at once when one is read ahead
    runs = stage.runs(len(counts))
    full = [(gi, a, b) for gi, (a, b) in enumerate(groups) if offsets[a] < offsets[b]]

    def read(item) -> dict[str, np.ndarray]:
        """A group's rows by location, in arrival order within each, then sorted by time."""
        data = stage.gather(runs, item[1], item[2])
        if not stage.time_sorted:
            order = np.lexsort((data[time_col], data[loc_col]))
            data = {name: column[order] for name, column in data.items()}
        return data

    return full, groups, [int(offsets[b] - offsets[a]) for _, a, b in full], read


def _write_sorted(out: h5py.File, table: str, stage: _Staging | None, n_loc: int, progress: Progress,
                  copy: SortedCopy | None, consumer=None, first: Future | None = None) -> None:
    """The table sorted by location then time, also into `copy` (None when the table
    was adopted into it: the rows arrived in time order); `consumer` also gets each
    sorted group of whole locations (the call paths are built from the events that way).
    `first`: its first group, read already (_first_group_ahead)."""
    from popview.cache.chunks import ChunkedWriter
    from popview.cache.integrity import checked
    from popview.cache.sparse import SparseIndex

    cols = schema.columns(table)
    group = out.create_group(table)
    total = stage.n if stage is not None else 0
    offsets = _offsets(stage, n_loc)
    group.create_dataset("offsets", data=offsets, **checked())
    dsets = {name: create_column(group, name, dtype, total) for name, dtype in cols}
    index = SparseIndex(table)
    if copy is not None:
        copy.begin(table)
    if total == 0:
        index.write(group)
        if copy is not None:
            copy.finish(table, offsets)
        return
    copied = stage.loc_sorted and stage.time_sorted      # arrived in order: nothing to sort
    full, groups, sizes, read = _group_reads(table, stage, n_loc)
    sinks = {name: ChunkedWriter(dsets[name]) for name, _ in cols}
    with _InOrder(consumer) as consume, \
            closing(_read_ahead(read, full, sizes, READ_AHEAD * SORT_BUDGET_ROWS, first)) as reads:
        for (gi, a, _), data in zip(full, reads):
            progress(gi / len(groups), f"{'writing' if copied else 'sorting'} {table}")
            if not stage.time_sorted:
                copy.append(table, data)
            consume(data)
            for name, _ in cols:
                sinks[name].write(data[name])
            index.add(int(offsets[a]), data)
            del data
            consume.done()         # before the next group is read: two groups in memory raised the peak
    for sink in sinks.values():
        sink.close()
    index.write(group)
    if copy is not None:
        copy.finish(table, offsets)
    progress(1.0, f"{'wrote' if copied else 'sorted'} {table}")


def _read_ahead(read, items: list, rows: list[int], budget: int, first: Future | None = None):
    """read(item) for each item in order. The next item is read by a thread while the
    caller works on this one (the sort's reads, its compressing and its call paths then
    share the two cores) when the two hold at most `budget` rows between them (READ_AHEAD
    sort budgets: two locations of the 1 GB trace, 3.4 M events each); a larger one is
    read when its turn comes, so that the rows in memory stay within the budget. `first`:
    the first item's read, submitted already."""
    read = jit.carry(read)          # the kernels run in the caller's mode (popview.jit)
    with Pool(1, thread_name_prefix="popview-read") as pool:
        ahead: Future | None = first      # the first item, read ahead already (or None)
        try:
            for k, item in enumerate(items):
                done = ahead.result() if ahead is not None else read(item)
                ahead = None
                if k + 1 < len(items) and rows[k] + rows[k + 1] <= budget:
                    ahead = pool.submit(read, items[k + 1])
                yield done
                del done
        finally:
            if ahead is not None:
                ahead.cancel()


class _InOrder:
    """consumer(data) for each group, in order, by a thread of its own, while the caller
    writes the group (the call paths built from the events' groups: a numba kernel and
    numpy lookups that release the GIL). One group at a time: done() waits for it (the
    caller's next group is read after), as does the next call; a failure is raised there
    or at the end."""

    def __init__(self, consumer):
        self.consumer = consumer
        self._pool = Pool(1, thread_name_prefix="popview-consume") if consumer else None
        self._job: Future | None = None

    def __call__(self, data: dict[str, np.ndarray]) -> None:
        if self._pool is None:
            return
        self._wait()
        self._job = self._pool.submit(jit.carry(self.consumer), data)

    def done(self) -> None:
        """The group submitted last is consumed (its failure raised here)."""
        self._wait()

    def _wait(self) -> None:
        if self._job is not None:
            job, self._job = self._job, None
            job.result()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._pool is None:
            return False
        try:
            if exc_type is None:
                self._wait()
            elif self._job is not None:
                self._job.exception()           # waited for, its own failure dropped
        finally:
            self._pool.shutdown()
        return False


def _summary(path: Path, fingerprint: str) -> dict:
    """The stored summary (summary.py) of the finished cache at `path`: read back from it,
    as `popview info` would read it."""
    from popview.cache import summary
    from popview.cache.reader import Reader

    with Reader(path, verify=False) as reader:
        return {"schema_version": schema.SCHEMA_VERSION, "fingerprint": fingerprint,
                "info": summary.of_reader(reader)}
