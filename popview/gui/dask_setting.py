"""Where the window converts the traces it opens, as a window-wide setting (File menu),
kept in QSettings: on this machine by default, or on the Dask cluster the user names
(`local`, `local:N`, a scheduler's address), exactly as `popview convert --dask` does
(docs/dask.md). Profiles and already converted traces are not affected."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QLineEdit

from popview import cluster

KEY = "dask/scheduler"
PROMPT = ("Convert the traces this window opens on a Dask cluster:\n"
          "  local        one worker per core of this machine\n"
          "  local:N      N workers on this machine\n"
          "  tcp://host:8786   a running scheduler (dask-jobqueue, dask scheduler)\n"
          "Leave empty to convert on this machine.")


def problem(text: str) -> str | None:
    """Why `text` names no cluster popview can use, or None (empty means none wanted)."""
    if not text or (why := cluster.spec_problem(text)) is None:
        return None
    return f"'{text}': {why}"


def scheduler(settings: QSettings) -> str | None:
    """The saved cluster, or None: conversions run on this machine (also when Dask is gone)."""
    text = str(settings.value(KEY, "") or "").strip()
    if not text or problem(text) or not cluster.available():
        return None
    return text


class DaskAction(QAction):
    """The File menu's "Convert on a Dask cluster..." entry; its text shows the current choice."""

    def __init__(self, settings: QSettings, parent):
        super().__init__(parent)
        self.settings = settings
        self.triggered.connect(self.ask)
        if not cluster.available():
            self.setEnabled(False)
            self.setToolTip("Needs Dask distributed: pip install 'popview[dask]'")
        self._label()

    def ask(self) -> None:
        text, ok = QInputDialog.getText(self.parent(), "Convert on a Dask cluster", PROMPT,
                                        QLineEdit.EchoMode.Normal, scheduler(self.settings) or "")
        if ok:
            self.choose(text.strip())

    def choose(self, text: str) -> str | None:
        """Keep `text` (empty: this machine); returns the reason it was refused, if it was."""
        reason = problem(text)
        if reason is None:
            self.settings.setValue(KEY, text)
            self._label()
        return reason

    def _label(self) -> None:
        where = scheduler(self.settings)
        self.setText(f"Convert on &Dask: {where}..." if where else "Convert on a &Dask cluster...")
