"""Chooses the event source for a batch of locations: the buffer decoder
where it understands every record, else the `otf2` bindings; checks that
every location delivered the events its definition announces."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.otf2 import archive, bindings
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents


def read(anchor: Path, refs: list[int], tables: Tables) -> tuple[dict[int, RawEvents], Counter]:
    """Raw records of the locations `refs` and the event counts per record name."""
    records, counts, per_location = _read_bindings(anchor, refs)
    for ref in refs:
        expected, got = tables.location_events.get(ref, 0), per_location.get(ref, 0)
        if expected and got != expected:
            raise InputError(f"{archive.event_file(anchor, ref)}: {got} events read but the definitions announce "
                             f"{expected} (truncated or corrupt event file)")
    return records, counts


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
