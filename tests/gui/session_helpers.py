"""A main window bound to a session, with stand-in panes that keep a view state."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from popview.gui import mainwindow
from popview.gui.mainwindow import Area, MainWindow, PaneSpec
from popview.gui.session_binding import binding_for
from popview.gui.state import AppState


class WindowPane(QWidget):
    """Stands in for the timeline: a visible window and a colour mode."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.state = state
        self.window_ns = (0, 1)
        self.colour_mode = "state"
        state.timeWindowChanged.connect(lambda t0, t1: setattr(self, "window_ns", (t0, t1)))

    def zoom(self, t0: int, t1: int) -> None:
        self.window_ns = (t0, t1)
        self.state.timeWindowChanged.emit(t0, t1)

    def view_state(self) -> dict:
        return {"t0": self.window_ns[0], "t1": self.window_ns[1], "colour_mode": self.colour_mode}

    def restore_view_state(self, d: dict) -> None:
        self.window_ns = (d["t0"], d["t1"])
        self.colour_mode = d["colour_mode"]


class VariantPane(QWidget):
    """Stands in for the Advisor: a selected variant."""

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self.variant = "pop_mpi"

    def view_state(self) -> dict:
        return {"variant": self.variant}

    def restore_view_state(self, d: dict) -> None:
        self.variant = d.get("variant", self.variant)


FAKES = {"WindowPane": WindowPane, "VariantPane": VariantPane}
SPECS = [
    PaneSpec("popview.gui.bookmarks", "BookmarksPane", "Bookmarks", Area.LeftDockWidgetArea),
    PaneSpec("fake", "WindowPane", "Timeline", Area.TopDockWidgetArea),
    PaneSpec("fake", "VariantPane", "Advisor", Area.BottomDockWidgetArea),
]


def use_fake_panes(monkeypatch) -> None:
    real = mainwindow.load_pane_class
    monkeypatch.setattr(mainwindow, "load_pane_class", lambda spec: FAKES.get(spec.cls) or real(spec))


def bound_window(qtbot, tmp_path, cache_dir, recovery=None, offer_recovery=False):
    """(window, binding) with the session machinery attached, as `popview` starts it."""
    state = AppState()
    from popview.gui.session_binding import SessionBinding
    binding = SessionBinding(state, recovery) if recovery is not None else binding_for(state)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(state=state, settings=settings, cache_dir=cache_dir, panes=SPECS)
    qtbot.addWidget(window)
    no_dialogs(binding)
    binding.attach(window, autosave_ms=3_600_000, offer_recovery=offer_recovery)
    return window, binding


def no_dialogs(binding) -> None:
    """Answers that a test has not chosen: never block on a modal dialog."""
    binding.ask_save_changes = lambda: "discard"
    binding.ask_save_path = lambda: None
    binding.ask_open_path = lambda: None
    binding.ask_locate = lambda ref, message: None
    binding.ask_restore = lambda path, session: False
    binding.warnings = []
    binding.warn = binding.warnings.append


def wait_open(qtbot, window, n: int) -> None:
    qtbot.waitUntil(lambda: len(window.state.experiments) == n and not window.jobs, timeout=30000)
