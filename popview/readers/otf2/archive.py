"""The files of an OTF2 archive: the anchor, the global definitions and the
per-location event files, checked before the OTF2 library sees them so
that a missing or truncated file gets a message naming it."""
from __future__ import annotations

from pathlib import Path

from popview.readers.errors import InputError

ANCHOR_MAGIC = b"OTF2"


def detect(path: Path) -> bool:
    path = Path(path)
    if path.is_dir():
        return any(p.suffix == ".otf2" for p in path.iterdir())
    return path.suffix == ".otf2"


def anchor(path: Path) -> Path:
    """The anchor file (`traces.otf2`) of a directory or of the anchor itself."""
    path = Path(path)
    if not path.is_dir():
        return path
    found = sorted(p for p in path.iterdir() if p.suffix == ".otf2" and p.is_file())
    if not found:
        raise InputError(f"{path}: no .otf2 anchor file in this directory")
    preferred = [p for p in found if p.name == "traces.otf2"]
    return (preferred or found)[0]


def check_anchor(path: Path) -> None:
    """The anchor, the global definitions and the archive directory exist and look like OTF2."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with open(path, "rb") as f:
        head = f.read(64)
    if head[2:6] != ANCHOR_MAGIC:
        raise InputError(f"{path}: not an OTF2 anchor file (no OTF2 signature in its first bytes)")
    defs = path.with_suffix(".def")
    if not defs.is_file():
        raise InputError(f"{path}: global definitions {defs.name} are missing beside the anchor")
    if defs.stat().st_size == 0:
        raise InputError(f"{defs}: empty global definitions file")


def archive_dir(anchor_path: Path) -> Path:
    return anchor_path.with_suffix("")


def event_file(anchor_path: Path, location_ref: int) -> Path:
    return archive_dir(anchor_path) / f"{location_ref}.evt"


def check_event_files(anchor_path: Path, expected: dict[int, int]) -> None:
    """Every location announcing events has a non-empty .evt file."""
    folder = archive_dir(anchor_path)
    missing = [event_file(anchor_path, ref) for ref, n in expected.items()
               if n > 0 and not event_file(anchor_path, ref).is_file()]
    if missing:
        names = ", ".join(p.name for p in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        where = f"in {folder.name}/" if folder.is_dir() else f"(the directory {folder.name}/ itself is missing)"
        raise InputError(f"{anchor_path}: {len(missing)} event file(s) missing {where}: {names} "
                         f"(the definitions announce {sum(expected.values())} events)")
    empty = [event_file(anchor_path, ref) for ref, n in expected.items()
             if n > 0 and event_file(anchor_path, ref).stat().st_size == 0]
    if empty:
        raise InputError(f"{empty[0]}: empty event file, but the definitions announce "
                         f"{expected[int(empty[0].stem)]} events for this location")
