"""From parsed Cube parts to popview's Profile: call paths renumbered in
pre-order, locations in system-tree order, every stored metric converted to
exclusive values (the Profile's storage convention)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from popview.model.profile import MetricDef, MetricValues, Profile, preorder
from popview.readers.cube.anchor_xml import Anchor, CubeMetric
from popview.readers.cube.values import UnsupportedType, read_metric
from popview.readers.errors import InputError

STORED_TYPES = ("EXCLUSIVE", "INCLUSIVE", "SIMPLE")
_AGGREGATION = {"MINDOUBLE": "min", "MAXDOUBLE": "max"}


class CallTree:
    """The cnode tree renumbered in DFS pre-order, and the maps from the
    positions an index file uses to call paths.

    CubeLib numbers the rows of EXCLUSIVE metrics in DFS pre-order and those
    of INCLUSIVE metrics "children first": a node's children are numbered
    together before the walk descends into the first of them."""

    def __init__(self, anchor: Anchor):
        new = preorder(anchor.cnode_parent)
        n = len(new)
        self.parent = np.full(n, -1, np.int32)
        has_parent = anchor.cnode_parent >= 0
        self.parent[new[has_parent]] = new[anchor.cnode_parent[has_parent]]
        self.region = np.empty(n, np.int32)
        self.region[new] = anchor.cnode_region
        self.children_first = _children_first(self.parent)

    def callpaths(self, positions: np.ndarray, metric_type: str) -> np.ndarray | None:
        """Call path of each tree position of an index file (None if out of range)."""
        if len(positions) and (positions.min() < 0 or positions.max() >= len(self.parent)):
            return None
        return self.children_first[positions] if metric_type == "INCLUSIVE" else positions

    def exclusive(self, rows: np.ndarray, inclusive: np.ndarray, clamp: bool) -> np.ndarray:
        """Exclusive values of the stored rows (call paths `rows`) from inclusive ones.

        Only the stored rows are touched (an absent row is zero), so memory
        stays proportional to the file's data. `clamp` saturates at zero (as
        pycubexr does) for unsigned counters whose children (wrapped
        counters) add up to more than the parent."""
        position = np.full(len(self.parent), -1, np.int64)
        position[rows] = np.arange(len(rows))
        parents = self.parent[rows]
        parent_row = np.where(parents >= 0, position[np.maximum(parents, 0)], -1)
        has = parent_row >= 0
        child_sum = np.zeros_like(inclusive)
        np.add.at(child_sum, parent_row[has], inclusive[has])
        out = inclusive - child_sum
        return np.maximum(out, 0.0) if clamp else out


def build_profile(path: Path, anchor: Anchor, members: dict[str, memoryview], warnings: list[str]) -> Profile:
    tree = CallTree(anchor)
    profile = Profile(regions=anchor.regions, callpath_parent=tree.parent, callpath_region=tree.region,
                      n_locations=len(anchor.locations))
    for metric in anchor.metrics:
        values = _metric_values(path, metric, members, tree, anchor.location_ids, warnings)
        if values is None and metric.type in STORED_TYPES:
            continue
        profile.metrics.append(_definition(metric, values is not None))
        if values is not None:
            profile.values[metric.uniq_name] = values
    return profile


def _definition(m: CubeMetric, has_values: bool) -> MetricDef:
    description = m.descr
    if not has_values:
        note = "(derived by a CubePL expression that popview does not evaluate)"
        description = f"{description} {note}" if description else note
    return MetricDef(id=m.uniq_name, name=m.disp_name, unit=m.uom, description=description, parent=m.parent,
                     kind="stored", aggregation=_AGGREGATION.get(m.dtype, "sum"))


def _metric_values(path: Path, m: CubeMetric, members: dict[str, memoryview], tree: CallTree,
                   location_ids: np.ndarray, warnings: list[str]) -> MetricValues | None:
    """Exclusive values of one metric, or None when not representable."""
    n_cp, n_loc = len(tree.parent), len(location_ids)
    index_name, data_name = f"{m.cube_id}.index", f"{m.cube_id}.data"
    if m.type not in STORED_TYPES:
        if m.cube_id is None or index_name not in members:
            warnings.append(f"{path}: metric {m.uniq_name!r} is derived ({m.type}); "
                            "its CubePL expression is not evaluated")
            return None
    elif m.cube_id is None or index_name not in members:
        if m.cube_id is not None and data_name in members:
            raise InputError(f"{path}: member {index_name} is missing (metric {m.uniq_name!r} has {data_name})")
        return MetricValues.from_coo(n_cp, [], [], [])   # Cube stores no files for an all-zero metric
    if data_name not in members:
        raise InputError(f"{path}: member {data_name} is missing (metric {m.uniq_name!r})")
    try:
        positions, values = read_metric(path, str(m.cube_id), members[index_name], members[data_name], m.dtype,
                                        n_cp, n_loc)
    except UnsupportedType:
        warnings.append(f"{path}: metric {m.uniq_name!r} has Cube data type {m.dtype}, which popview does not "
                        "support (not one number per call path and location); skipped")
        return None
    rows = tree.callpaths(positions, m.type)
    if rows is None or len(np.unique(rows)) != len(rows):
        raise InputError(f"{path}: {index_name} refers to call paths that anchor.xml does not define")
    values = values[:, location_ids]                       # data columns are location ids
    if m.type == "INCLUSIVE" and m.dtype not in _AGGREGATION:     # a min / max is its subtree's already
        values = tree.exclusive(rows, values, clamp=m.dtype.startswith("U"))
    r, loc = np.nonzero(values)
    return MetricValues.from_coo(n_cp, rows[r], loc, values[r, loc])


def _children_first(parent: np.ndarray) -> np.ndarray:
    """Call path (pre-order id) at each "children first" position."""
    children: list[list[int]] = [[] for _ in range(len(parent))]
    roots = []
    for c, p in enumerate(parent.tolist()):
        (children[p] if p >= 0 else roots).append(c)
    order = []
    for root in roots:
        order.append(root)
        stack = [root]
        while stack:
            kids = children[stack.pop()]
            order.extend(kids)
            stack.extend(reversed(kids))
    return np.array(order, np.int64)
