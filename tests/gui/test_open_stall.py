"""Opening a run stalls the GUI thread no more than the panes on show need: the Advisor's tree
is opened once to the room its warnings leave it (it was opened whole, folded to its room, and
folded again once the warnings took their line: 57 ms of the GUI thread on the 143 MB e10
trace), and a pane behind another's tab (the Histograms in the Overview) computes nothing
until it shows (its table was built and laid out at every opening: 30 ms more)."""
from __future__ import annotations

import pytest

import popview
from popview.gui.advisor import AdvisorPane
from popview.gui.histograms import HistogramPane
from popview.testing.synthetic import Shape, write
from tests.gui.panes import pane_alone
from tests.gui.test_advisor_pane import stub  # noqa: F401 - fixture: small trees, one with a warning

pytestmark = pytest.mark.gui


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("stall") / "mpi.prv"
    write(path, Shape(processes=2, threads=1, iterations=2))
    return path


def count_openings(monkeypatch, pane, calls: list) -> None:
    """Record each call that opens or folds a whole tree of `pane` (the costly walks of every row)."""
    from PySide6.QtWidgets import QTreeView

    for name in ("expandAll", "collapseAll", "expandToDepth"):
        method = getattr(QTreeView, name)

        def counted(tree, *args, _m=method, _n=name):
            if pane.isAncestorOf(tree):
                calls.append(_n)
            return _m(tree, *args)
        monkeypatch.setattr(QTreeView, name, counted)


@pytest.mark.parametrize("height", (900, 170), ids=("tall", "low"))
def test_the_advisor_tree_is_opened_once_when_its_figures_arrive(qtbot, trace, cache_dir, stub, height,
                                                                monkeypatch):
    state, pane = pane_alone(qtbot, AdvisorPane, (900, height))
    qtbot.waitExposed(pane)
    exp = popview.open(trace, cache_dir=cache_dir)
    with exp:
        calls: list[str] = []
        count_openings(monkeypatch, pane, calls)
        state.add_experiment(exp)
        qtbot.waitUntil(lambda: pane.current_tab().model.rowCount() > 0, timeout=30_000)
        qtbot.waitUntil(lambda: pane.warnings.isVisible(), timeout=5000)
        qtbot.wait(100)                               # the warnings' line laid out: no second opening
        opened = [c for c in calls if c != "collapseAll"]
        assert len(opened) == 1, calls
        pane.runner.wait()



def _pane_counting_loads(qtbot, monkeypatch, module, pane_class, size):
    """A pane of `module` made alone, and the runs whose values it reads (its profile_values),
    in order, from now on."""
    loads = []
    real = module.profile_values
    monkeypatch.setattr(module, "profile_values", lambda exp: (loads.append(exp), real(exp))[1])
    state, pane = pane_alone(qtbot, pane_class)
    pane.resize(*size)
    loads.clear()
    return state, pane, loads

def test_a_hidden_histograms_pane_computes_once_it_shows(qtbot, trace, cache_dir):
    state, pane = pane_alone(qtbot, HistogramPane)          # not shown: behind another tab
    pane.resize(600, 300)
    exp = popview.open(trace, cache_dir=cache_dir)
    with exp:
        asked = []
        submit = pane.lane.submit
        pane.lane.submit = lambda *a, **k: (asked.append(1), submit(*a, **k))[1]
        state.add_experiment(exp)                     # behind another tab: not shown
        qtbot.wait(300)
        assert not asked and pane.table is None
        pane.show()
        qtbot.waitUntil(lambda: pane.table is not None, timeout=30_000)
        assert len(asked) == 1
        pane.hide()
        state.set_focus(state.focus)                  # nothing new while hidden again
        pane.lane.wait()


def test_a_hidden_topology_pane_places_the_run_once_it_shows_or_is_asked(qtbot, trace, cache_dir, monkeypatch):
    """Behind the System tree's tab in the Overview it placed and coloured every location of the
    run at its opening (50 ms of the GUI thread's on e10)."""
    from popview.gui import topology
    from popview.gui.topology import TopologyPane

    state, pane, loads = _pane_counting_loads(qtbot, monkeypatch, topology, TopologyPane, (500, 300))
    exp = popview.open(trace, cache_dir=cache_dir)
    with exp:
        state.add_experiment(exp)
        qtbot.wait(50)
        assert not loads and pane.canvas.placement is None
        pane.show()
        qtbot.waitUntil(lambda: pane.canvas.placement is not None, timeout=5000)
        assert loads == [exp]
        pane.hide()
        state.set_current(None)
        assert pane.topology() is None and len(loads) == 2       # asked: brought up to date at once


def test_in_the_window_the_panes_behind_a_tab_wait_for_their_tab(qtbot, tmp_path, trace, cache_dir):
    """A dock tabbed behind another is still 'visible' to Qt (moved out of sight): the Histograms
    and the Topology filled themselves behind the Advisor's and the System tree's tabs."""
    from tests.gui import gallery

    window = gallery.open_window(qtbot, tmp_path, cache_dir, [trace], 1, (1500, 920))
    hist, topo, dist = window.panes["Histograms"], window.panes["Topology"], window.panes["Distribution"]
    qtbot.wait(300)
    assert not gallery.showing(hist) and not gallery.showing(topo) and not gallery.showing(dist)
    assert hist.table is None and topo.canvas.placement is None
    assert dist.pv is None and dist.summary is None       # its values and box plot wait too (~5 ms)
    window.docks["Histograms"].raise_()
    window.docks["Topology"].raise_()
    qtbot.waitUntil(lambda: hist.table is not None and topo.canvas.placement is not None, timeout=30_000)
    assert dist.summary is None
    window.docks["Distribution"].raise_()
    qtbot.waitUntil(lambda: dist.summary is not None, timeout=5000)
    hist.lane.wait()


def test_a_hidden_distribution_pane_computes_once_it_shows(qtbot, trace, cache_dir, monkeypatch):
    """Behind the System tree's tab it read the run's values per location, summarised and drew
    them at every opening and at every metric or call path chosen."""
    from popview.gui import distribution
    from popview.gui.distribution import DistributionPane

    state, pane, loads = _pane_counting_loads(qtbot, monkeypatch, distribution, DistributionPane, (400, 300))
    exp = popview.open(trace, cache_dir=cache_dir)
    with exp:
        state.add_experiment(exp)
        state.select_metric("time")
        qtbot.wait(50)
        assert not loads and pane.summary is None
        pane.show()
        qtbot.waitUntil(lambda: pane.summary is not None, timeout=5000)
        assert loads == [exp]
        pane.hide()
        state.select_metric("visits")                 # nothing while hidden, then asked: done at once
        assert pane.unit != "occ"
        pane.bring_up_to_date()
        assert pane.unit == "occ" and len(loads) == 1
