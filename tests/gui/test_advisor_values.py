"""The Advisor on a synthetic MPI + OpenMP run whose figures are known in
closed form (popview.testing.synthetic.Expected): each variant tab shows
them exactly, they follow the focus (call path, window), missing inputs
are greyed with their reason, and a candidate click moves the focus."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

import popview
from popview.analysis.focus import Focus
from popview.gui.advisor import AdvisorPane
from popview.gui.advisor.model import RATING, VALUE, NodeRole
from popview.gui.state import AppState
from popview.testing.synthetic import Shape, write

pytestmark = pytest.mark.gui

SHAPE = Shape(processes=2, threads=2, iterations=4, serial_fraction=0.1, rank_weights=(1.0, 1.6),
              thread_weights=(1.0, 1.3), parallel_regions=2, init_ns=200_000, fini_ns=100_000, fork_ns=1000)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("advisor_values")
    expected = write(d / "hybrid.prv", SHAPE)
    nocount = write(d / "nocounters.prv", Shape(processes=2, threads=1, iterations=2, counters=False))
    return d, expected, nocount


@pytest.fixture
def advisor(qtbot, run):
    d, expected, _ = run
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    exp = popview.open(d / "hybrid.prv", cache_dir=d / "cache")
    state.add_experiment(exp)
    yield state, pane, exp, expected
    exp.close()


def shown(pane) -> dict:
    """metric id -> (node, value text, rating text) of the tab on show."""
    model = pane.current_tab().model
    out = {}

    def visit(parent):
        for r in range(model.rowCount(parent)):
            idx = model.index(r, 0, parent)
            out[idx.data(NodeRole).id] = (idx.data(NodeRole), model.index(r, VALUE, parent).data(),
                                          model.index(r, RATING, parent))
            visit(idx)
    visit(model.index(-1, -1))
    return out


def check(pane, key: str, want: dict) -> None:
    pane.select_variant(key)
    rows = shown(pane)
    for metric, value in want.items():
        node, text, _ = rows[metric]
        assert node.value == pytest.approx(value, rel=1e-12), metric
        if node.kind in ("efficiency", "scalability"):
            assert text == f"{value * 100:.1f} %", metric


def whole_figures(ex) -> dict:
    R, u = ex.runtime_ns, ex.useful_ns.astype(float)
    T, P = SHAPE.processes * SHAPE.threads, SHAPE.processes
    t_p = np.full(P, SHAPE.threads)
    avg_omp = (t_p * ex.openmp_ns).sum() / T
    avg_ser = (t_p * ex.serial_useful_ns).sum() / T
    team_max = u.reshape(P, SHAPE.threads).max(axis=1)
    outside = ex.outside_mpi_ns.astype(float)
    return {
        "pop-mpi": {"parallel_efficiency": u.mean() / R, "load_balance": u.mean() / u.max(),
                    "communication_efficiency": u.max() / R},
        "hybrid-additive": {"parallel_efficiency": u.mean() / R, "process_efficiency": (avg_omp + avg_ser) / R,
                            "thread_efficiency": 1 - (avg_omp + avg_ser - u.mean()) / R,
                            "mpi_communication_efficiency": (ex.openmp_ns + ex.serial_useful_ns).max() / R},
        "hybrid-multiplicative": {"hybrid_parallel_efficiency": u.mean() / R,
                                  "mpi_parallel_efficiency": outside.sum() / (P * R),
                                  "mpi_communication_efficiency": outside.max() / R,
                                  "mpi_load_balance": outside.mean() / outside.max(),
                                  "hybrid_load_balance": u.mean() / u.max()},
        "critical-path": {"parallel_efficiency": u.mean() / R, "load_balance": u.mean() / u.max(),
                          "load_balance_mpi": (SHAPE.threads * team_max).sum() / (T * u.max()),
                          "load_balance_openmp": u.sum() / (SHAPE.threads * team_max).sum()},
        "computation-io": {"ipc": ex.ipc(), "clock_rate": ex.cycles.sum() / u.sum(), "io_efficiency": 1.0,
                           "posix_io_share": 0.0},
    }


@pytest.mark.parametrize("key", ["pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path",
                                 "computation-io"])
def test_each_variant_tab_shows_the_expected_figures(advisor, key):
    state, pane, exp, ex = advisor
    assert pane.current_tab().variant.key == "hybrid-additive"       # MPI + OpenMP preselects additive
    check(pane, key, whole_figures(ex)[key])


def test_io_share_reads_as_a_percentage(advisor):
    state, pane, exp, ex = advisor
    pane.select_variant("computation-io")
    assert shown(pane)["posix_io_share"][1] == "0.0 %"
    assert shown(pane)["clock_rate"][1] == "2 GHz"


def test_figures_follow_the_focus(advisor):
    state, pane, exp, ex = advisor
    pane.select_variant("pop-mpi")
    u = ex.useful_ns.astype(float)
    loop = ex.iteration_ns * SHAPE.iterations
    state.set_focus(Focus.on_callpath("main/timestep"))
    check(pane, "pop-mpi", {"parallel_efficiency": u.mean() / loop, "communication_efficiency": u.max() / loop})
    assert "main/timestep" in pane.header.text()
    t0 = SHAPE.init_ns + ex.iteration_ns
    state.set_focus(Focus.window(t0, t0 + 2 * ex.iteration_ns))
    per_iteration = u / SHAPE.iterations
    check(pane, "pop-mpi", {"parallel_efficiency": per_iteration.mean() / ex.iteration_ns,
                            "load_balance": u.mean() / u.max()})
    state.set_focus(Focus.whole())
    check(pane, "pop-mpi", {"parallel_efficiency": u.mean() / ex.runtime_ns})


def test_not_available_rows_carry_their_reasons(qtbot, run):
    d, _, _ = run
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    with popview.open(d / "nocounters.prv", cache_dir=d / "cache") as exp:
        state.add_experiment(exp)
        assert pane.current_tab().variant.key == "pop-mpi"
        pane.select_variant("computation-io")
        rows = shown(pane)
        for metric in ("ipc", "vectorization_efficiency"):
            node, text, rating = rows[metric]
            assert node.value is None and text == "n/a"
            assert node.reason and node.reason in rating.data()
            assert rating.data(Qt.ForegroundRole).color().getRgb()[:3] == (140, 140, 140)
        assert "PAPI_TOT_INS" in rows["ipc"][0].reason
        pane.select_variant("pop-mpi")
        ipc_scal = shown(pane)["ipc_scalability"]
        assert ipc_scal[0].value is None and "PAPI_TOT_INS" in ipc_scal[2].data()


def test_candidate_click_selects_the_call_path_and_focuses_it(qtbot, advisor):
    state, pane, exp, ex = advisor
    pane.select_variant("pop-mpi")
    pane.candidates.slider.setValue(0)
    pane.candidates.find_button.click()
    paths = [c.path for c in pane.candidates.shown()]
    assert "main/timestep" in paths                                     # load balance 0.80 < 0.8 there
    row = paths.index("main/timestep")
    assert "Load balance 0.80" in pane.candidates.table.item(row, 2).text()
    with qtbot.waitSignal(state.focusChanged):
        pane.candidates.table.cellClicked.emit(row, 0)
    assert state.callpath == exp.profile().find("main/timestep")
    assert state.focus == Focus.on_callpath("main/timestep")
    u = ex.useful_ns.astype(float)
    check(pane, "pop-mpi", {"parallel_efficiency": u.mean() / (ex.iteration_ns * SHAPE.iterations)})


def test_ctrl_c_copies_the_tree(qtbot, advisor):
    state, pane, exp, ex = advisor
    pane.select_variant("pop-mpi")
    pane.show()
    qtbot.waitExposed(pane)
    pane.activateWindow()
    tree = pane.current_tab().tree
    tree.setFocus()
    qtbot.waitUntil(tree.hasFocus)
    qtbot.keyClick(tree, Qt.Key_C, Qt.ControlModifier)
    text = QApplication.clipboard().text().splitlines()
    assert text[0] == "POP MPI\tValue\tRating\tMin\tAvg\tMax"
    pe = ex.parallel_efficiency()
    assert text[2].startswith(f"  Parallel efficiency\t{pe * 100:.1f} %\t")


@pytest.mark.answers_later
def test_runs_are_computed_off_the_gui_thread(qtbot, run, monkeypatch):
    d, ex, _ = run
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    with popview.open(d / "hybrid.prv", cache_dir=d / "cache") as exp:
        with qtbot.waitSignal(pane.updated, timeout=60000):
            state.add_experiment(exp)
            assert not pane.current_tab().tree.isEnabled()             # "calculating..." meanwhile
        qtbot.waitUntil(lambda: "parallel_efficiency" in shown(pane), timeout=60000)
        node, text, _ = shown(pane)["parallel_efficiency"]
        assert node.value == pytest.approx(ex.parallel_efficiency(), rel=1e-12)
        pane.runner.wait(60000)


def test_an_upper_bound_is_hatched_and_reads_at_most(qtbot):
    """A bound (MetricNode.bound, a Score-P profile's parallel efficiency) is drawn hatched with a
    dotted end, its value reads '<= 33.6 %', its rating 'at most ...', its tooltip says why."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from popview.analysis.node import MetricNode
    from popview.gui.advisor.bar import paint_bar
    from popview.gui.advisor.model import MetricTreeModel, tooltip_html

    def draw(bound):
        img = QImage(200, 20, QImage.Format_RGB32)
        img.fill(0xFFFFFF)
        p = QPainter(img)
        paint_bar(p, QRectF(0, 0, 200, 20), 0.336, 1.0, None, bound)
        p.end()
        return [img.pixel(x, y) for x in range(0, 60) for y in range(2, 18)]

    exact, hatched = draw(None), draw("upper")
    assert len(set(exact)) <= 2 and len(set(hatched)) > len(set(exact))
    node = MetricNode("parallel_efficiency", "Parallel efficiency", value=0.336, bound="upper",
                      reason="upper bound: the useful time includes the fork and join")
    model = MetricTreeModel()
    model.set_roots([node])
    index = model.index(0, VALUE)
    assert model.data(index) == "\u2264 33.6 %"
    assert model.data(model.index(0, RATING)).startswith("at most ")
    assert "Upper bound:" in tooltip_html(node) and "fork and join" in tooltip_html(node)
