"""Which of a few sorted codes (counter or region event types) each event has, in a
few vectorised numpy passes: as fast as the numba kernel this was for the dense codes
that traces hold (within 1.5x on 20 M values), without seconds of compiling at first use."""
from __future__ import annotations

import numpy as np

# Codes spanning fewer values than this are looked up in a table of that span.
DENSE_SPAN = 1 << 16


def code_index(values, codes) -> np.ndarray:
    """Per value, its index in `codes` (sorted, distinct), or -1. Codes close together
    (the usual case: 42000000-42001047) are found with one load from a table; others by
    bisection."""
    values, codes = np.asarray(values), np.asarray(codes)
    if not len(codes) or not len(values):
        return np.full(len(values), -1, np.int32)
    lo, hi = int(codes[0]), int(codes[-1])
    if hi - lo < DENSE_SPAN:
        table = np.full(hi - lo + 2, -1, np.int32)          # the last slot: every value outside
        table[codes.astype(np.int64) - lo] = np.arange(len(codes), dtype=np.int32)
        slot = np.subtract(values, lo, dtype=np.int64, casting="unsafe")
        beyond = slot.view(np.uint64)              # below lo wraps to huge: one clamp for both ends
        np.minimum(beyond, hi - lo + 1, out=beyond)
        return table[slot]
    pos = np.minimum(np.searchsorted(codes, values), len(codes) - 1)
    return np.where(codes[pos] == values, pos, -1).astype(np.int32)


def member_rows(values, codes) -> np.ndarray:
    """The rows whose value is one of `codes` (sorted, distinct): the region events
    among all of them."""
    return np.flatnonzero(code_index(values, codes) >= 0)
