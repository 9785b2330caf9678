"""The two event sources per location: the buffer decoder where it
understands every record, else the `otf2` bindings (the reference)."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.otf2 import archive, bindings, decoder, library
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents

USE_DECODER = True   # False: the bindings only (the reference the decoder is tested against)


def decode(anchor: Path, ref: int, tables: Tables, cancel=None,
           scratch: decoder.Scratch | None = None) -> tuple[RawEvents, Counter] | None:
    """One location through the decoder, or None when the bindings must read it; cancel[0]
    set (a uint8 array of one) stops the decoder with Cancelled; with `scratch` (the thread's)
    the records are views of it, valid until its next location."""
    if not USE_DECODER:
        return None
    return decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events.get(ref, 0), cancel,
                                   scratch)


def read_with_bindings(anchor: Path, refs: list[int]) -> tuple[dict[int, RawEvents], dict[int, Counter]]:
    """Raw records of `refs` and their event counts per record name."""
    try:
        return bindings.read_locations(anchor, refs)
    except library.error_class() as exc:
        culprit = _failing_location(anchor, refs) if len(refs) > 1 else refs[0]
        raise InputError(f"{archive.event_file(anchor, culprit)}: the OTF2 library cannot read this event file "
                         f"({exc}): truncated or corrupt?") from None


def count_mismatches(anchor: Path, got: dict[int, int], tables: Tables) -> list[str]:
    """Locations whose events read differ from the count their definition announces. Some writers
    (APEX) announce wrong counts, so a mismatch is a warning; truncation itself is caught by the
    decoder (missing end-of-file record) or the OTF2 library. APEX 1.2 writes its number of region
    definitions as every location's event count (79 on apex-otf2, where 0, 8,046 and 8,078 events
    are read, all 16,124): counts that are all that number announce nothing, and are not compared."""
    announced = [tables.location_events.get(ref, 0) for ref in got]
    regions = int((tables.region_index >= 0).sum())
    if len(got) > 1 and len(set(announced)) == 1 and announced[0] == regions and sum(got.values()) != sum(announced):
        return []
    return [f"{archive.event_file(anchor, ref).name}: {n} events read, the definitions announce {expected}"
            for (ref, n), expected in zip(got.items(), announced) if expected and n != expected]


def _failing_location(anchor: Path, refs: list[int]) -> int:
    """The first location whose events cannot be read on their own (error path only)."""
    for ref in refs:
        try:
            bindings.read_locations(anchor, [ref])
        except library.error_class():
            return ref
    return refs[0]
