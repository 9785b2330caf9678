"""Annotations on call paths and locations show as markers in the trees."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt

from popview.gui import mainwindow
from popview.gui.annotations import annotate
from popview.gui.mainwindow import MainWindow
from popview.gui.session_binding import binding_for
from popview.gui.state import AppState
from tests.gui.session_helpers import no_dialogs, wait_open
from tests.paraver.prvtext import write_trace

TREES = [s for s in mainwindow.PANES if s.title in ("Metrics", "Call tree", "System tree")]


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))


def _names(model):
    out = {}
    pending = [model.index(r, 0) for r in range(model.rowCount())]
    while pending:
        idx = pending.pop()
        out[model.node_of(idx)] = (idx.data(Qt.ItemDataRole.DisplayRole), idx.data(Qt.ItemDataRole.ToolTipRole))
        pending += [model.index(r, 0, idx) for r in range(model.rowCount(idx))]
    return out


def test_call_path_and_location_notes_are_marked(qtbot, tmp_path, cache_dir):
    state = AppState()
    binding = binding_for(state)
    window = MainWindow(state=state, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        cache_dir=cache_dir, panes=TREES)
    qtbot.addWidget(window)
    no_dialogs(binding)
    binding.attach(window, autosave_ms=3_600_000, offer_recovery=False)
    window.open_paths([write_trace(tmp_path / "runs")])
    wait_open(qtbot, window, 1)
    calls, system = window.panes["Call tree"], window.panes["System tree"]
    cp = calls.pv.profile.find("main_loop")
    annotate(state, "callpath", values={"text": "hot loop"}, callpath=cp)
    annotate(state, "location", values={"text": "late rank"}, location=1)

    names = _names(calls.model)
    assert names[cp][0].endswith("\u270e") and "hot loop" in names[cp][1]
    assert not any(text.endswith("\u270e") for n, (text, _) in names.items() if n != cp)
    node = system.model.layout.first_location + 1
    sys_names = _names(system.model)
    assert sys_names[node][0].endswith("\u270e") and "late rank" in sys_names[node][1]
    assert sum(text.endswith("\u270e") for text, _ in sys_names.values()) == 1
