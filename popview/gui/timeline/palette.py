"""Colours of the timeline: .pcf state colours, a stable palette per
paradigm for regions, a gradient for numbers; all as one uint8 LUT."""
from __future__ import annotations

import colorsys

import numpy as np

from popview.analysis.timeline_data import IDLE_GAP, IDLE_GAP_LABEL, NONE, ColourMode

BACKGROUND = (236, 236, 236)      # no value (categorical)
GRADIENT_NONE = (0, 0, 0)         # outside the measured intervals (gradients), as Paraver
GRADIENT_LOW = (188, 240, 150)
GRADIENT_HIGH = (8, 24, 140)
IDLE_GAP_COLOUR = (190, 222, 245)  # a paler Idle: a worker's time without records (profile: OpenMP idle)
SLOTS = 254                        # LUT entries 1..254 for categories; 0 = none, 255 = others
_HUES = {"mpi": (300.0, 35.0), "openmp": (35.0, 58.0), "io": (60.0, 68.0), "cuda": (150.0, 175.0),
         "hip": (150.0, 175.0), "measurement": (270.0, 290.0), "pthread": (180.0, 200.0)}
_TAB20 = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
          (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207), (174, 199, 232), (255, 187, 120),
          (152, 223, 138), (255, 152, 150), (197, 176, 213), (196, 156, 148), (247, 182, 210), (199, 199, 199),
          (219, 219, 141), (158, 218, 229)]


def region_colour(index: int, paradigm: str) -> tuple[int, int, int]:
    """Stable colour of a region: reds for MPI, yellows/oranges for OpenMP,
    blues and greens for computation, olive for I/O."""
    golden = (index * 0.618033988749895) % 1.0
    lo, hi = _HUES.get(paradigm, (95.0, 245.0))
    span = (hi - lo) % 360 or 360
    hue = ((lo + golden * span) % 360) / 360.0
    sat = 0.55 + 0.4 * ((index * 0.37) % 1.0)
    val = 0.55 + 0.4 * ((index * 0.71) % 1.0)
    if paradigm == "io":
        sat, val = 0.6, 0.6
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return int(r * 255), int(g * 255), int(b * 255)


class Palette:
    """Value -> LUT slot for one colour mode of one experiment, and the LUT."""

    def __init__(self, data, mode: ColourMode):
        self.data, self.mode = data, mode
        self.lut = np.zeros((256, 3), np.uint8)
        self.labels: dict[int, str] = {}
        if mode.categorical:
            self._categories()
        else:
            self._gradient()

    # ---- categorical -------------------------------------------------------
    def _categories(self) -> None:
        d = self.data.defs
        mode = self.mode
        self.lut[0] = BACKGROUND
        self.lut[255] = (90, 90, 90)
        self.labels[255] = "others"
        if mode.kind == "state":
            keys = sorted(k for k in d.states if k >= 0)
            colours = [tuple(d.states[k].get("color", (128, 128, 128))) for k in keys]
            labels = [d.states[k].get("name", str(k)) for k in keys]
        elif mode.kind in ("mpi", "openmp", "callpath"):
            # the regions some call path enters, in their order: Score-P defines every MPI
            # function (298 regions for an 18-region run), more than the LUT has slots
            used = np.unique(np.asarray(d.callpath_region, np.int64))
            used = used[(used >= 0) & (used < len(d.regions))] if len(used) else np.arange(len(d.regions))
            keys = [int(i) for i in used]
            colours = [region_colour(i, d.regions[i].paradigm) for i in keys]
            labels = [d.regions[i].name for i in keys]
        else:
            et = d.event_types.get(mode.param)
            keys = sorted(et.values) if et else []
            colours = [_TAB20[i % len(_TAB20)] for i in range(len(keys))]
            labels = [et.values[k] for k in keys] if et else []
        # one slot per key while slots last; the keys past them are drawn and listed as
        # "others", never under another key's colour and name
        self.keys = np.array(keys, np.int64)
        self.slots = np.where(np.arange(len(keys)) < SLOTS, np.arange(len(keys)) + 1, 255).astype(np.uint8)
        for slot, colour, label in zip(self.slots[:SLOTS], colours, labels):
            self.lut[slot] = colour
            self.labels[int(slot)] = label
        self._gap_slot = None
        if mode.kind == "state":
            self._gap_slot = min(len(keys) + 1, SLOTS)
            self.lut[self._gap_slot] = IDLE_GAP_COLOUR
            self.labels[self._gap_slot] = IDLE_GAP_LABEL
        self._callpath_region = np.asarray(d.callpath_region, np.int64)
        self._dense = None       # key + 1 -> slot, when keys are small non-negative numbers
        if len(self.keys) and self.keys.min() >= 0 and self.keys.max() < 1 << 20:
            self._dense = np.full(int(self.keys.max()) + 3, 255, np.uint8)
            self._dense[0] = 0
            self._dense[self.keys + 1] = self.slots

    def index(self, values: np.ndarray) -> np.ndarray:
        """Category values (or numbers) -> uint8 LUT indices."""
        if not self.mode.categorical:
            return self._gradient_index(values)
        out = self._category_index(values)
        if self._gap_slot is not None:
            out[values == IDLE_GAP] = self._gap_slot
        return out

    def _category_index(self, values: np.ndarray) -> np.ndarray:
        keys = values
        if self.mode.kind == "callpath" and len(self._callpath_region):
            keys = np.where(values >= 0, self._callpath_region[np.clip(values, 0, None)], NONE)
        if self._dense is not None:
            return np.take(self._dense, keys + 1, mode="clip")
        out = np.zeros(values.shape, np.uint8)
        if len(self.keys) == 0:
            out[keys != NONE] = 255
            return out
        pos = np.clip(np.searchsorted(self.keys, keys), 0, len(self.keys) - 1)
        found = self.keys[pos] == keys
        out[found] = self.slots[pos[found]]
        out[~found & (keys != NONE)] = 255
        return out

    # ---- gradient ------------------------------------------------------------
    def _gradient(self) -> None:
        lo, hi = self.data.value_range(self.mode)
        self.low, self.high = lo, hi if hi > lo else lo + 1.0
        self.lut[0] = GRADIENT_NONE
        f = np.linspace(0.0, 1.0, 255)[:, None]
        self.lut[1:] = (np.array(GRADIENT_LOW) * (1 - f) + np.array(GRADIENT_HIGH) * f).astype(np.uint8)

    def fit(self, values: np.ndarray) -> None:
        """Scale the gradient to the values on screen (Paraver's "fit semantic scale")."""
        v = values[np.isfinite(values)] if values.dtype.kind == "f" else np.zeros(0)
        if len(v):
            self.low, self.high = float(v.min()), float(v.max())
            if self.high <= self.low:
                self.high = self.low + 1.0

    def _gradient_index(self, values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            f = np.clip((values - self.low) / (self.high - self.low), 0.0, 1.0)
        out = np.zeros(values.shape, np.uint8)
        ok = np.isfinite(values)
        out[ok] = (1 + np.round(f[ok] * 254)).astype(np.uint8)
        return out

    def legend(self, index_image: np.ndarray, top: int = 24) -> list[tuple[tuple[int, int, int], str, float]]:
        """(colour, label, fraction of drawn pixels) of the categories on screen, largest
        first. Every pixel counts: a sample of every other column could miss a category
        drawn one pixel wide."""
        counts = np.bincount(index_image.ravel(), minlength=256)
        counts[0] = 0
        total = counts.sum() or 1
        order = [int(s) for s in np.argsort(counts)[::-1] if counts[s] > 0][:top]
        return [(tuple(int(c) for c in self.lut[s]), self.labels.get(s, "?"), counts[s] / total) for s in order]
