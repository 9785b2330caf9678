"""A cfg timeline window as the timeline draws it: per row and pixel, the value Paraver's draw
mode picks among the window's values in the pixel. No Qt.

The window is evaluated once (`evaluate.evaluate_window`, vectorised over the cache's columns);
then every redraw reads either the intervals of the visible window (zoomed in: exact, as
Paraver draws them) or, zoomed out, an in-memory pyramid of the evaluated values built once
(power-of-two levels of time bins per row, each bin holding what the draw mode needs), so a
redraw costs about rows x pixels whatever the length of the trace.

Draw modes (window_drawmode) as Paraver's DrawMode::selectValue picks among the values of the
intervals that overlap a pixel: last, maximum, minimum not zero, average (of the values, one
per interval), average not zero, absolute maximum, absolute minimum not zero. `draw_random`,
`draw_randnotzero` and `draw_mode` are drawn as the maximum (named in `notes`). On the pyramid
levels an interval that spans bins counts once per bin: the averages there are of the bins'
values, the other modes are exact.

Colours follow the cfg: code mode (the default, as Paraver's loader forces it) colours each
whole value with Paraver's code palette (semanticcolor.cpp: 49 base colours, value modulo 49;
Paraver expands the palette beyond 49 values, popview repeats it); gradient modes scale the
values between the window's minimum_y and maximum_y (computed from the values when the cfg
gives none), values outside in Paraver's outlier colours; the null gradient draws zero as the
background.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.analysis import dither
from popview.analysis.timeline_data import ColourMode, Picture, TimelineData
from popview.jit import njit

from .evaluate import Timeline, window_units
from .export import initial_window
from .model import CfgView, Criterion, Window

LAST, MAXIMUM, MIN_NOT_ZERO, AVERAGE, AVERAGE_NOT_ZERO, ABS_MAXIMUM, ABS_MIN_NOT_ZERO = range(7)
DRAW_MODES = {"draw_last": LAST, "draw_maximum": MAXIMUM, "draw_minnotzero": MIN_NOT_ZERO,
              "draw_average": AVERAGE, "draw_averagenotzero": AVERAGE_NOT_ZERO,
              "draw_absolute_maximum": ABS_MAXIMUM, "draw_absolute_minnotzero": ABS_MIN_NOT_ZERO}
DRAWN_AS_MAXIMUM = ("draw_random", "draw_randnotzero", "draw_mode")
DEFAULT_DRAW_MODE = "draw_maximum"        # ParaverConfig's default for timelines

# Paraver's code colours (paraver-kernel api/semanticcolor.cpp, SemanticColor::codeColor)
CODE_COLOURS = np.array([
    (117, 195, 255), (0, 0, 255), (255, 255, 255), (255, 0, 0), (255, 0, 174), (179, 0, 0), (0, 255, 0),
    (255, 255, 0), (235, 0, 0), (0, 162, 0), (255, 0, 255), (100, 100, 177), (172, 174, 41), (255, 144, 26),
    (2, 255, 177), (192, 224, 0), (66, 66, 66), (189, 168, 100), (95, 200, 0), (203, 60, 69), (0, 109, 255),
    (200, 61, 68), (200, 66, 0), (10, 66, 40), (139, 121, 177), (116, 116, 116), (200, 50, 89), (255, 171, 98),
    (0, 68, 189), (66, 66, 0), (255, 46, 0), (100, 216, 32), (0, 50, 120), (105, 105, 0), (132, 75, 255),
    (184, 232, 0), (0, 109, 112), (189, 168, 100), (132, 75, 75), (255, 75, 75), (255, 20, 0), (130, 30, 30),
    (10, 66, 10), (184, 132, 0), (100, 16, 32), (146, 255, 255), (50, 50, 100), (146, 0, 255), (0, 138, 119)],
    np.uint8)
BACKGROUND = (0, 0, 0)
GRADIENT_BEGIN, GRADIENT_END = (0, 255, 0), (0, 0, 255)
ABOVE_OUTLIER, BELOW_OUTLIER = (255, 146, 24), (207, 207, 68)

ZERO_IN_PROPORTION = (LAST, MAXIMUM, ABS_MAXIMUM)   # draw modes whose zeros the window draws in proportion
ZERO_NOTE = "zero (idle) drawn in proportion to its time"
RAW_BUDGET = 1_000_000      # intervals drawn one by one at most; beyond, the pyramid
PYRAMID_CELLS = 1 << 20     # rows x bins of the finest level at most (16 MB with its counts; all levels 32 MB,
                            # and 8 MB more of zero time when the window draws its zeros in proportion)
FINEST_BINS = 1 << 18
COARSEST_BINS = 64


def code_colour(value: float) -> tuple[int, int, int]:
    """Paraver's code colour of a whole value (CodeColor::getColor: the value modulo the palette)."""
    return tuple(int(c) for c in CODE_COLOURS[int(value) % len(CODE_COLOURS)])


# ---- kernels ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _pick(how, old, v):
    """The cell's value after `v` (in time order) joins `old` (NaN: none yet): the draw mode's
    choice, or the running sum for the averages."""
    if np.isnan(old) or how == LAST:
        return v
    if how == MAXIMUM:
        return v if v > old else old
    if how == MIN_NOT_ZERO:
        return v if v < old else old
    if how == ABS_MAXIMUM:
        return v if abs(v) > abs(old) else old
    if how == ABS_MIN_NOT_ZERO:
        return v if abs(v) < abs(old) else old
    return old + v                                   # AVERAGE, AVERAGE_NOT_ZERO: sums


@njit(cache=True, nogil=True)
def _add(how, acc, cnt, nz, r, k, v):
    """One value into cell (r, k): acc holds the mode's value (a sum for the averages), cnt the
    values seen, nz the non-zero values seen."""
    cnt[r, k] += 1.0
    if v != 0.0:
        nz[r, k] += 1.0
    elif how in (MIN_NOT_ZERO, ABS_MIN_NOT_ZERO, AVERAGE_NOT_ZERO):
        return                                       # zeros are not candidates
    acc[r, k] = _pick(how, acc[r, k], v)


@njit(cache=True, nogil=True)
def intervals_kernel(rows, lo, hi, begin, end, value, t0, width, how, acc, cnt, nz):
    """Cells of width `width` from t0 (acc.shape[1] of them) of each out row r: the values of
    intervals lo[r]:hi[r] (in time order) that overlap each cell."""
    n_bins = acc.shape[1]
    t_stop = t0 + width * n_bins
    for r in range(len(rows)):
        for i in range(lo[r], hi[r]):
            a = max(float(begin[i]), t0)
            b = min(float(end[i]), t_stop)
            if b <= a or np.isnan(value[i]):
                continue
            first = min(int((a - t0) / width), n_bins - 1)
            last = min(int(np.ceil((b - t0) / width)) - 1, n_bins - 1)
            for k in range(first, last + 1):
                _add(how, acc, cnt, nz, r, k, value[i])


@njit(cache=True, nogil=True)
def combine_kernel(acc, cnt, nz, rows, starts, stops, how, o_acc, o_cnt, o_nz):
    """Out cell (r, k): the cells rows[r], starts[k]:stops[k] of a level combined in time order."""
    for r in range(len(rows)):
        src = rows[r]
        if src < 0:
            continue
        for k in range(len(starts)):
            for j in range(starts[k], stops[k]):
                c = cnt[src, j]
                if c == 0.0:
                    continue
                o_cnt[r, k] += c
                o_nz[r, k] += nz[src, j]
                if not np.isnan(acc[src, j]):
                    o_acc[r, k] = _pick(how, o_acc[r, k], acc[src, j])


@njit(cache=True, nogil=True)
def window_ranges(row_start, row_stop, rows, begin, end, t0, t1, lo, hi):
    """Per asked row: the intervals [lo, hi) of the row that overlap [t0, t1)."""
    for r in range(len(rows)):
        a, b = row_start[rows[r]], row_stop[rows[r]]
        lo[r] = a + np.searchsorted(end[a:b], t0, side="right")
        hi[r] = a + np.searchsorted(begin[a:b], t1, side="left")
        if hi[r] < lo[r]:
            hi[r] = lo[r]


def finish(how: int, acc: np.ndarray, cnt: np.ndarray, nz: np.ndarray) -> np.ndarray:
    """The drawn value of each cell (NaN: no interval)."""
    out = acc.copy()
    seen = cnt > 0
    if how in (MIN_NOT_ZERO, ABS_MIN_NOT_ZERO):
        out[seen & np.isnan(out)] = 0.0              # only zeros: 0, as Paraver's selectMethod
    elif how == AVERAGE:
        np.divide(acc, cnt, out=out, where=seen)
    elif how == AVERAGE_NOT_ZERO:
        out = np.where(nz > 0, acc / np.maximum(nz, 1), 0.0)
    out[~seen] = np.nan
    return out


def _cells(rows: int, bins: int):
    """(value, values seen, non-zero values seen): the counts in float32, exact to 2^24."""
    return np.full((rows, bins), np.nan), np.zeros((rows, bins), np.float32), np.zeros((rows, bins), np.float32)


# ---- the window ------------------------------------------------------------------------

@dataclass
class Colouring:
    """How the window is coloured: code colours, or a gradient over [low, high]."""
    code: bool
    null_gradient: bool = False
    low: float = 0.0
    high: float = 1.0
    function: str = "gradient_function_linear"
    from_cfg: bool = False          # the range is the cfg's (else computed from the values)


@dataclass
class _Window:
    """The rows asked of a picture, its pixels and the intervals they overlap."""
    rows: np.ndarray
    width: int
    pw: float
    inside: np.ndarray
    asked: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    records: bool


@dataclass
class CfgTimeline:
    """One evaluated timeline window, ready to draw."""
    name: str
    position: int
    description: str                 # what the window computes, with its filters, one line
    timeline: Timeline
    t_end: int
    colouring: Colouring
    draw_mode: str
    value_names: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unit: str = ""                   # the window's time unit, when its values are durations
    comm_lines: bool = False
    initial: tuple[int, int] | None = None   # the time window the cfg opens at (None: the whole run)

    def __post_init__(self):
        t = self.timeline
        self.how = DRAW_MODES.get(self.draw_mode, MAXIMUM)
        bounds = np.searchsorted(t.row, np.arange(t.n_rows + 1))
        self.row_start, self.row_stop = bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64)
        self.begin = np.ascontiguousarray(t.begin, np.int64)
        self.end = np.ascontiguousarray(t.end, np.int64)
        self.value = np.ascontiguousarray(t.value, np.float64)
        self.levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.zero_levels: list[np.ndarray] = []      # per level: the ns of each bin valued zero (float32)
        self._zero_duration: np.ndarray | None = None
        self.base = 1.0
        self._build_pyramid()

    @property
    def n_rows(self) -> int:
        return self.timeline.n_rows

    # ---- pyramid ----------------------------------------------------------------------
    def _build_pyramid(self) -> None:
        n = max(self.n_rows, 1)
        bins = FINEST_BINS
        while bins > COARSEST_BINS and n * bins > PYRAMID_CELLS:
            bins //= 2
        self.base = max(self.t_end, 1) / bins
        acc, cnt, nz = _cells(self.n_rows, bins)
        rows = np.arange(self.n_rows, dtype=np.int64)
        intervals_kernel(rows, self.row_start, self.row_stop, self.begin, self.end, self.value, 0.0, self.base,
                         self.how, acc, cnt, nz)
        self.levels = [(acc, cnt, nz)]
        while bins > COARSEST_BINS:
            bins //= 2
            starts = np.arange(bins, dtype=np.int64) * 2
            o = _cells(self.n_rows, bins)
            combine_kernel(*self.levels[-1], rows, starts, starts + 2, self.how, *o)
            self.levels.append(o)
        if self.zero_in_proportion:
            self.zero_levels = [self._zero_ns(rows, self.row_start, self.row_stop, 0.0, self.base,
                                              self.levels[0][0].shape[1]).astype(np.float32)]
            for level in self.levels[1:]:
                n = level[0].shape[1]
                finer = self.zero_levels[-1]
                self.zero_levels.append(finer[:, 0:2 * n:2] + finer[:, 1:2 * n:2])

    @property
    def zero_in_proportion(self) -> bool:
        """Whether the window's zeros (the time a thread is in none of the states or values it
        shows: Paraver's idle colour or background) are drawn in proportion to their time
        zoomed out (zero_share), rather than lost to the draw mode's pick among a pixel's
        values: code colours and the null gradient, drawn by the last, maximum or absolute
        maximum value."""
        return self.how in ZERO_IN_PROPORTION and (self.colouring.code or self.colouring.null_gradient)

    def _zero_ns(self, rows, lo, hi, t0: float, width: float, n_bins: int) -> np.ndarray:
        """Per row (intervals lo[r]:hi[r]) and cell of `width` ns from t0: the ns valued zero."""
        from popview.cache.pyramid import reduce_kernel

        if self._zero_duration is None:             # each interval's length when valued zero, else NaN
            self._zero_duration = np.where(self.value == 0.0, (self.end - self.begin).astype(np.float64), np.nan)
        out = np.full((len(rows), n_bins), np.nan)
        reduce_kernel(np.arange(len(rows), dtype=np.int64), np.asarray(lo, np.int64), np.asarray(hi, np.int64),
                      np.full(len(rows), np.iinfo(np.int64).min), self.begin, self.end, self._zero_duration,
                      float(t0), float(width), n_bins, True, out)
        return np.nan_to_num(out)

    def zero_share(self, rows, t0: int, t1: int, width: int) -> np.ndarray:
        """Per row and pixel of [t0, t1): the share of the pixel whose value is zero (from the
        intervals, or zoomed out from the pyramid's bins overlapping the pixel)."""
        w = self._window(rows, t0, t1, width)
        if w.records or not self.zero_levels:
            return np.clip(self._zero_ns(w.asked, w.lo, w.hi, float(t0), w.pw, w.width) / w.pw, 0.0, 1.0)
        level, bin_ns, starts, stops = self._bins(t0, w, [z.shape[1] for z in self.zero_levels])
        b0, b1 = int(starts.min()), int(stops.max())
        zero = self.zero_levels[level][w.asked, b0:b1]
        total = np.concatenate([np.zeros((len(w.rows), 1)), np.cumsum(zero, axis=1, dtype=np.float64)], axis=1)
        share = (total[:, stops - b0] - total[:, starts - b0]) / np.maximum((stops - starts) * bin_ns, 1.0)
        share[~w.inside] = 0.0
        return np.clip(share, 0.0, 1.0)

    # ---- pictures -----------------------------------------------------------------------
    def _window(self, rows, t0: int, t1: int, width: int) -> "_Window":
        """The asked rows' intervals overlapping [t0, t1) and whether to draw from them."""
        rows = np.asarray(rows, np.int64)
        width = max(int(width), 1)
        t1 = max(int(t1), int(t0) + 1)
        pw = (t1 - t0) / width
        inside = (rows >= 0) & (rows < self.n_rows)
        asked = np.where(inside, rows, 0)
        lo, hi = np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64)
        window_ranges(self.row_start, self.row_stop, asked, self.begin, self.end, int(t0), int(t1), lo, hi)
        hi[~inside] = lo[~inside]
        count = int((hi - lo).sum())
        records = count <= RAW_BUDGET or (pw < self.base and count <= 8 * RAW_BUDGET)
        return _Window(rows, width, pw, inside, asked, lo, hi, records)

    def _bins(self, t0: int, w: "_Window", sizes: list[int]):
        """(level, its bin width, first and end bin of each pixel) of the pyramid level drawn;
        `sizes`: the bins of each level."""
        level = int(np.clip(np.floor(np.log2(max(w.pw / self.base, 1.0))), 0, len(sizes) - 1))
        bin_ns = self.base * (1 << level)
        n_bins = sizes[level]
        edges = t0 + np.arange(w.width + 1) * w.pw
        starts = np.clip(np.floor(edges[:-1] / bin_ns), 0, n_bins).astype(np.int64)
        stops = np.clip(np.ceil(edges[1:] / bin_ns), 0, n_bins).astype(np.int64)
        return level, bin_ns, starts, np.maximum(stops, np.minimum(starts + 1, n_bins))

    def picture(self, rows, t0: int, t1: int, width: int) -> tuple[np.ndarray, str]:
        """(values rows x width, source): the drawn value of each pixel, NaN where no interval."""
        w = self._window(rows, t0, t1, width)
        if w.records:
            acc, cnt, nz = _cells(len(w.rows), w.width)
            intervals_kernel(w.asked, w.lo, w.hi, self.begin, self.end, self.value, float(t0), w.pw, self.how,
                             acc, cnt, nz)
            return finish(self.how, acc, cnt, nz), "records"
        level, _, starts, stops = self._bins(t0, w, [level[0].shape[1] for level in self.levels])
        acc, cnt, nz = self.levels[level]
        o = _cells(len(w.rows), w.width)
        combine_kernel(acc, cnt, nz, np.where(w.inside, w.rows, -1), starts, stops, self.how, *o)
        return finish(self.how, *o), f"pyramid level {level}"

    def drawn(self, rows, t0: int, t1: int, width: int) -> tuple[np.ndarray, str]:
        """picture(), what the timeline draws: the draw mode per pixel, and the window's zeros
        (the time a thread is in none of the states or values it shows) in proportion to their
        time when zero_in_proportion, as the State mode draws an OpenMP worker's waits
        (TimelineData._fill_idle_gaps): a pixel is zero where its zero share exceeds its
        threshold, fixed to its place in time (dither.drawn: panning recolours nothing). Zoomed out the idle
        time keeps its share of the picture, where it is, instead of taking the colour of a
        state sharing its pixels (heat 2x2's workers, idle 75-82 % of the run, drew 20 % of a
        State As Is window idle); zoomed in, a pixel inside one interval is drawn as before."""
        values, source = self.picture(rows, t0, t1, width)
        if self.zero_in_proportion and values.size:
            zero = self.zero_share(rows, t0, t1, width)
            values[dither.drawn(zero, t0, t1)] = 0.0
        return values, source

    def values_present(self, limit: int = 256) -> np.ndarray:
        """The distinct values of the window (at most `limit`, the smallest)."""
        v = self.value[np.isfinite(self.value)]
        if len(v) > 4_000_000:
            v = v[:: len(v) // 4_000_000]
        return np.unique(v)[:limit]

    def label(self, value: float) -> str:
        if np.isnan(value):
            return ""
        if float(value).is_integer() and int(value) in self.value_names:
            return self.value_names[int(value)]
        return f"{value:.6g}"


def window_timeline(view: CfgView, window: Window, timeline: Timeline, t_end: int,
                    value_names: dict[int, str] | None = None, definitions=None) -> CfgTimeline:
    """A CfgTimeline of an evaluated window, with the cfg's colours, range and draw mode."""
    notes = []
    draw_mode = window.drawmode or DEFAULT_DRAW_MODE
    if draw_mode in DRAWN_AS_MAXIMUM:
        notes.append(f"{draw_mode} drawn as draw_maximum")
        draw_mode = "draw_maximum"
    elif draw_mode not in DRAW_MODES:
        notes.append(f"draw mode {draw_mode!r} drawn as draw_maximum")
        draw_mode = "draw_maximum"
    mode = window.color_mode or "window_in_code_mode"
    code = mode == "window_in_code_mode"
    if mode not in ("window_in_code_mode", "window_in_gradient_mode", "window_in_null_gradient_mode"):
        notes.append(f"{mode} drawn as a gradient")
    colouring = Colouring(code=code, null_gradient=mode == "window_in_null_gradient_mode",
                          function=window.gradient_function or "gradient_function_linear")
    if not code:
        computed = window.gui.get("window_compute_y_max", "false").lower() == "true"
        if window.minimum_y is not None and window.maximum_y is not None and not computed \
                and window.maximum_y > window.minimum_y:
            colouring.low, colouring.high, colouring.from_cfg = window.minimum_y, window.maximum_y, True
        else:
            finite = timeline.value[np.isfinite(timeline.value)]
            low, high = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
            colouring.low, colouring.high = low, high if high > low else low + 1.0
    comm = window.gui.get("window_comm_lines_enabled", "false").lower() == "true"
    if DRAW_MODES[draw_mode] in ZERO_IN_PROPORTION and (colouring.code or colouring.null_gradient):
        notes.append(ZERO_NOTE)
    return CfgTimeline(window.name, window.position, describe(view, window, definitions), timeline, int(t_end),
                       colouring, draw_mode, dict(value_names or {}), notes, window_unit(window), comm,
                       initial_window(window, int(t_end)))


def window_unit(window: Window) -> str:
    function = window.functions.get("thread")
    if function is not None and function.name in ("Int. Between Evt", "State Record Dur."):
        return window_units(window)
    return ""


def shown_windows(view: CfgView) -> list[Window]:
    """The windows Paraver opens (window_open true); when the cfg opens none and has no
    histogram (a view saved closed), the windows that are no derived window's parent (what the
    cfg computes in the end). A histogram's hidden windows stay hidden, as in Paraver."""
    opened = [w for w in view.windows if w.gui.get("window_open", "").lower() == "true"]
    if opened or view.histograms:
        return opened
    parents = {p for w in view.windows if w.derived for p in w.derivation.parents}
    return [w for w in view.windows if w.position not in parents]


_SYMBOLS = {"add": "+", "product": "×", "substract": "−", "divide": "/"}


def describe(view: CfgView, window: Window, definitions=None, depth: int = 0) -> str:
    """What the window computes, one line: its thread function and event filter, or its
    derivation from its parents (named)."""
    if window.derived:
        d = window.derivation
        try:
            parents = [view.window(p) for p in d.parents]
        except KeyError:
            return f"{d.operation} of windows {d.parents[0]} and {d.parents[1]}"
        names = [p.name if depth else f"{p.name} ({describe(view, p, definitions, depth + 1)})" for p in parents]
        names = [(f"{f:g} × " if f != 1 else "") + n for f, n in zip(d.factors, names)]
        symbol = _SYMBOLS.get(d.operation)
        return f" {symbol} ".join(names) if symbol else f"{d.operation}({', '.join(names)})"
    function = window.functions.get("thread")
    parts = [function.name if function else "no thread function"]
    if function is not None and function.name in ("State Record Dur.", "Given State") and function.params:
        states = getattr(definitions, "states", {}) or {}
        names = [str(states.get(int(v), {}).get("name", int(v))) if isinstance(states.get(int(v)), dict) else
                 f"{v:g}" for v in function.params[0]]
        parts[0] += " of " + ", ".join(names)
    compose = [f.name for slot, f in window.compose.items() if f.name != "As Is"]
    if compose:
        parts.append("composed by " + ", ".join(compose))
    criterion = window.filters.criteria.get("evt_type")
    if criterion is not None and criterion.function != "All":
        parts.append("events " + _criterion_text(criterion, definitions))
    if window.level != "thread":
        parts.append(f"{window.level} level")
    return ", ".join(parts)


def _criterion_text(criterion: Criterion, definitions=None) -> str:
    values = [int(v) for v in criterion.values]
    names = []
    if definitions is not None:
        names = [definitions.event_types[v].name for v in values if v in definitions.event_types]
    if criterion.function == "[x,y]" and len(values) == 2:
        text = f"{values[0]}-{values[1]}"
    else:
        text = f"{criterion.function} " + ", ".join(str(v) for v in values)
    if names and len(names) == len(values) and criterion.function != "[x,y]":
        text += " (" + ", ".join(names) + ")"
    return text


class CfgTimelineData(TimelineData):
    """The timeline's data source for one cfg window: its pictures are the window's values;
    everything else (communication lines, flags, what is at a point) is the run's own."""

    def __init__(self, exp, timeline: CfgTimeline):
        super().__init__(exp)
        self.cfg = timeline
        self.mode = ColourMode("cfg", timeline.position, categories=timeline.colouring.code, label=timeline.name)

    def modes(self) -> list[ColourMode]:
        return [self.mode]

    def picture(self, mode: ColourMode, rows, t0: int, t1: int, width: int) -> Picture:
        """What the window draws (CfgTimeline.drawn)."""
        values, source = self.cfg.drawn(rows, t0, t1, width)
        share = np.isfinite(values).astype(np.float32) if mode.categorical else None
        return Picture(mode, int(t0), int(max(t1, t0 + 1)), values, share, source)

    def value_range(self, mode: ColourMode) -> tuple[float, float]:
        return self.cfg.colouring.low, self.cfg.colouring.high

    def category_label(self, mode: ColourMode, value: int) -> str:
        return self.cfg.label(float(value))
