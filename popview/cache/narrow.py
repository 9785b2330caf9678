"""The spill's 8-byte columns in 4 bytes a row where they fit, its event types in 1 byte
(issue 25, the tenth pass).

The writer spills the 1 GB Paraver trace's rows uncompressed (writer._Staging):
1.2 GB of columns copied into fresh page-cache pages and read back twice (the
sort, the cumulative sums), most of it the events' times and values, 8 bytes
each. A chunk prepared *narrow* (writer.PreparedChunk, in the parser's threads)
stores such a column as unsigned 32-bit offsets instead:

- a time column (`BASED`: the events' times, the states' begins and ends) as
  the offset from its run's first time (the run: one location's rows in the
  chunk; that time is the chunk's `first` of the location, kept per run here);
- any other (the events' values) as the value plus 2^31, i.e. a signed 32-bit
  value.

A row whose offset does not fit (a run spanning more than 4.29 s, a value past
2^31: Extrae's 40000050 timestamps, a backwards time) is stored as `SENTINEL`
and listed as an *exception* (its row and value), put back after the read. A
chunk whose column would hold more than one exception in `WIDE_AFTER` rows is
spilled as it is, 8 bytes a row (each exception costs 16 bytes besides its 4):
so the file holds chunks of either width, each at its own byte offset, noted
here per chunk. Rows are still numbered as before (the run index's starts), so
only the read of a column's runs changes: `SpillFile.read`, which
`runs.read_listed` calls for such a column, wherever it is read (the sort, the
sums, the derived-data process through `layout.i64` beside the run index).

The events' types (`CODED`) are spilled as 1-byte codes into the chunk's table
of its distinct types (in the order first seen; the parser takes that table as
the block's distinct types), a chunk with more than `MAX_CODES` of them as it
is, 4 bytes a row.

Columns kept in memory (kept.py), a Dask piece's, and the other columns are
spilled as they are; the sentinel value itself, of a column that has it, goes
to the exceptions.
"""
from __future__ import annotations

import mmap
import os
from pathlib import Path

import numpy as np

from popview.jit import njit

# the 8-byte columns spilled narrow, by table; those in BASED are offsets from their run's first time
NARROW = {"events": ("time", "value"), "states": ("begin", "end")}
# the 4-byte columns spilled as 1-byte codes into a table of the chunk's distinct values, where it
# has at most MAX_CODES of them (the events' types: the EPOCH runs have 33)
CODED = {"events": ("type",)}
MAX_CODES = 255
CODE_SLOTS = 1024                   # the coding's hash table (a power of two, 4x MAX_CODES)
BASED = frozenset(("time", "begin", "end"))
SENTINEL = (1 << 32) - 1            # a row listed among the exceptions
MAX_OFFSET = SENTINEL - 1
I64_MAX = (1 << 63) - 1
UNBASED_LO = -(1 << 31)             # a value v is stored as v - UNBASED_LO
WIDE_AFTER = 64                     # a chunk with more than one exception in this many rows stays 8 bytes wide
PREAD_MIN_RUN_ROWS = 1 << 14        # runs this long on average are read by pread, shorter ones through a map
BATCH_ROWS = 1 << 20                # rows decoded between two releases of the mapped pages


def lo_of(name: str) -> int:
    return 0 if name in BASED else UNBASED_LO


def _highest(base):
    """The largest value stored as an offset from `base` (no overflow past int64)."""
    with np.errstate(over="ignore"):
        return np.where(base <= I64_MAX - MAX_OFFSET, base + MAX_OFFSET, I64_MAX)   # the overflows not taken


def _narrow_python(col, starts, bases, lo, out):
    n = len(col)
    run = np.searchsorted(starts, np.arange(n), side="right") - 1
    base = bases[run] + lo
    ok = (col >= base) & (col <= _highest(base))
    out[ok] = col[ok] - base[ok]
    out[~ok] = SENTINEL
    return int(n - ok.sum())


@njit(cache=True, nogil=True, python=_narrow_python)
def narrow(col, starts, bases, lo, out):
    """out[i] = col[i] - (bases[run of i] + lo) as uint32 where that fits in [0, MAX_OFFSET],
    else SENTINEL; runs start at `starts` (the first at 0). Returns the rows that did not fit.
    (The bounds are compared, never a difference that could overflow: the compiler may take
    a signed difference for one that does not.) Each run's rows are slices, indexed from 0:
    an index of unknown sign is checked for wrapping at every row, which stops the loop's
    vectorisation."""
    n = len(col)
    runs = len(starts)
    bad = 0
    for r in range(runs):
        end = starts[r + 1] if r + 1 < runs else n
        base = bases[r] + lo
        top = base + MAX_OFFSET if base <= I64_MAX - MAX_OFFSET else I64_MAX
        src = col[starts[r]:end]
        dst = out[starts[r]:end]
        for i in range(len(src)):
            v = src[i]
            if v >= base and v <= top:
                dst[i] = v - base
            else:
                dst[i] = SENTINEL
                bad += 1
    return bad


def _widen_python(src, words, lengths, widths, bases, lo, out):
    pos = 0
    for w, n, width, base in zip(words.tolist(), lengths.tolist(), widths.tolist(), bases.tolist()):
        if width == 8:
            out[pos:pos + n] = src[w:w + 2 * n].view(np.int64)
        else:
            out[pos:pos + n] = src[w:w + n].astype(np.int64) + (base + lo)
        pos += n


@njit(cache=True, nogil=True, python=_widen_python)
def widen(src, words, lengths, widths, bases, lo, out):
    """out = the runs of `src` (uint32 words) one after another, run r `lengths[r]` rows from
    word `words[r]`: 8 bytes a row as they are (widths[r] 8), or 4 bytes a row plus
    bases[r] + lo (the exceptions' rows are put back by the caller). Slices indexed from 0,
    as in narrow()."""
    pos = 0
    for r in range(len(words)):
        w = words[r]
        n = lengths[r]
        dst = out[pos:pos + n]
        if widths[r] == 8:
            pairs = src[w:w + 2 * n]
            for k in range(n):
                dst[k] = np.int64(pairs[2 * k]) | (np.int64(pairs[2 * k + 1]) << 32)
        else:
            part = src[w:w + n]
            base = bases[r] + lo
            for k in range(n):
                dst[k] = base + np.int64(part[k])
        pos += n


def _code_python(col, out, table):
    values, codes = np.unique(col, return_inverse=True)
    if len(values) > MAX_CODES:
        return -1
    table[:len(values)] = values
    out[:] = codes.reshape(-1)
    return len(values)


@njit(cache=True, nogil=True, python=_code_python)
def code(col, out, table):
    """out[i] = the code of col[i] (uint8): its place in `table`, which gets the distinct values
    in the order first seen. Returns how many, or -1 past MAX_CODES (out is then unusable)."""
    keys = np.empty(CODE_SLOTS, col.dtype)
    slots = np.full(CODE_SLOTS, -1, np.int64)
    n = 0
    last = 0
    last_code = -1
    for i in range(len(col)):
        v = col[i]
        if last_code >= 0 and v == last:
            out[i] = last_code
            continue
        h = (np.int64(v) * 0x9E3779B1) & (CODE_SLOTS - 1)
        while slots[h] >= 0 and keys[h] != v:
            h = (h + 1) & (CODE_SLOTS - 1)
        c = slots[h]
        if c < 0:
            if n == MAX_CODES:
                return -1
            keys[h] = v
            slots[h] = n
            table[n] = v
            c = n
            n += 1
        out[i] = c
        last = v
        last_code = c
    return n


def _uncode_python(src, starts, lengths, widths, tab_first, tabs, out):
    pos = 0
    for b, n, width, t in zip(starts.tolist(), lengths.tolist(), widths.tolist(), tab_first.tolist()):
        if width == 1:
            out[pos:pos + n] = tabs[t + src[b:b + n].astype(np.int64)]
        else:
            out[pos:pos + n] = src[b:b + 4 * n].view(np.int32)
        pos += n


@njit(cache=True, nogil=True, python=_uncode_python)
def uncode(src, starts, lengths, widths, tab_first, tabs, out):
    """out = the runs of `src` (bytes) one after another, run r `lengths[r]` rows from byte
    `starts[r]`: 1-byte codes into tabs[tab_first[r]:] (widths[r] 1), or the 4-byte values
    themselves (little-endian)."""
    pos = 0
    for r in range(len(starts)):
        b = starts[r]
        n = lengths[r]
        dst = out[pos:pos + n]
        if widths[r] == 1:
            part = src[b:b + n]
            tab = tabs[tab_first[r]:]
            for k in range(n):
                dst[k] = tab[part[k]]
        else:
            quad = src[b:b + 4 * n]
            for k in range(n):
                dst[k] = np.int32(np.uint32(quad[4 * k]) | (np.uint32(quad[4 * k + 1]) << 8)
                                  | (np.uint32(quad[4 * k + 2]) << 16) | (np.uint32(quad[4 * k + 3]) << 24))
        pos += n


def encode_codes(col: np.ndarray):
    """A chunk's 4-byte column as codes: (the uint8 codes, the table of its distinct values), or
    None when it has more than MAX_CODES of them (it stays 4 bytes wide)."""
    out = np.empty(len(col), np.uint8)
    table = np.empty(MAX_CODES, np.int32)
    n = code(np.ascontiguousarray(col, np.int32), out, table)
    if n < 0:
        return None
    return out, table[:n].copy()


def encode(col: np.ndarray, starts: np.ndarray, bases: np.ndarray | None, lo: int):
    """A chunk's column (int64, ordered by location) narrowed: (the uint32 words, the
    exceptions' rows within the chunk, their values), or None when it stays 8 bytes wide."""
    n = len(col)
    out = np.empty(n, np.uint32)
    b = bases if bases is not None else np.zeros(len(starts), np.int64)
    bad = narrow(col, np.ascontiguousarray(starts, np.int64), np.ascontiguousarray(b, np.int64), lo, out)
    if bad * WIDE_AFTER > n:
        return None
    rows = np.flatnonzero(out == SENTINEL) if bad else np.zeros(0, np.int64)
    return out, rows.astype(np.int64), col[rows]


def decode(words: np.ndarray, starts: np.ndarray, bases: np.ndarray | None, lo: int, rows: np.ndarray,
           values: np.ndarray) -> np.ndarray:
    """encode's column back (what a staging that keeps its rows in memory holds)."""
    n = len(words)
    lengths = np.diff(np.append(starts, n)).astype(np.int64)
    b = bases if bases is not None else np.zeros(len(starts), np.int64)
    out = np.empty(n, np.int64)
    widen(words, np.ascontiguousarray(starts, np.int64), lengths, np.full(len(starts), 4, np.int64),
          np.ascontiguousarray(b, np.int64), lo, out)
    out[rows] = values
    return out


PER_CHUNK = ("row0", "byte0", "width", "tab_first")
KEYS = PER_CHUNK + ("exc_row", "exc_val", "tab")


class ColumnLayout:
    """Where each chunk of one spilled 8-byte column lies in its file (first row, byte offset,
    width: 8 or 4 bytes a row) and the exceptions of its narrow chunks (global rows, values)."""

    def __init__(self, name: str, coded: bool = False):
        """`coded`: a 4-byte column whose narrow chunks are 1-byte codes (CODED), else an 8-byte
        one whose narrow chunks are 4-byte offsets (NARROW)."""
        self.name = name
        self.coded = coded
        self.full = 4 if coded else 8       # the width of a chunk spilled as it is
        self.lo = lo_of(name)
        self.based = name in BASED
        self._lists: dict[str, list] = {key: [] for key in KEYS}
        self._tab_rows = 0
        self.narrow_chunks = 0
        self._arrays: dict[str, np.ndarray] | None = None

    def add(self, row0: int, byte0: int, width: int, exc_rows: np.ndarray | None = None,
            exc_values: np.ndarray | None = None, table: np.ndarray | None = None) -> None:
        lists = self._lists
        lists["row0"].append(row0)
        lists["byte0"].append(byte0)
        lists["width"].append(width)
        lists["tab_first"].append(self._tab_rows)
        if width != self.full:
            self.narrow_chunks += 1
            if exc_rows is not None and len(exc_rows):
                lists["exc_row"].append(np.asarray(exc_rows, np.int64) + row0)
                lists["exc_val"].append(np.asarray(exc_values, np.int64))
            if table is not None:
                lists["tab"].append(np.asarray(table, np.int64))
                self._tab_rows += len(table)
        self._arrays = None

    def arrays(self) -> dict[str, np.ndarray]:
        if self._arrays is None:
            lists = self._lists
            self._arrays = {key: np.asarray(lists[key], np.int64) for key in PER_CHUNK}
            for key in KEYS[len(PER_CHUNK):]:
                self._arrays[key] = np.concatenate(lists[key]).astype(np.int64) if lists[key] \
                    else np.zeros(0, np.int64)
        return self._arrays

    @classmethod
    def of_arrays(cls, name: str, arrays: dict[str, np.ndarray], coded: bool) -> "ColumnLayout":
        out = cls(name, coded)
        out._arrays = arrays
        out.narrow_chunks = int((arrays["width"] != out.full).sum())
        return out


class RunBases:
    """The first time of every run of the narrow chunks, by the run's first row (ascending)."""

    def __init__(self):
        self._rows: list[np.ndarray] = []
        self._bases: list[np.ndarray] = []
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, rows: np.ndarray, bases: np.ndarray) -> None:
        self._rows.append(np.asarray(rows, np.int64))
        self._bases.append(np.asarray(bases, np.int64))
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._arrays is None:
            self._arrays = (np.concatenate(self._rows) if self._rows else np.zeros(0, np.int64),
                            np.concatenate(self._bases) if self._bases else np.zeros(0, np.int64))
        return self._arrays

    def of(self, starts: np.ndarray) -> np.ndarray:
        """The base of the run holding each row of `starts` (rows of narrow chunks)."""
        rows, bases = self.arrays()
        return bases[np.searchsorted(rows, starts, side="right") - 1]

    @classmethod
    def of_arrays(cls, rows: np.ndarray, bases: np.ndarray) -> "RunBases":
        out = cls()
        out._arrays = (rows, bases)
        return out


class SpillFile:
    """A spilled 8-byte column with narrow chunks: its file, its layout, its runs' bases. Read
    by runs (runs.read_listed), as a plain spill file is."""

    def __init__(self, path: Path, layout: ColumnLayout, bases: RunBases):
        self.path, self.layout, self.bases = Path(path), layout, bases
        self.name = self.path.name

    def read(self, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The rows [start, start + length) of each run (never across chunks), one after another."""
        starts = np.asarray(starts, np.int64)
        lengths = np.asarray(lengths, np.int64)
        out = np.empty(int(lengths.sum()), np.int32 if self.layout.coded else np.int64)
        if not len(out):
            return out
        lay = self.layout.arrays()
        k = np.searchsorted(lay["row0"], starts, side="right") - 1
        widths = lay["width"][k]
        byte = lay["byte0"][k] + (starts - lay["row0"][k]) * widths
        if self.layout.coded:
            tabs = lay["tab"]
            self._decoded(byte, lengths, widths, lay["tab_first"][k], out, np.uint8,
                          lambda src, at, n, w, first, dst: uncode(src, at, n, w, first, tabs, dst))
            return out
        bases = np.zeros(len(starts), np.int64)
        thin = widths == 4
        if self.layout.based and thin.any():
            bases[thin] = self.bases.of(starts[thin])
        lo = self.layout.lo
        self._decoded(byte, lengths, widths, bases, out, np.uint32,
                      lambda src, at, n, w, base, dst: widen(src, at, n, w, base, lo, dst))
        _put_back(lay["exc_row"], lay["exc_val"], starts, lengths, out)
        return out

    def _decoded(self, byte, lengths, widths, extra, out, unit, kernel) -> None:
        """out = the runs decoded, one after another, by kernel(src, starts, lengths, widths,
        extra, out): `src` the file's bytes as items of type `unit`, the runs' starts counted in
        those items, `extra` each run's own (base, table). Runs this long on average
        (PREAD_MIN_RUN_ROWS) are read by pread into a buffer, a run or a piece of one at a time;
        shorter ones are decoded from a map of the file (runs.read_runs says why)."""
        size = np.dtype(unit).itemsize
        if len(out) < PREAD_MIN_RUN_ROWS * len(byte):
            src, batches = mapped_batches(self.path, unit, lengths, BATCH_ROWS)
            for r0, r1, first, n in batches:
                kernel(src, byte[r0:r1] // size, lengths[r0:r1], widths[r0:r1], extra[r0:r1], out[first:first + n])
            return
        buf = np.empty(min(int((lengths * widths).max()), 4 * BATCH_ROWS) // size + 1, unit)
        raw = memoryview(buf).cast("B")
        zero = np.zeros(1, np.int64)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            pos = 0
            for r, (at, n, width) in enumerate(zip(byte.tolist(), lengths.tolist(), widths.tolist())):
                step, done = len(raw) // width, 0
                while done < n:
                    m = min(n - done, step)
                    _pread_into(fd, raw[:m * width], at + width * done, self.path)
                    kernel(buf, zero, np.array([m], np.int64), widths[r:r + 1], extra[r:r + 1],
                           out[pos + done:pos + done + m])
                    done += m
                pos += n
        finally:
            os.close(fd)


def mapped_batches(path: Path, dtype, lengths: np.ndarray, batch_rows: int):
    """The file at `path` mapped, as items of `dtype`, and the batches of the runs of `lengths`
    (r0, r1, first row, rows) that hold about `batch_rows` rows each: the pages read are let go of
    (MADV_DONTNEED: they stay cached, the process lets go of them) after each batch is taken.
    The map goes when the last view of it does (closing it by hand fails while any reference to
    a view, such as one held by a compiler, survives)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    src = np.frombuffer(m, dtype, count=len(m) // np.dtype(dtype).itemsize)

    def batches():
        ends = np.cumsum(lengths)
        cuts = np.searchsorted(ends, np.arange(batch_rows, int(ends[-1]), batch_rows), side="right")
        first = 0
        for r0, r1 in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [len(lengths)]))):
            if r1 > r0:
                n = int(ends[r1 - 1]) - first
                yield int(r0), int(r1), first, n
                m.madvise(mmap.MADV_DONTNEED)
                first += n

    return src, batches()


def _put_back(exc_row: np.ndarray, exc_val: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
              out: np.ndarray) -> None:
    """The exceptions of the rows read (runs [start, start + length) placed one after another
    in `out`) written at their places."""
    if not len(exc_row):
        return
    i0 = np.searchsorted(exc_row, starts)
    i1 = np.searchsorted(exc_row, starts + lengths)
    counts = i1 - i0
    total = int(counts.sum())
    if not total:
        return
    run = np.repeat(np.arange(len(starts)), counts)
    before = np.cumsum(counts) - counts
    e = i0[run] + (np.arange(total) - before[run])
    dst = (np.cumsum(lengths) - lengths)[run] + (exc_row[e] - starts[run])
    out[dst] = exc_val[e]


def _pread_into(fd: int, view: memoryview, offset: int, path: Path) -> None:
    while len(view):
        got = os.preadv(fd, [view], offset)
        if got <= 0:
            raise EOFError(f"{path}: {len(view)} bytes missing at offset {offset}")
        view, offset = view[got:], offset + got


# ---------------------------------------------------------------- saved beside the run index

def save(path: Path, layouts: dict[str, ColumnLayout], bases: RunBases, names: list[str]) -> None:
    """The layouts of a table's narrow columns (`names`: the table's columns, in the schema's
    order) and its runs' bases, as bare little-endian int64 (see rawtables.py on why)."""
    from popview.cache.runs import save_raw

    parts = [np.array([len(layouts)], np.int64)]
    for name, lay in layouts.items():
        a = lay.arrays()
        parts += [np.array([names.index(name), int(lay.coded), len(a["row0"]), len(a["exc_row"]), len(a["tab"])],
                           np.int64)] + [a[key] for key in KEYS]
    rows, b = bases.arrays()
    parts += [np.array([len(rows)], np.int64), rows, b]
    save_raw(path, np.concatenate(parts).astype("<i8"))


def load(path: Path, names: list[str]) -> tuple[dict[str, ColumnLayout], RunBases]:
    data = np.fromfile(path, "<i8").astype(np.int64, copy=False)
    at = 1
    layouts = {}
    for _ in range(int(data[0])):
        index, coded, chunks, exc, tab = (int(x) for x in data[at:at + 5])
        at += 5
        arrays = {}
        for key in KEYS:
            n = chunks if key in PER_CHUNK else exc if key.startswith("exc") else tab
            arrays[key] = data[at:at + n]
            at += n
        layouts[names[index]] = ColumnLayout.of_arrays(names[index], arrays, bool(coded))
    n = int(data[at])
    bases = RunBases.of_arrays(data[at + 1:at + 1 + n], data[at + 1 + n:at + 1 + 2 * n])
    return layouts, bases
