"""Coupled metric / call / system trees over a synthetic profile with known numbers."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from popview.analysis.focus import Focus
from popview.gui.state import AppState
from popview.gui.trees import CallTreePane, MetricTreePane, SystemTreePane
from popview.gui.trees.values import ACTIVITY, ProfileValues
from popview.gui.widgets.units import format_value
from popview.model.profile import MetricDef, MetricValues
from popview.testing.synthetic_profile import (
    SMALL_COLL, SMALL_COMP, SMALL_P2P, ProfileExperiment, random_profile, small_definitions, small_profile,
)

# Call path ids of the small profile (pre-order).
MAIN, INIT, LOOP, SOLVE, HALO, SEND, ALLREDUCE, TASKS, TASK_BODY = range(9)


@pytest.fixture
def trees(qtbot):
    state = AppState()
    panes = [MetricTreePane(state), CallTreePane(state), SystemTreePane(state)]
    for p in panes:
        qtbot.addWidget(p)
        p.show()
    exp = ProfileExperiment(small_profile(), small_definitions(), name="small")
    state.add_experiment(exp)
    return state, panes[0], panes[1], panes[2]


def select(pane, node):
    pane.select_node(node)
    assert pane.model.selected == node


def shown_of(pane, node):
    return pane.model.shown(node)


def location_rows(system):
    f = system.model.layout.first_location
    return np.array([system.model.shown(f + i) for i in range(system.model.layout.n_locations)])


# ---- the numbers layer ------------------------------------------------------------------
def test_profile_values_totals_and_locations():
    pv = ProfileValues(small_profile())
    assert pv.total("comp") == pytest.approx(SMALL_COMP.sum())
    assert pv.total("time") == pytest.approx(30.0)
    assert pv.total("time", metric_exclusive=True) == pytest.approx(0.0)   # all in comp and mpi
    incl, excl = pv.callpath_values("time")
    assert incl[LOOP] == pytest.approx(23.0)
    assert excl[LOOP] == pytest.approx(1.0)
    assert np.allclose(pv.location_values("comp", False, SOLVE, False), SMALL_COMP[SOLVE])
    halo_mpi = pv.location_values("mpi_p2p", False, HALO, callpath_exclusive=False)
    assert np.allclose(halo_mpi, SMALL_P2P[SEND])
    assert not pv.location_values("mpi_p2p", False, HALO, callpath_exclusive=True).any()


def test_only_paradigms_in_the_data_appear():
    pv = ProfileValues(small_profile())
    assert pv.children("time") == ["comp", "mpi"]          # omp is all zero: not shown
    groups = pv.children("time", ACTIVITY)
    assert groups == ["activity:computation", "activity:communication"]
    assert pv.total("activity:communication") == pytest.approx(SMALL_P2P.sum() + SMALL_COLL.sum())


# ---- coupling -----------------------------------------------------------------------
def test_metric_and_callpath_selection_drive_the_system_tree(trees):
    state, metrics, calls, system = trees
    select(metrics, metrics.model.node_of_key("time"))
    metrics.view.expand(metrics.model.index_of(0))
    select(metrics, metrics.model.node_of_key("comp"))
    assert state.metric == "comp"
    assert calls.model.incl[SOLVE] == pytest.approx(15.0)
    select(calls, SOLVE)
    assert state.callpath == SOLVE
    assert np.allclose(location_rows(system), [4.0, 3.0, 2.0, 1.0, 5.0])
    rank1 = system.model.layout.first_location - 1
    assert system.model.shown(rank1) == pytest.approx(8.0)         # collapsed process: its threads' sum
    select(metrics, metrics.model.node_of_key("mpi_p2p"))
    select(calls, HALO)
    assert np.allclose(location_rows(system), [0.75, 0, 1.25, 0, 0])   # halo collapsed: includes MPI_Send
    calls.view.expand(calls.model.index_of(HALO))
    assert state.callpath_exclusive
    assert np.allclose(location_rows(system), 0.0)                      # expanded: halo's own MPI time


def test_expanding_a_node_switches_inclusive_to_exclusive(trees):
    _state, _metrics, calls, _system = trees
    assert calls.view.isExpanded(calls.model.index_of(MAIN))
    calls.view.collapse(calls.model.index_of(LOOP))
    assert shown_of(calls, LOOP) == pytest.approx(23.0)
    calls.view.expand(calls.model.index_of(LOOP))
    assert shown_of(calls, LOOP) == pytest.approx(1.0)
    text = calls.model.data(calls.model.index_of(LOOP, 1))
    assert text == "1 s"


def test_expanding_the_selected_metric_gives_its_exclusive_part(trees):
    state, metrics, calls, _system = trees
    time = metrics.model.node_of_key("time")
    select(metrics, time)
    assert metrics.model.shown(time) == pytest.approx(30.0)
    metrics.view.expand(metrics.model.index_of(time))
    assert metrics.model.shown(time) == pytest.approx(0.0)
    assert state.metric_exclusive
    assert calls.model.incl[MAIN] == pytest.approx(0.0)


def test_value_modes(trees):
    state, _metrics, calls, system = trees
    calls.view.collapse(calls.model.index_of(LOOP))
    state.set_value_mode("percent_root")
    assert shown_of(calls, LOOP) == pytest.approx(100 * 23 / 30)
    assert calls.model.data(calls.model.index_of(LOOP, 1)).endswith("%")
    state.set_value_mode("percent_selection")
    select(calls, LOOP)
    assert shown_of(calls, LOOP) == pytest.approx(100.0)
    assert shown_of(calls, MAIN) == pytest.approx(100 * 1 / 23)          # main is expanded: exclusive
    f = system.model.layout.first_location
    select(system, f - 1)                                                # rank 1 = 100 %
    loop_on = SMALL_COMP[2:7].sum(0) + SMALL_P2P.sum(0) + SMALL_COLL.sum(0)    # loop's inclusive time per location
    assert system.model.shown(f + 2) == pytest.approx(100 * loop_on[2] / loop_on[2:].sum())
    # difference to a reference in which every computation took half as long
    ref_profile = small_profile()
    half = SMALL_COMP * 0.5 + SMALL_P2P + SMALL_COLL
    ref_profile.values["time"] = MetricValues.from_dense(half)
    ref = ProfileExperiment(ref_profile, small_definitions(), name="reference")
    state.add_experiment(ref)
    state.set_reference(ref)
    state.set_value_mode("difference")
    assert shown_of(calls, SOLVE) == pytest.approx(15.0 - 7.5)
    assert shown_of(calls, LOOP) == pytest.approx(0.5 * SMALL_COMP[2:5].sum())
    select(calls, SOLVE)
    assert np.allclose(location_rows(system), 0.5 * SMALL_COMP[SOLVE])
    state.set_value_mode("absolute")
    assert shown_of(calls, SOLVE) == pytest.approx(15.0)


def test_colour_swatch_follows_the_value(trees):
    _state, _metrics, calls, _system = trees
    calls.view.collapse(calls.model.index_of(LOOP))
    deco = Qt.ItemDataRole.DecorationRole
    big = calls.model.data(calls.model.index_of(LOOP), deco)
    small = calls.model.data(calls.model.index_of(INIT), deco)
    assert calls.model.fraction(LOOP) == pytest.approx(23 / 30)
    assert calls.model.fraction(INIT) == pytest.approx(3 / 30)
    assert big.lightness() < small.lightness()          # the larger value is the darker swatch
    assert calls.legend.high_text == "30 s"


# ---- navigation -------------------------------------------------------------------------
def test_filter_keeps_matches_and_their_callers(trees):
    _state, _metrics, calls, _system = trees
    calls.set_filter("mpi_")
    visible = np.flatnonzero(calls.model.forest.visible)
    assert visible.tolist() == [MAIN, LOOP, HALO, SEND, ALLREDUCE]
    assert calls.model.rowCount() == 1
    assert calls.view.isExpanded(calls.model.index_of(HALO))
    assert "2 call paths match" in calls.status.text()
    calls.set_filter("")
    assert calls.model.rowCount() == 2


def test_hottest_path_sort_copy_and_focus(trees):
    state, _metrics, calls, _system = trees
    calls.expand_hottest()
    assert state.callpath == SOLVE
    calls.sort_box.setChecked(True)
    kids = [int(calls.model.forest.children(LOOP)[i]) for i in range(3)]
    assert kids == [SOLVE, HALO, ALLREDUCE]
    assert calls.model.index_of(SOLVE).row() == 0
    calls.view.setCurrentIndex(calls.model.index_of(SOLVE))
    calls.copy_current()
    assert QGuiApplication.clipboard().text() == "solve\t15 s"
    calls.focus_action.trigger()
    assert state.focus == Focus.on_callpath("main/loop/solve")


def test_artificial_roots_and_gpu_locations_are_marked(trees):
    _state, _metrics, calls, system = trees
    assert calls.model.is_artificial(TASKS)
    assert calls.model.data(calls.model.index_of(TASKS), role=Qt.ItemDataRole.FontRole).italic()
    assert not calls.model.is_artificial(MAIN)
    gpu = system.model.layout.first_location + 4
    assert system.model.name(gpu).endswith("[GPU]")
    assert "GPU location" in system.model.tooltip(gpu)


def test_activity_hierarchy_switch(trees):
    state, metrics, _calls, _system = trees
    metrics.set_hierarchy(ACTIVITY)
    assert "activity:communication" in metrics.model.keys
    node = metrics.model.node_of_key("activity:communication")
    select(metrics, node)
    assert state.metric == "activity:communication"
    assert metrics.model.shown(node) == pytest.approx(SMALL_P2P.sum() + SMALL_COLL.sum())


def test_no_profile_says_why(qtbot):
    state = AppState()
    pane = CallTreePane(state)
    qtbot.addWidget(pane)
    assert "No experiment open" in pane.status.text()


def test_activity_groups_partition_the_time():
    """Every second of the time hierarchy lands in exactly one activity group."""
    profile = small_profile()
    profile.metrics.append(MetricDef("comp_serial", "Computation outside OpenMP", "sec", parent="comp"))
    profile.values["comp_serial"] = MetricValues.from_dense(SMALL_COMP * 0.5)
    pv = ProfileValues(profile)
    groups = pv.children("time", ACTIVITY)
    assert sum(pv.total(g) for g in groups) == pytest.approx(pv.total("time"))


# ---- real data ----------------------------------------------------------------------------
def _open_in_trees(qtbot, path, cache_dir):
    import popview
    from popview.gui.topology import TopologyPane

    exp = popview.open(path, cache_dir=cache_dir)
    state = AppState()
    panes = [MetricTreePane(state), CallTreePane(state), SystemTreePane(state), TopologyPane(state)]
    for p in panes:
        qtbot.addWidget(p)
    state.add_experiment(exp)
    return (exp, state, *panes)


@pytest.mark.shared
def test_real_cube_profile_fills_coupled_trees(qtbot, shared_traces, cache_dir):
    path = shared_traces / "archer2-scalasca" / "scorep_bt-mz_C_8x6_trace" / "scout.cubex"
    exp, state, metrics, calls, system, topo = _open_in_trees(qtbot, path, cache_dir)
    assert state.metric == "time"
    total = metrics.model.incl[metrics.model.node_of_key("time")]
    assert total > 0
    assert calls.model.root_total() == pytest.approx(total)
    calls.expand_hottest()
    cp = state.callpath
    assert cp >= 0 and not state.callpath_exclusive                            # the hot spot, collapsed
    f = system.model.layout.first_location
    assert system.model.incl[f:].sum() == pytest.approx(calls.model.incl[cp])   # the call path spread over threads
    assert system.model.layout.n_locations == 48
    assert topo.topology() is not None and topo.topology()["dims"] == [8, 6]
    assert not exp.is_trace and not state.current_is_trace


@pytest.mark.shared
def test_real_trace_profile_time_is_elapsed_time_per_location(qtbot, shared_traces, cache_dir):
    path = shared_traces / "pypop" / "mpi" / "epoch_example_traces" / "epoch_4proc.prv.gz"
    exp, state, metrics, calls, system, _topo = _open_in_trees(qtbot, path, cache_dir)
    duration_s = exp.definitions.t_end / 1e9
    assert metrics.model.incl[metrics.model.node_of_key("time")] == pytest.approx(4 * duration_s, rel=1e-3)
    f = system.model.layout.first_location
    assert np.allclose(system.model.incl[f:], duration_s, rtol=1e-3)          # no call path selected: all time
    assert state.current_is_trace


def test_view_state_round_trip(trees, qtbot):
    state, metrics, calls, _system = trees
    metrics.set_hierarchy(ACTIVITY)
    calls.sort_box.setChecked(True)
    calls.view.expand(calls.model.index_of(HALO))
    saved = metrics.view_state(), calls.view_state()
    assert "main/loop/halo" in saved[1]["expanded"]
    fresh = AppState()
    m2, c2 = MetricTreePane(fresh), CallTreePane(fresh)
    for p in (m2, c2):
        qtbot.addWidget(p)
    fresh.add_experiment(state.current)
    m2.restore_view_state(saved[0])
    c2.restore_view_state(saved[1])
    assert m2.hierarchy == ACTIVITY and c2.sort_box.isChecked()
    assert c2.view.isExpanded(c2.model.index_of(HALO))
    fresh.select_metric("comp")
    assert m2.model.keys[m2.model.selected] == "comp"           # selection from elsewhere shows in the tree


def test_difference_matches_call_paths_of_a_renamed_program(trees):
    state, _metrics, calls, _system = trees
    renamed = small_profile()
    renamed.regions[0].name = "main_v2"             # the program's root has another name
    ref = ProfileExperiment(renamed, small_definitions(), name="v2")
    state.add_experiment(ref)
    state.set_reference(ref)
    state.set_value_mode("difference")
    assert shown_of(calls, SOLVE) == pytest.approx(0.0)   # same numbers, matched below the root


def test_values_are_shown_with_units():
    from popview.gui.widgets.units import format_value
    assert format_value(0.00123, "sec") == "1.23 ms"
    assert format_value(3 * 2**20, "bytes") == "3 MiB"
    assert format_value(1234, "occ") == "1,234 occ"
    assert format_value(12.345, "%") == "12.35 %"
    assert format_value(float("nan"), "sec") == "n/a"


def test_rounding_noise_is_an_exact_zero(monkeypatch):
    profile = small_profile()
    profile.values["time"] = MetricValues.from_dense(SMALL_COMP * 0.1 + SMALL_COMP * 0.2 + SMALL_P2P + SMALL_COLL)
    profile.values["comp"] = MetricValues.from_dense(SMALL_COMP * 0.3)

    def time_exclusive():
        pv = ProfileValues(profile)
        return pv.callpath_values("time", metric_exclusive=True)[1], pv.location_values("time", True)

    monkeypatch.setattr("popview.gui.trees.values.ROUNDING", 0.0)
    excl, per_loc = time_exclusive()
    assert excl.any() or per_loc.any()                  # 0.1 + 0.2 != 0.3 in floating point
    monkeypatch.undo()
    excl, per_loc = time_exclusive()
    assert not excl.any() and not per_loc.any()


def test_metric_roots_are_coloured_against_the_largest_root_of_their_unit():
    from popview.gui.trees.metrictree import MetricTreeModel
    profile = small_profile()
    profile.metrics.append(MetricDef("late_sender", "Late Sender", "sec"))      # a root, as some Cube files have
    profile.values["late_sender"] = MetricValues.from_dense(SMALL_P2P * 0.1)
    model = MetricTreeModel()
    model.build(ProfileValues(profile), "paradigm")
    keys = model.keys
    model.set_values(np.array([model.pv.total(k) for k in keys]), np.zeros(len(keys)), "sec")
    assert model.fraction(keys.index("late_sender")) == pytest.approx(0.2 / 30.0)
    assert model.fraction(keys.index("visits")) == pytest.approx(1.0)


def test_percent_of_total_is_per_metric(trees):
    """Each counter as a share of its own total, not of the largest counter."""
    from popview.gui.trees.metrictree import MetricTreeModel
    profile = small_profile()
    for mid, scale in (("PAPI_TOT_INS", 1e9), ("PAPI_TOT_CYC", 6.5e8)):
        profile.metrics.append(MetricDef(mid, mid, "occ"))
        profile.values[mid] = MetricValues.from_dense(SMALL_COMP * scale)
    model = MetricTreeModel()
    model.build(ProfileValues(profile), "paradigm")
    keys = model.keys
    model.set_values(np.array([model.pv.total(k) for k in keys]), np.zeros(len(keys)), "sec")
    model.set_mode("percent_root")
    for key in ("PAPI_TOT_INS", "PAPI_TOT_CYC", "visits", "time"):
        assert model.shown(keys.index(key)) == pytest.approx(100.0), key


def test_system_tree_modes_speak_one_unit(trees):
    """% of total: values and legend in %; Difference without a comparable reference: the
    values themselves and why, not a column of n/a under a legend of -0 s ... +0 s."""
    state, _metrics, _calls, system = trees
    f = system.model.layout.first_location
    state.set_value_mode("percent_root")
    assert system.model.data(system.model.index_of(f, 1)).endswith("%")
    assert system.legend.high_text.split()[1] == "%"
    state.set_value_mode("difference")                       # no reference chosen
    assert np.isfinite(location_rows(system)).all()
    assert "no reference run" in system.status.text()
    assert not system.legend.signed
    profile = small_profile()
    ref = ProfileExperiment(random_profile(profile.n_callpaths, profile.n_locations + 4),
                            None, name="bigger")
    state.add_experiment(ref, None)
    state.set_current(state.experiments[0])
    state.set_reference(ref)
    system.refresh()
    assert np.isfinite(location_rows(system)).all()
    assert "need the same locations" in system.status.text()
    assert "n/a" not in system.model.data(system.model.index_of(f, 1))


def test_an_implausible_counter_total_is_flagged_with_the_reason(qtbot):
    """A counter of 1e21 over a run of seconds is a bug of the data, not a measurement."""
    profile = small_profile()
    profile.metrics.append(MetricDef("PAPI_L3_TCM", "PAPI_L3_TCM", "occ"))
    profile.values["PAPI_L3_TCM"] = MetricValues.from_dense(SMALL_COMP * 1e19)
    profile.metrics.append(MetricDef("PAPI_TOT_INS", "PAPI_TOT_INS", "occ"))
    profile.values["PAPI_TOT_INS"] = MetricValues.from_dense(SMALL_COMP * 1e6)
    state = AppState()
    pane = MetricTreePane(state)
    qtbot.addWidget(pane)
    state.add_experiment(ProfileExperiment(profile, small_definitions(), name="counters"))
    model = pane.model
    bad, good = model.node_of_key("PAPI_L3_TCM"), model.node_of_key("PAPI_TOT_INS")
    assert model.data(model.index_of(bad, 0)).startswith("\u26a0")
    assert "implausible" in model.data(model.index_of(bad, 0), Qt.ItemDataRole.ToolTipRole)
    assert not model.data(model.index_of(good, 0)).startswith("\u26a0")
    assert "PAPI_L3_TCM" in pane.status.text() and "per second per location" in pane.status.text()


def test_the_call_tree_legend_speaks_the_unit_of_its_values(trees):
    """In '% of total' the call tree's colour legend read '37.43 s' over a column of percentages."""
    state, _metrics, calls, _system = trees
    state.set_value_mode("percent_root")
    assert calls.legend.high_text.endswith("% of the total"), calls.legend.high_text
    top = float(calls.legend.high_text.split(" %")[0])
    assert top == pytest.approx(100 * calls.model.scale / calls.model.root_total(), rel=1e-2) and 0 < top <= 100
    state.set_value_mode("absolute")
    assert calls.legend.high_text.endswith(" s")


def test_difference_mode_in_a_series_compares_with_its_smallest_run_by_default(qtbot):
    """With no reference chosen, Difference showed absolute values under a '-100 % ... +100 %'
    legend while the Advisor already compared with the series' smallest run: the trees take
    that run too, and say so."""
    state = AppState()
    metrics, calls, system = MetricTreePane(state), CallTreePane(state), SystemTreePane(state)
    for p in (metrics, calls, system):
        qtbot.addWidget(p)
    ref_profile = small_profile()
    ref_profile.values["time"] = MetricValues.from_dense(SMALL_COMP * 0.5 + SMALL_P2P + SMALL_COLL)
    smaller = ProfileExperiment(ref_profile, small_definitions(), name="run_1")
    larger = ProfileExperiment(small_profile(), small_definitions(), name="run_2")
    state.add_experiment(smaller, series="run_N")
    state.add_experiment(larger, series="run_N")
    state.set_current(larger)
    state.set_value_mode("difference")
    assert state.reference is None
    assert calls.model.compares() and shown_of(calls, SOLVE) == pytest.approx(15.0 - 7.5)
    assert "difference to run_1, the smallest run of the series" in calls.status.text()
    assert system.model.compares() and "difference to run_1" in system.status.text()
    assert metrics.model.compares() and metrics.legend.signed
    state.set_current(smaller)                     # the smallest run itself: nothing to compare with
    assert not calls.model.compares() and "choose a reference" in calls.status.text()
    assert not metrics.legend.signed and metrics.legend.high_text == "100 % of the metric's root"


def test_system_tree_legend_says_its_number_is_the_largest_locations(trees):
    """The legend's number is the largest location's; ranks above hold more (coloured to their
    own level's largest): '4.974 s (largest of each level)' read under a rank of 7.248 s."""
    state, _metrics, _calls, system = trees
    state.set_value_mode("absolute")
    f = system.model.layout.first_location
    top = float(np.max(np.abs(system.model.incl[f:])))
    assert system.legend.high_text.startswith(format_value(top, system.model.unit))
    assert "the largest location" in system.legend.high_text
