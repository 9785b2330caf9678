"""Fast path: a numba decoder of OTF2 event files (.evt) for the common
record kinds, producing the same RawEvents as the bindings.

The format (OTF2's OTF2_Buffer / OTF2_EvtReader): fixed-size chunks, each
starting with an 18-byte header (0x03, endianness 0x42 little / 0x23 big,
first and last event number); records are a type byte, for all but the
"singleton" kinds a record length (one byte, or 0xff + 8 bytes) and the
fields. A timestamp record (0x05 + 8 bytes) precedes the events it applies
to; an attribute list (0x06 + length) may precede an event. Integers are
compressed: one byte n with n following little-endian bytes (0xff: all ones).
Local definition files (N.def) hold mapping tables (local -> global ids)
and clock offsets, which the OTF2 reader applies; so does this decoder.
Anything else, and big-endian archives, go to the bindings."""
from __future__ import annotations

import ctypes
import os
from collections import Counter
from pathlib import Path

import numpy as np

from popview.jit import njit, refcount_free
from popview.cache.progress import Cancelled
from popview.readers.errors import InputError
from popview.readers.files import check_size, regular_file
from popview.readers.otf2 import raw
from popview.readers.otf2.raw import RawEvents
from popview.readers.rawbytes import byte_at

END_OF_CHUNK, END_OF_BUFFER, END_OF_FILE, CHUNK_HEADER, TIMESTAMP, ATTRIBUTE_LIST = 0, 1, 2, 3, 5, 6
LITTLE_ENDIAN = 0x42
CHUNK_HEADER_SIZE = 18

# OTF2 event record ids the decoder understands, with the bindings' class names.
RECORD_NAMES = {
    10: "BufferFlush", 11: "MeasurementOnOff", 12: "Enter", 13: "Leave", 14: "MpiSend", 15: "MpiIsend",
    16: "MpiIsendComplete", 17: "MpiIrecvRequest", 18: "MpiRecv", 19: "MpiIrecv", 20: "MpiRequestTest",
    21: "MpiRequestCancelled", 22: "MpiCollectiveBegin", 23: "MpiCollectiveEnd", 31: "Metric",
    32: "ParameterString", 33: "ParameterInt", 34: "ParameterUnsignedInt", 83: "ProgramBegin", 84: "ProgramEnd",
}
_SINGLETONS = (12, 13, 16, 17, 20, 21, 24, 28, 29, 30)   # records without a length field (one compressed value)

# Thread records: record id -> (raw kind, fields). A field is (type, column): type 1 uint8, 2 uint32,
# 3 uint64, 4 uint32 communicator ref (mapped to the global id); column 0..2 = a..c, -1 = not kept.
_THREAD_RECORDS = {
    24: ("OmpFork", raw.THREAD_FORK, ((2, 0),)), 25: ("OmpJoin", raw.THREAD_JOIN, ()),
    26: ("OmpAcquireLock", raw.LOCK_ACQUIRE, ((2, 0), (2, -1))),
    27: ("OmpReleaseLock", raw.LOCK_RELEASE, ((2, 0), (2, -1))),
    28: ("OmpTaskCreate", raw.TASK_CREATE, ((3, 0),)), 29: ("OmpTaskSwitch", raw.TASK_SWITCH, ((3, 0),)),
    30: ("OmpTaskComplete", raw.TASK_COMPLETE, ((3, 0),)),
    53: ("ThreadFork", raw.THREAD_FORK, ((1, -1), (2, 0))), 54: ("ThreadJoin", raw.THREAD_JOIN, ((1, -1),)),
    55: ("ThreadTeamBegin", raw.TEAM_BEGIN, ((4, 0),)), 56: ("ThreadTeamEnd", raw.TEAM_END, ((4, 0),)),
    57: ("ThreadAcquireLock", raw.LOCK_ACQUIRE, ((1, -1), (2, 0), (2, -1))),
    58: ("ThreadReleaseLock", raw.LOCK_RELEASE, ((1, -1), (2, 0), (2, -1))),
    59: ("ThreadTaskCreate", raw.TASK_CREATE, ((4, 2), (2, 1), (2, 0))),
    60: ("ThreadTaskSwitch", raw.TASK_SWITCH, ((4, 2), (2, 1), (2, 0))),
    61: ("ThreadTaskComplete", raw.TASK_COMPLETE, ((4, 2), (2, 1), (2, 0))),
    62: ("ThreadCreate", raw.THREAD_LIFE, ((2, -1), (3, -1))), 63: ("ThreadBegin", raw.THREAD_LIFE, ((2, -1), (3, -1))),
    64: ("ThreadWait", raw.THREAD_LIFE, ((2, -1), (3, -1))), 65: ("ThreadEnd", raw.THREAD_LIFE, ((2, -1), (3, -1))),
}
OMP_TASK_RECORDS = (28, 29, 30)   # no creating thread and team: columns b, c are -1
RECORD_NAMES.update({rid: spec[0] for rid, spec in _THREAD_RECORDS.items()})
THREAD_KIND = np.full(256, -1, np.int64)
THREAD_FIELDS = np.zeros((256, 3), np.int64)
THREAD_COLUMN = np.full((256, 3), -1, np.int64)
for _rid, (_name, _kind, _fields) in _THREAD_RECORDS.items():
    THREAD_KIND[_rid] = _kind
    for _f, (_type, _column) in enumerate(_fields):
        THREAD_FIELDS[_rid, _f] = _type
        THREAD_COLUMN[_rid, _f] = _column

# Mapping table types (OTF2_MappingType) and local definition record ids.
MAP_REGION, MAP_METRIC, MAP_COMM = 3, 5, 6
DEF_MAPPING_TABLE, DEF_CLOCK_OFFSET = 5, 6

OK, UNSUPPORTED, MALFORMED, TRUNCATED, FULL, CANCELLED = 0, 1, 2, 3, 4, 5
CANCEL_EVERY = 1 << 16        # records between two looks at the cancel flag

# Record ids whose layout the decoder knows (others go to the bindings untouched).
KNOWN = np.zeros(256, np.bool_)
KNOWN[[ATTRIBUTE_LIST, *RECORD_NAMES]] = True
SINGLETON = np.zeros(256, np.bool_)
SINGLETON[list(_SINGLETONS)] = True
UINT32_ALL = 0xFFFFFFFF
MAX_LOCAL_DEFS = 1 << 30      # mapping tables and clock offsets of one location
MAX_CHUNK_SIZE = 1 << 40


_views: dict[int, memoryview] = {}        # buffer address -> its bytes, for the interpreted decoder
_AS_BYTES = ctypes.c_ubyte * (1 << 40)     # a view's type: read within the buffer only (as the kernel does)


def _view(addr) -> memoryview:
    """The bytes at address addr (the decoder's buffer, kept alive by its caller): slices of
    it read twice as fast as ctypes.string_at, a byte ten times."""
    view = _views.get(addr)
    if view is None:
        if len(_views) > 16:               # buffers come and go: keep the last few
            _views.clear()
        view = _views[addr] = memoryview(_AS_BYTES.from_address(addr)).cast("B")
    return view


def _u64_full_python(addr, pos):
    """_u64_full in interpreted runs (popview.jit): one read of the 8 bytes, as a Python int
    in int64's range (numpy's scalars cost more than the read)."""
    return int.from_bytes(_view(addr)[pos:pos + 8], "little", signed=True)


def _compressed_python(addr, pos, end, all_ones):
    """_compressed in interpreted runs: the n bytes read at once (Python ints in int64's range)."""
    if pos >= end:
        return 0, -1
    view = _view(addr)
    n = view[pos]
    if n == 0xFF:
        return all_ones, pos + 1
    if n > 8 or pos + 1 + n > end:
        return 0, -1
    v = int.from_bytes(view[pos + 1:pos + 1 + n], "little")
    return (v - (1 << 64) if v >= 1 << 63 else v), pos + 1 + n


@njit(cache=True, inline="always", python=_u64_full_python)
def _u64_full(addr, pos):
    """8 little-endian bytes at address addr (see popview.readers.rawbytes) as int64
    (int64 arithmetic: numba's uint64 paths are slow)."""
    v = np.int64(0)
    for k in range(8):
        v |= np.int64(byte_at(addr, pos + k)) << (8 * k)
    return v


@njit(cache=True, inline="always", python=_compressed_python)
def _compressed(addr, pos, end, all_ones):
    """(value as int64, new position) of the bytes at address addr; all_ones is the value
    of a 0xff byte. pos < 0: overrun."""
    if pos >= end:
        return np.int64(0), np.int64(-1)
    n = byte_at(addr, pos)
    if n == 0xFF:
        return all_ones, pos + 1
    if n > 8 or pos + 1 + n > end:
        return np.int64(0), np.int64(-1)
    v = np.int64(0)
    for k in range(n):
        v |= np.int64(byte_at(addr, pos + 1 + k)) << (8 * k)
    return v, pos + 1 + n


@refcount_free      # called for every event: no reference counting
def _mapped(table, local):
    if 0 <= local < len(table) and table[local] >= 0:
        return table[local]
    return local


@refcount_free
def _corrected(t, clk_begin, clk_end, clk_offset, clk_slope, state):
    """OTF2's clock correction: linear interpolation within the current interval."""
    n = len(clk_begin)
    if n == 0:
        return t
    i = state[0]
    while i + 1 < n and t > clk_end[i]:
        i += 1
    state[0] = i
    b = clk_begin[i]
    diff = float(t - b) if t >= b else -float(b - t)
    return t + clk_offset[i] + np.int64(np.rint(clk_slope[i] * diff))


@njit(cache=True, nogil=True)
def decode(buf, chunk_size, capacity, map_region, map_comm, map_metric,
           clk_begin, clk_end, clk_offset, clk_slope, cancel):
    """decode_into new columns of `capacity` rows."""
    cap = max(capacity, 16)
    return decode_into(buf, chunk_size, np.empty(cap, np.int8), np.empty(cap, np.int64), np.empty(cap, np.int64),
                       np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
                       np.empty(cap, np.int64), map_region, map_comm, map_metric, clk_begin, clk_end, clk_offset,
                       clk_slope, cancel)


@njit(cache=True, nogil=True)
def decode_into(buf, chunk_size, ck, ct, ca, cb, cc, cd, ce, map_region, map_comm, map_metric,
                clk_begin, clk_end, clk_offset, clk_slope, cancel):
    """Raw rows of one event file, into the columns given (kind int8, the others int64, all
    as long: at least 16 rows). Returns (kind, time, a, b, c, d, e: slices of them, counts per
    record id, status, offending record id or byte position); FULL when they are too short.
    Every pass of the loop moves forward (record lengths are checked, chunks only advance);
    cancel[0] != 0 stops it (CANCELLED)."""
    cap = len(ck)
    counts = np.zeros(256, np.int64)
    size = len(buf)
    addr = buf.ctypes.data          # buf stays referenced by the caller
    m = 0
    pos = np.int64(0)
    chunk = np.int64(0)
    time = np.int64(0)
    clk_state = np.zeros(1, np.int64)
    minus1 = np.int64(-1)
    u32all = np.int64(UINT32_ALL)
    finished = False
    n_clock = len(clk_begin)
    while pos < size:
        if pos == chunk:
            if pos + CHUNK_HEADER_SIZE > size:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
            if buf[pos] != CHUNK_HEADER:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            if buf[pos + 1] != LITTLE_ENDIAN:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, UNSUPPORTED, -1
            pos += CHUNK_HEADER_SIZE
            continue
        rtype = buf[pos]
        pos += 1
        if rtype == END_OF_CHUNK:
            chunk += chunk_size
            if chunk < pos:            # records ran past their chunk: never step back
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            pos = chunk
            continue
        if rtype == END_OF_FILE or rtype == END_OF_BUFFER:
            finished = True
            break
        if rtype == TIMESTAMP:
            if pos + 8 > size:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
            time = _u64_full(addr, pos)
            pos += 8
            continue
        if not KNOWN[rtype]:
            return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, UNSUPPORTED, rtype
        is_singleton = SINGLETON[rtype]
        end = size
        if not is_singleton:          # the layout is known: running past the file's end is truncation
            if pos >= size:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
            length = np.int64(buf[pos])
            pos += 1
            if length == 0xFF:
                if pos + 8 > size:
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
                length = np.int64(_u64_full(addr, pos))
                pos += 8
            if length < 0:             # 8 bytes beyond int64: a corrupt length, never a step back
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            end = pos + length
            if end > size:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
        if rtype == ATTRIBUTE_LIST:
            pos = end
            continue
        t = time if n_clock == 0 else _corrected(time, clk_begin, clk_end, clk_offset, clk_slope, clk_state)
        if m % CANCEL_EVERY == 0 and cancel[0]:
            return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, CANCELLED, pos
        if m + 256 > cap:
            return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, FULL, pos
        kind = -1
        a = b = c = d = e = np.int64(0)
        if rtype == 12 or rtype == 13:
            v, pos = _compressed(addr, pos, size, u32all)
            kind = raw.ENTER if rtype == 12 else raw.LEAVE
            a = _mapped(map_region, v)
        elif rtype == 14 or rtype == 15 or rtype == 18 or rtype == 19:
            p = pos
            a, p = _compressed(addr, p, end, u32all)
            if p >= 0:
                b, p = _compressed(addr, p, end, u32all)
            if p >= 0:
                c, p = _compressed(addr, p, end, u32all)
            if p >= 0:
                d, p = _compressed(addr, p, end, minus1)
            if p < 0:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            b = _mapped(map_comm, b)
            d = d if d >= 0 else -1
            kind = (raw.MPI_SEND if rtype == 14 else raw.MPI_ISEND if rtype == 15
                    else raw.MPI_RECV if rtype == 18 else raw.MPI_IRECV)
            pos = end
        elif rtype == 22:
            kind = raw.COLL_BEGIN
            pos = end
        elif rtype == 23:
            if pos >= end:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            a = np.int64(buf[pos])
            p = pos + 1
            b, p = _compressed(addr, p, end, u32all)
            if p >= 0:
                c, p = _compressed(addr, p, end, u32all)
            if p >= 0:
                d, p = _compressed(addr, p, end, minus1)
            if p >= 0:
                e, p = _compressed(addr, p, end, minus1)
            if p < 0:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            b = _mapped(map_comm, b)
            d = d if d >= 0 else -1
            e = e if e >= 0 else -1
            kind = raw.COLL_END
            pos = end
        elif rtype == 31:
            ref, p = _compressed(addr, pos, end, u32all)
            if p < 0 or p >= end:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            ref = _mapped(map_metric, ref)
            n = buf[p]
            p += 1
            for k in range(n):
                if p >= end:
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
                vtype = buf[p]
                value, p = _compressed(addr, p + 1, end, minus1)
                if p < 0:
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
                if vtype == 9:     # OTF2_TYPE_FLOAT: left to the bindings
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, UNSUPPORTED, rtype
                if vtype == 4 and value < 0:   # uint64 beyond int64: -1 as the bindings path does
                    value = -1
                if m + 1 > cap:
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, FULL, pos
                ck[m] = raw.METRIC
                ct[m] = t
                ca[m] = ref
                cb[m] = k
                cc[m] = value
                cd[m] = 1 if vtype == 10 else 0   # OTF2_TYPE_DOUBLE: float64 bits
                ce[m] = 0
                m += 1
            counts[rtype] += 1
            pos = end
            continue
        elif rtype == 11:
            if pos >= end:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            kind = raw.MEASUREMENT
            a = 1 if buf[pos] == 1 else 0
            pos = end
        elif rtype == 10:
            if pos + 8 > end:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            kind = raw.BUFFER_FLUSH
            a = _corrected(_u64_full(addr, pos), clk_begin, clk_end, clk_offset, clk_slope, clk_state)
            pos = end
        elif THREAD_KIND[rtype] >= 0:
            p = pos
            if rtype == 28 or rtype == 29 or rtype == 30:
                b = c = minus1
            for f in range(3):
                ftype = THREAD_FIELDS[rtype, f]
                if ftype == 0:
                    break
                if ftype == 1:
                    if p >= end:
                        p = -1
                        break
                    v = np.int64(buf[p])
                    p += 1
                else:
                    v, p = _compressed(addr, p, end, minus1 if ftype == 3 else u32all)
                    if p < 0:
                        break
                    if ftype == 4:
                        v = _mapped(map_comm, v)
                column = THREAD_COLUMN[rtype, f]
                if column == 0:
                    a = v
                elif column == 1:
                    b = v
                elif column == 2:
                    c = v
            if p < 0:
                return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, MALFORMED, pos
            kind = THREAD_KIND[rtype]
            pos = p if is_singleton else end
        else:                               # requests, parameters, program begin/end: counted only
            if is_singleton:
                v, pos = _compressed(addr, pos, size, minus1)
                if pos < 0:
                    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
            else:
                pos = end
            kind = raw.OTHER
        if pos < 0:
            return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED if is_singleton else MALFORMED, size
        counts[rtype] += 1
        ck[m] = kind
        ct[m] = t
        ca[m] = a
        cb[m] = b
        cc[m] = c
        cd[m] = d
        ce[m] = e
        m += 1
    if not finished:
        return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, TRUNCATED, size
    return (ck[:m], ct[:m], ca[:m], cb[:m], cc[:m], cd[:m], ce[:m]), counts, OK, 0


def _read_length(data: bytes, pos: int) -> tuple[int, int]:
    n = data[pos]
    if n == 0xFF:
        return int.from_bytes(data[pos + 1:pos + 9], "little"), pos + 9
    return n, pos + 1


def _read_compressed(data: bytes, pos: int) -> tuple[int, int]:
    n = data[pos]
    if n == 0xFF:
        return -1, pos + 1
    if n > 8:
        raise IndexError("compressed integer of more than 8 bytes")
    return int.from_bytes(data[pos + 1:pos + 1 + n], "little", signed=False), pos + 1 + n


class LocalDefinitions:
    """Mapping tables and clock intervals of one location (its N.def file)."""

    def __init__(self):
        self.maps: dict[int, np.ndarray] = {}
        self.offsets: list[tuple[int, int]] = []

    def table(self, map_type: int) -> np.ndarray:
        return self.maps.get(map_type, np.zeros(0, np.int64))

    def clock(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Intervals between consecutive clock offsets: begin, end, offset, slope."""
        pts = self.offsets
        if not pts:
            z = np.zeros(0, np.int64)
            return z, z, z, np.zeros(0, np.float64)
        if len(pts) == 1:
            return (np.array([pts[0][0]], np.int64), np.array([pts[0][0]], np.int64),
                    np.array([pts[0][1]], np.int64), np.zeros(1, np.float64))
        begin = np.array([p[0] for p in pts[:-1]], np.int64)
        end = np.array([p[0] for p in pts[1:]], np.int64)
        off = np.array([p[1] for p in pts[:-1]], np.int64)
        nxt = np.array([p[1] for p in pts[1:]], np.int64)
        slope = (nxt - off).astype(np.float64) / np.maximum(end - begin, 1).astype(np.float64)
        return begin, end, off, slope


def read_local_definitions(path: Path) -> LocalDefinitions | None:
    """Mapping tables and clock offsets; None when the file holds anything else."""
    out = LocalDefinitions()
    if not path.exists():
        return out
    check_size(path, regular_file(path, "local definition file").st_size, MAX_LOCAL_DEFS, "local definitions")
    data = path.read_bytes()
    if len(data) < CHUNK_HEADER_SIZE or data[0] != CHUNK_HEADER or data[1] != LITTLE_ENDIAN:
        return None
    pos = CHUNK_HEADER_SIZE
    try:
        while pos < len(data):
            rtype = data[pos]
            pos += 1
            if rtype in (END_OF_FILE, END_OF_BUFFER):
                break
            if rtype == END_OF_CHUNK:
                return None
            length, pos = _read_length(data, pos)
            body, pos = data[pos:pos + length], pos + length
            if rtype == DEF_MAPPING_TABLE:
                if not _mapping_table(body, out):
                    return None
            elif rtype == DEF_CLOCK_OFFSET:
                time = int.from_bytes(body[:8], "little")
                offset, _ = _read_compressed(body, 8)
                if offset >= 1 << 63:
                    offset -= 1 << 64
                if time >= 1 << 63:
                    return None
                out.offsets.append((time, offset))
            else:
                return None
    except IndexError:
        return None
    return out


def _mapping_table(body: bytes, out: LocalDefinitions) -> bool:
    """Adds the table to `out`; False for ids out of range or too sparse for a dense table
    (the OTF2 library then reads the location)."""
    map_type = body[0]
    size, p = _read_compressed(body, 1)
    mode = body[p]
    p += 1
    values = []
    for _ in range(size * (2 if mode == 1 else 1)):
        v, p = _read_compressed(body, p)
        values.append(v)
    if any(not -1 <= v < 1 << 63 for v in values):      # int64 columns
        return False
    if mode == 1:
        local, glob = values[0::2], values[1::2]
        if min(local, default=0) < 0 or max(local, default=-1) >= 16 * len(local) + 4096:
            return False            # sparse or out-of-range ids: the OTF2 library reads this location
        table = np.full(max(local, default=-1) + 1, -1, np.int64)
        table[local] = glob
    else:
        table = np.array(values, np.int64)
    out.maps[map_type] = table
    return True


class Scratch:
    """A decoding thread's memory, reused from one location to the next: the event file's
    bytes and the raw columns. Fresh memory at every location was most of the decoding
    threads' CPU (page faults: 128,000 of their 318,000 on the 10^7-event archive were these
    columns', allocated by numba in 4 KiB pages); these are numpy's, which asks for huge
    pages. What decode_location returns with it are views of it, valid until the thread's
    next location."""

    def __init__(self):
        self.columns: tuple[np.ndarray, ...] = ()
        self.bytes = np.zeros(0, np.uint8)

    def columns_for(self, capacity: int) -> tuple[np.ndarray, ...]:
        if not self.columns or len(self.columns[0]) < capacity:
            self.columns = ()                  # the old ones go before the new are made
            self.columns = _new_columns(capacity)
        return self.columns

    def read(self, path: Path) -> np.ndarray:
        """The file's bytes (a view of this scratch)."""
        with open(path, "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            if len(self.bytes) < size:
                self.bytes = np.zeros(0, np.uint8)
                self.bytes = np.empty(size + size // 8, np.uint8)
            view, done = memoryview(self.bytes[:size]), 0
            while done < size:
                n = f.readinto(view[done:])
                if not n:
                    break                      # shorter than it was: decoded as far as it goes
                done += n
        return self.bytes[:done]


def _new_columns(capacity: int) -> tuple[np.ndarray, ...]:
    return (np.empty(capacity, np.int8),) + tuple(np.empty(capacity, np.int64) for _ in range(6))


def decode_location(anchor: Path, ref: int, chunk_size: int, n_events: int, cancel: np.ndarray | None = None,
                    scratch: Scratch | None = None):
    """(RawEvents, Counter by record name) of one location, or None when the
    bindings must read it (unknown records or local definitions, big-endian).
    Setting cancel[0] (a uint8 array of one) stops the kernel: Cancelled is raised.
    With `scratch` the records are views of it (see Scratch)."""
    from popview.readers.otf2 import archive

    if not CHUNK_HEADER_SIZE < chunk_size <= MAX_CHUNK_SIZE:
        raise InputError(f"{archive.archive_dir(anchor).with_suffix('.otf2')}: event chunk size {chunk_size} "
                         f"is out of range ({CHUNK_HEADER_SIZE + 1} to {MAX_CHUNK_SIZE})")
    cancel = np.zeros(1, np.uint8) if cancel is None else cancel

    local = read_local_definitions(archive.archive_dir(anchor) / f"{ref}.def")
    if local is None:
        return None
    evt = archive.event_file(anchor, ref)
    if not evt.exists():
        return (RawEvents.empty(), Counter()) if n_events == 0 else None
    regular_file(evt, "event file")
    buf = scratch.read(evt) if scratch is not None else np.fromfile(evt, dtype=np.uint8)
    # rows; untouched pages cost nothing. A record takes at least a byte: the count the
    # definitions announce is no bound (a malformed one overflowed int64)
    capacity = 2 * max(min(n_events, len(buf)), len(buf) // 8) + 1024
    while True:
        given = scratch.columns_for(capacity) if scratch is not None else _new_columns(capacity)
        cols, counts, status, where = decode_into(buf, np.int64(chunk_size), *given,
                                                  local.table(MAP_REGION), local.table(MAP_COMM),
                                                  local.table(MAP_METRIC), *local.clock(), cancel)
        if status == CANCELLED:
            raise Cancelled("cancelled by the user")
        if status != FULL:
            break
        capacity = 2 * len(given[0])
    if status == TRUNCATED:
        raise InputError(f"{evt}: the event data stop at byte {len(buf)} before OTF2's end-of-file "
                         f"record (truncated file?)")
    if status != OK:
        return None
    names = Counter({RECORD_NAMES[i]: int(n) for i, n in enumerate(counts) if n})
    rec = RawEvents(*cols)
    return rec, names
