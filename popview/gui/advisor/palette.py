"""The colour-blind safe scale as a window-wide setting (View menu), kept in QSettings."""
from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction

from popview.analysis.report import scale

KEY = "advisor/palette"


class PaletteSetting(QObject):
    """One per application: panes repaint when `changed` fires."""

    changed = Signal(str)

    def __init__(self):
        super().__init__()
        saved = QSettings("popview", "popview").value(KEY, "red-green")
        scale.use_palette(saved if saved in scale.PALETTES else "red-green")

    def set(self, name: str) -> None:
        if name != scale.palette():
            scale.use_palette(name)
            QSettings("popview", "popview").setValue(KEY, name)
            self.changed.emit(name)

    def action(self, parent) -> QAction:
        return PaletteAction(self, parent)


class PaletteAction(QAction):
    """The View menu's check box; methods (not lambdas) so Qt disconnects them with the action."""

    def __init__(self, setting: PaletteSetting, parent):
        super().__init__("Colour-blind safe efficiency colours", parent)
        self.setting = setting
        self.setCheckable(True)
        self.setChecked(scale.palette() == "colour-blind")
        self.toggled.connect(self._toggled)
        setting.changed.connect(self._sync)

    def _toggled(self, on: bool) -> None:
        self.setting.set("colour-blind" if on else "red-green")

    def _sync(self, name: str) -> None:
        self.setChecked(name == "colour-blind")


_setting: list[PaletteSetting] = []


def setting() -> PaletteSetting:
    if not _setting:
        _setting.append(PaletteSetting())
    return _setting[0]
