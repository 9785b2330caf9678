"""File > Export report: the HTML report of the current run's series, with a picture of
every bookmarked view (the window is shown in each bookmark's state in
turn, grabbed, and put back as it was)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtWidgets import QApplication

from popview.analysis.report import bookmarks_of, build_report, write_report
from popview.gui.advisor.runs import series_runs
from popview.gui.session_binding import SessionBinding


def png_bytes(widget) -> bytes:
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    widget.grab().save(buf, "PNG")
    buf.close()
    return bytes(data)


def bookmark_pictures(state, window) -> dict[str, bytes]:
    """bookmark id -> PNG of the window showing that bookmark; the view is restored afterwards."""
    binding = state.findChild(SessionBinding)
    if binding is None or not binding.session.bookmarks:
        return {}
    window = binding.window or window           # the main window, even when this dock floats
    if window is None:
        return {}
    before, dirty = binding.capture(), binding.dirty
    pictures = {}
    try:
        for bm in list(binding.session.bookmarks):
            binding.restore_bookmark(bm.id)
            QApplication.processEvents()
            pictures[bm.id] = png_bytes(window)
    finally:
        binding.restore(before)
        binding.mark_dirty(dirty)                   # looking at bookmarks changes nothing
        QApplication.processEvents()
    return pictures


def report_job(state, window=None, variant_keys: list[str] | None = None):
    """Grab the bookmark pictures now (GUI thread) and return a function that
    builds and writes the report (safe to run in a worker thread)."""
    shots = bookmarks_of(state.session, bookmark_pictures(state, window))
    scaling = state.scaling            # strong / weak as chosen in the Scaling pane (or auto)
    exps, focus = series_runs(state), state.focus

    def write(path) -> Path:
        return write_report(Path(path), build_report(
            exps, focus, variant_keys, shots, mode=scaling,
            bookmarks_note="No bookmarks in this session (Ctrl+B bookmarks a view)."))
    return write
