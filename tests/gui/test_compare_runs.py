"""File > Compare runs: the difference, mean or merge of picked runs, computed in the
background and opened as an experiment; its Advisor shows what the algebra keeps
meaningful; the session brings it back."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from popview.analysis import algebra_meaning
from popview.analysis.metrics import metrics
from popview.gui.mainwindow import Area, MainWindow, PaneSpec
from popview.gui.session_binding import binding_for, open_session
from popview.gui.state import AppState
from popview.testing.synthetic import Shape, write
from tests.gui.session_helpers import no_dialogs

PANES = [PaneSpec("popview.gui.experiments", "ExperimentsPane", "Experiments", Area.LeftDockWidgetArea),
         PaneSpec("popview.gui.bookmarks", "BookmarksPane", "Bookmarks", Area.LeftDockWidgetArea),
         PaneSpec("popview.gui.advisor", "AdvisorPane", "Advisor", Area.BottomDockWidgetArea)]


def make_window(qtbot, tmp_path, cache_dir, panes=PANES):
    state = AppState()
    binding = binding_for(state)
    no_dialogs(binding)
    window = MainWindow(state=state, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        cache_dir=cache_dir, panes=panes)
    qtbot.addWidget(window)
    binding.attach(window, autosave_ms=3_600_000, offer_recovery=False)
    return window, binding


def wait_runs(qtbot, window, n):
    qtbot.waitUntil(lambda: len(window.state.experiments) == n and not window.jobs, timeout=60000)


def by_name(window, name):
    return next(e for e in window.state.experiments if e.name == name)


def shown(advisor) -> dict:
    return {n.id: n for r in advisor.current_tab().model.roots() for _, n in r.walk()}


def test_the_difference_opens_as_a_run_whose_advisor_shows_differences(qtbot, tmp_path, cache_dir, monkeypatch):
    window, binding, a, b = _picked_pair(qtbot, tmp_path, cache_dir, monkeypatch)
    assert window.compare_runs.picked() == [a, b]                  # the current run is A
    assert window.compare_runs.menu.menuAction() in window.menus["File"].actions()
    window.compare_runs.actions["difference"].trigger()
    wait_runs(qtbot, window, 3)
    result = window.state.current
    assert result not in (a, b) and algebra_meaning.algebra_info(result)["operation"] == "difference"
    assert result.source.parent == cache_dir / "results"
    advisor = window.panes["Advisor"]
    qtbot.waitUntil(lambda: advisor.current_tab() is not None and bool(advisor.current_tab().model.roots()), timeout=30000)
    model = advisor.current_tab().variant.models[0]
    expected_a = metrics(a, model, reference=b)
    expected_b = metrics(b, model)
    nodes = shown(advisor)
    checked = 0
    for node_id, node in nodes.items():
        assert node.kind == "difference"
        va, vb = expected_a.value(node_id), expected_b.value(node_id)
        if va is not None and vb is not None:
            assert node.value == pytest.approx(va - vb, abs=1e-12), node_id
            checked += 1
    assert checked >= 3
    lb = nodes["load_balance"] if "load_balance" in nodes else nodes["process_load_balance"]
    assert lb.value > 0                                   # the balanced run is the better one
    text = advisor.current_tab().model.data(advisor.current_tab().model.index(0, 1))
    assert text.endswith("pp") and "not efficiencies" in advisor.header.text()
    rating = advisor.current_tab().model.data(advisor.current_tab().model.index(0, 3))
    assert "%" not in text and rating in ("", None)       # a difference is not rated

    # saved in and restored from the session: the result comes back, and still subtracts its runs
    binding.save_to(tmp_path / "study.popview")
    assert window.close()
    window2, _ = make_window(qtbot, tmp_path, cache_dir)
    open_session(window2.state, tmp_path / "study.popview")
    wait_runs(qtbot, window2, 3)
    again = next(e for e in window2.state.experiments if algebra_meaning.algebra_info(e))
    window2.state.set_current(again)
    advisor2 = window2.panes["Advisor"]
    qtbot.waitUntil(lambda: advisor2.current_tab() is not None and bool(advisor2.current_tab().model.roots()),
                    timeout=30000)
    nodes2 = shown(advisor2)
    assert nodes2.keys() == nodes.keys()
    for node_id, node in nodes.items():
        assert nodes2[node_id].value == node.value, node_id
    assert again.__dict__["_algebra_sources"][0] == [by_name(window2, "fast"), by_name(window2, "slow")]


def test_mean_and_merge_open_as_runs_with_efficiencies(qtbot, tmp_path, cache_dir, monkeypatch):
    window, _, a, b = _picked_pair(qtbot, tmp_path, cache_dir, monkeypatch)
    window.compare_runs.run("mean")
    wait_runs(qtbot, window, 3)
    mean = window.state.current
    assert algebra_meaning.algebra_info(mean)["operation"] == "mean"
    advisor = window.panes["Advisor"]
    qtbot.waitUntil(lambda: advisor.current_tab() is not None and bool(advisor.current_tab().model.roots()), timeout=30000)
    root = advisor.current_tab().model.roots()[0]
    assert root.kind == "efficiency" and 0 < root.value <= 1
    assert "mean of 2 runs" in advisor.header.text()
    window.compare_runs.run("merge", [a, b])
    wait_runs(qtbot, window, 4)
    assert algebra_meaning.algebra_info(window.state.current)["operation"] == "merge"


def test_a_difference_needs_two_picked_runs(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    fast, slow = _pair(tmp_path)
    window, _ = make_window(qtbot, tmp_path, cache_dir)
    window.open_paths([fast])
    wait_runs(qtbot, window, 1)
    window.compare_runs.menu.aboutToShow.emit()
    assert not window.compare_runs.actions["difference"].isEnabled()
    window.compare_runs.run("difference")
    assert "pick two runs" in window.compare_runs.errors[-1]
    assert len(window.state.experiments) == 1


def _picked_pair(qtbot, tmp_path, cache_dir, monkeypatch, current="fast"):
    """A window with the fast and the slow run open, `current` the current run (A), both picked."""
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    fast, slow = _pair(tmp_path)
    window, binding = make_window(qtbot, tmp_path, cache_dir)
    window.open_paths([fast, slow])
    wait_runs(qtbot, window, 2)
    a, b = by_name(window, "fast"), by_name(window, "slow")
    window.state.set_current(by_name(window, current))
    window.panes["Experiments"].pick([a, b])
    return window, binding, a, b


def _pair(tmp_path):
    slow, fast = tmp_path / "runs" / "slow.prv", tmp_path / "runs" / "fast.prv"
    slow.parent.mkdir(exist_ok=True)
    write(slow, Shape(processes=2, iterations=4, work_ns=2_000_000, rank_weights=(1.0, 1.6)))
    write(fast, Shape(processes=2, iterations=4, work_ns=1_000_000))
    return fast, slow


def test_side_by_side_opens_the_compare_view_of_the_picked_runs(qtbot, tmp_path, cache_dir, monkeypatch):
    window, _, a, b = _picked_pair(qtbot, tmp_path, cache_dir, monkeypatch, current="slow")
    window.compare_runs.actions["side"].trigger()
    view, = window.compare_runs.views
    assert (view.a, view.b) == (b, a) and view.isVisible()            # the current run is A
    assert "compare slow (A) with fast (B)" in view.windowTitle()
    assert view.isWindow() and view.parent() is window                 # closed with the main window
    view.close()
    qtbot.waitUntil(lambda: not window.compare_runs.views, timeout=5000)
    window.compare_runs.side_by_side([a, b])
    window.state.remove_experiment(b)                                  # its data are closed: so is the view
    qtbot.waitUntil(lambda: not window.compare_runs.views, timeout=5000)


def test_runs_of_different_shapes_are_refused_then_combined_per_process(qtbot, tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("POPVIEW_STATE_DIR", str(tmp_path / "state"))
    narrow, wide = tmp_path / "runs" / "narrow.prv", tmp_path / "runs" / "wide.prv"
    narrow.parent.mkdir()
    write(narrow, Shape(processes=2, iterations=3, work_ns=1_000_000))
    write(wide, Shape(processes=2, threads=2, iterations=3, work_ns=1_000_000))
    window, _ = make_window(qtbot, tmp_path, cache_dir)
    window.open_paths([narrow, wide])
    wait_runs(qtbot, window, 2)
    a, b = by_name(window, "wide"), by_name(window, "narrow")
    window.state.set_current(a)
    window.panes["Experiments"].pick([a, b])
    window.compare_runs.run("mean")
    said = window.compare_runs.errors[-1]
    assert "different numbers of locations" in said and "Runs of different shapes" in said
    assert "unexpected" not in said
    assert len(window.state.experiments) == 2
    choice = next(act for act in window.compare_runs.collapse_group.actions() if "per process" in act.text())
    choice.trigger()
    window.compare_runs.run("mean")
    wait_runs(qtbot, window, 3)
    info = algebra_meaning.algebra_info(window.state.current)
    assert info["operation"] == "mean" and info["collapse"] == "process"
