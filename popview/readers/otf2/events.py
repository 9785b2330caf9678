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


def decode(anchor: Path, ref: int, tables: Tables, cancel=None) -> tuple[RawEvents, Counter] | None:
    """One location through the decoder, or None when the bindings must read it; cancel[0]
    set (a uint8 array of one) stops the decoder with Cancelled."""
    if not USE_DECODER:
        return None
    return decoder.decode_location(anchor, ref, tables.event_chunk_size, tables.location_events.get(ref, 0), cancel)


def read_with_bindings(anchor: Path, refs: list[int]) -> tuple[dict[int, RawEvents], dict[int, Counter]]:
    """Raw records of `refs` and their event counts per record name."""
    try:
        return bindings.read_locations(anchor, refs)
    except library.error_class() as exc:
        culprit = _failing_location(anchor, refs) if len(refs) > 1 else refs[0]
        raise InputError(f"{archive.event_file(anchor, culprit)}: the OTF2 library cannot read this event file "
                         f"({exc}): truncated or corrupt?") from None


def count_mismatch(anchor: Path, ref: int, got: int, tables: Tables) -> str | None:
    """Some writers (APEX) announce wrong counts, so a mismatch is a warning; truncation
    itself is caught by the decoder (missing end-of-file record) or the OTF2 library."""
    expected = tables.location_events.get(ref, 0)
    if expected and got != expected:
        return f"{archive.event_file(anchor, ref).name}: {got} events read, the definitions announce {expected}"
    return None


def _failing_location(anchor: Path, refs: list[int]) -> int:
    """The first location whose events cannot be read on their own (error path only)."""
    for ref in refs:
        try:
            bindings.read_locations(anchor, [ref])
        except library.error_class():
            return ref
    return refs[0]
