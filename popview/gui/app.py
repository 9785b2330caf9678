"""`popview [FILE...]`: the application object, the main window, the files to open."""
from __future__ import annotations

import importlib
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from popview._version import __version__


def run_gui(argv: list[str]) -> int:
    """Show the main window, open the files given, run until it closes."""
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "popview"])
    app.setApplicationName("popview")
    app.setOrganizationName("popview")
    app.setApplicationVersion(__version__)
    from popview.gui.mainwindow import MainWindow

    window = MainWindow()
    _bind_session(window)
    window.show()
    paths = [a for a in argv if not a.startswith("-")]
    if paths:
        QTimer.singleShot(0, lambda: window.open_paths(paths))
    return app.exec()


def _bind_session(window) -> None:
    """Session files, autosave and recovery, when popview has them."""
    try:
        binding = importlib.import_module("popview.gui.session_binding")
    except ModuleNotFoundError as exc:
        if exc.name != "popview.gui.session_binding":
            raise
        return
    binding.binding_for(window.state).attach(window)
