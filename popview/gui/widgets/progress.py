"""A progress entry with a cancel button: a file being opened (the status bar's), or a
derived part a pane builds at its first use (the timeline overview, the window sums)."""
from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget


class JobProgress(QWidget):
    """Shows the progress of `job` (an OpenJob, or anything with a `progressed(fraction,
    message)` signal); its button cancels it (`job.cancel`, or `stop`). `name` and `what`
    default to the file being opened."""

    def __init__(self, job, parent=None, *, name: str | None = None, what: str | None = None, stop=None):
        super().__init__(parent)
        self.job = job
        self.name = name if name is not None else job.path.name
        self._stop = stop or job.cancel
        self.label = QLabel(self.name)
        self.label.setToolTip(str(job.path) if name is None else self.name)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setValue(0)
        self.bar.setFormat("%p %")
        self.bar.setMaximumWidth(180)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip(f"Stop {what or 'opening ' + self.name}")
        self.cancel_button.clicked.connect(self._cancel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 0, 4, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel_button)
        lay.addStretch(1)              # in a pane's width: label, bar and button together, at its left
        job.progressed.connect(self._on_progress)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.bar.setValue(int(round(fraction * 100)))
        if message:
            self.bar.setToolTip(message)

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.label.setText(f"{self.name} (cancelling)")
        self._stop()
