"""The compare view: two runs side by side. A's trees show A - B on the diverging scale,
selections follow from side to side, the Advisor has a delta column, the timelines zoom
and pan together, and the changed call paths are those `popview diff` lists (TeaLeaf)."""
from __future__ import annotations

import json

import pytest

import popview
from popview.analysis.report import compute, nodes, variants
from popview.analysis.tree_delta import difference_tree
from popview.cli import main
from popview.gui.compare import CompareView
from popview.gui.compare.timelines import SECONDS
from popview.testing.synthetic import Shape, write


@pytest.fixture
def pair(tmp_path, cache_dir):
    slow, fast = tmp_path / "slow.prv", tmp_path / "fast.prv"
    write(slow, Shape(processes=2, iterations=4, work_ns=2_000_000, rank_weights=(1.0, 1.6)))
    write(fast, Shape(processes=2, iterations=4, work_ns=1_000_000))
    a, b = popview.open(fast, cache_dir=cache_dir), popview.open(slow, cache_dir=cache_dir)
    yield a, b
    a.close()
    b.close()


def test_side_by_side_trees_advisor_and_changed_call_paths(qtbot, pair):
    a, b = pair
    view = CompareView(a, b)
    qtbot.addWidget(view)
    left, right = view.sides
    assert left.state.current is a and right.state.current is b
    assert left.call.model.compares() and not right.call.model.compares()     # A - B on A's side
    # a call path picked on A is picked on B (by its chain of names)
    cp = next(c for c in range(a.profile().n_callpaths) if a.profile().path(c).endswith("MPI_Allreduce"))
    left.call.select_node(cp)
    assert right.state.callpath >= 0 and b.profile().path(right.state.callpath) == a.profile().path(cp)
    # the Advisor: A, B and A - B of the preferred variant
    v = variants.preferred(a)[0]
    ta = compute.variant(a, v, view.states[0].focus, reference=b)[0]
    tb = compute.variant(b, v, view.states[0].focus)[0]
    delta = difference_tree(ta, tb)
    root = ta.roots[0]
    row = view.advisor.row(root.id)
    assert row[1:] == [nodes.format_value(root), nodes.format_value(tb.roots[0]),
                       nodes.format_value(delta.roots[0])]
    assert row[3].endswith("pp")
    # changed most: the slower computation first, as `popview diff` says
    top = view.changed.rows[0]
    assert top["a_minus_b"] == pytest.approx(top["a"] - top["b"]) and top["a_minus_b"] < 0
    assert all(abs(r["a_minus_b"]) > 1e-6 * max(abs(r["a"]), abs(r["b"])) for r in view.changed.rows)
    view.changed.tree.setCurrentItem(view.changed.tree.topLevelItem(0))
    assert a.profile().path(left.state.callpath) == b.profile().path(right.state.callpath) == top["callpath"]
    view.close()


def test_the_timelines_zoom_and_pan_together(qtbot, pair):
    a, b = pair
    view = CompareView(a, b)
    qtbot.addWidget(view)
    ta, tb = view.timelines.views
    ends = ta.data.t_end, tb.data.t_end
    assert ends[1] > 1.5 * ends[0]                       # the slow run is longer
    ta.set_window(0.25 * ends[0], 0.5 * ends[0])
    (b0, b1), _ = tb.vb.viewRange()
    assert b0 == pytest.approx(0.25 * ends[1], rel=1e-3) and b1 == pytest.approx(0.5 * ends[1], rel=1e-3)
    tb.pan(0.1 * ends[1])                                # panning B moves A
    (a0, a1), _ = ta.vb.viewRange()
    assert a0 == pytest.approx(0.35 * ends[0], rel=1e-3) and a1 == pytest.approx(0.6 * ends[0], rel=1e-3)
    view.timelines.choice.setCurrentIndex(view.timelines.choice.findData(SECONDS))
    ta.set_window(1000, 500_000)
    (b0, b1), _ = tb.vb.viewRange()
    assert (b0, b1) == pytest.approx((1000, 500_000), rel=1e-6)
    view.close()


def test_tealeaf_compare_view_and_popview_diff_agree(qtbot, shared_traces, tmp_path, capsys):
    base = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_baseline_8x12_trace" / "scout.cubex"
    opt = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_optimized_8x12_trace" / "scout.cubex"
    if not (base.is_file() and opt.is_file()):
        pytest.skip("the TeaLeaf 8x12 pair is not available")
    cache = tmp_path / "c"
    assert main(["diff", str(opt), str(base), "--cache-dir", str(cache), "--format", "json", "--top", "15"]) == 0
    listed = json.loads(capsys.readouterr().out)["callpaths"]
    a, b = popview.open(opt, cache_dir=cache), popview.open(base, cache_dir=cache)
    view = CompareView(a, b)
    qtbot.addWidget(view)
    shown = view.changed.rows
    assert [r["callpath"] for r in shown] == [r["callpath"] for r in listed]
    for r, s in zip(listed, shown):
        assert s["a_minus_b"] == pytest.approx(r["a_minus_b"], rel=1e-12)
    assert shown[0]["callpath"].endswith("calc_p_/!$omp parallel @tea_leaf_cg.f90:284/!$omp do @tea_leaf_cg.f90:294")
    assert shown[0]["a_minus_b"] == pytest.approx(-252.487, abs=1e-3)
    # the same call path on both sides, and on A's side its value is A - B (inclusive: with its barrier)
    view.changed.tree.setCurrentItem(view.changed.tree.topLevelItem(0))
    left, right = view.sides
    cp_a, cp_b = left.state.callpath, right.state.callpath
    pa, pb = a.profile(), b.profile()
    incl = pa.inclusive_totals("time")[cp_a] - pb.inclusive_totals("time")[cp_b]
    assert left.call.model.shown(cp_a) == pytest.approx(incl, rel=1e-9)
    # ranks' differences (their threads' summed) on their own level's scale: not all saturated
    sysm = left.system.model
    ranks = [n for n in range(len(sysm.layout.level)) if sysm.layout.level[n] == 1]
    fractions = [sysm.fraction(n) for n in ranks]
    assert len(ranks) == 8 and min(fractions) == -1.0 and max(fractions) > -0.9
    assert "each level to its own largest" in left.system.legend.high_text and left.system.legend.signed
    # the Advisor's delta: global efficiency +3.9 pp, as `popview diff --show metrics` gives it
    assert view.advisor.row("global_efficiency")[3] == "+3.9 pp"
    view.close()
    a.close()
    b.close()


def test_a_difference_opened_as_a_run_has_signed_scales(qtbot, pair, tmp_path, cache_dir):
    """Its values gain and lose: the colour scale runs both ways from the largest magnitude."""
    from popview import combined
    from popview.gui.state import AppState
    from popview.gui.trees import CallTreePane, MetricTreePane, SystemTreePane
    a, b = pair
    path = combined.write_result("difference", [a, b], tmp_path / "results")
    d = popview.open(path, cache_dir=cache_dir)
    state = AppState()
    metrics_, calls, system = MetricTreePane(state), CallTreePane(state), SystemTreePane(state)
    for w in (metrics_, calls, system):
        qtbot.addWidget(w)
    state.set_current(d)
    incl = calls.model.incl
    assert incl.min() < 0 and calls.model.signed
    assert calls.model.scale == pytest.approx(abs(incl).max())
    assert calls.legend.signed and calls.legend.low_text.startswith("-")
    assert system.legend.signed and "each level to its own largest" in system.legend.high_text
    assert metrics_.legend.signed and metrics_.legend.low_text.startswith("-100 %")
    d.close()


def test_the_timelines_link_on_the_same_iteration(qtbot, tmp_path, cache_dir):
    from popview.analysis.iteration_link import iteration_starts, link
    from popview.gui.compare.timelines import ITERATION
    write(tmp_path / "plain.prv", Shape(processes=2, iterations=4, work_ns=1_000_000))
    write(tmp_path / "late.prv", Shape(processes=2, iterations=4, work_ns=2_000_000, init_ns=6_000_000))
    a, b = popview.open(tmp_path / "plain.prv", cache_dir=cache_dir), popview.open(tmp_path / "late.prv",
                                                                                   cache_dir=cache_dir)
    view = CompareView(a, b)
    qtbot.addWidget(view)
    tl = view.timelines
    tl.choice.setCurrentIndex(tl.choice.findData(ITERATION))
    qtbot.waitUntil(lambda: tl.link == ITERATION, timeout=30000)
    lk = link(a, b)
    sa, sb = iteration_starts(a, lk.path), iteration_starts(b, lk.path)
    assert len(sa) == len(sb) == 4 and "4 shared" in tl.why.text()
    ta, tb = tl.views
    ta.set_window(sa[1], sa[2])                          # iteration 1 of A is iteration 1 of B
    (b0, b1), _ = tb.vb.viewRange()
    assert (b0, b1) == pytest.approx((sb[1], sb[2]), rel=1e-9)
    # B starts its iterations late (a long MPI_Init): relative time would show another part of it
    assert sb[1] / tb.data.t_end > 1.2 * sa[1] / ta.data.t_end
    view.close()
    a.close()
    b.close()


def test_rounding_noise_does_not_make_a_measured_profile_signed(qtbot, shared_traces, tmp_path):
    """TeaLeaf's baseline has omp_idle = -4.9e-15 s: rounding, its legends stay 0 .. max."""
    from popview.gui.state import AppState
    from popview.gui.trees import MetricTreePane
    base = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_baseline_8x12_trace" / "scout.cubex"
    if not base.is_file():
        pytest.skip("the TeaLeaf 8x12 baseline is not available")
    exp = popview.open(base, cache_dir=tmp_path / "c")
    state = AppState()
    pane = MetricTreePane(state)
    qtbot.addWidget(pane)
    state.set_current(exp)
    assert pane.model.incl.min() < 0                    # the noise is there
    assert not pane.model.signed and not pane.legend.signed
    exp.close()
