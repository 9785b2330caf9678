"""The archive's call-path table, built by the reader (the cache then keeps
it as is). Each location's kernel numbers the call paths it meets locally,
without locks; the main thread merges each local table into this global one
in location order. A local parent is a local id (>= 0), ROOT (-1) for a
top-level call path, or an already global call path g written as -2 - g
(the master's fork call path under which an OpenMP worker's visits hang).

The table is plain numpy arrays (an open-addressing hash of (parent, region)
keys) handled by cached numba functions: numba's typed containers would be
compiled anew in every process, which costs seconds."""
from __future__ import annotations

import numpy as np

from popview.jit import njit, refcount_free

ROOT = -1
EMPTY = -1


@njit(cache=True, inline="always")
def slot(keys, key):
    """Where `key` is, or the empty slot where it goes (linear probing)."""
    mask = len(keys) - 1
    i = (key * 0x9E3779B1) & mask
    while keys[i] != EMPTY and keys[i] != key:
        i = (i + 1) & mask
    return i


@refcount_free     # per event: no reference counting
def get(keys, values, parent, region, depth, n, p, r):
    """Global id of region r below p (-1: a root), created if new; returns (id, table size).
    The caller keeps room for one more entry (see CallPaths.reserve)."""
    key = (np.int64(p) + 1) * 4294967296 + r
    i = slot(keys, key)
    if keys[i] == key:
        return values[i], n
    keys[i] = key
    values[i] = n
    parent[n] = p
    region[n] = r
    depth[n] = 0 if p < 0 else depth[p] + 1
    return n, n + 1


@njit(cache=True)
def _merge(keys, values, parent, region, depth, n, lt_parent, lt_region):
    out = np.empty(len(lt_parent), np.int64)
    for j in range(len(lt_parent)):
        p = lt_parent[j]
        g = np.int64(-1) if p == ROOT else (out[p] if p >= 0 else -2 - p)
        out[j], n = get(keys, values, parent, region, depth, n, g, lt_region[j])
    return out, n


@njit(cache=True)
def rehash(keys, values, size):
    new_keys = np.full(size, EMPTY, np.int64)
    new_values = np.empty(size, np.int64)
    for i in range(len(keys)):
        if keys[i] != EMPTY:
            j = slot(new_keys, keys[i])
            new_keys[j] = keys[i]
            new_values[j] = values[i]
    return new_keys, new_values


class CallPaths:
    """Global call paths: parent (-1 for a root), region and depth of each."""

    def __init__(self):
        self.n = 0
        self.keys, self.values = np.full(1024, EMPTY, np.int64), np.empty(1024, np.int64)
        self.parent, self.region, self.depth = (np.empty(256, np.int64) for _ in range(3))

    def reserve(self, extra: int) -> None:
        """Room for `extra` new call paths (hash at most half full)."""
        need = self.n + extra
        if need > len(self.parent):
            size = max(2 * len(self.parent), need)
            self.parent, self.region, self.depth = (np.concatenate((a, np.empty(size - len(a), np.int64)))
                                                    for a in (self.parent, self.region, self.depth))
        if 2 * need > len(self.keys):
            size = 1 << int(4 * need - 1).bit_length()
            self.keys, self.values = rehash(self.keys, self.values, size)

    def tables_for_numba(self):
        return self.keys, self.values, self.parent, self.region, self.depth

    def merge(self, lt_parent: np.ndarray, lt_region: np.ndarray) -> np.ndarray:
        """Global id of each entry of a location's local table."""
        self.reserve(len(lt_parent))
        out, self.n = _merge(*self.tables_for_numba(), self.n, np.ascontiguousarray(lt_parent, np.int64),
                             np.ascontiguousarray(lt_region, np.int64))
        return out

    def depths(self) -> np.ndarray:
        return self.depth[:self.n]

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        return self.parent[:self.n].astype(np.int32), self.region[:self.n].astype(np.int32)
