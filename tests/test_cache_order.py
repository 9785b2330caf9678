"""The staging's kernels that order an appended chunk by location."""
import numpy as np
import pytest

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


def test_concat_runs_copies_the_bytes_of_any_item_type():
    """float64 (and int16) columns: every bit kept (NaN payloads, -0.0), through one kernel per width."""
    from popview.cache import order

    bits = np.array([0x7FF8000000000123, 0x8000000000000000, 0x3FF0000000000000, 1, 2**64 - 1], np.uint64).view(np.int64)
    starts, lengths = np.array([3, 0], np.int64), np.array([2, 2], np.int64)
    for src in (bits.view(np.float64), bits.astype(np.int16), bits.astype(np.int32)):
        src.flags.writeable = False                      # a mapped scratch file's columns are read-only
        out = np.zeros(4, src.dtype)
        order.concat_runs(src, starts, lengths, out)
        expect = np.concatenate((src[3:5], src[0:2]))
        assert out.dtype == src.dtype
        assert out.tobytes() == expect.tobytes()
    assert "float64" not in {str(sig[0].dtype) for sig in order._concat_runs.signatures}


def test_run_copies_as_python_equal_the_kernels():
    """Interpreted mode (small archives) copies the runs by slices: the same bytes as the kernels."""
    from popview import jit
    from popview.cache import order

    rng = np.random.default_rng(5)
    src = rng.integers(-2**62, 2**62, 300)
    starts = np.array([250, 0, 17, 299, 40], np.int64)
    lengths = np.array([50, 0, 9, 1, 30], np.int64)
    dst = np.array([0, 50, 50, 59, 60], np.int64)
    got = {}
    for interpreted in (False, True):
        with jit.interpreted(interpreted):
            concat = np.full(90, -1, np.int64)
            order.concat_runs(src, starts, lengths, concat)
            placed = np.full(95, -1, np.int64)
            order.place_runs(src, starts, lengths, placed, dst)
        got[interpreted] = (concat, placed)
    for a, b in zip(got[False], got[True]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got[True][0], np.concatenate([src[s:s + n] for s, n in zip(starts, lengths)]))


@pytest.mark.parametrize("shape", ["in order", "shuffled", "times back", "one", "empty"])
def test_chunk_summary_as_python_equals_the_kernel(shape):
    """summarize_chunk's numpy stand-in (interpreted mode) gives what the kernel gives."""
    from popview import jit
    from popview.cache.order import summarize_chunk

    rng = np.random.default_rng(11)
    n = {"one": 1, "empty": 0}.get(shape, 2000)
    locs = np.sort(rng.integers(0, 7, n)).astype(np.int32)
    times = np.sort(rng.integers(-10**6, 10**12, n))
    if shape == "shuffled":
        perm = rng.permutation(n)
        locs, times = locs[perm], times[perm]
    if shape == "times back":
        times[n // 2] = times[0] - 5
    top = int(locs.max()) + 3 if n else 4             # locations beyond the last present
    got = {}
    for interpreted in (False, True):
        with jit.interpreted(interpreted):
            got[interpreted] = summarize_chunk(locs, times, top)
    for a, b in zip(got[False], got[True]):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype or a.shape == (), (a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b)
