"""The staging's kernels that order an appended chunk by location."""
import numpy as np

from popview.cache.order import location_order, order_three, take


def test_order_three_is_a_stable_sort_by_location():
    rng = np.random.default_rng(3)
    locs = rng.integers(0, 9, 5000).astype(np.int32)
    a = rng.integers(0, 10**12, 5000)
    b = rng.integers(-2**31, 2**31 - 1, 5000).astype(np.int32)
    c = rng.random(5000)
    counts = np.bincount(locs, minlength=12)          # locations beyond the last present
    stable = np.argsort(locs, kind="stable")
    for got, column in zip(order_three(locs, counts, a, b, c), (a, b, c)):
        assert got.dtype == column.dtype
        np.testing.assert_array_equal(got, column[stable])
    np.testing.assert_array_equal(take(a, location_order(locs, counts)), a[stable])


def test_concat_runs_copies_the_runs_in_order():
    from popview.cache.order import concat_runs

    src = np.arange(20, dtype=np.int64) * 3
    starts, lengths = np.array([4, 0, 15], np.int64), np.array([3, 0, 5], np.int64)
    out = np.full(8, -1, np.int64)
    concat_runs(src, starts, lengths, out)
    assert out.tolist() == [*src[4:7], *src[15:20]]
