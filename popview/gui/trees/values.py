"""The numbers the coupled trees and the topology show, from a Profile alone.

No Qt here: this layer is tested and benchmarked headless. A metric *node*
of the metric tree is a linear combination of stored metrics (its `terms`),
so the same arithmetic serves a stored metric, its exclusive part (own value
minus its children's) and the groups of the alternative time hierarchy
("by activity"). Per-call-path totals are cached per stored metric; values
per location are computed for the one selected call path only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.model.profile import Profile

ROUNDING = 1e-9          # |a - b| below this share of |a| is floating-point noise, shown as 0
PARADIGM = "paradigm"
ACTIVITY = "activity"

# The time hierarchy regrouped by what the time was spent on.
ACTIVITIES: list[tuple[str, str, tuple[str, ...]]] = [
    ("computation", "Computation", ("comp",)),
    ("communication", "Communication", ("mpi_p2p", "mpi_collective")),
    ("synchronisation", "Synchronisation", ("mpi_sync", "omp_sync", "omp_idle")),
    ("management", "Management", ("mpi_other", "omp_management")),
    ("io", "I/O", ("mpi_io", "io")),
    ("other", "Other", ("other",)),
]
ACTIVITY_MEMBERS = {m for _k, _n, members in ACTIVITIES for m in members}
# Metrics that exist only when a paradigm is in the data: hidden when all zero.
PARADIGM_METRICS = ACTIVITY_MEMBERS | {"mpi", "omp"}


@dataclass
class MetricNode:
    key: str
    name: str
    unit: str
    description: str
    terms: dict[str, float]                      # stored metric id -> coefficient
    children: list[str] = field(default_factory=list)
    virtual: bool = False                        # a group made by popview, not a stored metric


def add_terms(a: dict[str, float], b: dict[str, float], sign: float = 1.0) -> dict[str, float]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) + sign * v
    return {k: v for k, v in out.items() if v != 0.0}


class ProfileValues:
    """Cached arithmetic over one Profile for the trees and the topology."""

    def __init__(self, profile: Profile):
        self.profile = profile
        self._stored = {m.id: m for m in profile.metrics}
        self._stored_children: dict[str | None, list[str]] = {}
        for m in profile.metrics:
            parent = m.parent if m.parent in self._stored else None
            self._stored_children.setdefault(parent, []).append(m.id)
        self._nodes: dict[str, MetricNode] = {}
        self._excl: dict[str, np.ndarray] = {}
        self._incl: dict[str, np.ndarray] = {}
        self._loc_cache: dict[tuple, np.ndarray] = {}
        self._sums: dict[str, float] = {}

    # ---- metric nodes ------------------------------------------------------
    def node(self, key: str) -> MetricNode:
        if key not in self._nodes:
            self._nodes[key] = self._make_node(key)
        return self._nodes[key]

    def _make_node(self, key: str) -> MetricNode:
        if key.startswith("activity:"):
            name = key.split(":", 1)[1]
            for akey, label, members in ACTIVITIES:
                if akey == name:
                    kids = [m for m in members if self.available(m)]
                    terms: dict[str, float] = {}
                    for k in kids:
                        terms = add_terms(terms, self.node(k).terms)
                    unit = self.node(kids[0]).unit if kids else "sec"
                    return MetricNode(key, label, unit, f"{label}: " + ", ".join(kids), terms, kids, virtual=True)
            raise KeyError(key)
        if key.startswith("self:"):
            base = self.node(key.split(":", 1)[1])
            return MetricNode(key, f"{base.name} (self)", base.unit, f"{base.name} not in any sub-metric",
                              self.exclusive_terms(base.key), [], virtual=True)
        m = self._stored[key]
        kids = [c for c in self._stored_children.get(key, []) if self.available(c)]
        if key in self.profile.values:
            terms = {key: 1.0}
        else:                                     # a grouping metric without data of its own
            terms = {}
            for k in kids:
                terms = add_terms(terms, self.node(k).terms)
        return MetricNode(key, m.name, m.unit, m.description, terms, kids)

    def available(self, key: str) -> bool:
        """Whether a stored metric has data (a paradigm metric must also be non-zero)."""
        if key not in self._stored:
            return False
        if key in self.profile.values:
            if key in PARADIGM_METRICS:
                return bool(np.any(self.profile.values[key].value))
            return True
        return any(self.available(c) for c in self._stored_children.get(key, []))

    def exclusive_terms(self, key: str) -> dict[str, float]:
        node = self.node(key)
        terms = node.terms
        for c in node.children:
            terms = add_terms(terms, self.node(c).terms, -1.0)
        return terms

    def terms(self, key: str, metric_exclusive: bool = False) -> dict[str, float]:
        return self.exclusive_terms(key) if metric_exclusive else self.node(key).terms

    def roots(self, hierarchy: str = PARADIGM) -> list[str]:
        return [k for k in self._stored_children.get(None, []) if self.available(k)]

    def children(self, key: str, hierarchy: str = PARADIGM) -> list[str]:
        node = self.node(key)
        if hierarchy == ACTIVITY and key == "time" and self.has_activities():
            kids = [f"activity:{a}" for a, _l, members in ACTIVITIES if any(self.available(m) for m in members)]
            kids += [f"self:{k}" for k in self._selfs_below("time")]
            return kids
        return node.children

    def has_activities(self) -> bool:
        return "time" in self._stored and any(self.available(m) for _a, _l, ms in ACTIVITIES for m in ms)

    def _selfs_below(self, key: str) -> list[str]:
        """Non-leaf paradigm metrics under `key` whose own part is non-zero (e.g. MPI not in any class)."""
        out = []
        for c in self.node(key).children:
            if c in ACTIVITY_MEMBERS:             # wholly inside an activity group already
                continue
            if self.node(c).children:
                if c in PARADIGM_METRICS and abs(self.total(c, metric_exclusive=True)) > 0:
                    out.append(c)
                out += self._selfs_below(c)
        return out

    def first_metric(self) -> str | None:
        roots = self.roots()
        return "time" if "time" in roots else (roots[0] if roots else None)

    # ---- values over call paths ------------------------------------------------
    def _stored_exclusive(self, mid: str) -> np.ndarray:
        if mid not in self._excl:
            self._excl[mid] = self.profile.exclusive_totals(mid)    # sum, or min / max for such metrics
        return self._excl[mid]

    def _stored_inclusive(self, mid: str) -> np.ndarray:
        if mid not in self._incl:
            self._incl[mid] = self.profile.inclusive_totals(mid)
        return self._incl[mid]

    def _combine(self, terms: dict[str, float], get) -> np.ndarray:
        """Sum of coef * array; differences that are rounding noise become exact zeros."""
        out = None
        largest = np.zeros(self.profile.n_callpaths)
        for mid, coef in terms.items():
            arr = get(mid)
            out = arr * coef if out is None else out + arr * coef
            largest = np.maximum(largest, np.abs(arr))
        if out is None:
            return np.zeros(self.profile.n_callpaths)
        if len(terms) > 1:
            out[np.abs(out) <= ROUNDING * largest] = 0.0
        return out

    def callpath_values(self, key: str, metric_exclusive: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(inclusive, exclusive) value of every call path, summed over locations."""
        terms = self.terms(key, metric_exclusive)
        return (self._combine(terms, self._stored_inclusive), self._combine(terms, self._stored_exclusive))

    def total(self, key: str, metric_exclusive: bool = False) -> float:
        """The metric over the whole run (all roots of the call tree, all locations)."""
        terms = self.terms(key, metric_exclusive).items()
        value = float(sum(coef * self._stored_sum(mid) for mid, coef in terms))
        largest = max((abs(self._stored_sum(mid)) for mid, _c in terms), default=0.0)
        return 0.0 if abs(value) <= ROUNDING * largest else value

    def _stored_sum(self, mid: str) -> float:
        """Every value of a stored metric: each call path is under some root."""
        if mid not in self._sums:
            roots = self.profile.roots()
            incl = self._stored_inclusive(mid)[roots]
            aggregation = self._stored[mid].aggregation if mid in self._stored else "sum"
            self._sums[mid] = float({"max": np.max, "min": np.min}.get(aggregation, np.sum)(incl)) if len(incl) else 0.0
        return self._sums[mid]

    # ---- values over locations ----------------------------------------------------
    def location_values(self, key: str, metric_exclusive: bool = False, callpath: int | None = None,
                        callpath_exclusive: bool = False) -> np.ndarray:
        """Value per location of the selected metric and call path (None = all call paths)."""
        if callpath is not None and callpath < 0:
            callpath = None
        cache_key = (key, metric_exclusive, callpath, callpath_exclusive)
        hit = self._loc_cache.get(cache_key)
        if hit is not None:
            return hit
        out = np.zeros(self.profile.n_locations)
        largest = np.zeros(self.profile.n_locations)
        terms = self.terms(key, metric_exclusive)
        for mid, coef in terms.items():
            arr = self.profile.by_location(mid, callpath, inclusive=not callpath_exclusive)
            out += coef * arr
            largest = np.maximum(largest, np.abs(arr))
        if len(terms) > 1:
            out[np.abs(out) <= ROUNDING * largest] = 0.0
        if len(self._loc_cache) > 64:
            self._loc_cache.clear()
        self._loc_cache[cache_key] = out
        return out


MAX_COUNT_RATE = 1e11
"""Events per second per location no hardware counter reaches (10 GHz x 10 per cycle)."""


def implausible_counts(pv: ProfileValues, keys: list[str], duration_s: float) -> dict[str, str]:
    """Counted metrics (unit "occ") whose total is beyond any hardware counter over the run,
    each with the reason; such a total is a bug of the data, not a measurement."""
    n_loc = max(pv.profile.n_locations, 1)
    if not duration_s or duration_s <= 0:
        return {}
    out = {}
    for key in keys:
        node = pv.node(key)
        if node.unit != "occ" or node.virtual:
            continue
        rate = abs(pv.total(key)) / duration_s / n_loc
        if rate > MAX_COUNT_RATE:
            out[key] = (f"implausible: {pv.total(key):.3g} over {n_loc} location(s) in {duration_s:.3g} s is "
                        f"{rate:.2g} per second per location, beyond any hardware counter "
                        f"({MAX_COUNT_RATE:.0e}/s); samples of the counter were written corrupt, wrapped "
                        "or read as absolute values by the tracer")
    return out
