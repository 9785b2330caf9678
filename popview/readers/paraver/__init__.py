"""Paraver traces (.prv / .prv.gz with .pcf and .row), as Extrae writes them.

Detection is cheap; the numba parser is imported only when converting, so
reopening a cached trace never pays for compiling or loading it.
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from popview.readers.format import Format

FORMAT = Format("paraver", "Paraver trace", ("*.prv", "*.prv.gz"), "a Paraver trace (.prv, .prv.gz)",
                name_suffixes=(".prv.gz", ".prv"))
_COMPANIONS = (".pcf", ".row")     # read with the .prv when they exist


def anchor(path) -> Path:
    return Path(path)


def source_files(anchor: Path) -> list[Path]:
    """The .prv and the .pcf / .row beside it."""
    anchor = Path(anchor)
    base = anchor.with_name(FORMAT.run_name(anchor.name, ""))
    return [anchor] + [p for p in (base.with_suffix(s) for s in _COMPANIONS) if p.exists()]


def detect(path: Path) -> bool:
    path = Path(path)
    if path.is_dir():
        return False
    if path.name.lower().endswith((".prv", ".prv.gz")):
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(2)
        with (gzip.open(path, "rb") if head == b"\x1f\x8b" else open(path, "rb")) as f:
            return f.read(8) == b"#Paraver"
    except (OSError, EOFError, zlib.error):
        return False


def convert(path, writer, progress):
    from popview.readers.paraver.stream import convert as convert_trace

    return convert_trace(path, writer, progress)


def convert_distributed(path, writer, progress, client, **options):
    """Convert on Dask workers (popview.readers.paraver.distributed)."""
    from popview.readers.paraver.distributed import convert as convert_trace

    return convert_trace(path, writer, progress, client, **options)


__all__ = ["FORMAT", "anchor", "convert", "convert_distributed", "detect", "source_files"]
