"""The Advisor's presentation: a header on its own row, candidates folded until asked,
no reason cut off in the rating column."""
from __future__ import annotations

import pytest

from popview.analysis.report.candidates import Candidate
from popview.gui.advisor import AdvisorPane
from popview.gui.advisor.model import RATING
from popview.gui.state import AppState
from tests.gui.test_advisor_pane import _pane, stub, traces  # noqa: F401 - fixtures used by name

pytestmark = pytest.mark.gui


@pytest.fixture
def shown(qtbot, traces, cache_dir, stub):  # noqa: F811 - fixtures
    state, pane, exp = _pane(qtbot, traces, cache_dir, "mpi.prv")
    pane.resize(900, 500)
    pane.show()
    qtbot.waitExposed(pane)
    qtbot.waitUntil(lambda: pane.current_tab().model.rowCount() > 0, timeout=30_000)
    yield pane
    exp.close()


def test_the_header_spans_the_pane_instead_of_wrapping_into_a_column(shown):
    assert shown.header.width() > 0.9 * shown.width()
    assert shown.header.height() <= 2 * shown.header.fontMetrics().height() + 4
    assert "Advisor:" in shown.header.text()


def test_candidates_are_folded_until_asked_for(shown, qtbot):
    cands = shown.candidates
    assert not cands.table.isVisible() and cands.find_button.isVisible()
    tree = shown.current_tab().tree
    assert tree.height() > 0.6 * shown.height(), "the folded candidates leave the room to the tree"
    cands.set_candidates([Candidate(1, "main/a", 0.40, [("Load balance", 0.5)])])
    qtbot.waitUntil(cands.table.isVisible, timeout=2000)
    assert cands.table.item(0, 0).text() == "main/a"


def test_a_reason_in_the_rating_column_is_not_cut(shown):
    tab = shown.current_tab()
    assert "n/a: needs message records" in tab.as_text()
    tree = tab.tree
    assert tree.header().sectionSize(RATING) >= tree.sizeHintForColumn(RATING) > 200


def test_an_empty_pane_folds_its_candidates(qtbot):
    pane = AdvisorPane(AppState())
    qtbot.addWidget(pane)
    assert not pane.candidates.expanded


def test_a_low_advisor_keeps_its_room_for_the_tree(shown, qtbot):
    shown._show_warnings(["a long warning " * 20, "another"], ["a note"])
    shown.resize(900, 260)
    qtbot.wait(50)
    assert not shown.note.isVisible()
    assert shown.warnings.height() <= 2 * shown.warnings.fontMetrics().height() + 12
    assert "+1 more" in shown.warnings.text()
    shown.resize(900, 600)
    qtbot.wait(50)
    assert shown.note.isVisible()


def deep_tree():
    from popview.analysis.node import MetricNode as Node
    na = dict(value=None, reason="the experiment has no PAPI_TOT_INS counter")
    return Node("global_efficiency", "Global efficiency", value=0.5, children=[
        Node("parallel_efficiency", "Parallel efficiency", value=0.6, children=[
            Node("load_balance", "Load balance", value=0.9),
            Node("communication_efficiency", "Communication efficiency", value=0.7, children=[
                Node("serialisation_efficiency", "Serialisation efficiency", value=0.8),
                Node("transfer_efficiency", "Transfer efficiency", value=0.9)])]),
        Node("computation_scalability", "Computation scalability", value=1.0, kind="scalability", children=[
            Node("ipc_scalability", "IPC scalability", kind="scalability", **na),
            Node("instruction_scalability", "Instruction scalability", kind="scalability", **na)])])


def open_names(tree) -> list[str]:
    names, index = [], tree.model().index(0, 0)
    while index.isValid():
        names.append(str(index.data()))
        index = tree.indexBelow(index)
    return names


def test_a_compact_tree_opens_its_key_rows_and_all_of_them_when_they_fit(qtbot):
    tab = compact_tab(qtbot, "pop-mpi", "POP MPI", deep_tree())
    assert open_names(tab.tree) == ["Global efficiency", "Parallel efficiency", "Load balance",
                                    "Communication efficiency", "Computation scalability"], \
        "key rows; the not-available scalabilities folded under their parent"
    tab.resize(700, 600)
    qtbot.wait(50)
    assert len(open_names(tab.tree)) == 9, "room for the whole tree: all of it open"
    tab.resize(700, 150)
    tab.set_compact(False)
    qtbot.wait(50)
    assert len(open_names(tab.tree)) == 9, "not compact (a tall Advisor): the whole tree, scrolled"
    name = tab.tree.header().sectionSize(0)
    assert name >= tab.tree.fontMetrics().horizontalAdvance("Serialisation efficiency") + 40


def test_rows_not_available_over_available_ones_stay_open(qtbot):
    """A Score-P profile of a hybrid run withholds its parallel efficiency (the masters' fork and
    join read as computation) but gives the process level below it: the compact tree keeps the
    rows down to it open, and folds a row whose whole subtree is not available."""
    from popview.analysis.node import MetricNode as Node
    na = dict(value=None, reason="not available from this profile: it counts the masters' OpenMP fork and join")
    root = Node("global_efficiency", "Global efficiency", children=[
        Node("parallel_efficiency", "Parallel efficiency", children=[
            Node("process_efficiency", "Process efficiency", value=0.69),
            Node("thread_efficiency", "Thread efficiency", children=[
                Node("amdahl_efficiency", "Amdahl efficiency", **na)], **na)], **na),
        Node("computation_scalability", "Computation scalability", kind="scalability", children=[
            Node("ipc_scalability", "IPC scalability", kind="scalability", **na)], **na)], **na)
    tab = compact_tab(qtbot, "hybrid-additive", "Hybrid additive", root)
    shown = open_names(tab.tree)
    assert "Process efficiency" in shown
    assert "Amdahl efficiency" not in shown and "IPC scalability" not in shown


def test_alternative_splits_are_open_and_shown_as_splits(qtbot):
    """The hybrid multiplicative parallel efficiency's two splits stayed folded in the small Advisor dock
    (the four factors hidden), each repeating the parent's value, bar and rating: now open, '= 17.9 %'
    greyed, no bar or rating of their own."""
    from popview.analysis.node import ALTERNATIVES
    from popview.analysis.node import MetricNode as Node
    from popview.gui.advisor.model import BAR, VALUE
    pe = 0.179
    root = Node("global_efficiency", "Global efficiency", value=pe, combine="product", children=[
        Node("hybrid_parallel_efficiency", "Hybrid parallel efficiency", value=pe, combine=ALTERNATIVES, children=[
            Node("by_paradigm", "By paradigm: MPI x OpenMP", value=pe, combine="product", children=[
                Node("mpi_parallel_efficiency", "MPI parallel efficiency", value=0.5),
                Node("openmp_parallel_efficiency", "OpenMP parallel efficiency", value=0.358)]),
            Node("by_cause", "By cause: load balance x communication", value=pe, combine="product", children=[
                Node("hybrid_load_balance", "Hybrid load balance", value=0.358),
                Node("hybrid_communication_efficiency", "Hybrid communication efficiency", value=0.5)])]),
        Node("computation_scalability", "Computation scalability", value=1.0, kind="scalability")])
    tab = compact_tab(qtbot, "hybrid-multiplicative", "Hybrid multiplicative", root)
    shown = open_names(tab.tree)
    for factor in ("MPI parallel efficiency", "OpenMP parallel efficiency", "Hybrid load balance",
                   "Hybrid communication efficiency"):
        assert factor in shown, f"{factor} hidden under a folded split"
    model = tab.tree.model()
    hybrid = model.index(0, 0, model.index(0, 0))
    split = model.index(0, 0, hybrid)
    assert split.data() == "By paradigm: MPI x OpenMP"
    from popview.gui.advisor.model import SplitRole
    assert split.siblingAtColumn(VALUE).data() == "= 17.9 %"
    assert split.siblingAtColumn(RATING).data() == "" and split.siblingAtColumn(BAR).data(SplitRole)
    assert hybrid.siblingAtColumn(VALUE).data() == "17.9 %" and hybrid.siblingAtColumn(RATING).data()


def test_the_first_warning_in_a_low_pane_fills_its_line(qtbot):
    pane = AdvisorPane(AppState())        # no warning yet: its line never laid out
    qtbot.addWidget(pane)
    pane.resize(900, 260)
    pane.show()
    qtbot.waitExposed(pane)
    pane._show_warnings(["a long warning " * 20], ["a note"])
    visible = pane.warnings.text().split("\u2026")[0]
    assert len(visible) > 60, f"the one line fits the pane's width: {pane.warnings.text()}"


def test_per_region_rows_cut_in_the_middle_stay_told_apart(qtbot, shared_traces, cache_dir):
    """The scout profile of BT-MZ showed rows 'Region bt-mz_C.8/bt/exch_qbc/copy_x_face...'
    twice (their ends, the OpenMP construct and its line, cut away): each row shown of the
    hybrid additive tree reads differently from its siblings."""
    import popview
    from PySide6.QtWidgets import QStyleOptionViewItem

    path = shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex"
    if not path.exists():
        pytest.skip(f"{path} is not among the shared traces")
    state = AppState()
    pane = AdvisorPane(state)
    qtbot.addWidget(pane)
    pane.resize(1000, 700)
    pane.show()
    exp = popview.open(path, cache_dir=cache_dir)
    state.add_experiment(exp)
    pane.select_variant("hybrid-additive")
    qtbot.waitUntil(lambda: pane.current_tab().model.rowCount() > 0, timeout=60_000)
    tab = pane.current_tab()
    tree, model = tab.tree, tab.model
    width = tree.header().sectionSize(0)
    shown, cut = {}, 0
    index = model.index(0, 0)
    while index.isValid():
        option = QStyleOptionViewItem()
        tree.initViewItemOption(option)
        option.rect = tree.visualRect(index)
        text = index.data()
        delegate = tree.itemDelegateForColumn(0)
        delegate.initStyleOption(option, index)
        seen = option.text
        if seen != text:
            cut += 1
            assert tree.fontMetrics().horizontalAdvance(seen) <= delegate.text_room(option)
        key = (index.parent(), seen)
        assert key not in shown or shown[key] == text, f"{text!r} and {shown[key]!r} both read {seen!r}"
        shown[key] = text
        index = tree.indexBelow(index)
    assert cut >= 2 and width < max(tree.fontMetrics().horizontalAdvance(t) for _, t in shown.items())
    exp.close()


def test_a_long_name_shows_whole_where_the_pane_has_room(qtbot):
    """"OpenMP communication efficiency (multiplicative)" three levels down was cut at the
    name column's cap although the pane had room to spare (hybrid multiplicative tab, a
    1600 px window); a narrow pane still caps the names so the bars stay in sight."""
    from types import SimpleNamespace

    from popview.analysis.node import MetricNode
    from popview.gui.advisor.tab import MAX_NAME_WIDTH, VariantTab
    long = "OpenMP communication efficiency (multiplicative)"
    leaf = MetricNode(id="openmp_communication_efficiency", name=long, kind="efficiency", value=0.28)
    mid = MetricNode(id="openmp_parallel_efficiency", name="OpenMP parallel efficiency (multiplicative)",
                     kind="efficiency", value=0.21, children=[leaf])
    top = MetricNode(id="hybrid_parallel_efficiency", name="Hybrid parallel efficiency", kind="efficiency",
                     value=0.18, children=[mid])
    root = MetricNode(id="global_efficiency", name="Global efficiency", kind="efficiency", value=0.18,
                      children=[top])
    tab = VariantTab(SimpleNamespace(key="hybrid-multiplicative", label="Hybrid multiplicative (BSC)"))
    qtbot.addWidget(tab)
    tab.resize(1300, 400)
    tab.show()
    qtbot.waitExposed(tab)
    tab.show_roots([root])
    qtbot.wait(50)
    tree = tab.tree
    need = tree.sizeHintForColumn(0)
    assert need > MAX_NAME_WIDTH, "the case: the name needs more than the cap"
    assert tree.header().sectionSize(0) >= need
    tab.resize(600, 400)
    qtbot.wait(50)
    assert tree.header().sectionSize(0) <= max(MAX_NAME_WIDTH, 600 // 2)


def test_a_low_pane_s_one_line_warning_does_not_hold_its_width(qtbot):
    """In a low pane the first warning is cut to the pane's width on one line; as wide as its
    text, the label kept the pane from narrowing (Timeline first at 1280x800: a 1287 px window)."""
    pane = AdvisorPane(AppState())
    qtbot.addWidget(pane)
    pane.resize(1100, 260)
    pane.show()
    qtbot.waitExposed(pane)
    pane._show_warnings(["The tracer flushed its buffers 16 time(s) inside the focus " * 3], ["a note", "another"])
    qtbot.wait(50)
    assert pane.warnings.isVisible() and pane.warnings.fontMetrics().horizontalAdvance(pane.warnings.text()) > 700
    assert pane.minimumSizeHint().width() < 500, pane.minimumSizeHint()
    pane.resize(600, 260)
    qtbot.wait(50)
    assert pane.width() == 600
    assert pane.warnings.fontMetrics().horizontalAdvance(pane.warnings.text()) <= pane.warnings.width() + 40


def compact_tab(qtbot, key: str, label: str, root):
    """An Advisor tab in a strip the height of the Overview's small dock (about five rows),
    showing `root`."""
    from types import SimpleNamespace

    from popview.gui.advisor.tab import VariantTab
    tab = VariantTab(SimpleNamespace(key=key, label=label))
    qtbot.addWidget(tab)
    tab.resize(700, 150)
    tab.set_compact(True)
    tab.show()
    qtbot.waitExposed(tab)
    tab.show_roots([root])
    qtbot.wait(50)
    return tab


def test_a_busy_advisor_says_the_first_runs_compiles(qtbot):
    """It said "calculating..." for minutes on a first run; now what compiles and how far."""
    from types import SimpleNamespace

    from popview.gui.advisor.tab import VariantTab
    from popview.gui.widgets import compiling

    tab = VariantTab(SimpleNamespace(key="pop-mpi", label="POP MPI"))
    qtbot.addWidget(tab)
    progress = compiling.progress()
    tab.show_busy()
    progress._seen("analysis.replay.kernel.propagate", progress.done + 1, progress.done + 1)
    assert "calculating: compiling the analysis kernels (first run on this machine only" in tab.message.text()
    tab.show_done()
    progress._quieted()
    assert "compiling" in tab.message.text(), "done: no more updates from the compiles"
