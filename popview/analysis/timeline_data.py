"""What the timeline draws, computed without Qt.

For a set of rows (locations), a time window [t0, t1) and a pixel width,
`TimelineData.picture` returns per row and pixel the dominant value of a
colour mode and the share of the pixel it covers (categorical modes), or a
number (gradient modes). Zoomed out it reads one level of the pyramid (the
timeline overview: popview.cache.overview; about pixels-many bins per row); zoomed in, the records of
the visible window from the time-block tiles; so a redraw costs about
rows x pixels whatever the size of the trace.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from popview.analysis import dither
from popview.cache import pyramid
from popview.model.states import RUNNING

NONE = pyramid.NONE
IDLE_GAP = -3             # state mode: a worker thread's time with no record (an OpenMP worker waiting)
IDLE_GAP_LABEL = "Idle (no record: OpenMP worker waiting)"
RAW_BUDGET = 400_000      # tile records read at most for one picture
EVENT_BUDGET = 200_000    # raw events read at most for event-based pictures and flags
MESSAGE_BUDGET = 20_000
FLAG_ROWS = 256           # events are read location by location: flags and event modes for this many rows
LEVEL_CACHE_CELLS = 8_000_000   # pyramid levels up to this many bins (all rows) are kept in memory...
LEVEL_CACHE_SIZE = 8            # ...this many of them
PARADIGM_MODES = {"mpi": "mpi", "openmp": "openmp"}


@dataclass(frozen=True)
class ColourMode:
    """kind: state | mpi | openmp | callpath | useful | counter | ipc | event | cfg.

    param: call-path depth (callpath), event type code (counter, event) or the window's
    position in its cfg (cfg: a Paraver view's timeline, drawn by its own data source);
    categories: draw an event type's values (a cfg window's: code colours) as categories, not a gradient.
    """

    kind: str = "state"
    param: int = 0
    categories: bool = False
    label: str = ""

    @property
    def categorical(self) -> bool:
        return self.kind in ("state", "mpi", "openmp", "callpath") or (self.kind in ("event", "cfg") and self.categories)


@dataclass
class Picture:
    """Rows x pixels of one colour mode in [t0, t1)."""

    mode: ColourMode
    t0: int
    t1: int
    values: np.ndarray              # int64 category (NONE: nothing) or float64 (NaN: nothing)
    share: np.ndarray | None        # categorical: fraction of the pixel the value covers
    source: str                     # "records" or "pyramid level k"
    message: str = ""               # why the picture is empty, when it is


@dataclass
class Lines:
    """Messages in a window: one row per message (send/recv location and time)."""

    send_loc: np.ndarray
    recv_loc: np.ndarray
    send_time: np.ndarray
    recv_time: np.ndarray
    truncated: bool = False


@dataclass
class Flags:
    loc: np.ndarray
    time: np.ndarray
    type: np.ndarray
    value: np.ndarray
    truncated: bool = False


@dataclass
class Lookups:
    """Call path -> value tables of the call-path based modes."""

    mpi: np.ndarray
    openmp: np.ndarray
    depth: np.ndarray
    depth_cache: dict = field(default_factory=dict)


class TimelineData:
    """Window queries on one experiment's cache."""

    def __init__(self, exp):
        self.exp = exp
        self.reader = exp.reader
        self.defs = exp.definitions
        self.n_loc = len(self.defs.locations)
        self._recorded_end: int | None = None
        self._pyr = None      # the timeline overview, opened (or built: popview.cache.overview) when first read
        self._tile_offsets: dict[str, np.ndarray] = {}
        self._range_cache: dict[ColourMode, tuple[float, float]] = {}
        self._levels: dict[tuple, tuple] = {}
        self._handles: dict[tuple[str, ...], object] = {}
        self._block_ns: dict[str, int] = {}
        # worker threads (a CPU thread other than its process's first): the profile counts the time
        # their records leave uncovered as OpenMP idle (cache.cumulative.with_idle_gaps)
        self.worker = np.array([loc.kind == "thread" and loc.thread > 0 for loc in self.defs.locations], bool) \
            if self.defs.locations else np.zeros(self.n_loc, bool)
        region = np.asarray(self.defs.callpath_region, np.int64)
        self.lookups = Lookups(
            mpi=_to_region(pyramid.paradigm_lookup(self.defs, "mpi"), region),
            openmp=_to_region(pyramid.paradigm_lookup(self.defs, "openmp"), region),
            depth=_callpath_depth(np.asarray(self.defs.callpath_parent, np.int64)))

    @property
    def pyr(self):
        """The pyramid group (levels and tiles): the experiment's timeline overview, built
        from the cache on first use when the conversion did not build it (the window has it
        built on its opening lane before any timeline is drawn: Experiment.prepare_timeline)."""
        if self._pyr is None:
            failed = getattr(self.exp, "timeline_failure", None)     # not built again (in the GUI thread)
            self._pyr = (self.reader.group(pyramid.GROUP) if failed is None else None) or False
            self._base = int(self._pyr.attrs["base_ns"]) if self._pyr else 0
        return self._pyr or None

    @property
    def base(self) -> int:
        """The finest bin's width (ns)."""
        if self._pyr is None:
            _ = self.pyr                      # opens it, and reads its base
        return self._base

    # ---- what can be drawn ----------------------------------------------------
    @property
    def t_end(self) -> int:
        return max(int(self.defs.t_end), 1)

    @property
    def recorded_end(self) -> int:
        """Where the records stop: the run's end, or for a trace cut short (the reader's
        flags["truncated"]) the time its last record reaches (report.warnings.records_end, the
        time the metric tables' warning gives). The time after it is not recorded: not idle."""
        if self._recorded_end is None:
            end = self.t_end
            if (getattr(self.defs, "flags", None) or {}).get("truncated"):
                from popview.analysis.report.warnings import records_end
                last = records_end(self.exp)
                end = min(end, last) if last > 0 else end
            self._recorded_end = end
        return self._recorded_end

    def modes(self) -> list[ColourMode]:
        """Colour modes this experiment has data for."""
        modes = [ColourMode("state", label="State")]
        if (self.lookups.mpi >= 0).any():
            modes.append(ColourMode("mpi", label="MPI call"))
        if (self.lookups.openmp >= 0).any():
            modes.append(ColourMode("openmp", label="OpenMP construct"))
        if len(self.lookups.depth):
            for d in range(min(int(self.lookups.depth.max()) + 1, 6)):
                modes.append(ColourMode("callpath", d, label=f"Call path (depth {d})"))
        if self.reader.has("states"):
            modes.append(ColourMode("useful", label="Useful duration"))
        codes = pyramid.counter_codes(self.defs)
        names = {self.defs.event_types[c].name: c for c in codes}
        if "PAPI_TOT_INS" in names and "PAPI_TOT_CYC" in names:
            modes.append(ColourMode("ipc", label="IPC"))
        for c in codes:
            modes.append(ColourMode("counter", c, label=f"{self.defs.event_types[c].name} rate"))
        for code, et in sorted(self.defs.event_types.items()):
            if et.kind in ("info", "mpi-param", "caller", "region"):
                modes.append(ColourMode("event", code, categories=bool(et.values), label=f"Event {et.name}"))
        return modes

    # ---- pictures -------------------------------------------------------------------
    def picture(self, mode: ColourMode, rows, t0: int, t1: int, width: int) -> Picture:
        """Per row (location index) and pixel: the value of `mode` in [t0, t1)."""
        rows = np.asarray(rows, np.int64)
        t0, t1, width = int(t0), int(max(t1, t0 + 1)), max(int(width), 1)
        if len(rows) == 0:
            empty = np.zeros((0, width), np.int32 if mode.categorical else np.float64)
            return Picture(mode, t0, t1, empty, np.zeros((0, width), np.float32) if mode.categorical else None,
                           "none")
        if mode.kind == "event":
            return self._event_picture(mode, rows, t0, t1, width)
        failed = getattr(self.exp, "timeline_failure", None)
        if failed is not None and not self.pyr:
            return Picture(mode, t0, t1, np.full((len(rows), width), NONE if mode.categorical else np.nan,
                                                 np.int32 if mode.categorical else np.float64),
                           np.zeros((len(rows), width), np.float32) if mode.categorical else None, "none",
                           f"no timeline overview: it could not be built ({failed})")
        if mode.categorical:
            return self._categorical(mode, rows, t0, t1, width)
        return self._numeric(mode, rows, t0, t1, width)

    def _categorical(self, mode, rows, t0, t1, width) -> Picture:
        idle = [] if mode.kind == "state" and self._workers(rows).any() else None
        pic = self._categorical_records(mode, rows, t0, t1, width, idle)
        if idle is not None and pic.source != "none":
            self._fill_idle_gaps(pic, rows, idle[0] if idle else None)
        return pic

    def _workers(self, rows: np.ndarray) -> np.ndarray:
        return self.worker[rows] if len(self.worker) else np.zeros(len(rows), bool)

    def _fill_idle_gaps(self, pic: Picture, rows: np.ndarray, idle: np.ndarray | None) -> None:
        """A worker thread's time with no record inside the run is what the profile counts it
        as: OpenMP idle (Extrae writes nothing while a worker waits), not blank like the time
        outside the run. Zoomed out, it is drawn in proportion to its time: a pixel is idle
        where its idle share exceeds its threshold (dither.drawn: ordered dithering fixed
        to the pixel's place in time, so panning never recolours a pixel whose time span is
        unchanged, as the error diffusion along the row did: its rounding carried from the
        view's first pixel), and shows its dominant record otherwise; a pixel with no record
        inside the run is idle. A worker waiting 80 % of the run then has about
        80 % of its pixels idle, placed where it waits, whatever the zoom: a pixel's dominant
        record hid the waits of every pixel that held a short burst (heat 2x2's workers, idle
        75-82 % of the run, drew 46-53 % idle), and the state covering most of each pixel
        (Paraver's mode) hid every burst shorter than half a pixel. Zoomed in, a pixel
        holds one record or one wait and is drawn as it is. `idle` (rows x pixels: the share of
        each pixel, or of the pyramid bin drawn there, inside the run and covered by no
        record) is None where the overview does not hold it (one built before it did): whole
        empty pixels only then. Records and pyramid alike; a 'Not created' record stays itself."""
        worker = self._workers(rows)
        width = pic.values.shape[1]
        centre = pic.t0 + (np.arange(width) + 0.5) * ((pic.t1 - pic.t0) / width)
        inside = (centre >= 0) & (centre < self.recorded_end)      # a truncated trace's end: not idle
        gap = (pic.values == NONE) & worker[:, None] & inside[None, :]
        if idle is not None:
            mine = np.clip(idle[worker].astype(np.float64), 0.0, 1.0)
            gap[worker] |= dither.drawn(mine, pic.t0, pic.t1)
        pic.values[gap] = IDLE_GAP
        pic.share[gap] = 1.0 if idle is None else np.clip(idle[gap], 0.0, 1.0)

    def _records_idle(self, recs, rows, t0: int, pw: float, width: int) -> np.ndarray:
        """Per worker row and pixel: the share of the pixel inside the run that no record covers."""
        seg_row, lo, hi, skip, begin, end = recs[:6]
        mine = self._workers(rows)[seg_row]
        covered = np.full((len(rows), width), np.nan)
        pyramid.reduce_kernel(seg_row[mine], lo[mine], hi[mine], skip[mine], begin, end,
                              (end - begin).astype(np.float64), float(t0), pw, width, True, covered)
        edges = t0 + np.arange(width + 1) * pw
        inside = np.clip(np.minimum(edges[1:], self.recorded_end) - np.maximum(edges[:-1], 0), 0, None) / pw
        return np.clip(inside[None, :] - np.nan_to_num(covered) / pw, 0.0, 1.0).astype(np.float32)

    def _categorical_records(self, mode, rows, t0, t1, width, idle: list | None = None) -> Picture:
        """The dominant value of each pixel (and the share it covers). `idle`, a list, receives
        the share of each pixel no record covers inside the run (state mode: _fill_idle_gaps)
        when the records or the overview tell it."""
        pw = (t1 - t0) / width
        tile = "state" if mode.kind == "state" else "callpath"
        recs = self._tile_records(tile, rows, t0, t1) if self._raw_ok(tile, t0, t1, pw) else None
        if recs is not None:
            seg_row, lo, hi, skip, begin, end, value = recs
            value = self._map_values(mode, value)
            values = np.full((len(rows), width), NONE, np.int32)
            share = np.zeros((len(rows), width), np.float32)
            pyramid.dominant_kernel(seg_row, lo, hi, skip, begin, end, value, np.ones(len(value)), float(t0), pw,
                                    width, values, share)
            if idle is not None:
                idle.append(self._records_idle(recs, rows, t0, pw, width))
            return Picture(mode, t0, t1, values, share, "records")
        channel = "state" if mode.kind == "state" else ("callpath" if mode.kind == "callpath" else mode.kind)
        level, cols, vals, shr = self._level(channel, rows, t0, t1, width)
        if vals is None:
            return Picture(mode, t0, t1, np.full((len(rows), width), NONE, np.int32),
                           np.zeros((len(rows), width), np.float32), "none", "no data for this colour mode")
        if mode.kind == "callpath":
            vals = self._map_values(mode, vals)
        elif mode.kind in PARADIGM_MODES:
            region = np.asarray(self.defs.callpath_region, np.int64)
            vals = np.where(vals >= 0, region[np.maximum(vals, 0)], NONE)
        shr = shr * np.float32(1.0 / 255.0)
        if idle is not None:
            bin_idle = self._level_idle(rows, level, cols)
            if bin_idle is not None:
                idle.append(bin_idle)
        if (cols >= 0).all():
            return Picture(mode, t0, t1, vals.astype(np.int32, copy=False), shr, f"pyramid level {level}")
        values = np.full((len(rows), width), NONE, np.int32)
        share = np.zeros((len(rows), width), np.float32)
        values[:, cols >= 0] = vals
        share[:, cols >= 0] = shr
        return Picture(mode, t0, t1, values, share, f"pyramid level {level}")

    def _level_idle(self, rows, level: int, cols: np.ndarray) -> np.ndarray | None:
        """Per row and pixel: the share of the pyramid bin drawn there (cols: -1 outside the run)
        inside the run that no record covers; None when the overview has no cover (older)."""
        if self._group(("state", str(level), pyramid.COVER)) is None:
            return None
        cover = self._pick(self._level_arrays("state", level, pyramid.COVER)[0], rows, cols[cols >= 0])
        width_ns = self.base << level
        out = np.zeros((len(rows), len(cols)), np.float32)
        first = cols[cols >= 0] * width_ns
        inside = np.clip(np.minimum(first + width_ns, self.recorded_end) - first, 0, None) / width_ns
        out[:, cols >= 0] = np.clip(inside[None, :] - cover * (1.0 / 255.0), 0.0, 1.0)
        return out

    def _numeric(self, mode, rows, t0, t1, width) -> Picture:
        pw = (t1 - t0) / width
        out = np.full((len(rows), width), np.nan)
        if mode.kind == "useful":
            if self._raw_ok("state", t0, t1, pw):
                seg_row, lo, hi, skip, begin, end, value = self._tile_records("state", rows, t0, t1)
                dur = np.where(value == RUNNING, (end - begin).astype(np.float64), np.nan)
                pyramid.reduce_kernel(seg_row, lo, hi, skip, begin, end, dur, float(t0), pw, width, False, out)
                return Picture(mode, t0, t1, out, None, "records")
            level, cols, vals, _ = self._level("useful", rows, t0, t1, width)
            if vals is not None:
                out[:, cols >= 0] = vals
            return Picture(mode, t0, t1, out, None, f"pyramid level {level}")
        if mode.kind == "counter":
            sums, source = self._counter_sums(mode.param, rows, t0, t1, width)
            return Picture(mode, t0, t1, sums / pw * 1e9, None, source)   # per second
        if mode.kind == "ipc":
            ins, source = self._counter_sums(self.defs.counter_code("PAPI_TOT_INS"), rows, t0, t1, width)
            cyc, _ = self._counter_sums(self.defs.counter_code("PAPI_TOT_CYC"), rows, t0, t1, width)
            with np.errstate(divide="ignore", invalid="ignore"):
                ipc = np.where(cyc > 0, ins / cyc, np.nan)
            return Picture(mode, t0, t1, ipc, None, source)
        raise ValueError(f"unknown colour mode {mode.kind!r}")

    def _counter_sums(self, code, rows, t0, t1, width):
        pw = (t1 - t0) / width
        out = np.full((len(rows), width), np.nan)
        name = f"counter_{code}"
        if self._raw_ok(name, t0, t1, pw):
            seg_row, lo, hi, skip, begin, end, value = self._tile_records(name, rows, t0, t1)
            pyramid.reduce_kernel(seg_row, lo, hi, skip, begin, end, value.astype(np.float64), float(t0), pw, width,
                                  True, out)
            return out, "records"
        level, cols, vals, _ = self._level(name, rows, t0, t1, width)
        if vals is not None:
            out[:, cols >= 0] = vals * (pw / float(self.base << level))   # the bin's sum scaled to a pixel
        return out, f"pyramid level {level}"

    def _event_picture(self, mode, rows, t0, t1, width) -> Picture:
        """Paraver's "last event value": each value holds until the next event of the type."""
        pw = (t1 - t0) / width
        estimate = self._estimate_rows("events", rows, t0, t1)
        categorical = mode.categorical
        values = np.full((len(rows), width), NONE if categorical else np.nan,
                         np.int32 if categorical else np.float64)
        share = np.zeros((len(rows), width), np.float32) if categorical else None
        if estimate > EVENT_BUDGET or len(rows) > FLAG_ROWS:
            return Picture(mode, t0, t1, values, share, "none",
                           f"event types are drawn for at most {FLAG_ROWS} rows and "
                           f"{EVENT_BUDGET:,} events: zoom in")
        ev = self.reader.read("events", rows, t0, t1, columns=["loc", "time", "type", "value"])
        keep = ev["type"] == mode.param
        loc, time, value = ev["loc"][keep], ev["time"][keep], ev["value"][keep]
        row_of = np.full(self.n_loc, -1, np.int64)
        row_of[rows] = np.arange(len(rows))
        nxt = np.r_[time[1:], t1]
        last = np.r_[loc[1:] != loc[:-1], True]
        nxt[last] = t1
        seg_row, lo, hi = _segments(row_of[loc])
        skip = np.full(len(seg_row), np.iinfo(np.int64).min)
        if categorical:
            pyramid.dominant_kernel(seg_row, lo, hi, skip, time, nxt, value.astype(np.int64), np.ones(len(time)),
                                    float(t0), pw, width, values, share)
        else:
            numbers = self.defs.event_types[mode.param].decode(value) if mode.param in self.defs.event_types \
                else value.astype(np.float64)
            pyramid.reduce_kernel(seg_row, lo, hi, skip, time, nxt, numbers, float(t0), pw, width, False, values)
        return Picture(mode, t0, t1, values, share, "records")

    # ---- data access ------------------------------------------------------------------
    def _tile_offsets_of(self, name: str) -> np.ndarray | None:
        if name not in self._tile_offsets:
            g = self._group(("tiles", name))
            self._tile_offsets[name] = None if g is None else g["offsets"][:]
        return self._tile_offsets[name]

    def _group(self, path: tuple[str, ...]):
        """An HDF5 group or dataset of the pyramid, looked up once (lookups cost ~1 ms each)."""
        if path not in self._handles:
            node = self.pyr
            for part in path:
                node = node[part] if node is not None and part in node else None
            self._handles[path] = node
        return self._handles[path]

    def _blocks(self, name: str, t0: int, t1: int) -> tuple[int, int, int]:
        block_ns = int(self._block_ns.setdefault(name, int(self._group(("tiles", name)).attrs["block_ns"])))
        n_blocks = self._tile_offsets_of(name).shape[0]
        b0 = min(max(t0 // block_ns, 0), n_blocks - 1)
        b1 = min(max((t1 - 1) // block_ns, 0), n_blocks - 1)
        return b0, b1, block_ns

    def _raw_ok(self, name: str, t0: int, t1: int, pw: float) -> bool:
        """Read records when the window holds few enough, or the pyramid is too coarse."""
        off = self._tile_offsets_of(name)
        if off is None:
            return False
        b0, b1, _ = self._blocks(name, t0, t1)
        n = int(off[b1, -1] - off[b0, 0])
        return n <= RAW_BUDGET or (pw < self.base and n <= 4 * RAW_BUDGET)

    def _tile_records(self, name: str, rows: np.ndarray, t0: int, t1: int):
        """Records of the blocks covering the window as kernel segments (rows in time order)."""
        off = self._tile_offsets_of(name)
        b0, b1, block_ns = self._blocks(name, t0, t1)
        lo, hi = int(off[b0, 0]), int(off[b1, -1])
        begin, end, value = (self._group(("tiles", name, c))[lo:hi] for c in ("begin", "end", "value"))
        blocks = np.arange(b0, b1 + 1)
        seg_lo = (off[blocks][:, rows] - lo).T.ravel()          # row-major: each row, its blocks in order
        seg_hi = (off[blocks][:, rows + 1] - lo).T.ravel()
        seg_row = np.repeat(np.arange(len(rows)), len(blocks))
        skip = np.tile(np.where(blocks == b0, np.iinfo(np.int64).min, blocks * block_ns), len(rows))
        return seg_row, seg_lo, seg_hi, skip, begin, end, value

    def _level(self, channel: str, rows, t0, t1, width):
        """The finest level whose bins are at least a pixel wide, sampled at the pixel centres:
        (level, bin column of each pixel (-1 outside the run), values, shares) of the pixels inside."""
        if self._group((channel,)) is None:
            return 0, None, None, None
        pw = (t1 - t0) / width
        n_levels = int(self.pyr.attrs["n_levels"])
        level = int(np.clip(np.ceil(np.log2(max(pw, 1.0) / self.base)), 0, n_levels - 1))
        width_ns = self.base << level
        centres = t0 + (np.arange(width) + 0.5) * pw
        cols = np.floor(centres / width_ns).astype(np.int64)
        value, share = self._level_arrays(channel, level)
        n_bins = value.shape[1]
        cols[(cols < 0) | (cols >= n_bins) | (centres >= self.t_end)] = -1
        inside = cols[cols >= 0]
        if len(inside) == 0:
            return level, cols, np.zeros((len(rows), 0)), np.zeros((len(rows), 0))
        return level, cols, self._pick(value, rows, inside), (self._pick(share, rows, inside)
                                                              if share is not None else None)

    @staticmethod
    def _pick(ds, rows: np.ndarray, bins: np.ndarray) -> np.ndarray:
        """Rows `rows`, bins `bins` (at least one) of a level's dataset or array."""
        if len(bins) == 0:
            return np.zeros((len(rows), 0))
        b0, b1 = int(bins.min()), int(bins.max()) + 1
        r0, r1 = int(rows.min()), int(rows.max()) + 1
        contiguous = len(rows) == r1 - r0 and bool((np.diff(rows) == 1).all())
        block = ds[r0:r1, b0:b1]
        return np.take(block if contiguous else block[rows - r0], bins - b0, axis=1)

    def _level_arrays(self, channel: str, level: int, *names: str):
        """A level's datasets ("value" and "share", or `names`), or the level in memory when
        small (the zoomed-out views reuse it)."""
        names = names or ("value", "share")
        found = [self._group((channel, str(level), name)) for name in names]
        if found[0].size > LEVEL_CACHE_CELLS:
            return tuple(found)
        key = (channel, level, names)
        if key not in self._levels:
            while len(self._levels) >= LEVEL_CACHE_SIZE:
                self._levels.pop(next(iter(self._levels)))
            self._levels[key] = tuple(ds[...] if ds is not None else None for ds in found)
        return self._levels[key]

    def _estimate_rows(self, table: str, rows, t0: int, t1: int) -> int:
        if not self.reader.has(table):
            return 0
        counts = self.reader.counts_per_location(table)[rows]
        return int(counts.sum() * min(1.0, (t1 - t0) / self.t_end))

    def _map_values(self, mode: ColourMode, cp: np.ndarray) -> np.ndarray:
        if mode.kind in PARADIGM_MODES:
            table = getattr(self.lookups, mode.kind)
        elif mode.kind == "callpath":
            table = self._depth_table(mode.param)
        else:
            return cp
        if len(table) == 0:
            return np.full(len(cp), NONE, np.int64)
        return np.where(cp >= 0, table[np.clip(cp, 0, len(table) - 1)], NONE)

    def _depth_table(self, depth: int) -> np.ndarray:
        """Call path -> its ancestor at `depth` (itself when shallower)."""
        if depth not in self.lookups.depth_cache:
            parent = np.asarray(self.defs.callpath_parent, np.int64)
            table = np.arange(len(parent), dtype=np.int64)
            for _ in range(int(self.lookups.depth.max(initial=0))):
                deeper = self.lookups.depth[table] > depth
                if not deeper.any():
                    break
                table[deeper] = parent[table[deeper]]
            self.lookups.depth_cache[depth] = table
        return self.lookups.depth_cache[depth]

    # ---- labels and colours -------------------------------------------------------------
    def category_label(self, mode: ColourMode, value: int) -> str:
        if value == NONE:
            return ""
        if mode.kind == "state" and value == IDLE_GAP:
            return IDLE_GAP_LABEL
        if mode.kind == "state":
            return self.defs.states.get(int(value), {}).get("name", f"state {value}")
        if mode.kind in PARADIGM_MODES:
            return self.defs.regions[int(value)].name
        if mode.kind == "callpath":
            return self.defs.callpath_name(int(value))
        et = self.defs.event_types.get(mode.param)
        return (et.values.get(int(value)) if et else None) or str(value)

    def value_range(self, mode: ColourMode) -> tuple[float, float]:
        """Colour scale of a gradient mode: 0 (or the minimum) to the 95th percentile of the
        distinct values of a picture of the whole run (distinct, so one long burst does not
        stretch the scale of the many short ones)."""
        if mode not in self._range_cache:
            pic = self.picture(mode, np.arange(self.n_loc), 0, self.t_end, 4096)
            v = pic.values[np.isfinite(pic.values)] if pic.values.dtype.kind == "f" else pic.values.ravel()
            v = np.unique(v)
            if len(v) == 0:
                self._range_cache[mode] = (0.0, 1.0)
            else:
                low = 0.0 if mode.kind in ("useful", "counter", "ipc") else float(v.min())
                high = float(np.percentile(v, 95))
                self._range_cache[mode] = (low, high if high > low else low + 1.0)
        return self._range_cache[mode]

    # ---- overlays ---------------------------------------------------------------------------
    def lines(self, rows, t0: int, t1: int, limit: int = MESSAGE_BUDGET) -> Lines | None:
        """Messages sent from `rows` whose send -> receive interval crosses the window
        (None when there are none or too many to draw)."""
        rows = np.asarray(rows, np.int64)
        if not self.reader.has("messages") or self._tile_offsets_of("messages") is None:
            return None
        off = self._tile_offsets_of("messages")
        b0, b1, _ = self._blocks("messages", t0, t1)
        if off[b1, -1] - off[b0, 0] > max(RAW_BUDGET, 4 * limit):
            return None
        seg_row, lo, hi, skip, begin, end, value = self._tile_records("messages", rows, t0, t1)
        counts = hi - lo
        idx = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        seg = np.repeat(np.arange(len(lo)), counts)
        keep = (begin[idx] >= skip[seg]) & (begin[idx] < t1) & (end[idx] >= t0)
        idx, seg = idx[keep], seg[keep]
        truncated = len(idx) > limit
        idx, seg = idx[:limit], seg[:limit]
        return Lines(rows[seg_row[seg]], value[idx].astype(np.int64), begin[idx], end[idx], truncated)

    def flags(self, rows, t0: int, t1: int, limit: int = EVENT_BUDGET // 10) -> Flags | None:
        """Events in the window (None when too many to draw one by one, or too many rows
        to read them location by location)."""
        rows = np.asarray(rows, np.int64)
        if (not self.reader.has("events") or len(rows) > FLAG_ROWS
                or self._estimate_rows("events", rows, t0, t1) > 4 * limit):
            return None
        ev = self.reader.read("events", rows, t0, t1)
        truncated = len(ev["loc"]) > limit
        cut = slice(0, limit)
        return Flags(ev["loc"][cut], ev["time"][cut], ev["type"][cut], ev["value"][cut], truncated)

    # ---- what / where -------------------------------------------------------------------------
    def info_at(self, loc: int, t: int, tolerance: int = 0) -> dict:
        """What happens on location `loc` at time `t`: state, call path, events, counters, messages."""
        d = self.defs
        location = d.locations[loc]
        process = d.processes[location.process] if location.process < len(d.processes) else None
        info = {"location": location.name, "loc": loc, "time": int(t),
                "process": process.name if process else "",
                "node": d.nodes[process.node] if process and 0 <= process.node < len(d.nodes) else ""}
        st = self.reader.read("states", [loc], t, t + 1)
        if len(st["state"]):
            code = int(st["state"][-1])
            info["state"] = d.states.get(code, {}).get("name", f"state {code}")
            info["state_begin"], info["state_end"] = int(st["begin"][-1]), int(st["end"][-1])
        calls = self.reader.read("calls", [loc], t, t + 1)
        if len(calls["callpath"]):
            i = int(np.argmax(calls["depth"]))
            info["callpath"] = d.callpath_name(int(calls["callpath"][i]))
            info["call_begin"], info["call_end"] = int(calls["begin"][i]), int(calls["end"][i])
        tol = max(int(tolerance), 0)
        ev = self.reader.read("events", [loc], t - tol, t + tol + 1)
        info["events"] = [(int(tm), self._event_name(int(ty)), self._event_value(int(ty), int(v)))
                          for tm, ty, v in zip(ev["time"], ev["type"], ev["value"])][:20]
        info["counters"] = self._counters_at(loc, t)
        info["messages"] = self._messages_at(loc, t, tol)
        return info

    def _event_name(self, code: int) -> str:
        et = self.defs.event_types.get(code)
        return et.name if et else str(code)

    def _event_value(self, code: int, value: int) -> str:
        et = self.defs.event_types.get(code)
        if et is not None and et.value_type == "double":
            return f"{et.decode(np.array([value]))[0]:g}"
        return (et.values.get(value) if et else None) or str(value)

    def _counters_at(self, loc: int, t: int) -> dict[str, float]:
        """Each counter's rate (per second) over the reading interval containing t."""
        out = {}
        for code in pyramid.counter_codes(self.defs):
            off = self._tile_offsets_of(f"counter_{code}")
            if off is None:
                continue
            seg_row, lo, hi, skip, begin, end, value = self._tile_records(f"counter_{code}", np.array([loc]), t, t + 1)
            idx = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)]) if len(lo) else np.zeros(0, int)
            hit = idx[(begin[idx] <= t) & (end[idx] > t)]
            if len(hit):
                i = hit[0]
                out[self._event_name(code)] = float(value[i]) / max(int(end[i] - begin[i]), 1) * 1e9
        return out

    def _messages_at(self, loc: int, t: int, tol: int) -> list[dict]:
        sent = self.reader.read("messages", [loc], t - tol, t + tol + 1)
        out = [{"direction": "send", "partner": self.defs.locations[int(r)].name, "partner_loc": int(r),
                "send_time": int(s), "recv_time": int(rt), "size": int(z)}
               for r, s, rt, z in zip(sent["recv_loc"], sent["send_time"], sent["recv_time"], sent["size"])]
        lookback = max(100 * tol, self.t_end // 100)      # a message received at t was sent shortly before
        if self._estimate_rows("messages", np.arange(self.n_loc), t - lookback, t + tol + 1) <= MESSAGE_BUDGET:
            allm = self.reader.read("messages", None, t - lookback, t + tol + 1)
            hit = (allm["recv_loc"] == loc) & (np.abs(allm["recv_time"] - t) <= tol)
            out += [{"direction": "receive", "partner": self.defs.locations[int(s)].name, "partner_loc": int(s),
                     "send_time": int(st), "recv_time": int(rt), "size": int(z)}
                    for s, st, rt, z in zip(allm["send_loc"][hit], allm["send_time"][hit], allm["recv_time"][hit],
                                            allm["size"][hit])]
        return out[:20]


_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1.0}


def parse_time(text: str) -> int:
    """'1.5 s', '200ms', '30 us', '12ns' or a bare number of seconds -> ns."""
    t = text.strip().lower().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(unit) and t[: -len(unit)]:
            number, scale = t[: -len(unit)], _UNITS[unit]
            break
    else:
        number, scale = t, 1e9
    try:
        return int(round(float(number) * scale))
    except ValueError:
        raise ValueError(f"not a time: {text!r} (write e.g. 1.5 s, 200 ms, 30 us)") from None


def parse_time_window(text: str) -> tuple[int, int | None]:
    """'1.2 s' (a time to centre on) or '10ms-12ms' / '10ms..12ms' (a window) -> (t0, t1 or None)."""
    t = text.strip().replace("..", "-")
    head, sep, tail = t.partition("-")
    if sep and head.strip() and tail.strip():
        t0, t1 = parse_time(head), parse_time(tail)
        if t1 <= t0:
            raise ValueError(f"empty time window: {text!r}")
        return t0, t1
    return parse_time(t), None


# ---- helpers --------------------------------------------------------------------------------------
def _to_region(cp_table: np.ndarray, region: np.ndarray) -> np.ndarray:
    return np.where(cp_table >= 0, region[np.maximum(cp_table, 0)], NONE) if len(cp_table) else cp_table


def _callpath_depth(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), np.int64)
    for cp in range(len(parent)):       # parents precede children
        if parent[cp] >= 0:
            depth[cp] = depth[parent[cp]] + 1
    return depth


def _segments(row: np.ndarray):
    """Segments of consecutive equal rows of a location-sorted record list."""
    if len(row) == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    ends = np.r_[starts[1:], len(row)]
    return row[starts].astype(np.int64), starts.astype(np.int64), ends.astype(np.int64)


def focus_span(exp, focus) -> tuple[int, int] | None:
    """[t0, t1] of a focus in one run: the window itself, the first start to the
    last end of a call path's visits on the master threads, or the iterations'
    window; None for the whole run or a focus this run does not have."""
    from popview.analysis.gather import FocusError, iteration_window, visits

    if focus.kind == "window":
        return int(focus.t0), int(focus.t1)
    try:
        if focus.kind == "callpath" and focus.callpath:
            _, begin, end = visits(exp, focus.callpath)
            return (int(begin.min()), int(end.max())) if len(begin) else None
        if focus.kind == "iterations" and focus.callpath:
            return iteration_window(exp, focus.callpath, focus.first, focus.last)
    except (FocusError, KeyError):
        return None
    return None



_warm_lock = threading.Lock()
_warm = False


def kernels_warm() -> bool:
    """Whether warm_kernels has run in this process."""
    return _warm


def warm_kernels() -> None:
    """Compile (or load) the kernels a picture runs, for the argument types TimelineData
    gives them, in the caller's thread: the window calls this on a worker before its first
    timeline, whose pictures are drawn in the GUI thread, so that a first run on a machine
    does not freeze the window 0.4-1 s per kernel compiling them. Costs microseconds once
    they are compiled (the module compiled ahead of time, numba's cache)."""
    global _warm
    with _warm_lock:
        if _warm:
            return
        one = np.zeros(1, np.int64)
        seg = (one, one, one + 1, np.full(1, np.iinfo(np.int64).min), one, one + 1)
        for value in (np.zeros(1, np.int32), np.zeros(1, np.int64)):       # states / call paths; event values
            pyramid.dominant_kernel(*seg, value, np.ones(1), 0.0, 1.0, 1, np.full((1, 1), NONE, np.int32),
                                    np.zeros((1, 1), np.float32))
        for spread in (True, False):
            pyramid.reduce_kernel(*seg, np.ones(1), 0.0, 1.0, 1, spread, np.full((1, 1), np.nan))
        _warm = True
