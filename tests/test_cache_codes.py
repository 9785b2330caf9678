"""code_index: the index of each value among a few sorted codes, by table or bisection."""
import numpy as np
import pytest

from popview.cache import codes as codes_module
from popview.cache.codes import DENSE_SPAN, FEW_CODES, code_index, member_rows


def _expected(values, codes):
    pos = np.clip(np.searchsorted(codes, values), 0, max(len(codes) - 1, 0))
    found = (codes[pos] == values) if len(codes) else np.zeros(len(values), bool)
    return np.where(found, pos, -1)


@pytest.mark.parametrize("span", [1, 1000, DENSE_SPAN - 1, DENSE_SPAN, 10**9])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_code_index_agrees_with_a_search(span, dtype):
    rng = np.random.default_rng(span)
    base = 42_000_000
    codes = np.unique(base + rng.integers(0, span, 6)).astype(np.int64)
    values = np.concatenate([codes, base + rng.integers(-5, span + 5, 5000), [0, -1, base - 1]]).astype(dtype)
    np.testing.assert_array_equal(code_index(values, codes), _expected(values.astype(np.int64), codes))


def test_no_codes_finds_nothing():
    assert (code_index(np.arange(10), np.zeros(0, np.int64)) == -1).all()


@pytest.mark.parametrize("members", [[], [7], [40000003, 50000001, 50000002, 50000003], [-5, 0, 2**31 - 1]])
def test_member_rows_are_where_isin(members):
    members = np.array(members, np.int32)
    values = np.random.default_rng(2).choice(
        np.concatenate([members, np.array([-6, 1, 8, 42000050, 50000000, 50000004], np.int32)]), 5000).astype(np.int32)
    np.testing.assert_array_equal(member_rows(values, members), np.flatnonzero(np.isin(values, members)))


@pytest.mark.parametrize("codes", [[40000003, 50000001, 50000002, 50000003], [1, 2**40, 2**41 + 3, 2**62],
                                   list(range(0, 70 * 2**20, 2**20))])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_spread_codes_hashed_agree_with_a_search(codes, dtype):
    """Codes too far apart for a table are hashed by a window of their bits: same answer."""
    codes = np.array(codes, np.int64)
    rng = np.random.default_rng(len(codes))
    near = np.concatenate([codes + d for d in (-2**20, -1, 0, 1, 2**16, 2**32)])
    values = rng.choice(np.concatenate([near, [0, -1, 2**31 - 1]]), 4000)
    if dtype == np.int32:
        values = values[(values >= -2**31) & (values < 2**31)]
    values = values.astype(dtype)
    np.testing.assert_array_equal(code_index(values, codes), _expected(values.astype(np.int64), codes))


@pytest.mark.parametrize("codes", [[7], [40000003, 50000001, 50000002, 50000003], [-5, 0, 2**31 - 1, 2**31, 2**40],
                                   list(range(40000000, 40000000 + FEW_CODES)), list(range(3, 3 + 3 * FEW_CODES, 3))])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_member_rows_compared_or_looked_up_agree(codes, dtype, monkeypatch):
    """A few codes are compared with every value (FEW_CODES); more are looked up: the same rows,
    codes beyond the values' type included."""
    codes = np.array(codes, np.int64)
    rng = np.random.default_rng(len(codes))
    values = rng.choice(np.concatenate([codes, codes + 1, codes - 1, [0, 1, 2**31 - 1]]), 6000)
    if dtype == np.int32:
        values = values[(values >= -2**31) & (values < 2**31)]
    if dtype == np.uint64:
        values = values[values >= 0]
    values = values.astype(dtype)
    compared = member_rows(values, codes)
    monkeypatch.setattr(codes_module, "FEW_CODES", 0)
    np.testing.assert_array_equal(compared, member_rows(values, codes))
    np.testing.assert_array_equal(compared, np.flatnonzero(_expected(values.astype(np.int64), codes) >= 0))
