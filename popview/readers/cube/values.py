"""N.index / N.data: the values of one metric, as a dense (rows, locations)
float64 array plus the Cube cnode id of each row.

Layout (CubeLib): index = "CUBEX.INDEX", int32 1 (its byte order is the
file's), int16 version, uint8 index type (1 = sparse: int32 N + N tree
positions; 0 = dense: every cnode). Tree positions number the call tree
depth-first, pre-order for EXCLUSIVE metrics and "children first" for
INCLUSIVE ones (see build.CallTree). data = "CUBEX.DATA" + N x L
values, or "ZCUBEX.DATA" + int64 n + n x (uncompressed pos, compressed pos,
size) int64 + zlib segments. Integers become float64: an unsigned counter
at 2^64-1 (a wrapped hardware counter) stays a large positive value.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from popview.readers.errors import InputError

INDEX_MAGIC = b"CUBEX.INDEX"
DATA_MAGIC = b"CUBEX.DATA"
ZDATA_MAGIC = b"ZCUBEX.DATA"

# Cube data types popview stores; anything else is reported as unsupported.
DTYPES = {
    "INT8": "i1", "CHAR": "u1", "UINT8": "u1", "INT16": "i2", "SHORT INT": "i2", "SIGNED SHORT INT": "i2",
    "UINT16": "u2", "UNSIGNED SHORT INT": "u2", "INT32": "i4", "INT": "i4", "SIGNED INT": "i4",
    "UINT32": "u4", "UNSIGNED INT": "u4", "INT64": "i8", "INTEGER": "i8", "SIGNED INTEGER": "i8",
    "UINT64": "u8", "UNSIGNED INTEGER": "u8", "DOUBLE": "f8", "FLOAT": "f8", "MINDOUBLE": "f8", "MAXDOUBLE": "f8",
}


class UnsupportedType(Exception):
    """A Cube data type popview cannot represent as one number per cell."""


def numpy_type(dtype: str) -> str:
    base = dtype.split("(")[0].strip().upper()
    if base not in DTYPES:
        raise UnsupportedType(dtype)
    return DTYPES[base]


def read_metric(path: Path, name: str, index: memoryview, data: memoryview, dtype: str, n_cnodes: int,
                n_locations: int) -> tuple[np.ndarray, np.ndarray]:
    """(tree positions of the rows, values[rows, locations]) of one metric."""
    code = numpy_type(dtype)
    order, ids = _parse_index(path, name, index, n_cnodes)
    item = np.dtype(code).newbyteorder(order)
    expected = len(ids) * n_locations * item.itemsize
    raw = _payload(path, name, data, order, expected)
    if len(raw) < expected:
        raise InputError(f"{path}: {name}.data holds {len(raw)} bytes, but the index announces "
                         f"{len(ids)} call paths x {n_locations} locations x {item.itemsize} bytes = {expected}")
    values = np.frombuffer(raw, dtype=item, count=len(ids) * n_locations).astype(np.float64)
    return ids, values.reshape(len(ids), n_locations)


def _parse_index(path: Path, name: str, index: memoryview, n_cnodes: int) -> tuple[str, np.ndarray]:
    where = f"{path}: {name}.index"
    head = len(INDEX_MAGIC)
    if index[:head] != INDEX_MAGIC or len(index) < head + 7:
        raise InputError(f"{where}: not a Cube index (bad header)")
    one = index[head:head + 4]
    order = "<" if one == b"\x01\0\0\0" else ">" if one == b"\0\0\0\x01" else None
    if order is None:
        raise InputError(f"{where}: unknown byte order marker {one.hex()}")
    kind = index[head + 6]
    if kind == 0:                                          # dense: every cnode
        return order, np.arange(n_cnodes, dtype=np.int64)
    if kind != 1:
        raise InputError(f"{where}: unknown index type {kind}")
    pos = head + 7
    if len(index) < pos + 4:
        raise InputError(f"{where}: truncated")
    n = int(np.frombuffer(index, np.dtype("i4").newbyteorder(order), 1, pos)[0])
    if n < 0 or len(index) < pos + 4 + 4 * n:
        raise InputError(f"{where}: announces {n} call paths but holds {max(0, (len(index) - pos - 4) // 4)}")
    ids = np.frombuffer(index, np.dtype("i4").newbyteorder(order), n, pos + 4).astype(np.int64)
    return order, ids


def _payload(path: Path, name: str, data: memoryview, order: str, expected: int) -> memoryview | bytes:
    if data[:len(DATA_MAGIC)] == DATA_MAGIC:
        return memoryview(data)[len(DATA_MAGIC):]
    if data[:len(ZDATA_MAGIC)] == ZDATA_MAGIC:
        return _inflate(path, name, data, order, expected)
    raise InputError(f"{path}: {name}.data: not Cube data (bad header)")


def _inflate(path: Path, name: str, data: memoryview, order: str, expected: int) -> bytes:
    where = f"{path}: {name}.data"
    i8 = np.dtype("i8").newbyteorder(order)
    pos = len(ZDATA_MAGIC)
    if len(data) < pos + 8:
        raise InputError(f"{where}: truncated compressed header")
    n = int(np.frombuffer(data, i8, 1, pos)[0])
    pos += 8
    if n < 0 or len(data) < pos + 24 * n:
        raise InputError(f"{where}: truncated compressed header ({n} segments announced)")
    table = np.frombuffer(data, i8, 3 * n, pos).reshape(n, 3)
    pos += 24 * n
    parts, total = [], 0
    for _, _, size in table.tolist():
        if size == 0:
            continue
        if size < 0 or pos + size > len(data):
            raise InputError(f"{where}: compressed segment runs past the end of the file")
        d = zlib.decompressobj()
        try:
            part = d.decompress(data[pos:pos + size], expected - total + 1)
        except zlib.error as exc:
            raise InputError(f"{where}: corrupt compressed segment: {exc}") from None
        pos += size
        total += len(part)
        if total > expected:
            raise InputError(f"{where}: decompresses to more than the {expected} bytes the index announces")
        parts.append(part)
    return b"".join(parts)
