"""The membership tests that replaced np.isin on hot small calls give np.isin's answers."""
from __future__ import annotations

import numpy as np

from popview.cache.cumulative import _any_of
from popview.readers.otf2 import raw, threads
from popview.readers.otf2.raw import RawEvents


def test_any_of_is_isin():
    rng = np.random.default_rng(2)
    values = rng.integers(-3, 60, 5000)
    for codes in ([], [5], (5, 9, 41), list(range(0, 60, 5)), [2**40]):
        np.testing.assert_array_equal(_any_of(values, codes), np.isin(values, list(codes)))
        np.testing.assert_array_equal(_any_of(values.astype(np.int32), codes), np.isin(values, list(codes)))


def test_thread_record_tables_are_isin():
    for kind in range(-2, raw.N_KINDS + 2):
        rec = RawEvents(np.array([raw.ENTER, kind], np.int8), *(np.zeros(2, np.int64),) * 6)
        assert threads.has_thread_records(rec) == bool(np.isin(rec.kind, threads.THREAD_KINDS).any()), kind
