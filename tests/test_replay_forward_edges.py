"""The replay keeps only edges that run forward in time (a virtual node at its earliest
successor): the kernel against the definition, on random graphs."""
from __future__ import annotations

import numpy as np

from popview.analysis.replay.graph import forward_edges


def _by_definition(src, dst, time, n_virtual):
    at = np.full(max(n_virtual, 1), np.iinfo(np.int64).max, np.int64)
    for s, d in zip(src, dst):
        if s < 0 <= d:
            at[-1 - s] = min(at[-1 - s], time[d])
    source = [time[s] if s >= 0 else np.iinfo(np.int64).min for s in src]
    target = [time[d] if d >= 0 else at[-1 - d] for d in dst]
    return np.array([a <= b for a, b in zip(source, target)], bool)


def test_forward_edges_follow_the_definition():
    rng = np.random.default_rng(3)
    for n_nodes, n_virtual, n_edges in ((50, 5, 300), (1, 0, 4), (200, 40, 2000)):
        time = rng.integers(0, 100, n_nodes).astype(np.int64)
        src = rng.integers(-n_virtual, n_nodes, n_edges).astype(np.int64) if n_virtual else \
            rng.integers(0, n_nodes, n_edges).astype(np.int64)
        dst = rng.integers(-n_virtual, n_nodes, n_edges).astype(np.int64) if n_virtual else \
            rng.integers(0, n_nodes, n_edges).astype(np.int64)
        real = (src >= 0) | (dst >= 0)                     # no virtual-to-virtual edge
        src, dst = src[real], dst[real]
        assert np.array_equal(forward_edges(src, dst, time, n_virtual), _by_definition(src, dst, time, n_virtual))
