"""POPVIEW_SCREENSHOT=FILE: a picture of the window once what it was asked to
open is open, then quit. How a headless machine (xvfb-run, CI) shows what the
window painted."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QTimer

# After the last run opened, the panes fill and paint in a few event-loop turns.
SETTLE_MS = 1500
GIVE_UP_MS = 600_000


def screenshot_requested() -> Path | None:
    value = os.environ.get("POPVIEW_SCREENSHOT")
    return Path(value) if value else None


def grab_window(window):
    """The window's pixels as the display shows them (the screen's copy), or as Qt paints them."""
    screen = window.screen()
    geometry = window.frameGeometry()
    picture = screen.grabWindow(0, geometry.x(), geometry.y(), geometry.width(), geometry.height()) \
        if screen is not None else None
    if picture is None or picture.isNull():
        picture = window.grab()
    return picture


def save_when_open(window, path: Path, expect_runs: bool) -> None:
    """Once no run is still opening (and one is open, when runs were asked for) and the panes'
    background work is done, save the picture and quit."""
    from popview.gui import jobs

    started = {"ms": 0}
    timer = QTimer(window)

    def poll() -> None:
        started["ms"] += 200
        opened = bool(window.state.experiments) or not expect_runs
        if (opened and not window.jobs and jobs.idle()) or window.errors or started["ms"] > GIVE_UP_MS:
            timer.stop()
            QTimer.singleShot(SETTLE_MS, lambda: _save_and_quit(window, path))

    timer.timeout.connect(poll)
    timer.start(200)


def _save_and_quit(window, path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.png")
    ok = grab_window(window).save(str(tmp), "PNG")
    if ok:
        os.replace(tmp, path)
        print(f"popview: wrote a picture of the window to {path}", flush=True)
    else:
        print(f"popview: could not write {path}", flush=True)
    _end_session_quietly(window)
    QApplication.instance().exit(0 if ok else 1)


def _end_session_quietly(window) -> None:
    """A picture run ends as a clean quit: its autosave is no crash to recover from at the
    next start (it asked to restore the pictured session)."""
    from popview.gui.session_binding import SessionBinding

    binding = window.state.findChild(SessionBinding)
    if binding is not None:
        binding.autosave_timer.stop()
        binding.recovery.discard()
