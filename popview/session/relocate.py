"""Finding the experiments of a session again: moved, changed or missing.

A trace is recognised by its content (names, sizes and content hashes of
its files, as in the cache fingerprint) ignoring times and inodes, so a
moved or copied trace still matches while an edited one does not.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from popview.cache.fingerprint import fingerprint
from popview.readers import InputError, reader_for
from popview.session.model import ExperimentRef, Session

MAX_SEARCHED = 20000          # directory entries visited when searching for a moved trace


def source_fingerprint(path) -> str:
    """The fingerprint of the source a reader would convert for `path`."""
    _, module = reader_for(Path(path))
    anchor = module.anchor(Path(path))
    try:
        return fingerprint(module.source_files(anchor))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def content_key(fp: str | None):
    """The fingerprint without times and inodes (None when unknown). Fingerprints of
    earlier versions (name, size, mtime, hash of the edges) are kept to names and sizes."""
    if fp is None:
        return None
    try:
        items = json.loads(fp)
        if all(len(item) == 4 for item in items):
            return tuple((os.path.basename(item[0]), item[1]) for item in items)
        return tuple((item[0], item[1], item[-1]) for item in items)
    except (ValueError, TypeError, IndexError, KeyError):
        return fp


def same_content(fp: str, remembered: str | None) -> bool:
    """Whether `fp` (of this version) and a remembered fingerprint name one content."""
    key, old = content_key(fp), content_key(remembered)
    if isinstance(old, tuple) and old and len(old[0]) == 2 and isinstance(key, tuple):
        key = tuple((os.path.basename(name), size) for name, size, _ in key)
    return key == old


@dataclass
class Resolution:
    """status: ok | moved | changed | missing."""

    ref: ExperimentRef
    status: str
    path: Path | None
    fingerprint: str | None = None
    message: str = ""


def check(ref: ExperimentRef, path) -> Resolution:
    """Compare the source at `path` with what `ref` remembers."""
    path = Path(path)
    try:
        fp = source_fingerprint(path)
    except InputError as exc:
        return Resolution(ref, "missing", None, None, str(exc))
    moved = os.path.abspath(path) != os.path.abspath(ref.path)
    if ref.fingerprint is None or same_content(fp, ref.fingerprint):
        return Resolution(ref, "moved" if moved else "ok", path, fp)
    return Resolution(ref, "changed", path, fp,
                      f"{path} has changed since the session was saved: bookmarks and annotations "
                      f"may point at other data")


def search(ref: ExperimentRef, roots: list[Path]) -> Path | None:
    """A file or folder named like `ref` under `roots` with the same content."""
    name = Path(ref.path).name
    visited = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            visited += len(dirnames) + len(filenames)
            if visited > MAX_SEARCHED:
                return None
            if name in filenames or name in dirnames:
                candidate = Path(dirpath) / name
                if check(ref, candidate).status in ("ok", "moved"):
                    return candidate
    return None


def resolve(ref: ExperimentRef, roots: list[Path] = ()) -> Resolution:
    """Where `ref` is now: at its path, found by content under `roots`, or missing."""
    if os.path.exists(ref.path):
        return check(ref, ref.path)
    found = search(ref, [Path(r) for r in roots if Path(r).is_dir()])
    if found is not None:
        return check(ref, found)
    return Resolution(ref, "missing", None, None, f"{ref.path}: no such file or directory")


def accept(session: Session, resolution: Resolution) -> bool:
    """Remember a relocation (new path and fingerprint) in the session; True if it changed."""
    ref = resolution.ref
    if resolution.path is None:
        return False
    new_path = os.path.abspath(resolution.path)
    changed = new_path != ref.path or resolution.fingerprint != ref.fingerprint
    ref.path, ref.fingerprint = new_path, resolution.fingerprint
    return changed
