"""The current run: the largest run of a series being opened, or the one the user picked;
a trace and a profile of one run are one experiment; sessions keep series names."""
from __future__ import annotations

from pathlib import Path

from popview.gui.advisor.runs import series_runs
from popview.gui.session_binding import open_session
from popview.gui.state import AppState
from tests.gui.session_helpers import bound_window, use_fake_panes, wait_open
from tests.paraver.prvtext import write_trace


class Run:
    def __init__(self, name, procs, source=None, is_trace=True):
        self.name, self.procs, self.is_trace = name, procs, is_trace
        self.source = Path(source or f"/runs/{name}.prv")
        self.label = f"{procs}x1"

    def shape(self):
        return self.procs, 1

    def close(self):
        pass


def test_the_largest_run_of_a_new_series_is_current_whatever_finished_first(qtbot):
    state = AppState()
    runs = [Run("epoch_1proc", 1), Run("epoch_16proc", 16), Run("epoch_4proc", 4)]
    for run in runs:                                   # order in which conversions finished
        state.add_experiment(run, "epoch")
    assert state.current.name == "epoch_16proc"


def test_a_picked_run_stays_current_while_the_series_still_opens(qtbot):
    state = AppState()
    state.add_experiment(Run("epoch_2proc", 2), "epoch")
    state.add_experiment(Run("epoch_4proc", 4), "epoch")
    state.set_current(state.experiments[0])            # the user picks the 2-process run
    state.add_experiment(Run("epoch_16proc", 16), "epoch")
    assert state.current.name == "epoch_2proc"


def test_a_new_series_takes_over_from_the_previous_one(qtbot):
    state = AppState()
    state.add_experiment(Run("omp8", 8), "imagemagick")
    state.add_experiment(Run("epoch_1proc", 1), "epoch")
    state.add_experiment(Run("epoch_8proc", 8), "epoch")
    assert state.current.name == "epoch_8proc"


def test_a_trace_and_the_profile_of_the_same_run_are_not_a_series(qtbot):
    state = AppState()
    trace = Run("hyb_2x2", 4, "/scorep/hyb_2x2/traces.otf2")
    profile = Run("hyb_2x2", 4, "/scorep/hyb_2x2/profile.cubex", is_trace=False)
    state.add_experiment(trace)
    state.add_experiment(profile)
    assert series_runs(state) == [trace]
    state.set_current(profile)
    assert series_runs(state) == [profile]


def test_reopening_a_session_keeps_the_series_name(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    use_fake_panes(monkeypatch)
    folder = tmp_path / "epoch"
    write_trace(folder, name="epoch_1proc")
    write_trace(folder, name="epoch_2proc")
    window, binding = bound_window(qtbot, tmp_path, cache_dir)
    window.open_paths([folder])
    wait_open(qtbot, window, 2)
    assert set(window.state.series.values()) == {"epoch"}
    binding.ask_save_path = lambda: tmp_path / "study"
    assert binding.save_as()
    assert window.close()

    window2, _ = bound_window(qtbot, tmp_path, cache_dir)
    open_session(window2.state, tmp_path / "study.popview")
    wait_open(qtbot, window2, 2)
    qtbot.waitUntil(lambda: set(window2.state.series.values()) == {"epoch"}, timeout=5000)


def test_a_trace_and_its_profile_are_listed_as_two_views_of_one_run(qtbot):
    from popview.gui.experiments import ExperimentsPane

    state = AppState()
    pane = ExperimentsPane(state)
    qtbot.addWidget(pane)
    state.add_experiment(Run("hyb_2x2", 4, "/scorep/hyb_2x2/traces.otf2"))
    state.add_experiment(Run("hyb_2x2", 4, "/scorep/hyb_2x2/profile.cubex", is_trace=False))
    state.add_experiment(Run("other", 2, "/elsewhere/other.prv"))
    top = [pane.tree.topLevelItem(i) for i in range(pane.tree.topLevelItemCount())]
    assert sorted(t.text(0) for t in top) == ["hyb_2x2", "other"]
    run = next(t for t in top if t.text(0) == "hyb_2x2")
    assert sorted(run.child(i).text(0) for i in range(run.childCount())) == ["profile", "trace"]
    assert run.text(4) == "trace + profile"
    assert next(t for t in top if t.text(0) == "other").childCount() == 0


def test_a_narrow_experiments_pane_shows_each_runs_shape_and_duration_whole(qtbot):
    """The Overview's 300 px Experiments pane cut an OTF2 run's duration to "4.974" (its unit past the
    edge, behind the Format column): shape and duration come right after the name."""
    from PySide6.QtCore import QSize

    from popview.gui.experiments import COLUMNS, ExperimentsPane

    state = AppState()
    pane = ExperimentsPane(state)
    qtbot.addWidget(pane)
    pane.resize(QSize(300, 200))
    pane.show()
    run = Run("hyb_2x2", 4, "/scorep/hyb_2x2/traces.otf2")
    run.info = lambda: {"format": "otf2", "processes": 2, "threads_per_process": 2, "duration_ns": 4_974_000_000,
                        "paradigms": ["MPI", "OpenMP"]}
    state.add_experiment(run)
    qtbot.waitExposed(pane)
    item = pane.tree.topLevelItem(0)
    duration = COLUMNS.index("Duration")
    assert item.text(duration) == "4.974 s" and item.text(COLUMNS.index("Procs x threads")) == "2 x 2"
    header = pane.tree.header()
    assert header.sectionViewportPosition(duration) + header.sectionSize(duration) <= pane.tree.viewport().width()
