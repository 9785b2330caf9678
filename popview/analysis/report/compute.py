"""Metric trees of a variant for one experiment and focus."""
from __future__ import annotations


def variant(exp, variant, focus, reference=None) -> list:
    """The MetricTree of every model of `variant` (computation / I/O has two);
    scalabilities against `reference` (None: the run itself)."""
    return [exp.metrics(m, focus, reference=reference) for m in variant.models]
