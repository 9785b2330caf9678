"""Which of a few sorted codes (counter or region event types) each event has, in a
few vectorised numpy passes: as fast as the numba kernel this was for the dense codes
that traces hold (within 1.5x on 20 M values), without seconds of compiling at first use."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

# Codes spanning fewer values than this are looked up in a table of that span.
DENSE_SPAN = 1 << 16
# Codes spread wider are hashed into a table of at most this many slots by a few bits.
HASH_BITS = 16
# Values looked up at once (temporaries of this many stay in the processor's cache).
BLOCK = 1 << 16


def code_index(values, codes) -> np.ndarray:
    """Per value, its index in `codes` (sorted, distinct), or -1. Codes close together
    (the usual case: 42000000-42001047) are found with one load from a table; codes
    farther apart (region types: 40000003-50000003) with one load from a table by a few
    of their bits and one check; others by bisection. Done a block at a time, so that
    the temporaries stay in the processor's cache (a fresh 400 MB temporary for the 55 M
    events of the 1 GB trace cost more than the lookups)."""
    values, codes = np.asarray(values), np.asarray(codes)
    if not len(codes) or not len(values):
        return np.full(len(values), -1, np.int32)
    if values.dtype == np.uint64:
        values = values.view(np.int64)
    lo, hi = int(codes[0]), int(codes[-1])
    out = np.empty(len(values), np.int32)
    if hi - lo < DENSE_SPAN:
        table = np.full(hi - lo + 2, -1, np.int32)          # the last slot: every value outside
        table[codes.astype(np.int64) - lo] = np.arange(len(codes), dtype=np.int32)
        slot = np.empty(min(BLOCK, len(values)), np.int64)
        for i in range(0, len(values), BLOCK):
            v = values[i:i + BLOCK]
            s = slot[:len(v)]
            np.subtract(v, lo, out=s, dtype=np.int64, casting="unsafe")
            beyond = s.view(np.uint64)              # below lo wraps to huge: one clamp for both ends
            np.minimum(beyond, hi - lo + 1, out=beyond)
            np.take(table, s, out=out[i:i + len(v)])
        return out
    bits = _hash_bits(tuple(int(c) for c in codes))
    if bits is None:
        pos = np.minimum(np.searchsorted(codes, values), len(codes) - 1)
        return np.where(codes[pos] == values, pos, -1).astype(np.int32)
    # one load by a few of each value's bits, then one check against the code held there
    # (a bisection per value cost 2.9 s on the 55 M events of the 1 GB trace)
    shift, mask = bits
    slots = (codes.astype(np.int64) >> shift) & mask
    table = np.full(mask + 1, -1, np.int32)
    table[slots] = np.arange(len(codes), dtype=np.int32)
    # the code in each slot; an empty slot s holds a value whose own slot is s + 1, so
    # that no value looked up there equals it
    held = ((np.arange(mask + 1, dtype=np.int64) + 1) & mask) << shift
    held[slots] = codes
    if values.dtype.itemsize < 8 and np.can_cast(np.min_scalar_type(held.max()), values.dtype) \
            and np.can_cast(np.min_scalar_type(held.min()), values.dtype):
        held = held.astype(values.dtype)
    key = np.empty(min(BLOCK, len(values)), values.dtype)
    code = np.empty(len(key), held.dtype)
    miss = np.empty(len(key), bool)
    kind = values.dtype.type
    for i in range(0, len(values), BLOCK):
        v = values[i:i + BLOCK]
        n = len(v)
        np.right_shift(v, kind(shift), out=key[:n])
        np.bitwise_and(key[:n], kind(mask), out=key[:n])
        o = out[i:i + n]
        np.take(table, key[:n], out=o)
        np.take(held, key[:n], out=code[:n])
        np.not_equal(code[:n], v, out=miss[:n])
        np.putmask(o, miss[:n], -1)
    return out


@lru_cache(maxsize=64)
def _hash_bits(codes: tuple[int, ...]) -> tuple[int, int] | None:
    """(shift, mask) such that (code >> shift) & mask differs for every code, with the
    fewest bits; None when no window of up to HASH_BITS bits tells them apart."""
    arr = np.array(codes, np.int64)
    for bits in range(max(1, int(len(codes) - 1).bit_length()), HASH_BITS + 1):
        mask = (1 << bits) - 1
        for shift in range(0, 64 - bits):
            window = np.sort((arr >> shift) & mask)    # all distinct (np.unique imports numpy.ma: 16 ms)
            if not (window[1:] == window[:-1]).any():
                return shift, mask
    return None


# Codes from which member_rows looks them up (code_index) rather than comparing every value
# with each: the region event types are usually 3-6 (EPOCH: 4, 40000003-50000003), compared in
# 10 ms against 31 ms of hashed lookups for the 143 MB trace's 7.6 M events.
FEW_CODES = 8


def member_rows(values, codes) -> np.ndarray:
    """The rows whose value is one of `codes` (sorted, distinct): the region events
    among all of them. A few codes are compared with every value, one pass each."""
    values, codes = np.asarray(values), np.asarray(codes)
    if not len(codes) or not len(values) or len(codes) > FEW_CODES or values.dtype.kind not in "iu":
        return np.flatnonzero(code_index(values, codes) >= 0)
    if values.dtype == np.uint64:
        values = values.view(np.int64)          # as code_index reads them
    bounds = np.iinfo(values.dtype)
    found = np.zeros(len(values), bool)
    hit = np.empty(len(values), bool)
    for code in codes.tolist():
        if bounds.min <= code <= bounds.max:    # no value of this type can hold one outside
            np.equal(values, code, out=hit)
            found |= hit
    return np.flatnonzero(found)
