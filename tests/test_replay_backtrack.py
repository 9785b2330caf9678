"""The critical path's backtracking kernel on a path longer than its first buffer."""
from __future__ import annotations

import numpy as np

from popview.analysis.replay.kernel import backtrack


def test_a_long_path_of_alternating_waits_is_every_hop_in_time_order():
    """Two locations that each wait for the other at every node: the path hops between
    them 2n - 2 times (10^4 pieces: the kernel's buffer grows several times), each hop a
    waiting piece of 1 ns, from the first node's time to the last, contiguous."""
    n = 5000
    loc_ptr = np.array([0, n, 2 * n], np.int64)
    time = np.concatenate((np.arange(n) * 2, np.arange(n) * 2 + 1)).astype(np.int64)   # 0 2 4 ... / 1 3 5 ...
    came_from = np.full(2 * n, -1, np.int32)
    came_from[1:n] = n + np.arange(n - 1)          # location 0's node k waited for location 1's node k - 1
    came_from[n:] = np.arange(n)                   # location 1's node k waited for location 0's node k
    loc, begin, end, waiting = backtrack(loc_ptr, time, came_from, n - 1, 0, 10 * n)
    assert (loc.dtype, begin.dtype, end.dtype, waiting.dtype) == (np.int32, np.int64, np.int64, np.bool_)
    assert len(loc) == 2 * n - 2
    np.testing.assert_array_equal(begin, np.arange(2 * n - 2))
    np.testing.assert_array_equal(end, begin + 1)
    np.testing.assert_array_equal(loc, np.arange(1, 2 * n - 1) % 2)      # [0, 1] waited on location 1, then 0, ...
    assert waiting.all()


def test_no_piece_when_the_window_is_empty():
    loc_ptr = np.array([0, 3], np.int64)
    out = backtrack(loc_ptr, np.array([5, 6, 7], np.int64), np.full(3, -1, np.int32), 2, 10, 10)
    assert [len(a) for a in out] == [0, 0, 0, 0]
    assert [a.dtype for a in out] == [np.int32, np.int64, np.int64, np.bool_]
