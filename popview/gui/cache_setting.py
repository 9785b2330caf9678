"""Where caches go, as a window-wide setting (File menu), kept in QSettings: by default
the user's cache directory; beside the traces (in folders of the user's own) when
checked. POPVIEW_CACHE_DIR and POPVIEW_CACHE_BESIDE still win (cache/location.py)."""
from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction

from popview.cache import location

KEY = "cache/beside"


def apply_saved(settings: QSettings) -> None:
    location.prefer_beside(settings.value(KEY, False, type=bool))


class CacheBesideAction(QAction):
    """The File menu's check box; a method (not a lambda) so Qt disconnects it with the action."""

    def __init__(self, settings: QSettings, parent):
        super().__init__("Keep caches beside the traces", parent)
        self.settings = settings
        self.setCheckable(True)
        self.setToolTip("Convert into a cache beside each trace (in folders you own) instead of "
                        "the user cache directory")
        apply_saved(settings)
        self.setChecked(location.beside_wanted())
        self.toggled.connect(self._toggled)

    def _toggled(self, on: bool) -> None:
        self.settings.setValue(KEY, on)
        location.prefer_beside(on)
