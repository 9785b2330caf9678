"""The replay graph's node order: sorted by (location, time, priority), alike
nodes merged, copying nodes kept apart, whichever sort path is taken."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis.replay.graph import _node_order


def _reference(loc, time, pri, copy):
    """Brute force: positions of the sorted, merged nodes."""
    keys = sorted(range(len(loc)), key=lambda i: (loc[i], time[i], pri[i]))
    rank, nodes = np.empty(len(loc), np.int64), []
    for i in keys:
        k = (loc[i], time[i], pri[i])
        if not nodes or nodes[-1][0] != k or copy[i] or nodes[-1][1]:
            nodes.append((k, bool(copy[i])))
        rank[i] = len(nodes) - 1
    return rank, [n[0][0] for n in nodes], [n[0][1] for n in nodes], [n[1] for n in nodes]


@pytest.mark.parametrize("far", [0, 1 << 60])
def test_node_order_merges_alike_nodes(far):
    rng = np.random.default_rng(3)
    n = 500
    loc = rng.integers(0, 4, n).astype(np.int32)
    time = rng.integers(0, 40, n).astype(np.int64)
    time[0] = far or time[0]          # a far time leaves no room for a packed key: the lexsort path
    pri = rng.integers(0, 4, n).astype(np.int8)
    copy = rng.random(n) < 0.1
    rank, u_loc, u_time, u_copy = _node_order(loc, time, pri, copy)
    ref_rank, ref_loc, ref_time, ref_copy = _reference(loc, time, pri, copy)
    np.testing.assert_array_equal(rank, ref_rank)
    np.testing.assert_array_equal(u_loc, ref_loc)
    np.testing.assert_array_equal(u_time, ref_time)
    np.testing.assert_array_equal(u_copy, ref_copy)
    assert len(u_time) < n            # some nodes were merged
