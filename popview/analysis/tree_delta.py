"""The difference of two metric trees (A - B), node by node.

A difference of efficiencies is not an efficiency: each node of the result is
of kind "difference", valued A - B in the node's own terms (percentage points
for efficiencies and scalabilities, seconds for times, plain for counts) and
never rated. A node either run lacks, or cannot evaluate, is not available
and says which run and why.
"""
from __future__ import annotations

import copy

from popview.analysis.node import RATED, MetricNode, MetricTree

DIFFERENCE = "difference"
POINTS = "pp"              # percentage points: the unit of a difference of efficiencies


def difference_tree(a: MetricTree, b: MetricTree, label_a: str = "A", label_b: str = "B") -> MetricTree:
    """A - B on A's tree shape; nodes B lacks are not available."""
    found = {n.id: n for n in b.nodes()}
    found.update({_rootless(n.id): n for n in b.nodes() if _rootless(n.id) not in found})
    roots = [_delta(r, found, label_a, label_b) for r in a.roots]
    notes = [f"{label_a} - {label_b}: each value is the difference of the two runs' own metrics "
             "(percentage points for efficiencies), not an efficiency of its own"]
    return MetricTree(model=a.model, title=f"{a.title}: {label_a} - {label_b}",
                      experiment=f"{label_a} - {label_b}", focus=a.focus, roots=roots, notes=notes)


def _rootless(node_id: str) -> str:
    """A per-region node's id without its call path's root: the program's root is one node
    whatever the executable's name, as popview.analysis.algebra aligns call trees."""
    kind, sep, path = node_id.partition(":")
    return f"{kind}:{path.partition('/')[2]}" if sep and "/" in path else node_id


def _delta(na: MetricNode, found: dict, label_a: str, label_b: str) -> MetricNode:
    nb = found.get(na.id) or found.get(_rootless(na.id))
    rated = na.kind in RATED
    out = MetricNode(na.id, na.name, description=f"{label_a} - {label_b} of: {na.description or na.name}",
                     formula=f"{na.name} of {label_a} - {na.name} of {label_b}", kind=DIFFERENCE,
                     unit=POINTS if rated else na.unit)
    if nb is None:
        out.reason = f"{label_b} has no {na.name}"
    elif na.value is None:
        out.reason = f"{label_a}: {na.reason or 'not available'}"
    elif nb.value is None:
        out.reason = f"{label_b}: {nb.reason or 'not available'}"
    elif nb.bound:      # minus an upper bound: no provable direction (shown here as no lower bounds are)
        out.reason = f"{label_b} gives only an upper bound of {na.name}, so the difference has no bound: {nb.reason}"
    else:
        out.bound, out.reason = na.bound, na.reason      # an upper bound minus an exact value: an upper bound
        out.value = float(na.value) - float(nb.value)
        out.inputs = {label_a: float(na.value), label_b: float(nb.value)}
    out.children = [_delta(c, found, label_a, label_b) for c in na.children]
    return out


def find_like(tree: MetricTree, node_id: str) -> MetricNode | None:
    """The node of `tree` with this id, or the same per-region node under another root name."""
    node = tree.find(node_id)
    if node is None and _rootless(node_id) != node_id:
        key = _rootless(node_id)
        node = next((n for n in tree.nodes() if _rootless(n.id) == key), None)
    return node


def not_available(tree: MetricTree, reason: str, keep=lambda node: False) -> MetricTree:
    """A copy of `tree` whose nodes (but those `keep` accepts) are not available for `reason`."""
    out = copy.deepcopy(tree)
    for _, n in out.walk():
        if not keep(n):
            n.value, n.reason, n.min, n.avg, n.max, n.bound = None, reason, None, None, None, None
            n.warnings = []
    return out
