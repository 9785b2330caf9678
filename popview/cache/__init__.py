"""The HDF5 cache of converted experiments (h5py; no Qt).

Its names are loaded when first used (PEP 562): `from popview.cache import
location` or `... import Progress` never imports h5py, numpy or numba, so
that commands answered without reading a cache (`popview info` from a cache's
stored summary: summary.py) start at once."""
from __future__ import annotations

import importlib

_NAMES = {
    "Cancelled": "popview.cache.progress", "Progress": "popview.cache.progress",
    "CacheError": "popview.cache.errors", "CacheDamaged": "popview.cache.errors",
    "CacheUnwritable": "popview.cache.errors",
    "Reader": "popview.cache.reader", "open_if_valid": "popview.cache.reader",
    "Writer": "popview.cache.writer",
}

__all__ = ["Cancelled", "Progress", "CacheError", "CacheDamaged", "CacheUnwritable", "Reader", "open_if_valid", "Writer"]


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'popview.cache' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
