"""A Paraver trace converted on Dask workers (popview.cluster; docs/dask.md).

The same pieces as the single-process conversion (stream.py), another
scheduler: the body is cut into byte ranges at line boundaries (a .prv.gz,
which cannot be entered in the middle, is read here and its line-aligned
blocks are sent to the workers instead); each task parses its range block by
block with `stream._parse`, the function the single-process conversion runs in
its threads, and spills the prepared chunks as a piece (popview.cache.pieces)
into the scratch folder of the cache, which the workers must share. The driver
adopts the pieces in file order and merges their tallies (problems with their
line numbers, event types, flags), then `Writer.finish` regroups the records by
location, sorts and derives exactly as for a single-process conversion.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from popview import cluster
from popview.cache.pieces import PieceWriter
from popview.cache.progress import Progress
from popview.cache.writer import Writer
from popview.model.definitions import Definitions
from popview.readers.errors import InputError
from popview.readers.paraver.stream import (MAX_BYTES_WITHOUT_RECORDS, MAX_LINE, ExpansionTooLarge, LineTooLong,
                                            _definitions, _finish_body, _location_index, _mapped_block_items,
                                            _no_records, _parse, _records, _Tally, read_header, text_blocks,
                                            truncated)

# Bytes of text a task parses: ~0.5 s of one core's work at today's rates, and 64 tasks a 4 GB trace.
TASK_BYTES = 64 << 20


def convert(path: Path, writer: Writer, progress: Progress, client, task_bytes: int = TASK_BYTES) -> Definitions:
    path = Path(path)
    header, header_lines, skip = read_header(path)
    defs, pcf = _definitions(path, header)
    appl_first_task, task_first_loc = _location_index(header)
    common = (appl_first_task, task_first_loc, int(round(header.unit_ns)), header.end_time)
    pieces = writer.pieces_folder()
    n_workers = cluster.workers(client)
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    if gz:
        tasks, total, window = _gz_tasks(path, skip, pieces, common, task_bytes), 1.0, 2 * n_workers
    else:
        ranges = line_ranges(path, skip, path.stat().st_size, task_bytes)
        tasks = [(parse_piece, (pieces, i, str(path), a, b, *common), b - a) for i, (a, b) in enumerate(ranges)]
        total, window = sum(b - a for a, b in ranges), max(4 * n_workers, 8)
    tally, first_line = _Tally(), header_lines + 1
    try:
        for piece, part in cluster.in_order(client, tasks, progress.sub(0.0, 0.95), window,
                                            f"parsing {path.name} on Dask", total):
            if part.truncated:
                truncated(defs, path)
            tally.merge(part)
            writer.adopt(piece)
            if tally.text_bytes > MAX_BYTES_WITHOUT_RECORDS and _records(writer) == 0:
                raise _no_records(path, tally, first_line)
    except (LineTooLong, ExpansionTooLarge) as exc:
        raise InputError(f"{path}: {exc}") from None
    finally:
        if gz:
            tasks.close()               # the reader thread stops
    return _finish_body(defs, pcf, path, writer, tally, first_line)


def parse_piece(pieces: Path, index: int, source, start: int, end: int, appl_first_task, task_first_loc,
                tick: int, t_end: int, truncated: bool = False):
    """A Dask task: the text of `source` (a path: bytes [start, end), whole lines; or the
    bytes of one block) parsed and spilled as a piece. Returns (Piece, _Tally)."""
    out, tally = PieceWriter(pieces, f"{index:07d}"), _Tally()
    fd = None
    try:
        if isinstance(source, str):
            fd = os.open(source, os.O_RDONLY)
            items = _mapped_block_items(fd, start, end)
        else:
            items = [(source, 1.0, "truncated") if truncated else (source, 1.0)]
        for item in items:
            tally.truncated |= len(item) == 3
            text = np.frombuffer(item[0], np.uint8)
            for table, chunk in tally.add(_parse(text, appl_first_task, task_first_loc, tick, t_end), len(text)).items():
                out.append(table, chunk)
        return out.close(), tally
    except BaseException:
        out.abort()
        raise
    finally:
        if fd is not None:
            os.close(fd)


def line_ranges(path: Path, skip: int, size: int, step: int) -> list[tuple[int, int]]:
    """[skip, size) cut into ranges of about `step` bytes, each ending after a newline."""
    cuts = [skip]
    with open(path, "rb") as f:
        pos = skip + step
        while pos < size:
            f.seek(pos)
            look, seen = 1 << 16, 0
            while True:
                block = f.read(look)
                k = block.find(b"\n")
                if k >= 0 or not block:
                    break
                seen += len(block)
                if seen > MAX_LINE:
                    raise LineTooLong(pos)
            if k < 0:
                break                         # no newline after pos: the rest is the last range
            cut = pos + seen + k + 1
            if cut >= size:
                break
            cuts.append(cut)
            pos = cut + step
    cuts.append(size)
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def _gz_tasks(path: Path, skip: int, pieces: Path, common, block: int):
    """Tasks for a compressed trace: its line-aligned blocks, decompressed here (one reader
    thread, as in the single-process conversion) and sent to the workers; weighed by the
    share of the compressed file each took."""
    read = 0.0
    for index, item in enumerate(text_blocks(path, skip, block)):
        yield parse_piece, (pieces, index, bytes(item[0]), 0, 0, *common, len(item) == 3), item[1] - read
        read = item[1]
