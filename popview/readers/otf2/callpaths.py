"""The archive's call-path table, built by the reader (the cache then keeps
it as is). Each location's kernel numbers the call paths it meets locally,
without locks; the main thread merges each local table into this global one
in location order. A local parent is a local id (>= 0), ROOT (-1) for a
top-level call path, or an already global call path g written as -2 - g
(the master's fork call path under which an OpenMP worker's visits hang)."""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.typed import Dict, List

ROOT = -1


def external(cp: int) -> int:
    """A global call path as a local table's parent."""
    return -2 - cp


@numba.njit(cache=True)
def _get(keys, parent, region, depth, p, r):
    key = (np.int64(p) + 1) * 4294967296 + r
    if key in keys:
        return keys[key]
    cp = np.int64(len(parent))
    keys[key] = cp
    parent.append(np.int64(p))
    region.append(np.int64(r))
    depth.append(np.int64(0) if p < 0 else depth[p] + 1)
    return cp


@numba.njit(cache=True)
def _merge(keys, parent, region, depth, lt_parent, lt_region):
    out = np.empty(len(lt_parent), np.int64)
    for j in range(len(lt_parent)):
        p = lt_parent[j]
        g = np.int64(-1) if p == ROOT else (out[p] if p >= 0 else -2 - p)
        out[j] = _get(keys, parent, region, depth, g, lt_region[j])
    return out


@numba.njit(cache=True)
def _array(values):
    out = np.empty(len(values), np.int64)
    for i in range(len(values)):
        out[i] = values[i]
    return out


@numba.njit(cache=True)
def _chain(keys, parent, region, depth, base, regions):
    cp = np.int64(base)
    for r in regions:
        cp = _get(keys, parent, region, depth, cp, r)
    return cp


class CallPaths:
    """Global call paths: parent (-1 for a root), region and depth of each."""

    def __init__(self):
        self.keys = Dict.empty(key_type=types.int64, value_type=types.int64)
        self.parent = List.empty_list(types.int64)
        self.region = List.empty_list(types.int64)
        self.depth = List.empty_list(types.int64)

    def merge(self, lt_parent: np.ndarray, lt_region: np.ndarray) -> np.ndarray:
        """Global id of each entry of a location's local table."""
        if not len(lt_parent):
            return np.zeros(0, np.int64)
        return _merge(self.keys, self.parent, self.region, self.depth,
                      np.ascontiguousarray(lt_parent, np.int64), np.ascontiguousarray(lt_region, np.int64))

    def chain(self, base: int, regions: np.ndarray) -> int:
        """The call path `regions` (outermost first) below `base` (-1: from the root)."""
        return int(_chain(self.keys, self.parent, self.region, self.depth, np.int64(base),
                          np.ascontiguousarray(regions, np.int64)))

    def depths(self) -> np.ndarray:
        return _array(self.depth)

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        return _array(self.parent).astype(np.int32), _array(self.region).astype(np.int32)
