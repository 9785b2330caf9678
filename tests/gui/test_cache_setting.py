"""The window's setting for where caches go: remembered, and what popview.open follows."""
from __future__ import annotations

from PySide6.QtCore import QSettings

from popview.cache import location
from popview.gui.mainwindow import MainWindow


def test_keeping_caches_beside_the_traces_is_a_remembered_choice(qtbot, tmp_path, monkeypatch):
    monkeypatch.delenv(location.BESIDE_ENV, raising=False)
    settings = QSettings(str(tmp_path / "popview.ini"), QSettings.Format.IniFormat)
    try:
        w = MainWindow(settings=settings, panes=[])
        qtbot.addWidget(w)
        action = w.cache_beside_action
        assert not action.isChecked() and not location.beside_wanted()
        action.setChecked(True)
        assert location.beside_wanted() and settings.value("cache/beside", type=bool)
        location.prefer_beside(False)
        again = MainWindow(settings=settings, panes=[])
        qtbot.addWidget(again)
        assert again.cache_beside_action.isChecked() and location.beside_wanted()
    finally:
        location.prefer_beside(False)
