"""Asking where to save a Paraver cfg."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

CFG_SUFFIX = ".cfg"


def ask_cfg_path(parent, title: str, suggested: str) -> Path | None:
    """A save dialog for a Paraver cfg; the chosen path with .cfg added when it lacks it, or None."""
    path, _ = QFileDialog.getSaveFileName(parent, title, suggested, "Paraver configuration files (*.cfg)")
    if not path:
        return None
    return Path(path if path.lower().endswith(CFG_SUFFIX) else path + CFG_SUFFIX)


def save_or_reason(build, path) -> str | None:
    """Write the cfg `build()` gives at `path`; None, or in one line why it was not saved."""
    from popview.analysis.cfg import CfgError
    from popview.analysis.cfg.export import NotExportable
    from popview.analysis.cfg.writer import save_cfg
    from popview.failures import one_line

    try:
        save_cfg(build(), Path(path))
    except (CfgError, NotExportable, OSError, ValueError) as exc:
        return one_line(exc)
    return None
