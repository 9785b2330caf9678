"""`popview [FILE...]`: the application object, the main window, the files to open."""
from __future__ import annotations

import importlib
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from popview._version import __version__


def run_gui(argv: list[str]) -> int:
    """Show the main window, open the files given, run until it closes."""
    from popview.gui.theme import follow_desktop, prepare_high_dpi, set_identity

    prepare_high_dpi()
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "popview"])
    app.setApplicationName("popview")
    app.setOrganizationName("popview")
    app.setApplicationVersion(__version__)
    set_identity(app)
    follow_desktop(app)
    from popview.gui.firstrun import install_guide
    from popview.gui.mainwindow import MainWindow

    window = MainWindow()
    _bind_session(window)
    install_guide(window)
    window.show()
    paths = [a for a in argv if not a.startswith("-")]
    if paths:
        QTimer.singleShot(0, lambda: window.open_paths(paths))
    if "--demo" in argv:
        from popview.gui.firstrun import after_first_paint
        after_first_paint(window, lambda: _open_demo(window))
    return app.exec()


def _open_demo(window) -> None:
    """Write the demo experiment (first use only) in a thread, then open its session."""
    from popview.demo import ensure_demo
    from popview.gui.workers import CallJob

    window.statusBar().showMessage("Preparing the demo experiment...")
    job = CallJob(lambda: [ensure_demo()], window)
    job.done.connect(window.open_paths)          # a bound slot: queued into the GUI thread
    job.failed.connect(window.report_failure)
    job.start()


def _bind_session(window) -> None:
    """Session files, autosave and recovery, when popview has them."""
    try:
        binding = importlib.import_module("popview.gui.session_binding")
    except ModuleNotFoundError as exc:
        if exc.name != "popview.gui.session_binding":
            raise
        return
    binding.binding_for(window.state).attach(window)
