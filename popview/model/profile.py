"""A profile: metric x call path x location, the same for traces and Cube.

Call paths are numbered in depth-first pre-order, so the subtree of call
path c is the contiguous range [c, c + subtree_size[c]). Values are stored
*exclusive* per metric as CSR rows (one row per call path, (location,
value) pairs), which makes every query the GUI and the metrics need a
slice and a reduction:

    inclusive / exclusive totals per call path   (tree colouring)
    values per location of one call path         (system tree colouring)

Dense storage would not do: 100k call paths x 10k locations is 10^9 cells.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.model.definitions import Region


@dataclass
class MetricDef:
    """One metric of the metric tree."""

    id: str
    name: str
    unit: str = ""               # "sec", "occ", "bytes", "" ...
    description: str = ""
    parent: str | None = None    # id of the parent metric in the metric tree
    kind: str = "stored"         # stored | derived (computed by popview, e.g. the time hierarchy)
    aggregation: str = "sum"     # how locations combine: sum | max | min


@dataclass
class MetricValues:
    """Exclusive values of one metric in CSR form over call paths."""

    row_offsets: np.ndarray      # int64, n_callpaths + 1
    loc: np.ndarray              # int32
    value: np.ndarray            # float64

    @classmethod
    def from_coo(cls, n_callpaths: int, cp: np.ndarray, loc: np.ndarray, value: np.ndarray) -> "MetricValues":
        cp = np.asarray(cp, np.int64)
        order = np.lexsort((loc, cp))
        cp, loc, value = cp[order], np.asarray(loc, np.int32)[order], np.asarray(value, np.float64)[order]
        offsets = np.zeros(n_callpaths + 1, np.int64)
        np.cumsum(np.bincount(cp, minlength=n_callpaths), out=offsets[1:])
        return cls(offsets, loc, value)

    @classmethod
    def from_dense(cls, dense: np.ndarray) -> "MetricValues":
        """From an array (n_callpaths, n_locations); zeros are dropped."""
        cp, loc = np.nonzero(dense)
        return cls.from_coo(dense.shape[0], cp, loc, dense[cp, loc])


@dataclass
class Profile:
    regions: list[Region]
    callpath_parent: np.ndarray          # int32, -1 for roots, pre-order numbering
    callpath_region: np.ndarray          # int32
    n_locations: int
    metrics: list[MetricDef] = field(default_factory=list)
    values: dict[str, MetricValues] = field(default_factory=dict)

    def __post_init__(self):
        self.callpath_parent = np.asarray(self.callpath_parent, np.int32)
        self.callpath_region = np.asarray(self.callpath_region, np.int32)
        self.subtree_size = subtree_sizes(self.callpath_parent)

    # ---- structure ------------------------------------------------------
    @property
    def n_callpaths(self) -> int:
        return len(self.callpath_parent)

    def metric(self, metric_id: str) -> MetricDef:
        for m in self.metrics:
            if m.id == metric_id:
                return m
        raise KeyError(metric_id)

    def has(self, metric_id: str) -> bool:
        return metric_id in self.values

    def children(self, cp: int) -> np.ndarray:
        return np.flatnonzero(self.callpath_parent == cp)

    def roots(self) -> np.ndarray:
        return np.flatnonzero(self.callpath_parent < 0)

    def name(self, cp: int) -> str:
        return self.regions[self.callpath_region[cp]].name

    def path(self, cp: int, sep: str = "/") -> str:
        parts = []
        while cp >= 0:
            parts.append(self.name(cp))
            cp = int(self.callpath_parent[cp])
        return sep.join(reversed(parts))

    def find(self, path: str, sep: str = "/") -> int | None:
        """Call path id of 'main/loop/solve' (None if absent)."""
        want = [p for p in path.strip(sep).split(sep) if p]
        cands = self.roots()
        cp = None
        for part in want:
            match = [c for c in cands if self.name(c) == part]
            if not match:
                return None
            cp = int(match[0])
            cands = self.children(cp)
        return cp

    # ---- values ---------------------------------------------------------
    # Metrics Cube marks as minimum / maximum (min_time, max_time) combine over
    # locations and call paths by min / max, as Cube shows them; an absent
    # entry (a location that never visited the call path) has no value.
    def _ufunc(self, metric_id: str):
        return _UFUNC[next((m.aggregation for m in self.metrics if m.id == metric_id), "sum")]

    def exclusive_totals(self, metric_id: str) -> np.ndarray:
        """Exclusive value per call path, combined over locations (sum, or min / max)."""
        mv = self.values[metric_id]
        rows = np.repeat(np.arange(self.n_callpaths), np.diff(mv.row_offsets))
        ufunc = self._ufunc(metric_id)
        if ufunc is None:
            return np.bincount(rows, weights=mv.value, minlength=self.n_callpaths).astype(np.float64)
        return _reduce(ufunc, rows, mv.value, self.n_callpaths)

    def inclusive_totals(self, metric_id: str) -> np.ndarray:
        """Inclusive value per call path, combined over locations (sum, or min / max)."""
        ufunc = self._ufunc(metric_id)
        if ufunc is not None:
            return _empty_to_zero(self._subtree(ufunc, _with_identity(ufunc, self.exclusive_totals(metric_id),
                                                                      self._present(metric_id))))
        prefix = np.zeros(self.n_callpaths + 1)
        np.cumsum(self.exclusive_totals(metric_id), out=prefix[1:])
        idx = np.arange(self.n_callpaths)
        return prefix[idx + self.subtree_size] - prefix[idx]

    def by_location(self, metric_id: str, cp: int | None, inclusive: bool = True) -> np.ndarray:
        """Values per location of call path `cp` (None = the whole tree)."""
        mv = self.values[metric_id]
        if cp is None:
            lo, hi = 0, len(mv.loc)
        else:
            last = cp + (int(self.subtree_size[cp]) if inclusive else 1)
            lo, hi = int(mv.row_offsets[cp]), int(mv.row_offsets[last])
        ufunc = self._ufunc(metric_id)
        if ufunc is None:
            return np.bincount(mv.loc[lo:hi], weights=mv.value[lo:hi], minlength=self.n_locations)
        return _reduce(ufunc, mv.loc[lo:hi], mv.value[lo:hi], self.n_locations)

    def matrix(self, metric_id: str, inclusive: bool = False) -> np.ndarray:
        """Dense (call path, location) array: only for small profiles and tests."""
        mv = self.values[metric_id]
        rows = np.repeat(np.arange(self.n_callpaths), np.diff(mv.row_offsets))
        ufunc = self._ufunc(metric_id)
        if ufunc is not None:
            dense = np.full((self.n_callpaths, self.n_locations), _IDENTITY[ufunc])
            ufunc.at(dense, (rows, mv.loc), mv.value)
            return _empty_to_zero(self._subtree(ufunc, dense) if inclusive else dense)
        dense = np.zeros((self.n_callpaths, self.n_locations))
        np.add.at(dense, (rows, mv.loc), mv.value)
        if inclusive:
            dense = self._subtree(np.add, dense)
        return dense

    def _present(self, metric_id: str) -> np.ndarray:
        return np.diff(self.values[metric_id].row_offsets) > 0

    def _subtree(self, ufunc, values: np.ndarray) -> np.ndarray:
        """Each call path's value combined with its descendants' (children after parents)."""
        out = values.copy()
        for cp in range(self.n_callpaths - 1, 0, -1):
            p = self.callpath_parent[cp]
            if p >= 0:
                out[p] = ufunc(out[p], out[cp])
        return out


_UFUNC = {"sum": None, "max": np.maximum, "min": np.minimum}
_IDENTITY = {np.maximum: -np.inf, np.minimum: np.inf}


def _reduce(ufunc, index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, _IDENTITY[ufunc])
    ufunc.at(out, index, values)
    return _empty_to_zero(out)


def _with_identity(ufunc, values: np.ndarray, present: np.ndarray) -> np.ndarray:
    return np.where(present, values, _IDENTITY[ufunc])


def _empty_to_zero(values: np.ndarray) -> np.ndarray:
    """No entry at all reads 0, as Cube shows it."""
    return np.where(np.isfinite(values), values, 0.0)


def subtree_sizes(parent: np.ndarray) -> np.ndarray:
    """Subtree size of each node of a pre-order numbered forest."""
    n = len(parent)
    size = np.ones(n, np.int64)
    # children have larger ids than parents in pre-order: accumulate backwards
    for cp in range(n - 1, 0, -1):
        p = parent[cp]
        if p >= 0:
            size[p] += size[cp]
    return size


def preorder(parent: np.ndarray, sort_key=None) -> np.ndarray:
    """Permutation old -> new id that numbers a forest in depth-first pre-order.

    `sort_key(children_ids)` may order siblings (default: by id)."""
    parent = np.asarray(parent)
    n = len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for c, p in enumerate(parent.tolist()):
        (children[p] if p >= 0 else roots).append(c)
    new_id = np.empty(n, np.int64)
    counter = 0
    stack = list(reversed(roots))
    while stack:
        c = stack.pop()
        new_id[c] = counter
        counter += 1
        kids = children[c] if sort_key is None else sort_key(children[c])
        stack.extend(reversed(kids))
    return new_id
