"""The timeline's window and colour mode survive sessions and bookmarks."""
import popview
from popview.analysis.timeline_data import ColourMode
from popview.gui.state import AppState
from popview.gui.timeline import TimelinePane
from tests.paraver.prvtext import write_trace


def test_view_state_round_trip(qtbot, tmp_path):
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    exp = popview.open(write_trace(tmp_path / "t"), cache_dir=tmp_path / "c")
    state.add_experiment(exp)
    pane.set_mode(ColourMode("mpi", label="MPI call"))
    pane.view.set_window(100, 400)
    saved = pane.view_state()
    assert saved["window"] == [100, 400] and saved["mode"]["kind"] == "mpi"

    pane.set_mode(ColourMode("state", label="State"))
    pane.view.set_window(0, 1000)
    pane.restore_view_state(saved)
    assert pane.view.mode.kind == "mpi"
    assert list(pane.view.window()) == [100, 400]


def test_restore_before_any_trace_waits_for_one(qtbot, tmp_path):
    state = AppState()
    pane = TimelinePane(state)
    qtbot.addWidget(pane)
    pane.restore_view_state({"window": [200, 300], "mode": {"kind": "state", "param": 0}})
    state.add_experiment(popview.open(write_trace(tmp_path / "t"), cache_dir=tmp_path / "c"))
    assert list(pane.view.window()) == [200, 300]
