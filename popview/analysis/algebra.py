"""Performance algebra on profiles: difference, mean, minimum, maximum and merge.

Runs are aligned before any arithmetic:

- call paths by their chain of region names from the root (two builds of one
  program number their regions and lines differently); a call path present in
  some runs only is kept, and `presence` says in which; the union lists the
  first run's call paths in its order, then what only later runs have;
- locations by index (rank and thread), when every run has the same number;
  otherwise the operation is refused, unless the caller collapses the runs to
  one value per process (`loc_process`, a location -> process map per run) or
  to the whole run (`collapse="run"`).

Values are exclusive per (call path, location), as Profile stores them; an
absent entry is 0. Metrics that combine by min / max over locations (Cube's
min_time, max_time) cannot be subtracted or averaged meaningfully: they are
left out, with a note.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from popview.jit import njit
from popview.model.definitions import Region
from popview.model.profile import MetricDef, MetricValues, Profile


ROUNDING = 1e-9          # |A - B| below this share of the values is floating-point noise, not a change


class AlgebraError(ValueError):
    """Runs that cannot be combined (the message says why and what to do)."""


@dataclass
class Aligned:
    """Runs mapped onto one union call tree and one location space."""

    tree: Profile                  # the union tree, without values
    maps: list[np.ndarray]         # per run: its call path -> union call path
    presence: np.ndarray           # (union call paths, runs): whether the run has it
    loc_maps: list[np.ndarray]     # per run: its location -> union location
    notes: list[str] = field(default_factory=list)


@dataclass
class AlgebraResult:
    profile: Profile
    presence: np.ndarray           # (call paths, runs)
    operation: str
    notes: list[str] = field(default_factory=list)
    maps: list[np.ndarray] = field(default_factory=list)   # per run: its call path -> result call path

    def only_in(self, run: int) -> np.ndarray:
        """Call paths present in run `run` alone."""
        return np.flatnonzero(self.presence[:, run] & (self.presence.sum(axis=1) == 1))


# ------------------------------------------------------------------ alignment
def align(profiles: list[Profile], collapse: str = "none", loc_process: list[np.ndarray] | None = None) -> Aligned:
    if not profiles:
        raise AlgebraError("no runs to combine")
    loc_maps, n_loc, notes = _locations(profiles, collapse, loc_process)
    if _same_tree(profiles):            # repetitions, counter sets of one build: nothing to align
        p = profiles[0]
        tree = Profile(regions=p.regions, callpath_parent=p.callpath_parent, callpath_region=p.callpath_region,
                       n_locations=n_loc)
        identity = np.arange(p.n_callpaths, dtype=np.int64)
        return Aligned(tree, [identity] * len(profiles), np.ones((p.n_callpaths, len(profiles)), bool),
                       loc_maps, notes)
    parent, names, maps = _union_tree(profiles)
    order = _preorder(parent)
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    maps = [rank[m] for m in maps]
    parent = np.where(parent[order] >= 0, rank[np.maximum(parent[order], 0)], -1)
    names = [names[i] for i in order]
    regions, region_of = _regions(profiles, names)
    presence = np.zeros((len(order), len(profiles)), bool)
    for k, m in enumerate(maps):
        presence[m, k] = True
    tree = Profile(regions=regions, callpath_parent=parent, callpath_region=region_of, n_locations=n_loc)
    return Aligned(tree, maps, presence, loc_maps, notes)


def _same_tree(profiles: list[Profile]) -> bool:
    """Whether every run has the first one's call tree (same shape, same region names)."""
    first = profiles[0]
    names = _callpath_names(first)
    return all(p.n_callpaths == first.n_callpaths and np.array_equal(p.callpath_parent, first.callpath_parent)
               and np.array_equal(_callpath_names(p), names) for p in profiles[1:])


def _callpath_names(p: Profile) -> np.ndarray:
    return np.array([r.name for r in p.regions], object)[p.callpath_region]


def _union_tree(profiles: list[Profile]) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    """Union nodes keyed by (union parent, region name), in order of first appearance. When
    every run has a single root (the program), the roots are one node whatever their names
    (Score-P names it after the executable: tea_leaf_baseline, tea_leaf_optimized)."""
    key_to_id: dict[tuple[int, str], int] = {}
    parent: list[int] = []
    names: list[str] = []
    maps = []
    single_root = all(len(p.roots()) == 1 for p in profiles)
    for p in profiles:
        region_names = [r.name for r in p.regions]
        mine = np.empty(p.n_callpaths, np.int64)
        for cp in range(p.n_callpaths):           # pre-order: a parent is mapped before its children
            up = int(p.callpath_parent[cp])
            name = region_names[p.callpath_region[cp]]
            key = (int(mine[up]), name) if up >= 0 else (-1, "" if single_root else name)
            node = key_to_id.get(key)
            if node is None:
                node = key_to_id[key] = len(parent)
                parent.append(key[0])
                names.append(name)
            mine[cp] = node
        maps.append(mine)
    return np.asarray(parent, np.int64), names, maps


def _preorder(parent: np.ndarray) -> np.ndarray:
    """Depth-first pre-order of a forest given by parent ids (children in id order)."""
    children: dict[int, list[int]] = {}
    for node, up in enumerate(parent.tolist()):
        children.setdefault(up, []).append(node)
    out, stack = [], list(reversed(children.get(-1, [])))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(children.get(node, [])))
    return np.asarray(out, np.int64)


def _regions(profiles: list[Profile], names: list[str]) -> tuple[list[Region], np.ndarray]:
    """One region per distinct name, described as the first run that has it describes it."""
    known: dict[str, Region] = {}
    for p in profiles:
        for r in p.regions:
            known.setdefault(r.name, r)
    regions, index = [], {}
    for name in names:
        if name not in index:
            index[name] = len(regions)
            regions.append(known[name])
    return regions, np.asarray([index[n] for n in names], np.int32)


def _locations(profiles, collapse: str, loc_process) -> tuple[list[np.ndarray], int, list[str]]:
    counts = [p.n_locations for p in profiles]
    if collapse == "run":
        return [np.zeros(n, np.int64) for n in counts], 1, ["locations collapsed: one value per run"]
    if collapse == "process":
        if loc_process is None or len(loc_process) != len(profiles):
            raise AlgebraError("collapsing to processes needs each run's location -> process map")
        per_run = [int(np.max(m)) + 1 if len(m) else 0 for m in loc_process]
        if len(set(per_run)) != 1:
            raise AlgebraError(f"the runs have different numbers of processes ({', '.join(map(str, per_run))}): "
                               "collapse to one value per run instead")
        return [np.asarray(m, np.int64) for m in loc_process], per_run[0], [
            "locations collapsed: one value per process"]
    if collapse != "none":
        raise AlgebraError(f"unknown collapse {collapse!r} (none, process or run)")
    if len(set(counts)) != 1:
        raise AlgebraError(f"the runs have different numbers of locations ({', '.join(map(str, counts))}): "
                           "collapse them to one value per process or per run to compare")
    return [np.arange(n, dtype=np.int64) for n in counts], counts[0], []


# ------------------------------------------------------------------ reading a difference
def changed_most(d: AlgebraResult, pa: Profile, pb: Profile, metric: str, top: int) -> list[dict]:
    """The call paths of a difference whose exclusive value of `metric` changed most (by
    magnitude), with both runs' values: {callpath, a, b, a_minus_b, in, node} (node: the
    result's call path; `in`: both, A only or B only)."""
    diff = d.profile.exclusive_totals(metric)
    a_vals, b_vals = _in_union(d, pa, metric, 0), _in_union(d, pb, metric, 1)
    noise = np.abs(diff) <= ROUNDING * np.maximum(np.abs(a_vals), np.abs(b_vals))
    diff = np.where(noise, 0.0, diff)                 # floating-point noise is no change
    order = np.argsort(-np.abs(diff), kind="stable")[:top]
    return [{"callpath": d.profile.path(int(c)), "a": float(a_vals[c]), "b": float(b_vals[c]),
             "a_minus_b": float(diff[c]), "in": _presence(d.presence[c]), "node": int(c)}
            for c in order if diff[c] != 0]


def in_run(d: AlgebraResult, run: int, node: int) -> int:
    """Run `run`'s call path that is the result's call path `node` (-1 when it has none)."""
    hits = np.flatnonzero(d.maps[run] == node)
    return int(hits[0]) if len(hits) else -1


def _in_union(d: AlgebraResult, p: Profile, metric: str, run: int) -> np.ndarray:
    """One run's exclusive totals on the union's call paths (0 where it lacks one)."""
    out = np.zeros(d.profile.n_callpaths)
    np.add.at(out, d.maps[run], p.exclusive_totals(metric))
    return out


def _presence(row: np.ndarray) -> str:
    return "both" if row.all() else ("A only" if row[0] else "B only")


# ------------------------------------------------------------------ operations
def difference(a: Profile, b: Profile, **alignment) -> AlgebraResult:
    """A - B for every metric both runs have."""
    return _combine([a, b], "difference", np.array([1.0, -1.0]), **alignment)


def mean(profiles: list[Profile], **alignment) -> AlgebraResult:
    return _combine(profiles, "mean", np.full(len(profiles), 1.0 / len(profiles)), **alignment)


def minimum(profiles: list[Profile], **alignment) -> AlgebraResult:
    return _extreme(profiles, "minimum", np.minimum, **alignment)


def maximum(profiles: list[Profile], **alignment) -> AlgebraResult:
    return _extreme(profiles, "maximum", np.maximum, **alignment)


def merge(profiles: list[Profile], **alignment) -> AlgebraResult:
    """The union of the runs' metrics (runs that measured different counters); a metric
    several runs have is taken from the first of them."""
    al = align(profiles, **alignment)
    out = _empty(al)
    for k, p in enumerate(profiles):
        for m in p.metrics:
            if m.id in out.values or m.id not in p.values:
                continue
            cp, loc, value = _coo(p, m.id, al, k)
            out.metrics.append(m)
            out.values[m.id] = _coalesce(out, cp, loc, value)
    return AlgebraResult(out, al.presence, "merge", al.notes, al.maps)


def _combine(profiles, operation: str, weights: np.ndarray, **alignment) -> AlgebraResult:
    """sum_k weights[k] * run k, per (call path, location), for the metrics all runs have."""
    al = align(profiles, **alignment)
    out = _empty(al)
    notes = list(al.notes)
    for m in _common_metrics(profiles, operation, notes):
        parts = [_coo(p, m.id, al, k) for k, p in enumerate(profiles)]
        keys = [cp.astype(np.int64) * out.n_locations + loc for cp, loc, _ in parts]
        values = [v * w for (_, _, v), w in zip(parts, weights)]
        out.metrics.append(_renamed(m, operation))
        out.values[m.id] = _coalesce_runs(out, keys, values)
    return AlgebraResult(out, al.presence, operation, notes, al.maps)


def _extreme(profiles, operation: str, ufunc, **alignment) -> AlgebraResult:
    """Per (call path, location) minimum / maximum over the runs, an absent entry being 0."""
    al = align(profiles, **alignment)
    out = _empty(al)
    notes = list(al.notes)
    n_loc = out.n_locations
    for m in _common_metrics(profiles, operation, notes):
        keys, values = [], []
        for k, p in enumerate(profiles):
            cp, loc, value = _coo(p, m.id, al, k)
            key = cp * n_loc + loc
            uniq, inv = np.unique(key, return_inverse=True)
            keys.append(uniq)
            values.append(np.bincount(inv, weights=value, minlength=len(uniq)))
        every, inv = np.unique(np.concatenate(keys), return_inverse=True)
        seen = np.bincount(inv, minlength=len(every))
        result = np.where(seen < len(profiles), 0.0, np.nan)          # a run without the entry counts 0
        start = 0
        for v in values:
            part = inv[start:start + len(v)]
            result[part] = np.where(np.isnan(result[part]), v, ufunc(result[part], v))
            start += len(v)
        out.metrics.append(_renamed(m, operation))
        out.values[m.id] = _csr(out, every, result)
    return AlgebraResult(out, al.presence, operation, notes, al.maps)


def _common_metrics(profiles, operation: str, notes: list[str]) -> list[MetricDef]:
    common = [m for m in profiles[0].metrics if all(p.has(m.id) for p in profiles) and profiles[0].has(m.id)]
    missing = sorted({m.id for p in profiles for m in p.metrics if p.has(m.id)} - {m.id for m in common})
    if missing:
        notes.append(f"{operation}: metrics not in every run are left out ({', '.join(missing)}); merge keeps them")
    extremal = [m.id for m in common if m.aggregation != "sum"]
    if extremal:
        notes.append(f"{operation}: {', '.join(extremal)} combine by min / max over locations, which a "
                     f"{operation} does not preserve: left out")
    return [m for m in common if m.aggregation == "sum"]


def _renamed(m: MetricDef, operation: str) -> MetricDef:
    return MetricDef(id=m.id, name=m.name, unit=m.unit, description=f"{operation} of: {m.description or m.name}",
                     parent=m.parent, kind="derived", aggregation=m.aggregation)


def _empty(al: Aligned) -> Profile:
    t = al.tree
    return Profile(regions=t.regions, callpath_parent=t.callpath_parent, callpath_region=t.callpath_region,
                   n_locations=t.n_locations)


def _coo(p: Profile, metric_id: str, al: Aligned, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run k's exclusive values of a metric in union coordinates."""
    mv = p.values[metric_id]
    rows = np.repeat(np.arange(p.n_callpaths), np.diff(mv.row_offsets))
    return al.maps[k][rows], al.loc_maps[k][mv.loc], mv.value


def _coalesce(out: Profile, cp: np.ndarray, loc: np.ndarray, value: np.ndarray) -> MetricValues:
    """Entries with the same (call path, location) added up; exact zeros dropped."""
    key = cp.astype(np.int64) * out.n_locations + loc
    # each run's entries arrive sorted when its call paths map in order (the same tree): a
    # stable sort (timsort) then merges the runs in linear time
    order = np.argsort(key, kind="stable")
    key, value = key[order], value[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
    total = np.add.reduceat(value, starts) if len(key) else np.zeros(0)
    keep = total != 0
    return _csr(out, key[starts][keep], total[keep])


def _coalesce_runs(out: Profile, keys: list[np.ndarray], values: list[np.ndarray]) -> MetricValues:
    """The runs' entries with the same key added up, exact zeros dropped. Each run's keys
    come sorted when its call paths and locations map in order (runs of one program): then
    one merge pass does it (a sort of 2 x 10^7 entries cost seconds)."""
    if not all(len(k) < 2 or bool(np.all(k[1:] >= k[:-1])) for k in keys):
        cp = np.concatenate([k // out.n_locations for k in keys])
        loc = np.concatenate([k % out.n_locations for k in keys])
        return _coalesce(out, cp, loc, np.concatenate(values))
    starts = np.cumsum([0] + [len(k) for k in keys]).astype(np.int64)
    merged_key, merged_value = _merge_sorted_runs(np.concatenate(keys) if keys else np.zeros(0, np.int64),
                                                  np.concatenate(values) if values else np.zeros(0), starts)
    offsets, loc = _csr_of_sorted_keys(merged_key, out.n_locations, out.n_callpaths)
    return MetricValues(offsets, loc, merged_value)


@njit(cache=True, nogil=True)
def _merge_sorted_runs(keys, values, starts):
    """k-way merge of runs of sorted keys (run r: keys[starts[r]:starts[r + 1]]); equal keys
    summed in run order, exact zeros dropped."""
    n_runs = len(starts) - 1
    pos = starts[:-1].copy()
    out_key = np.empty(len(keys), np.int64)
    out_value = np.empty(len(keys), np.float64)
    n = 0
    while True:
        best = -1
        key = 0
        for r in range(n_runs):
            if pos[r] < starts[r + 1] and (best < 0 or keys[pos[r]] < key):
                best, key = r, keys[pos[r]]
        if best < 0:
            break
        total = 0.0
        for r in range(n_runs):
            while pos[r] < starts[r + 1] and keys[pos[r]] == key:
                total += values[pos[r]]
                pos[r] += 1
        if total != 0.0:
            out_key[n] = key
            out_value[n] = total
            n += 1
    return out_key[:n], out_value[:n]


@njit(cache=True, nogil=True)
def _csr_of_sorted_keys(keys, n_locations, n_callpaths):
    """Row offsets and locations of sorted (call path * n_locations + location) keys."""
    offsets = np.zeros(n_callpaths + 1, np.int64)
    loc = np.empty(len(keys), np.int32)
    for i in range(len(keys)):
        cp = keys[i] // n_locations
        loc[i] = keys[i] - cp * n_locations
        offsets[cp + 1] += 1
    for c in range(n_callpaths):
        offsets[c + 1] += offsets[c]
    return offsets, loc


def _csr(out: Profile, keys: np.ndarray, values: np.ndarray) -> MetricValues:
    """CSR rows from sorted (call path * locations + location) keys: already in row order."""
    cp, loc = keys // out.n_locations, keys % out.n_locations
    offsets = np.searchsorted(cp, np.arange(out.n_callpaths + 1)).astype(np.int64)
    return MetricValues(offsets, loc.astype(np.int32), np.asarray(values, np.float64))
