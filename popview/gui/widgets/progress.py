"""A status-bar entry for one file being opened: name, percentage bar, cancel."""
from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget


class JobProgress(QWidget):
    """Shows an OpenJob's progress; its button cancels the job."""

    def __init__(self, job, parent=None):
        super().__init__(parent)
        self.job = job
        self.label = QLabel(job.path.name)
        self.label.setToolTip(str(job.path))
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setValue(0)
        self.bar.setFormat("%p %")
        self.bar.setMaximumWidth(180)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip(f"Stop opening {job.path.name}")
        self.cancel_button.clicked.connect(self._cancel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 0, 4, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel_button)
        job.progressed.connect(self._on_progress)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.bar.setValue(int(round(fraction * 100)))
        if message:
            self.bar.setToolTip(message)

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.label.setText(f"{self.job.path.name} (cancelling)")
        self.job.cancel()
