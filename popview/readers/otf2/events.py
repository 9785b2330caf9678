"""Chooses the event source for a batch of locations: the buffer decoder
where it understands every record, else the `otf2` bindings."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from popview.readers.errors import InputError
from popview.readers.otf2 import archive, bindings
from popview.readers.otf2.definitions import Tables
from popview.readers.otf2.raw import RawEvents


def read(anchor: Path, refs: list[int], tables: Tables) -> tuple[dict[int, RawEvents], Counter]:
    import _otf2

    try:
        return bindings.read_locations(anchor, refs)
    except _otf2.Error as exc:
        files = ", ".join(archive.event_file(anchor, r).name for r in refs[:4]) + (" ..." if len(refs) > 4 else "")
        raise InputError(f"{anchor}: cannot read the event files ({files}) of {archive.archive_dir(anchor).name}/: "
                         f"{exc} (truncated or corrupt .evt/.def file?)") from None
