"""Scaling tables over several runs of one application."""
from __future__ import annotations

from popview.analysis.report import nodes
from popview.analysis.report.table import ScalingTable, merge_rows

MODES = ("strong", "weak")


def elements(exp) -> int:
    """Processing elements of a run: processes x threads."""
    p, t = exp.shape()
    return p * max(t, 1)


def ordered(exps: list) -> list:
    """Runs from the smallest to the largest (the smallest is the usual reference)."""
    return sorted(exps, key=lambda e: (elements(e), e.shape()))


def runtime_of(tree) -> float | None:
    """The focus runtime R (seconds) among the tree's inputs."""
    for _, node in tree.walk():
        inputs = getattr(node, "inputs", None) or {}
        for key in ("runtime", "R", "runtime_s"):
            v = inputs.get(key)
            if v is not None and nodes.is_number(v):
                return float(v)
    return None


def trees(exps: list, model: str, focus, reference, mode: str) -> list:
    """One MetricTree per run, scalabilities relative to `reference`."""
    return [e.metrics(model, focus, reference=reference, mode=mode) for e in exps]


def build(exps: list, model: str, focus, reference_index: int = 0, mode: str = "strong") -> ScalingTable:
    if mode not in MODES:
        raise ValueError(f"scaling mode must be one of {MODES}, not {mode!r}")
    runs = ordered(exps)
    ref = runs[reference_index]
    result = trees(runs, model, focus, ref, mode)
    return ScalingTable(model=model, focus=focus.label(), labels=[e.label for e in runs],
                        elements=[elements(e) for e in runs], reference=reference_index, mode=mode,
                        rows=merge_rows(result), runtimes=[runtime_of(t) for t in result], trees=result)
