"""Scaling tables over several runs of one application (popview.series)."""
from __future__ import annotations

import popview
from popview.analysis.report.table import ScalingTable, merge_rows

MODES = ("auto", "strong", "weak")


def elements(exp) -> int:
    """Processing elements of a run: processes x threads."""
    p, t = exp.shape()
    return p * max(t, 1)


def ordered(exps: list) -> list:
    """Runs from the smallest to the largest (the smallest is the usual reference)."""
    return sorted(exps, key=lambda e: (elements(e), e.shape()))


def build(exps: list, model: str, focus, reference_index: int = 0, mode: str = "auto") -> ScalingTable:
    """The table of `model` over the runs (smallest first), scalabilities against run `reference_index`."""
    if mode not in MODES:
        raise ValueError(f"scaling mode must be one of {MODES}, not {mode!r}")
    runs = ordered(exps)
    s = popview.series(runs, reference=runs[reference_index], scaling=mode, focus=focus)
    trees = s.trees(model)
    return ScalingTable(model=model, focus=focus.label(), labels=s.labels, elements=[elements(e) for e in runs],
                        reference=reference_index, mode=s.scaling, mode_reason=s.scaling_reason,
                        rows=merge_rows(trees), runtimes=[float(x.runtime) for x in s.inputs], trees=trees)
