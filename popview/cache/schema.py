"""The cache's HDF5 schema: tables, their columns and the version.

Bump SCHEMA_VERSION (in version.py, which imports nothing: the stored summary
is checked against it without numpy) whenever a table, column or derived
dataset changes meaning: caches of another version are re-converted, never
trusted.
"""
from __future__ import annotations

import numpy as np

from popview.cache.version import SCHEMA_VERSION  # noqa: F401  (bumped there)

# table -> (location column, time column, ((column, dtype), ...))
TABLES: dict[str, tuple[str, str, tuple[tuple[str, type], ...]]] = {
    "states": ("loc", "begin", (("loc", np.int32), ("begin", np.int64), ("end", np.int64), ("state", np.int32))),
    "events": ("loc", "time", (("loc", np.int32), ("time", np.int64), ("type", np.int32), ("value", np.int64))),
    "messages": ("send_loc", "send_time", (
        ("send_loc", np.int32), ("recv_loc", np.int32),
        ("send_time", np.int64), ("send_phys", np.int64),
        ("recv_time", np.int64), ("recv_phys", np.int64),
        ("size", np.int64), ("tag", np.int64), ("comm", np.int32),
    )),
    "calls": ("loc", "begin", (("loc", np.int32), ("begin", np.int64), ("end", np.int64),
                               ("callpath", np.int32), ("depth", np.int16))),
}

# Tables whose rows are intervals (have an "end" column).
INTERVAL_TABLES = ("states", "calls")

CHUNK = 65536          # rows per HDF5 chunk: small random reads stay cheap
SPARSE_STEP = 4096     # one sparse-index entry per this many rows


def columns(table: str) -> tuple[tuple[str, type], ...]:
    return TABLES[table][2]


def empty(table: str) -> dict[str, np.ndarray]:
    return {name: np.zeros(0, dtype) for name, dtype in columns(table)}
