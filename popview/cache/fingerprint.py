"""Fingerprints of source files: a cache is reused only for the same content.

A fingerprint records, for every file of the source (what its reader's
source_files names), its name, size,
modification and change times, device, inode and a hash of its whole
content (xxh3-128, about 3.6 GB/s here). A file whose (size, mtime, ctime,
device, inode) are all unchanged is trusted as is: any write changes the
ctime, whatever `cp -p` or `touch` do to the mtime. Any other difference
but the size is settled by hashing the file again.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from pathlib import Path

import xxhash

_BLOCK = 8 << 20
_STAT_FIELDS = ("st_size", "st_mtime_ns", "st_ctime_ns", "st_dev", "st_ino")


def content_hash(path: Path, stop: threading.Event | None = None) -> str:
    """xxh3-128 of the whole file, read in blocks (a hash of its edges once missed
    same-size edits in the middle). Only a regular file is hashed, and only as far as
    its size when the hash began (a device such as /dev/zero never ends, a FIFO blocks
    on opening): anything else, or a hash stopped by `stop`, gives "", which no cache
    matches."""
    h = xxhash.xxh3_128()
    buf = bytearray(_BLOCK)
    view = memoryview(buf)
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return ""
    left = st.st_size
    with open(path, "rb", buffering=0) as f:
        while left > 0 and (n := f.readinto(view[:min(_BLOCK, left)])):
            if stop is not None and stop.is_set():
                return ""
            h.update(view[:n])
            left -= n
    return h.hexdigest()


def _stat(path: Path) -> list[int]:
    st = os.stat(path)
    return [getattr(st, name) for name in _STAT_FIELDS]


def _named(files: list[Path]) -> dict[str, Path]:
    """Each file by its path relative to the folder holding them all (an OTF2
    archive has files of one name in several folders)."""
    paths = sorted({Path(p) for p in files})
    if not paths:
        return {}
    root = os.path.commonpath([str(p.parent) for p in paths])
    return {os.path.relpath(p, root): p for p in paths}


def stats(files: list[Path]) -> dict[str, list[int]]:
    """name -> (size, mtime, ctime, device, inode) of each file."""
    return {name: _stat(p) for name, p in _named(files).items()}


def fingerprint(files: list[Path], before: dict[str, list[int]] | None = None,
                stop: threading.Event | None = None) -> str:
    """JSON string identifying the content of `files` (order-independent). With
    `before` (their stats when the conversion started), a file changed since then
    gets no hash, so that the cache never matches it; `stop` ends the hashing early
    (the conversion failed: its hash is not needed)."""
    items = []
    for name, path in _named(files).items():
        st = _stat(path)
        digest = content_hash(path, stop)
        if before is not None and (before.get(name) != st or _stat(path) != st):
            digest = ""
        items.append([name, *st, digest])
    return json.dumps(items, separators=(",", ":"))


def matches(stored: str, files: list[Path]) -> bool:
    """Whether `files` hold the content fingerprinted in `stored`."""
    try:
        recorded = {item[0]: item[1:] for item in json.loads(stored)}
    except (ValueError, TypeError, IndexError, KeyError):
        return False
    paths = _named(files)
    if set(recorded) != set(paths):
        return False
    for name, path in paths.items():
        entry = recorded[name]
        if len(entry) != len(_STAT_FIELDS) + 1 or not entry[-1]:
            return False
        st = _stat(path)
        if st == entry[:-1]:
            continue
        if st[0] != entry[0] or content_hash(path) != entry[-1]:
            return False
    return True


def cache_key(path: Path) -> str:
    return hashlib.sha1(os.fsencode(str(Path(path).resolve()))).hexdigest()[:16]
