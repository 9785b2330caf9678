"""Chooses the event source per location: the buffer decoder where it
understands every record, else the `otf2` bindings; decodes locations on
two threads (the decoder releases the GIL); checks that every location
delivered the events its definition announces."""
from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.otf2 import archive, bindings, decoder
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents

WORKERS = 2
USE_DECODER = True   # False: the bindings only (the reference the decoder is tested against)


def read(anchor: Path, refs: list[int], tables: Tables, warn) -> tuple[dict[int, RawEvents], Counter, int]:
    """Raw records of the locations `refs`, event counts per record name, and how many
    locations needed the bindings. `warn(message)` reports count mismatches."""
    records: dict[int, RawEvents] = {}
    counts: Counter = Counter()
    if USE_DECODER:
        with ThreadPoolExecutor(WORKERS) as pool:
            results = pool.map(lambda r: decoder.decode_location(anchor, r, tables.event_chunk_size,
                                                                 tables.location_events.get(r, 0)), refs)
            for ref, out in zip(refs, results):
                if out is not None:
                    records[ref], c = out
                    counts.update(c)
                    _check_count(anchor, ref, sum(c.values()), tables, warn)
    rest = [r for r in refs if r not in records]
    if rest:
        more, c, per_location = _read_bindings(anchor, rest)
        records.update(more)
        counts.update(c)
        for ref in rest:
            _check_count(anchor, ref, per_location.get(ref, 0), tables, warn)
    return records, counts, len(rest)


def _check_count(anchor: Path, ref: int, got: int, tables: Tables, warn) -> None:
    """Some writers (APEX) announce wrong counts, so a mismatch is a warning; truncation
    itself is caught by the decoder (missing end-of-file record) or the OTF2 library."""
    expected = tables.location_events.get(ref, 0)
    if expected and got != expected:
        warn(f"{archive.event_file(anchor, ref).name}: {got} events read, the definitions announce {expected}")


def _read_bindings(anchor: Path, refs: list[int]):
    import _otf2

    try:
        return bindings.read_locations(anchor, refs)
    except _otf2.Error as exc:
        culprit = _failing_location(anchor, refs) if len(refs) > 1 else refs[0]
        raise InputError(f"{archive.event_file(anchor, culprit)}: the OTF2 library cannot read this event file "
                         f"({exc}): truncated or corrupt?") from None


def _failing_location(anchor: Path, refs: list[int]) -> int:
    """The first location whose events cannot be read on their own (error path only)."""
    import _otf2

    for ref in refs:
        try:
            bindings.read_locations(anchor, [ref])
        except _otf2.Error:
            return ref
    return refs[0]
