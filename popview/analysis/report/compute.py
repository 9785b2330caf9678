"""Metric trees of a variant for one experiment and focus."""
from __future__ import annotations


def variant(exp, variant, focus, reference=None) -> list:
    """The MetricTree of every model of `variant` (computation / I/O has two)."""
    return [model_tree(exp, m, focus, reference) for m in variant.models]


def model_tree(exp, model: str, focus, reference=None):
    if reference is not None and reference is not exp:
        return exp.metrics(model, focus, reference=reference)
    return exp.metrics(model, focus)
