"""A scaling table: metrics as rows, runs as columns, for one model and focus."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from popview.analysis.report import nodes


@dataclass
class Row:
    id: str
    name: str
    depth: int
    kind: str
    unit: str
    values: list[float | None]
    reasons: list[str]
    node: object = None            # the node of the first run that has it (help text)
    bounds: list[str | None] = field(default_factory=list)    # per run: "upper" where only a bound is known

    def text(self, i: int, *, micro: str = "us") -> str:
        """Run i's value as shown: '\u2264 33.6 %' for an upper bound, 'n/a' when not available."""
        bound = self.bounds[i] if i < len(self.bounds) else None
        return nodes.BOUND_SIGN.get(bound, "") + nodes.format_as(self.node, self.values[i], micro=micro)


@dataclass
class ScalingTable:
    model: str
    focus: str
    labels: list[str]                    # run labels, e.g. "16x4"
    elements: list[int]                  # processing elements per run (processes x threads)
    reference: int                       # index of the reference run
    mode: str                            # strong | weak
    mode_reason: str = ""                # why (guessed from the instruction counts, or as asked)
    rows: list[Row] = field(default_factory=list)
    runtimes: list[float | None] = field(default_factory=list)   # seconds
    trees: list = field(default_factory=list)                    # the engine's MetricTree per run

    def speedup(self) -> list[float | None]:
        """The engine's speedup row (runtime_ref / runtime, weak scaling: times n / n_ref)."""
        row = self.row("speedup")
        return list(row.values) if row else [None] * len(self.labels)

    def ideal_speedup(self) -> list[float]:
        n_ref = self.elements[self.reference]
        return [n / n_ref for n in self.elements]

    def row(self, metric_id: str) -> Row | None:
        return next((r for r in self.rows if r.id == metric_id), None)

    def to_json(self) -> str:
        return json.dumps({
            "model": self.model, "focus": self.focus, "mode": self.mode, "mode_reason": self.mode_reason,
            "reference": self.labels[self.reference],
            "runs": [{"label": lab, "elements": n, "runtime_s": rt, "speedup": s}
                     for lab, n, rt, s in zip(self.labels, self.elements, self.runtimes, self.speedup())],
            "metrics": [{"id": r.id, "name": r.name, "depth": r.depth, "kind": r.kind, "unit": r.unit,
                         "values": dict(zip(self.labels, r.values)),
                         "upper_bounds": [lab for lab, b in zip(self.labels, r.bounds) if b == "upper"],
                         "not_available": {lab: why for lab, v, why in zip(self.labels, r.values, r.reasons)
                                           if v is None}} for r in self.rows],
        }, indent=2)

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["metric", "name"] + self.labels)
        for r in self.rows:
            w.writerow([r.id, r.name] + ["" if v is None else repr(v) for v in r.values])
        if self.runtimes:
            w.writerow(["runtime_s", "Runtime (s)"] + ["" if v is None else repr(v) for v in self.runtimes])
        return buf.getvalue()


def merge_rows(trees: list) -> list[Row]:
    """Rows of the runs' MetricTrees in the pre-order of the first, then any id only later runs have."""
    order: list[tuple[str, int, object]] = []
    seen = set()
    for tree in trees:
        for depth, node in tree.walk():
            if node.id not in seen:
                seen.add(node.id)
                order.append((node.id, depth, node))
    by_run = [{n.id: n for _, n in t.walk()} for t in trees]
    rows = []
    for node_id, depth, first in order:
        vals, why, bounds = [], [], []
        for run in by_run:
            n = run.get(node_id)
            vals.append(nodes.value(n) if n is not None else None)
            why.append(nodes.reason(n) if n is not None else "not computed for this run")
            bounds.append(nodes.bound(n) if n is not None else None)
        rows.append(Row(node_id, first.name, depth, first.kind,
                        nodes.unit(first), vals, why, first, bounds))
    return rows
