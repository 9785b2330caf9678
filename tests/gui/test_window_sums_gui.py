"""The Advisor on a cache converted by the CLI, which has no window sums
(popview.cache.window_sums): they are built on a lane of their own, never in the GUI
thread, with their progress in the tab, and the window and iteration foci then show the
same figures as the API computes."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import popview
from popview.analysis.focus import Focus
from popview.cache import window_sums
from popview.gui.advisor import AdvisorPane
from popview.gui.advisor.model import NodeRole
from popview.gui.state import AppState
from popview.testing.synthetic import Shape, write
from popview.testing.faults import full_disk_build
from tests.gui.held_builds import hold_builds

pytestmark = pytest.mark.gui

SHAPE = Shape(processes=2, threads=2, iterations=4, serial_fraction=0.1, rank_weights=(1.0, 1.6),
              parallel_regions=2, init_ns=200_000, fini_ns=100_000, fork_ns=1000)


def whole_run_shown(qtbot, pane) -> None:
    """POP MPI chosen, and the whole run's figures on show."""
    pane.select_variant("pop-mpi")
    qtbot.waitUntil(lambda: not pane.runner.busy and "parallel_efficiency" in shown(pane), timeout=60000)


def window_of_three_iterations() -> Focus:
    return Focus.window(SHAPE.init_ns, SHAPE.init_ns + 3 * 2_000_000)


def shown(pane) -> dict:
    model = pane.current_tab().model
    out = {}

    def visit(parent):
        for r in range(model.rowCount(parent)):
            idx = model.index(r, 0, parent)
            out[idx.data(NodeRole).id] = idx.data(NodeRole).value
            visit(idx)
    visit(model.index(-1, -1))
    return out


@pytest.mark.answers_later
def test_a_window_focus_on_a_cli_converted_cache(qtbot, tmp_path, monkeypatch):
    write(tmp_path / "h.prv", SHAPE)
    subprocess.run([sys.executable, "-m", "popview", "convert", "--cache-dir", str(tmp_path / "c"),
                    str(tmp_path / "h.prv")], check=True, capture_output=True,
                   env={**os.environ, "POPVIEW_PRECOMPILE": "0"})
    threads = []
    build = window_sums.build
    monkeypatch.setattr(window_sums, "build", lambda *a: threads.append(threading.current_thread()) or build(*a))
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    with popview.open(tmp_path / "h.prv", cache_dir=tmp_path / "c") as exp:
        assert not exp.converted and not exp.window_sums_prepared
        state.add_experiment(exp)
        whole_run_shown(qtbot, pane)
        assert not exp.window_sums_prepared and not threads, "the whole run (its replay too) needs no window sums"
        state.set_focus(focus := window_of_three_iterations())
        assert "window sums" in pane.current_tab().message.text() or exp.window_sums_prepared
        qtbot.waitUntil(lambda: exp.window_sums_prepared and not pane.runner.busy and
                        "parallel_efficiency" in shown(pane), timeout=60000)
        assert threads and threading.main_thread() not in threads, "built off the GUI thread"
        assert window_sums.path_of(exp.cache_path).exists()
        want = {n.id: n.value for n in exp.metrics("pop-mpi", focus).nodes()}
        got = shown(pane)
        assert got["parallel_efficiency"] == pytest.approx(want["parallel_efficiency"], rel=1e-12)
        assert got["load_balance"] == pytest.approx(want["load_balance"], rel=1e-12)
        state.set_focus(Focus("iterations", callpath="main/timestep", first=1, last=2))
        qtbot.waitUntil(lambda: not pane.runner.busy and "iterations" in pane.header.text(), timeout=60000)
        assert "parallel_efficiency" in shown(pane)


@pytest.mark.answers_later
def test_the_sums_build_shows_progress_and_a_cancel_that_leaves_nothing(qtbot, tmp_path, monkeypatch):
    """The window sums' build shows the status bar's progress entry (JobProgress: a bar and
    Cancel) above the tabs; Cancel stops it and leaves no file beside the cache; the tab says
    the figures are not computed because it was cancelled; choosing the focus again builds
    them and shows the API's figures."""
    from popview.gui.widgets.progress import JobProgress

    write(tmp_path / "h.prv", SHAPE)
    cache_dir = tmp_path / "c"
    subprocess.run([sys.executable, "-m", "popview", "convert", "--cache-dir", str(cache_dir),
                    str(tmp_path / "h.prv")], check=True, capture_output=True,
                   env={**os.environ, "POPVIEW_PRECOMPILE": "0"})
    before = sorted(p.name for p in cache_dir.iterdir())
    started, gate, cancelled = hold_builds(monkeypatch, window_sums, 0.25, "summing")
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    pane.show()
    with popview.open(tmp_path / "h.prv", cache_dir=cache_dir) as exp:
        state.add_experiment(exp)
        whole_run_shown(qtbot, pane)
        state.set_focus(focus := window_of_three_iterations())
        qtbot.waitUntil(lambda: bool(started), timeout=60000)
        (entry,) = pane.findChildren(JobProgress)
        assert entry.isVisible() and entry.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: entry.bar.value() >= 25, timeout=60000)
        entry.cancel_button.click()
        qtbot.waitUntil(lambda: not pane._sums_builds, timeout=60000)
        assert cancelled and started == [False]
        text = pane.current_tab().message.text()
        assert "Not computed" in text and "cancelled" in text and shown(pane) == {}
        assert not [w for w in pane.findChildren(JobProgress) if w.isVisible()], "the entry goes with its build"
        assert sorted(p.name for p in cache_dir.iterdir()) == before, "no sums, scratch or lock left"
        assert not exp.window_sums_prepared
        gate.set()
        state.set_focus(Focus("iterations", callpath="main/timestep", first=1, last=2))   # asked again
        state.set_focus(focus)
        qtbot.waitUntil(lambda: exp.window_sums_prepared and not pane.runner.busy and
                        "parallel_efficiency" in shown(pane), timeout=60000)
        want = {n.id: n.value for n in exp.metrics("pop-mpi", focus).nodes()}
        assert shown(pane)["parallel_efficiency"] == pytest.approx(want["parallel_efficiency"], rel=1e-12)


@pytest.mark.answers_later
def test_a_sums_build_that_cannot_write_says_why_and_is_not_tried_again(qtbot, tmp_path, monkeypatch):
    """No room for the window sums (the cache's folder and the temporary one full): the tab
    says the figures are not computed because the window sums could not be built, naming
    the file and "No space left on device"; nothing builds them again until the focus is
    chosen again, which tries again (room made: the figures)."""

    write(tmp_path / "h.prv", SHAPE)
    cache_dir = tmp_path / "c"
    subprocess.run([sys.executable, "-m", "popview", "convert", "--cache-dir", str(cache_dir),
                    str(tmp_path / "h.prv")], check=True, capture_output=True,
                   env={**os.environ, "POPVIEW_PRECOMPILE": "0"})
    calls = []
    build = window_sums.build
    monkeypatch.setattr(window_sums, "build", full_disk_build(calls))
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    with popview.open(tmp_path / "h.prv", cache_dir=cache_dir) as exp:
        state.add_experiment(exp)
        whole_run_shown(qtbot, pane)
        state.set_focus(focus := window_of_three_iterations())
        qtbot.waitUntil(lambda: "could not be built" in pane.current_tab().message.text(), timeout=60000)
        text = pane.current_tab().message.text()
        assert "Not computed" in text and "No space left on device" in text, text
        assert str(window_sums.path_of(exp.cache_path)) in text and shown(pane) == {}
        qtbot.wait(300)
        assert len(calls) == 2 and not pane._sums_builds, "the folder, then a private file; not again"
        assert sorted(p.name for p in cache_dir.iterdir()) == [exp.cache_path.name]
        monkeypatch.setattr(window_sums, "build", build)            # room again
        state.set_focus(Focus("iterations", callpath="main/timestep", first=1, last=2))   # asked again
        state.set_focus(focus)
        qtbot.waitUntil(lambda: exp.window_sums_prepared and not pane.runner.busy and
                        "parallel_efficiency" in shown(pane), timeout=60000)


def test_a_closed_runs_failed_or_cancelled_sums_are_forgotten(qtbot, tmp_path):
    """What the pane keeps of a run by its id (window sums that could not be built, a cancelled
    build, its candidates) goes with the run: a run opened later at the same address (Python
    reuses ids) was told "could not be built" with the closed run's reason, never tried."""
    write(tmp_path / "h.prv", SHAPE)
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    kept, gone = popview.open(tmp_path / "h.prv", cache_dir=tmp_path / "c"), \
        popview.open(tmp_path / "h.prv", cache_dir=tmp_path / "c")
    state.add_experiment(kept)
    state.add_experiment(gone)
    for exp in (kept, gone):
        pane._sums_failed[id(exp)] = "No space left on device"
        pane._sums_cancelled.add(id(exp))
        pane._candidate_results[(id(exp), "pop-mpi")] = []
    state.remove_experiment(gone)
    assert list(pane._sums_failed) == [id(kept)] and pane._sums_cancelled == {id(kept)}
    assert list(pane._candidate_results) == [(id(kept), "pop-mpi")]
    state.remove_experiment(kept)
    assert not pane._sums_failed and not pane._sums_cancelled and not pane._candidate_results
