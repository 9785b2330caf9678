"""The metric models, one module per variant, by id."""
from __future__ import annotations

from popview.analysis.models import computation, critical_path, hybrid_additive, hybrid_multiplicative, io, pop_mpi

MODULES = {m.MODEL.id: m for m in (pop_mpi, hybrid_additive, hybrid_multiplicative, critical_path, io, computation)}
MODEL_IDS = tuple(MODULES)
# What `--model all` means: the efficiency models (computation and I/O come with them).
ALL = ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path", "computation", "io")


def get(model_id: str):
    try:
        return MODULES[model_id]
    except KeyError:
        raise ValueError(f"unknown metric model {model_id!r}: choose from {', '.join(MODEL_IDS)}") from None
