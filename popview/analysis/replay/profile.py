"""Critical-path profile: the useful time on the G-CUE critical path, per
call path (the innermost region open at each moment) and per location."""
from __future__ import annotations

import numpy as np

from popview.analysis.replay import intervals
from popview.analysis.replay.records import Calls
from popview.analysis.replay.weights import CUE


def critical_path_profile(exp, path, pieces, calls: Calls) -> tuple[np.ndarray, float, dict[str, np.ndarray]]:
    """(seconds per call path, seconds outside any region, sparse per-location columns).

    `path`: (loc, begin, end) of the critical path; `pieces`: the focus-cut
    weighted states. Only useful (CUE-weighted) time counts, so the profile
    plus the time outside any region sums to G-CUE; waiting pieces of the
    path hold none of it.
    """
    defs = exp.definitions
    n_loc, n_cp = defs.n_locations, len(defs.callpath_parent)
    p_ptr, p_b, p_e, p_w = pieces
    own = ~path["waiting"]
    order = np.lexsort((path["begin"][own], path["loc"][own]))
    c_loc, c_b, c_e = path["loc"][own][order], path["begin"][own][order], path["end"][own][order]
    c_ptr = intervals.csr(c_loc, n_loc)
    on_ptr, on_b, on_e = intervals.intersect_weighted(p_ptr, p_b, p_e, np.ascontiguousarray(p_w[:, CUE]),
                                                      c_ptr, c_b, c_e)
    calls = calls.all() if exp.reader.has("calls") else None
    per_cp = np.zeros(n_cp, np.float64)
    empty = {"loc": np.zeros(0, np.int32), "callpath": np.zeros(0, np.int32), "seconds": np.zeros(0)}
    total = float((on_e - on_b).sum()) / 1e9
    if calls is None or len(on_b) == 0:
        return per_cp, total, empty
    k_ptr = intervals.csr(calls["loc"], n_loc)
    l_ptr, l_b, l_e, l_cp = intervals.leaves(k_ptr, calls["begin"], calls["end"], calls["callpath"])
    x_ptr, x_b, x_e, _, il = intervals.intersect(on_ptr, on_b, on_e, l_ptr, l_b, l_e)
    seconds = (x_e - x_b) / 1e9
    cp = l_cp[il]
    per_cp = np.bincount(cp, weights=seconds, minlength=n_cp)
    outside = total - float(seconds.sum())
    key = _loc_of_rows(x_ptr).astype(np.int64) * max(n_cp, 1) + cp
    uniq, inv = np.unique(key, return_inverse=True)
    by_loc = {"loc": (uniq // max(n_cp, 1)).astype(np.int32), "callpath": (uniq % max(n_cp, 1)).astype(np.int32),
              "seconds": np.bincount(inv.ravel(), weights=seconds)}
    return per_cp, outside, by_loc


def _loc_of_rows(ptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
