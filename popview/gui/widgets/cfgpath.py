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


_saving: set = set()        # lanes of saves under way (kept until they answer)


def save_in_background(parent, build, path, report) -> str | None:
    """save_or_reason(build, path) on a background lane (building a cfg reads the trace: the
    event types present, a pass over all its events, seconds on a large trace), then
    report(reason) in the GUI thread. Returns the reason when the answer is already back
    (a lane answering at once, as in the tests), else None: the report says how it went."""
    from popview.gui.jobs import ANALYSIS, Lane

    answer: dict = {}
    lane = Lane(parent, f"saving {Path(path).name}", ANALYSIS)
    _saving.add(lane)

    def done(reason, error) -> None:
        _saving.discard(lane)
        answer["reason"] = error.strip().splitlines()[-1] if error else reason
        report(answer["reason"])

    lane.submit(lambda: save_or_reason(build, path), done)
    return answer.get("reason")
