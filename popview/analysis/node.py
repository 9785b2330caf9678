"""Metric trees: what a metric model returns for one experiment and focus."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

RATED = ("efficiency", "scalability")     # kinds judged on the 0..1 scale
ALTERNATIVES = "alternatives"
"""MetricNode.combine of a node split more than one way: each factor child is one alternative
decomposition whose value equals the node's (and which combines its own children)."""


@dataclass
class MetricNode:
    """One metric. `value` is None when not available, `reason` says why.

    combine: how this node's *factor* children make it ("product": the
    value is their product; "additive": its inefficiency 1 - value is the
    sum of theirs; "alternatives": each is an alternative split equal to
    it; None: no relation). Children with factor=False are shown
    under the node but are not part of that relation.
    """

    id: str
    name: str
    description: str = ""
    formula: str = ""
    kind: str = "efficiency"          # efficiency | scalability | value
    value: float | None = None
    reason: str | None = None
    inputs: dict[str, float] = field(default_factory=dict)
    children: list["MetricNode"] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unit: str = ""
    combine: str | None = None
    factor: bool = True
    min: float | None = None
    avg: float | None = None
    max: float | None = None
    bound: str | None = None

    def walk(self, depth: int = 0):
        yield depth, self
        for c in self.children:
            yield from c.walk(depth + 1)

    def to_dict(self) -> dict:
        d = {"id": self.id, "name": self.name, "kind": self.kind, "value": _clean(self.value),
             "description": self.description, "formula": self.formula,
             "inputs": {k: _clean(v) for k, v in self.inputs.items()}}
        for key in ("bound", "reason", "unit", "combine"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if not self.factor:
            d["factor"] = False
        if self.warnings:
            d["warnings"] = list(self.warnings)
        if self.min is not None:
            d.update(min=_clean(self.min), avg=_clean(self.avg), max=_clean(self.max))
        if self.children:
            d["children"] = [c.to_dict() for c in self.children]
        return d


def _clean(v):
    if v is None:
        return None
    if isinstance(v, (np.floating, np.integer)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass
class MetricTree:
    """The result of one model for one experiment and focus."""

    model: str
    title: str
    experiment: str
    focus: str
    roots: list[MetricNode]
    notes: list[str] = field(default_factory=list)

    @property
    def children(self) -> list[MetricNode]:
        return self.roots

    def walk(self):
        for r in self.roots:
            yield from r.walk()

    def nodes(self) -> list[MetricNode]:
        return [n for _, n in self.walk()]

    def find(self, metric_id: str) -> MetricNode | None:
        for n in self.nodes():
            if n.id == metric_id:
                return n
        return None

    def __getitem__(self, metric_id: str) -> MetricNode:
        node = self.find(metric_id)
        if node is None:
            raise KeyError(metric_id)
        return node

    def value(self, metric_id: str) -> float | None:
        node = self.find(metric_id)
        return None if node is None else node.value

    def to_dict(self) -> dict:
        return {"model": self.model, "title": self.title, "experiment": self.experiment, "focus": self.focus,
                "notes": list(self.notes), "metrics": [r.to_dict() for r in self.roots]}

    def to_frame(self):
        """One row per metric: id, name, depth, kind, value, bound, reason, formula."""
        import pandas as pd
        rows = [{"id": n.id, "name": n.name, "depth": d, "kind": n.kind, "value": n.value, "bound": n.bound or "",
                 "unit": n.unit,
                 "reason": n.reason or "", "formula": n.formula, "warnings": "; ".join(n.warnings)}
                for d, n in self.walk()]
        return pd.DataFrame(rows).set_index("id")

    def inconsistencies(self, tolerance: float = 1e-9) -> list[str]:
        return consistency(self.roots, tolerance)


def consistency(nodes, tolerance: float = 1e-9) -> list[str]:
    """Nodes whose value differs from the combination of their factor children."""
    out = []
    for root in nodes:
        for _, n in root.walk():
            if n.combine == ALTERNATIVES and n.value is not None:
                out += [f"{n.id}: {n.value:.6g} but its alternative split {c.id} gives {c.value:.6g}"
                        for c in n.children if c.factor and c.value is not None
                        and abs(c.value - n.value) > tolerance]
                continue
            expected = combined(n)
            if expected is None or n.value is None:
                continue
            if abs(expected - n.value) > tolerance:
                out.append(f"{n.id}: {n.value:.6g} but its children give {expected:.6g} ({n.combine})")
    return out


def combined(node: MetricNode) -> float | None:
    """The value a node's factor children give it, None if not derivable."""
    parts = [c.value for c in node.children if c.factor]
    if not node.combine or not parts or any(v is None for v in parts):
        return None
    if node.combine == "product":
        return float(np.prod(parts))
    if node.combine == "additive":
        return 1.0 - float(sum(1.0 - v for v in parts))
    return None
