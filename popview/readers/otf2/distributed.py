"""An OTF2 archive converted on Dask workers (popview.cluster; docs/dask.md).

The per-location event files are the tasks. The conversion is the
single-process one (conversion._Conversion: both passes, the linking of
OpenMP teams in between, the call paths merged in location order, the
messages matched at the end); only where a location is decoded and mapped
changes: `decode_location` runs the same `_decode_first` / `_decode_linked`
on a worker, which reads the archive's definitions once, and writes the
mapped location (rows, local call paths, message halves, problems) into the
scratch folder of the cache, shared by the workers. The driver reads these
in location order and stores them as the single-process conversion does, so
the cache is the same.
"""
from __future__ import annotations

import secrets
import threading
from pathlib import Path

from popview import cluster
from popview.cache.progress import Progress
from popview.readers.otf2 import location_file
from popview.readers.otf2.conversion import _Conversion, read_definitions

_definitions: dict[tuple[str, int], tuple] = {}
_lock = threading.Lock()


class DaskConversion(_Conversion):
    def __init__(self, anchor, defs, tables, writer, progress, client):
        super().__init__(anchor, defs, tables, writer, progress)
        self.client = client
        self.pieces = writer.pieces_folder()

    def decoded(self, refs: list[int], linked: bool):
        """As _Conversion.decoded, each location a Dask task; the progress is _store's, the
        cancel is looked for while waiting (and cancels the futures)."""
        events = self.tables.location_events
        index = self.tables.location_index
        tasks = ((decode_location, (str(self.anchor), ref, linked, self.links.get(index[ref]) if linked else None,
                                    str(self.pieces)), events.get(ref, 0)) for ref in refs)
        waiting = Progress(None, self.progress.cancel)
        window = max(4 * cluster.workers(self.client), 8)
        results = cluster.in_order(self.client, tasks, waiting, window, f"reading {self.anchor.name} on Dask")
        for i, path in enumerate(results):       # to its end: in_order lets go of its last future
            yield refs[i], _take(Path(path))


def decode_location(anchor: str, ref: int, linked: bool, links, pieces: str) -> str:
    """A Dask task: one location decoded and mapped as the single-process conversion's
    worker threads do it, written to a file in `pieces`; returns its path."""
    defs, tables = _read(Path(anchor))
    run = _Conversion(Path(anchor), defs, tables, None, None)
    if linked:
        run.links = {tables.location_index[ref]: links} if links is not None else {}
        result = run._decode_linked(ref)
    else:
        result = run._decode_first(ref)
    path = Path(pieces) / f"location-{ref}-{secrets.token_hex(4)}.npz"
    location_file.write(path, result)      # a worker killed while writing leaves no file of that name
    return str(path)


def _read(anchor: Path):
    """The archive's definitions, read once per worker process (and definitions file)."""
    key = (str(anchor), anchor.with_suffix(".def").stat().st_mtime_ns)
    with _lock:
        if key not in _definitions:
            _definitions.clear()
            _definitions[key] = read_definitions(anchor)
        return _definitions[key]


def _take(path: Path):
    result = location_file.read(path)
    path.unlink()
    return result
