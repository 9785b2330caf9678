"""`popview [FILE...]`: the application object, the main window, the files to open."""
from __future__ import annotations

import importlib
import os
import signal
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from popview._version import __version__

NO_DISPLAY = ("popview: no display found (DISPLAY is not set): run the window in a desktop session, "
              "or headless under a virtual one: xvfb-run -a popview ...")


def missing_display() -> str | None:
    """Why the window cannot open here, before Qt aborts with a message about libxcb-cursor0."""
    if not sys.platform.startswith("linux"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith(("xcb", "wayland")):
        return None                      # offscreen, vnc, eglfs...: no X server needed
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return NO_DISPLAY


def run_gui(argv: list[str]) -> int:
    """Show the main window, open the files given, run until it closes."""
    problem = missing_display()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    from popview.gui.theme import follow_desktop, prepare_high_dpi, set_identity

    prepare_high_dpi()
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "popview"])
    _quit_on_ctrl_c(app)
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
    from popview.gui.firstrun import after_first_paint, install_compile_notice
    after_first_paint(window, lambda: install_compile_notice(window))
    from popview import precompile          # first run on a machine: a second core compiles the kernels,
    after_first_paint(window, lambda: precompile.start_helper("window"))     # once the window is up
    paths = [a for a in argv if not a.startswith("-")]
    if paths:
        QTimer.singleShot(0, lambda: window.open_paths(paths))
    if "--demo" in argv:
        after_first_paint(window, lambda: _open_demo(window))
    _screenshot_if_asked(window, expect_runs=bool(paths) or "--demo" in argv)
    try:
        return app.exec()
    finally:
        precompile.stop_helper()
        precompile.build_ahead()


def _quit_on_ctrl_c(app) -> None:
    """Ctrl+C in the terminal closes the window (Qt's loop alone never lets Python see it)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return                            # someone else (a test runner) handles it
    signal.signal(signal.SIGINT, lambda *_: app.quit())
    wake = QTimer(app)
    wake.timeout.connect(lambda: None)   # lets the interpreter run its signal handlers
    wake.start(250)


def _screenshot_if_asked(window, expect_runs: bool) -> None:
    from popview.gui.screenshot import save_when_open, screenshot_requested

    path = screenshot_requested()
    if path is not None:
        save_when_open(window, path, expect_runs)


def _open_demo(window) -> None:
    """Write the demo experiment (first use only) in a thread, then open its session."""
    from popview.demo import ensure_demo
    from popview.gui.jobs import Lane

    def written(paths, error) -> None:
        if error is not None:
            window.report_failure(error.splitlines()[0], error)
        else:
            window.open_paths(paths)

    window.statusBar().showMessage("Preparing the demo experiment...")
    window.demo_lane = Lane(window, "demo")
    window.demo_lane.submit(lambda: [ensure_demo()], written)


def _bind_session(window) -> None:
    """Session files, autosave and recovery."""
    binding = importlib.import_module("popview.gui.session_binding")
    binding.binding_for(window.state).attach(window)
