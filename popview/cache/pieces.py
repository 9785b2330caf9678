"""Pieces of a conversion's staging, written by Dask workers (popview.cluster).

A distributed conversion splits its input into tasks (byte ranges of a
Paraver text, OTF2 locations). Each task prepares its records with the same
per-chunk function as the single-process conversion and spills them as the
writer's own staging does (raw column files, each chunk ordered by location),
into a folder of its own under the writer's `pieces` folder, which every
worker must share. It returns a `Piece`: the paths of its files and the
summaries of its chunks (no rows). The driver hands the pieces to
`Writer.adopt` in input order, which appends them to the staging exactly as
if the chunks had been appended there, and `Writer.finish` then sorts and
derives as always: the cache is the single-process cache.

A task run twice (a worker lost, Dask reran it) writes a second folder; only
the folder named by the result that reached the driver is adopted, and the
whole `pieces` folder goes with the conversion's scratch folder.
"""
from __future__ import annotations

import secrets
import shutil
from pathlib import Path

from popview.cache.writer import PreparedChunk, _Staging


class Piece:
    """What a task spilled: by table, its column files and its chunks' summaries."""

    def __init__(self, folder: Path, tables: dict[str, tuple[dict[str, Path], list[PreparedChunk]]]):
        self.folder, self.tables = folder, tables

    def rows(self) -> int:
        return sum(c.n for _, chunks in self.tables.values() for c in chunks)

    def bytes(self) -> int:
        """Bytes of its column files (what the driver copies into the staging)."""
        return sum(p.stat().st_size for paths, _ in self.tables.values() for p in paths.values())

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class PieceWriter:
    """Spills prepared chunks as a writer's staging does, into a new folder under `pieces`."""

    def __init__(self, pieces: Path, name: str):
        self.folder = Path(pieces) / f"{name}-{secrets.token_hex(4)}"
        self.folder.mkdir()
        self._stages: dict[str, _Staging] = {}
        self._chunks: dict[str, list[PreparedChunk]] = {}

    def append(self, table: str, chunk: PreparedChunk) -> None:
        if chunk.n == 0:
            return
        if table not in self._stages:
            self._stages[table] = _Staging(self.folder, table)
            self._chunks[table] = []
        self._stages[table].append(chunk)
        self._chunks[table].append(chunk.summary())

    def close(self) -> Piece:
        for stage in self._stages.values():
            stage.close()
        return Piece(self.folder, {t: (dict(s.paths), self._chunks[t]) for t, s in self._stages.items()})

    def abort(self) -> None:
        for stage in self._stages.values():
            stage.close()
        shutil.rmtree(self.folder, ignore_errors=True)
