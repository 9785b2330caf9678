"""Themes: dark or light after the desktop (or POPVIEW_THEME), plots follow the palette."""
from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from popview.gui.theme import apply_theme, icon_path, wants_dark


@pytest.fixture
def app_restored(qapp):
    style, palette = qapp.style().name(), QPalette(qapp.palette())
    background, foreground = pg.getConfigOption("background"), pg.getConfigOption("foreground")
    yield qapp
    QApplication.setStyle(style)
    qapp.setPalette(palette)
    pg.setConfigOptions(background=background, foreground=foreground)


@pytest.mark.parametrize("choice, dark", [("dark", True), ("light", False)])
def test_theme_choice(monkeypatch, app_restored, choice, dark):
    monkeypatch.setenv("POPVIEW_THEME", choice)
    assert wants_dark(app_restored) is dark
    assert apply_theme(app_restored) is dark
    window = app_restored.palette().color(QPalette.ColorRole.Window)
    assert (window.lightness() < 128) is dark
    assert pg.getConfigOption("background") == app_restored.palette().color(QPalette.ColorRole.Base)


def test_icon_ships_with_the_package():
    assert icon_path().is_file() and icon_path().read_text().startswith("<svg")
