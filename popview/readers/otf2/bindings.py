"""Reference event source: the `otf2` bindings' global event reader with
callbacks that keep raw references (no per-event Python objects), grouped
into per-location RawEvents. About 10^5 events/s; the decoder is faster."""
from __future__ import annotations

import struct
from collections import Counter
from contextlib import closing
from pathlib import Path

from otf2 import events as ev
from otf2.event_reader import BufferedEventReader

from popview.readers.otf2 import library, raw
from popview.readers.otf2.raw import RawEvents

_I64_MAX = (1 << 63) - 1


def _i(v) -> int:
    """Unsigned OTF2 values into int64: the 'undefined' all-ones values become -1."""
    v = int(v)
    return -1 if v > _I64_MAX else v


def _u8(v) -> int:
    """uint8 arguments arrive as one-byte bytes objects."""
    v = getattr(v, "value", v)
    return v[0] if isinstance(v, (bytes, bytearray)) else int(v)


def _measurement(args):
    return raw.MEASUREMENT, 1 if _u8(args[0]) == 1 else 0


# event class -> function(args) -> (kind, a, b, c, d, e) with missing trailing columns = 0
_MAP = {
    ev.Enter: lambda a: (raw.ENTER, a[0]),
    ev.Leave: lambda a: (raw.LEAVE, a[0]),
    ev.MpiSend: lambda a: (raw.MPI_SEND, _i(a[0]), a[1], _i(a[2]), _i(a[3])),
    ev.MpiIsend: lambda a: (raw.MPI_ISEND, _i(a[0]), a[1], _i(a[2]), _i(a[3])),
    ev.MpiRecv: lambda a: (raw.MPI_RECV, _i(a[0]), a[1], _i(a[2]), _i(a[3])),
    ev.MpiIrecv: lambda a: (raw.MPI_IRECV, _i(a[0]), a[1], _i(a[2]), _i(a[3])),
    ev.MpiCollectiveBegin: lambda a: (raw.COLL_BEGIN,),
    ev.MpiCollectiveEnd: lambda a: (raw.COLL_END, _u8(a[0]), a[1], _i(a[2]), _i(a[3]), _i(a[4])),
    ev.MeasurementOnOff: _measurement,
    ev.BufferFlush: lambda a: (raw.BUFFER_FLUSH, _i(a[0])),
    ev.ThreadFork: lambda a: (raw.THREAD_FORK, _i(a[1])),
    ev.OmpFork: lambda a: (raw.THREAD_FORK, _i(a[0])),
    ev.ThreadJoin: lambda a: (raw.THREAD_JOIN,),
    ev.OmpJoin: lambda a: (raw.THREAD_JOIN,),
    ev.ThreadTeamBegin: lambda a: (raw.TEAM_BEGIN, a[0]),
    ev.ThreadTeamEnd: lambda a: (raw.TEAM_END, a[0]),
    ev.ThreadAcquireLock: lambda a: (raw.LOCK_ACQUIRE, _i(a[1])),
    ev.ThreadReleaseLock: lambda a: (raw.LOCK_RELEASE, _i(a[1])),
    ev.OmpAcquireLock: lambda a: (raw.LOCK_ACQUIRE, _i(a[0])),
    ev.OmpReleaseLock: lambda a: (raw.LOCK_RELEASE, _i(a[0])),
    ev.ThreadTaskCreate: lambda a: (raw.TASK_CREATE, _i(a[2]), _i(a[1]), a[0]),
    ev.ThreadTaskSwitch: lambda a: (raw.TASK_SWITCH, _i(a[2]), _i(a[1]), a[0]),
    ev.ThreadTaskComplete: lambda a: (raw.TASK_COMPLETE, _i(a[2]), _i(a[1]), a[0]),
    ev.OmpTaskCreate: lambda a: (raw.TASK_CREATE, _i(a[0]), -1, -1),
    ev.OmpTaskSwitch: lambda a: (raw.TASK_SWITCH, _i(a[0]), -1, -1),
    ev.OmpTaskComplete: lambda a: (raw.TASK_COMPLETE, _i(a[0]), -1, -1),
    ev.IoOperationBegin: lambda a: (raw.IO_BEGIN, _i(a[3])),
    ev.IoOperationComplete: lambda a: (raw.IO_COMPLETE, _i(a[1])),
    ev.RmaPut: lambda a: (raw.RMA, _i(a[2])),
    ev.RmaGet: lambda a: (raw.RMA, _i(a[2])),
    ev.RmaAtomic: lambda a: (raw.RMA, _i(a[3]) + _i(a[4])),
    ev.ThreadCreate: lambda a: (raw.THREAD_LIFE,),
    ev.ThreadBegin: lambda a: (raw.THREAD_LIFE,),
    ev.ThreadWait: lambda a: (raw.THREAD_LIFE,),
    ev.ThreadEnd: lambda a: (raw.THREAD_LIFE,),
}
_RMA_OTHER = {c for n, c in vars(ev).items() if isinstance(c, type) and n.startswith("Rma") and c not in _MAP}


class _RawReader(BufferedEventReader):
    """Global event reader whose callbacks append raw rows per location."""

    def __init__(self, reader, rows: dict[int, list], counts: dict[int, Counter], defs):
        super().__init__(reader, 10000)
        self.rows = rows
        self.counts = counts
        self.defs = defs

    def _append(self, event_type, location_ref, time, _, attribute_list, *args):
        self.counts.setdefault(location_ref, Counter())[event_type.__name__] += 1
        out = self.rows.setdefault(location_ref, [])
        if event_type is ev.Metric:
            self._metric_rows(out, time, *args)
            return
        f = _MAP.get(event_type)
        if f is None:
            row = (raw.RMA, 0) if event_type in _RMA_OTHER else (raw.OTHER,)
        else:
            row = f(args)
        out.append((row[0], time) + tuple(row[1:]) + (0,) * (6 - len(row)))

    def _metric_rows(self, out, time, metric_ref, type_ids, union_values):
        values = self.defs.metrics[metric_ref]._convert_unions(union_values)
        for pos, v in enumerate(values):
            if isinstance(v, float):
                out.append((raw.METRIC, time, metric_ref, pos, struct.unpack("<q", struct.pack("<d", v))[0], 1, 0))
            else:
                out.append((raw.METRIC, time, metric_ref, pos, _i(v), 0, 0))


def read_locations(anchor: Path, location_refs: list[int]) -> tuple[dict[int, RawEvents], dict[int, Counter]]:
    """Raw records of the given locations and their event counts per OTF2 record name."""
    rows: dict[int, list] = {}
    counts: dict[int, Counter] = {}
    with closing(library.open_reader(anchor)) as trace:
        selected = [loc for loc in trace.definitions.locations if loc._ref in set(location_refs)]
        it = _RawReader(trace, rows, counts, trace.definitions)
        it._selected_locations = selected
        handle = trace._get_global_evt_reader_handle(selected)
        it._handle = handle
        library.read_all_events(handle, it)
    return ({ref: RawEvents.from_rows(rows.get(ref, [])) for ref in location_refs},
            {ref: counts.get(ref, Counter()) for ref in location_refs})
