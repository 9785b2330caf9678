"""popview.jit: numba's private _nrt option only on the releases it is known for,
a plain njit elsewhere, with the same results."""
from __future__ import annotations

import numpy as np

from popview import jit


def _total(a):
    s = 0
    for i in range(len(a)):
        s += a[i]
    return s


def test_tested_range_and_beyond():
    assert jit.refcount_free_supported((0, 60)) and jit.refcount_free_supported((0, 68))
    assert not jit.refcount_free_supported((0, 69)) and not jit.refcount_free_supported((1, 0))
    assert not jit.refcount_free_supported((0, 59))


def test_the_installed_numba_is_in_the_tested_range():
    """pyproject.toml's bounds on numba and jit.TESTED must agree."""
    assert jit.refcount_free_supported()


def test_fallback_compiles_the_same_kernel(monkeypatch):
    a = np.arange(1000, dtype=np.int64)
    fast = jit.refcount_free(cache=False)(_total)
    monkeypatch.setattr(jit, "refcount_free_supported", lambda release=None: False)
    plain = jit.refcount_free(cache=False)(_total)
    assert fast(a) == plain(a) == a.sum()
    assert plain.targetoptions.get("_nrt", True) is True
    assert fast.targetoptions.get("_nrt") is False
