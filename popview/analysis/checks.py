"""Consistency of a metric table with a model's own relations (parents =
product or inefficiency-sum of their children), to the table's rounding.

Used to check published tables (the seeds' audits) and popview's own output.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popview.analysis import models
from popview.analysis.models.base import Spec
from popview.analysis.node import ALTERNATIVES


@dataclass
class Check:
    metric: str
    column: str
    value: float
    from_children: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return abs(self.value - self.from_children) <= self.tolerance

    def __str__(self) -> str:
        return (f"{self.metric} [{self.column}]: table {self.value:.4f}, children give {self.from_children:.4f} "
                f"(allowed difference {self.tolerance:.4f})")


def relations(model_id: str) -> list[tuple[str, str, list[str]]]:
    """(parent id, combine, factor children ids) of a model."""
    out = []

    def visit(spec: Spec):
        kids = [c.id for c in spec.children if c.factor]
        if spec.combine == ALTERNATIVES:      # each split's product is the parent itself
            out.extend((spec.id, c.combine, [k.id for k in c.children if k.factor]) for c in spec.children)
        elif spec.combine and kids:
            out.append((spec.id, spec.combine, kids))
        for c in spec.children:
            visit(c)
    for root in models.get(model_id).MODEL.roots:
        visit(root)
    return out


def check_table(model_id: str, columns: dict[str, dict[str, float]], half_unit: float) -> list[Check]:
    """Every relation of the model whose parent and children are all in a column.

    half_unit: half the last printed digit (e.g. 0.005 for values printed
    as 0.95); the allowed difference propagates it through the relation
    plus the parent's own rounding."""
    out = []
    for column, values in columns.items():
        for parent, combine, kids in relations(model_id):
            if parent not in values or any(k not in values for k in kids):
                continue
            v = [values[k] for k in kids]
            if combine == "product":
                derived = float(np.prod(v))
                # d(prod) <= sum_i h * prod_{j != i} (v_j + h)
                tol = sum(half_unit * float(np.prod([x + half_unit for j, x in enumerate(v) if j != i]))
                          for i in range(len(v)))
            else:
                derived = 1.0 - sum(1.0 - x for x in v)
                tol = half_unit * len(v)
            out.append(Check(parent, column, values[parent], derived, tol + half_unit + 1e-12))
    return out
