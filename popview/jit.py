"""numba behind one door: the one option popview uses beyond numba's public API.

`njit(_nrt=False)` compiles a kernel without numba's reference counting of
arrays: for helpers called once per record (an integer of a Paraver line, an
OTF2 event, a pyramid cell) the atomic counting costs more than the work
(measured 1.5-2x on the parsers). `_nrt` is private; it is known to work in
the numba releases pyproject.toml allows (0.60-0.68). On any other release
`refcount_free` falls back to a plain `njit`: the same results, slower.
"""
from __future__ import annotations

import numba

TESTED = ((0, 60), (0, 68))        # numba releases (major, minor) known to honour _nrt=False


def numba_release() -> tuple[int, int]:
    major, minor = numba.__version__.split(".")[:2]
    return int(major), int(minor)


def refcount_free_supported(release: tuple[int, int] | None = None) -> bool:
    return TESTED[0] <= (release or numba_release()) <= TESTED[1]


def refcount_free(fn=None, **options):
    """`numba.njit(cache=True, _nrt=False, **options)` where the option is known to work,
    else `numba.njit(cache=True, **options)`. Use as @refcount_free or @refcount_free(...)."""
    options = {"cache": True, **options}
    if refcount_free_supported():
        options["_nrt"] = False
    decorate = numba.njit(**options)
    return decorate(fn) if fn is not None else decorate
