"""Reading and writing .popview files safely.

A save writes a temporary file beside the target, flushes it to disk and
renames it over the target, so a crash at any moment leaves either the old
or the new file, never a mix. The previous version is kept as
`<name>.bak`, but only if it was itself a readable session: a corrupt file
never replaces a good backup.
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from popview import atomic
from popview.readers.files import kind_of
from popview.session.migrations import upgrade
from popview.session.model import Session
from popview.session.schema import FORMAT, SessionError, from_dict, to_dict

SUFFIX = ".popview"
MAX_BYTES = 64 << 20          # a session is small; anything bigger is not one


def backup_path(path: Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".bak")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed (numbers must be finite)")


def parse(text: str, where: str) -> dict:
    """JSON text -> the dict of a popview session (any version), or SessionError."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        hint = " (the file looks truncated)" if truncated else ""
        raise SessionError(f"{where}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{hint}") from None
    except RecursionError:
        raise SessionError(f"{where}: nested too deeply to be a session file") from None
    except ValueError as exc:
        raise SessionError(f"{where}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        what = type(data).__name__ if not isinstance(data, dict) else f"format {data.get('format')!r}"
        raise SessionError(f"{where}: not a popview session file (expected a JSON object with "
                           f"\"format\": \"{FORMAT}\", found {what:.60})")
    return data


def read_text(path: Path) -> str:
    path = Path(path)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):     # a device or a pipe has no meaningful size
            raise SessionError(f"{path}: is {kind_of(st.st_mode)}, not a regular file: not a session file")
        size = st.st_size
        if size > MAX_BYTES:
            raise SessionError(f"{path}: {size} bytes is too big for a session file (limit {MAX_BYTES})")
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)         # the file may have grown since stat
        if len(data) > MAX_BYTES:
            raise SessionError(f"{path}: too big for a session file (limit {MAX_BYTES} bytes)")
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionError(f"{path}: not UTF-8 text (byte {exc.start}): not a session file") from None
    except OSError as exc:
        raise SessionError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load(path, base_dir: Path | None = None) -> Session:
    """Read a session file of this or an older version; SessionError says what is wrong."""
    path = Path(path)
    where = str(path)
    data = upgrade(parse(read_text(path), where), where)
    return from_dict(data, where, Path(base_dir) if base_dir else path.parent)


def dumps(session: Session, base_dir: Path | None) -> str:
    return json.dumps(to_dict(session, base_dir), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _is_readable_session(path: Path) -> bool:
    try:
        load(path)
        return True
    except SessionError:
        return False


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (popview.atomic)."""
    atomic.write_text(path, text)


def save(session: Session, path, keep_backup: bool = True) -> Path:
    """Write `session` to `path` atomically, keeping the previous good version as .bak."""
    path = Path(path)
    text = dumps(session, path.parent)
    if keep_backup and path.exists() and _is_readable_session(path):
        write_atomic(backup_path(path), read_text(path))
    write_atomic(path, text)
    return path
