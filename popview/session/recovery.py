"""Autosave and crash recovery.

A running popview writes its session every few minutes to a recovery file
named after its process id in the user's state directory, and deletes it
on a clean exit. A recovery file whose process is gone is therefore what a
crash left behind; the next start offers to restore it.
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from popview.session import store
from popview.session.model import Session
from popview.session.schema import SessionError

PREFIX = "autosave-"


def recovery_dir() -> Path:
    base = os.environ.get("POPVIEW_STATE_DIR") or platformdirs.user_state_dir("popview")
    return Path(base) / "recovery"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Recovery:
    """The recovery file of this process, and the ones crashed processes left."""

    def __init__(self, directory: Path | None = None, pid: int | None = None):
        self.directory = Path(directory) if directory else recovery_dir()
        self.pid = os.getpid() if pid is None else pid
        self.path = self.directory / f"{PREFIX}{self.pid}{store.SUFFIX}"

    def write(self, session: Session, origin: Path | None) -> Path:
        """Autosave `session` (which belongs to the file `origin`, if any)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        session.origin = str(origin) if origin else None
        try:
            store.write_atomic(self.path, store.dumps(session, None))
        finally:
            session.origin = None
        return self.path

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)

    def orphans(self) -> list[Path]:
        """Recovery files left by processes that are no longer running, newest first."""
        if not self.directory.is_dir():
            return []
        found = []
        for p in self.directory.glob(f"{PREFIX}*{store.SUFFIX}"):
            pid = p.name[len(PREFIX):-len(store.SUFFIX)]
            if pid.isdigit() and not _pid_alive(int(pid)):
                found.append(p)
        return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)

    @staticmethod
    def load(path: Path) -> Session:
        """The session in a recovery file (its `origin` says which file it belongs to)."""
        return store.load(path)

    @staticmethod
    def remove(path: Path) -> None:
        Path(path).unlink(missing_ok=True)


__all__ = ["Recovery", "SessionError", "recovery_dir"]
