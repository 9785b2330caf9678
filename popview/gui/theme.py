"""Light and dark themes that follow the desktop, and sane high-DPI scaling.

The Fusion style with a palette chosen from the desktop's colour scheme
(Qt reads it from the platform: GNOME/KDE portals, Windows, macOS), switched
live when the desktop switches. POPVIEW_THEME=light|dark overrides it.
pyqtgraph plots created afterwards take the palette's background.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette

Role = QPalette.ColorRole


def prepare_high_dpi() -> None:
    """Before the QApplication exists: fractional scale factors as the desktop sets them."""
    if QGuiApplication.instance() is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)


def wants_dark(app) -> bool:
    choice = os.environ.get("POPVIEW_THEME", "auto").lower()
    if choice in ("dark", "light"):
        return choice == "dark"
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def dark_palette() -> QPalette:
    p = QPalette()
    colours = {Role.Window: "#2b2b2b", Role.WindowText: "#e6e6e6", Role.Base: "#1f1f1f",
               Role.AlternateBase: "#2a2a2a", Role.ToolTipBase: "#3a3a3a", Role.ToolTipText: "#f0f0f0",
               Role.Text: "#e6e6e6", Role.Button: "#353535", Role.ButtonText: "#e6e6e6",
               Role.BrightText: "#ff5555", Role.Link: "#6cb4ff", Role.Highlight: "#3d7cc9",
               Role.HighlightedText: "#ffffff", Role.PlaceholderText: "#8a8a8a"}
    for role, colour in colours.items():
        p.setColor(role, QColor(colour))
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return p


def apply_theme(app) -> bool:
    """Style the application after the desktop; True when dark."""
    app.setStyle("Fusion")
    dark = wants_dark(app)
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    _plots_follow(app.palette())
    return dark


def follow_desktop(app) -> None:
    """Re-apply the theme whenever the desktop switches between light and dark."""
    apply_theme(app)
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: apply_theme(app))


def _plots_follow(palette: QPalette) -> None:
    import pyqtgraph as pg

    pg.setConfigOption("background", palette.color(Role.Base))
    pg.setConfigOption("foreground", palette.color(Role.WindowText))


def icon_path() -> Path:
    return Path(__file__).resolve().parents[1] / "resources" / "icons" / "popview.svg"


def set_identity(app) -> None:
    """Window icon and the .desktop entry the desktop associates the windows with."""
    app.setWindowIcon(QIcon(str(icon_path())))
    QGuiApplication.setDesktopFileName("popview")
