"""Fingerprints of source files: cheap, and changed by any edit that matters.

A fingerprint is size + mtime + a hash of the first and last MiB of every
file of the source (several files for a .prv with .pcf/.row, a whole
directory for OTF2).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

_EDGE = 1 << 20


def _file_digest(path: Path) -> str:
    h = hashlib.sha1()
    size = path.stat().st_size
    with open(path, "rb") as f:
        h.update(f.read(_EDGE))
        if size > 2 * _EDGE:
            f.seek(size - _EDGE)
            h.update(f.read(_EDGE))
    return h.hexdigest()


def fingerprint(files: list[Path]) -> str:
    """JSON string identifying the content of `files` (order-independent)."""
    items = []
    for path in sorted({Path(p) for p in files}):
        st = path.stat()
        items.append([path.name, st.st_size, st.st_mtime_ns, _file_digest(path)])
    return json.dumps(items, separators=(",", ":"))


def source_files(path: Path) -> list[Path]:
    """Every file whose content the conversion of `path` depends on."""
    path = Path(path)
    if path.is_dir():
        return [p for p in sorted(path.rglob("*")) if p.is_file() and not p.name.endswith((".h5", ".tmp"))]
    files = [path]
    stem = path.name
    for suffix in (".prv.gz", ".prv"):
        if stem.endswith(suffix):
            base = path.with_name(stem[: -len(suffix)])
            files += [p for p in (base.with_suffix(".pcf"), base.with_suffix(".row")) if p.exists()]
    if path.suffix == ".otf2":
        sub = path.with_suffix("")
        files += [path.with_suffix(".def")] if path.with_suffix(".def").exists() else []
        if sub.is_dir():
            files += [p for p in sorted(sub.rglob("*")) if p.is_file()]
    return files


def cache_key(path: Path) -> str:
    return hashlib.sha1(os.fsencode(str(Path(path).resolve()))).hexdigest()[:16]
