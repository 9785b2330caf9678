"""The Advisor pane as a view: given result trees, what it shows and what
it does (stub trees here; tests/gui/test_advisor_values.py checks the real
engine's numbers end to end)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

import popview
from popview.analysis.focus import Focus
from popview.analysis.node import MetricNode as Node
from popview.analysis.node import MetricTree
from popview.analysis.report.candidates import Candidate
from popview.experiment import Experiment
from popview.gui.advisor import AdvisorPane
from popview.gui.advisor.model import BAR, NAME, RATING, VALUE, NodeRole
from popview.gui.state import AppState
from popview.testing.synthetic import Shape, write

pytestmark = pytest.mark.gui


class StubEngine:
    """Answers exp.metrics(model, focus) with a small tree that depends on the focus."""

    def __init__(self):
        self.calls = []

    def __call__(self, exp, model, focus, **_kw):
        self.calls.append((model, focus))
        lb = 0.5 if focus.kind == "callpath" else 0.9
        root = Node("parallel_efficiency", "Parallel efficiency", value=lb * 0.95, children=[
            Node("load_balance", "Load balance", value=lb, description="How evenly the work is spread.",
                 formula="avg(useful) / max(useful)", inputs={"useful_avg": 1.5, "useful_max": 2.0},
                 min=0.4, avg=0.6, max=0.9),
            Node("communication_efficiency", "Communication efficiency", value=0.95, children=[
                Node("serialisation_efficiency", "Serialisation efficiency", value=None,
                     reason="needs message records (trace with MPI point-to-point events)"),
                Node("transfer_efficiency", "Transfer efficiency", value=1.04)]),
            Node("computation_scalability", "Computation scalability", value=1.3, kind="scalability",
                 warnings=["12.0 % of the time is file I/O"] if model == "pop-mpi" else []),
        ])
        notes = ["scalabilities are against this run itself"]
        return MetricTree(model, model, exp.name, focus.label(), [root], notes)


@pytest.fixture
def stub(monkeypatch):
    engine = StubEngine()
    monkeypatch.setattr(Experiment, "metrics", lambda self, model, focus, **kw: engine(self, model, focus, **kw),
                        raising=False)
    return engine


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("advisor")
    write(d / "mpi.prv", Shape(processes=2, threads=1, iterations=2))
    write(d / "hybrid.prv", Shape(processes=2, threads=2, iterations=2, serial_fraction=0.1))
    return d


def _pane(qtbot, traces, cache_dir, name):
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    exp = popview.open(traces / name, cache_dir=cache_dir)
    state.add_experiment(exp)
    return state, pane, exp


def _rows(pane):
    model = pane.current_tab().model
    out = {}

    def visit(parent):
        for r in range(model.rowCount(parent)):
            idx = model.index(r, 0, parent)
            node = idx.data(NodeRole)
            out[node.id] = idx
            visit(idx)
    visit(model.index(-1, -1))
    return model, out


def test_hybrid_preselects_additive_with_a_note(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "hybrid.prv")
    with exp:
        assert [pane.tabs.tabText(i) for i in range(pane.tabs.count())] == [
            "POP MPI", "Hybrid additive", "Hybrid multiplicative (BSC)", "Critical path", "Computation / I/O"]
        assert pane.current_tab().variant.key == "hybrid-additive"
        assert "OpenMP" in pane.note.text()
        assert stub.calls[-1] == ("hybrid-additive", Focus.whole())


def test_pure_mpi_offers_no_hybrid_tab(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        assert pane.current_tab().variant.key == "pop-mpi"
        assert pane.tab("hybrid-additive") is None and pane.tab("hybrid-multiplicative") is None


def test_rows_form_a_tree_with_values_ratings_and_help(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        model, rows = _rows(pane)
        lb = rows["load_balance"]
        assert lb.parent() == rows["parallel_efficiency"]                   # a real tree
        assert rows["serialisation_efficiency"].parent() == rows["communication_efficiency"]
        assert model.index(lb.row(), VALUE, lb.parent()).data() == "90.0 %"
        assert model.index(lb.row(), RATING, lb.parent()).data() == "Good"
        tip = lb.data(Qt.ToolTipRole)
        for text in ("How evenly", "avg(useful) / max(useful)", "useful_avg", "min 40.0 %", "max 90.0 %"):
            assert text in tip
        cs = rows["computation_scalability"]
        assert model.index(cs.row(), VALUE, cs.parent()).data() == "130.0 %"
        assert model.bar_scale == pytest.approx(1.3)                         # bars run past 100 %
        te = rows["transfer_efficiency"]
        assert model.index(te.row(), RATING, te.parent()).data().startswith("Inconsistent")


def test_not_available_rows_are_grey_and_say_why(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        model, rows = _rows(pane)
        ser = rows["serialisation_efficiency"]
        assert model.index(ser.row(), VALUE, ser.parent()).data() == "n/a"
        rating = model.index(ser.row(), RATING, ser.parent())
        assert "needs message records" in rating.data()
        assert rating.data(Qt.ForegroundRole).color().getRgb()[:3] == (140, 140, 140)
        assert "needs message records" in ser.data(Qt.ToolTipRole)


def test_warnings_above_the_tree(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        text = pane.warnings.text()
        assert not pane.warnings.isHidden()
        assert "Computation scalability: 12.0 % of the time is file I/O" in text
        assert "Transfer efficiency is 104.0 %" in text                     # above 100 %: inconsistent
        assert "against this run itself" in pane.notes.toolTip()           # notes apart from warnings
        assert "against this run itself" not in text


def test_focus_change_recomputes(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        state.set_focus(Focus.on_callpath("main/timestep"))
        model, rows = _rows(pane)
        lb = rows["load_balance"]
        assert model.index(lb.row(), VALUE, lb.parent()).data() == "50.0 %"
        assert stub.calls[-1] == ("pop-mpi", Focus.on_callpath("main/timestep"))
        assert "main/timestep" in pane.header.text()
        state.set_focus(Focus.window(0, 1000))
        assert stub.calls[-1] == ("pop-mpi", Focus.window(0, 1000))
        model, rows = _rows(pane)
        lb = rows["load_balance"]
        assert model.index(lb.row(), VALUE, lb.parent()).data() == "90.0 %"


def test_tab_switch_computes_that_variant_once(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "hybrid.prv")
    with exp:
        pane.select_variant("hybrid-multiplicative")
        pane.select_variant("computation-io")
        assert [m for m, _ in stub.calls] == ["hybrid-additive", "hybrid-multiplicative", "computation", "io"]
        assert len(pane.current_tab().model.roots()) == 2                  # computation and I/O trees
        pane.select_variant("hybrid-additive")
        assert len(stub.calls) == 4                                         # cached


@pytest.mark.answers_later
def test_worker_thread_path_delivers_the_newest_result(qtbot, traces, cache_dir, stub, monkeypatch):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        with qtbot.waitSignal(pane.updated, timeout=10000):
            state.set_focus(Focus.on_callpath("main/timestep"))
        pane.runner.wait(5000)
        qtbot.waitUntil(lambda: pane.current_tab().tree.isEnabled(), timeout=5000)
        model, rows = _rows(pane)
        lb = rows["load_balance"]
        assert model.index(lb.row(), VALUE, lb.parent()).data() == "50.0 %"


def test_candidate_click_selects_and_focuses(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        cp = exp.profile().find("main/timestep")
        pane.candidates.threshold.setValue(0.8)
        with qtbot.waitSignal(state.focusChanged):
            pane.candidates.find_button.click()
            row = [c.path for c in pane.candidates.shown()].index("main/timestep")
            pane.candidates.table.cellClicked.emit(row, 0)
        assert state.callpath == cp
        assert state.focus == Focus.on_callpath("main/timestep")


def test_share_slider_filters_candidates(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        pane.candidates.set_candidates([Candidate(1, "main/a", 0.40, [("Load balance", 0.5)]),
                                        Candidate(2, "main/b", 0.03, [("Load balance", 0.6)])])
        pane.candidates.slider.setValue(5)
        assert pane.candidates.table.rowCount() == 1
        assert pane.candidates.table.item(0, 0).text() == "main/a"
        assert pane.candidates.table.item(0, 2).text() == "Load balance 0.50"
        pane.candidates.slider.setValue(0)
        assert pane.candidates.table.rowCount() == 2


def test_bar_column_paints(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    with exp:
        pane.resize(900, 500)
        pane.show()
        qtbot.waitExposed(pane)
        img = pane.current_tab().tree.viewport().grab().toImage()
        tree = pane.current_tab().tree
        _, rows = _rows(pane)
        rect = tree.visualRect(tree.model().index(rows["load_balance"].row(), BAR, rows["load_balance"].parent()))
        colours = {img.pixelColor(x, rect.center().y()).name() for x in range(rect.left() + 5, rect.right() - 5)}
        assert "#ececec" in colours and len(colours) >= 3                    # fill, mark, background
        assert tree.model().index(0, NAME).data() == "Parallel efficiency"


def test_view_state_round_trip(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "hybrid.prv")
    with exp:
        pane.select_variant("critical-path")
        pane.candidates.slider.setValue(12)
        saved = pane.view_state()
        assert saved == {"variant": "critical-path", "min_share": 12}
        pane.select_variant("pop-mpi")
        pane.candidates.slider.setValue(0)
        pane.restore_view_state(saved)
        assert pane.current_tab().variant.key == "critical-path" and pane.candidates.slider.value() == 12
        pane.restore_view_state({"variant": "no-such-variant", "unknown": 1})
        assert pane.current_tab().variant.key == "critical-path"


def test_candidates_belong_to_the_tab_they_were_found_with(qtbot, traces, cache_dir, stub):
    state, pane, exp = _pane(qtbot, traces, cache_dir, "hybrid.prv")
    with exp:
        pane.select_variant("hybrid-additive")
        pane.candidates.threshold.setValue(0.99)
        pane.candidates.find_button.click()
        qtbot.waitUntil(lambda: bool(pane.candidates.shown()), timeout=20000)
        pane.select_variant("hybrid-multiplicative")
        assert pane.candidates.shown() == [] and pane.candidates.table.rowCount() == 0
        pane.select_variant("hybrid-additive")
        assert pane.candidates.shown()


def test_empty_advisor_says_what_to_do_even_in_a_low_dock(qtbot):
    """First run, nothing open: the Advisor of the Overview layout (about 230 px high, a 'low'
    dock) showed only 'Advisor: whole' over an empty pane; its hint was hidden with the
    variant note of low docks. The other panes say 'No experiment open: drop a trace...'."""
    pane = AdvisorPane(AppState())
    qtbot.addWidget(pane)
    pane.resize(900, 230)
    pane.show()
    qtbot.waitExposed(pane)
    assert pane.note.isVisible() and "Open a trace or profile" in pane.note.text()
    assert "whole" not in pane.header.text()          # no focus to speak of without a run
