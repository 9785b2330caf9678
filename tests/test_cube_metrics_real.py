"""POP metrics from real Cube profiles: counters under other names, the
Scalasca wait states, agreement with the trace of the same run."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.metrics import focus_inputs

MINI_LPT = "cubegui-llm-thesis/real_world_profiles/mini-lpt-720-profile.cubex"


def test_perf_instructions_and_cycles_give_ipc(shared_traces, cache_dir):
    """mini-lpt's counters are Score-P perf events `instructions` and `cycles`, not PAPI names."""
    with popview.open(shared_traces / MINI_LPT, cache_dir=cache_dir) as exp:
        tree = exp.metrics("computation")
        prof = exp.profile()
        comp, time = prof.matrix("comp"), prof.matrix("time")
        pure = np.isclose(comp, time) & (time > 0)
        ins = np.where(pure, prof.matrix("instructions"), 0).sum()
        cyc = np.where(pure, prof.matrix("cycles"), 0).sum()
    assert tree.value("ipc") == pytest.approx(ins / cyc, rel=1e-12)
    assert 0.5 < tree.value("ipc") < 4
    assert 1.0 < tree.value("clock_rate") < 4.0          # GHz of the machine, not 1e21


TAUONK_SCOUT = "tauonk-btmz/scorep_bt-mz_B_8x4_trace/scout.cubex"
WAITS = ("mpi_latesender", "mpi_latereceiver", "mpi_earlyreduce", "mpi_earlyscan", "mpi_latebroadcast",
         "mpi_wait_nxn", "mpi_barrier_wait", "mpi_finalize_wait")


@pytest.mark.parametrize("name", [TAUONK_SCOUT, "archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex",
                                  "archer2-scalasca/scorep_tea_leaf_baseline_8x12_trace/scout.cubex"])
def test_serialisation_and_transfer_from_scalasca_wait_states(shared_traces, cache_dir, name):
    """As the Cube Advisor: transfer = MPI - wait states - MPI-IO; R_ideal = R - the least transfer
    of a master thread; SerE = max useful / R_ideal, TE = R_ideal / R."""
    with popview.open(shared_traces / name, cache_dir=cache_dir) as exp:
        pop = exp.metrics("pop-mpi")
        hyb = exp.metrics("hybrid-multiplicative")
        add = exp.metrics("hybrid-additive")
        cp = exp.metrics("critical-path")
        prof = exp.profile()
        masters = np.array([i for i, loc in enumerate(exp.definitions.locations) if loc.thread == 0])
        per_loc = {m: prof.by_location(m, None) for m in ("mpi", "mpi_io", *WAITS) if prof.has(m)}
        transfer = per_loc["mpi"] - per_loc.get("mpi_io", 0) - sum(per_loc[m] for m in WAITS if m in per_loc)
        r = prof.by_location("time", None)[masters].max()
        r_ideal = r - transfer[masters].min()
        useful = prof.by_location("comp", None)
    assert transfer[masters].min() > 0
    assert pop.value("transfer_efficiency") == pytest.approx(r_ideal / r, rel=1e-9)
    assert pop.value("serialisation_efficiency") == pytest.approx(useful.max() / r_ideal, rel=1e-9)
    assert pop.value("transfer_efficiency") < 1 and pop.value("serialisation_efficiency") <= 1
    assert pop.inconsistencies(1e-9) == [] and hyb.inconsistencies(1e-9) == []
    assert 0 < hyb.value("mpi_serialisation_efficiency") <= 1
    # the additive model's MPI split from the same wait states (was n/a: "the critical-path model
    # needs a replay of the records", the wait-state ideal lacking the masters' time outside MPI)
    ser, tra = add.value("mpi_serialisation_efficiency"), add.value("mpi_transfer_efficiency")
    assert ser is not None and tra is not None and 0 < ser <= 1 and 0 < tra <= 1
    assert ser + tra - 1 == pytest.approx(add.value("mpi_communication_efficiency"), abs=1e-9)
    assert add.inconsistencies(1e-9) == []
    # scout stores the fork time it measured (omp_fork): exact values, no bounds
    assert not [n.id for t in (pop, hyb, cp) for _, n in t.walk() if n.bound]
    assert cp.value("transfer_efficiency") is None and "critical-path model" in cp["transfer_efficiency"].reason


def test_profile_without_wait_states_says_why(shared_traces, cache_dir):
    with popview.open(shared_traces / "popview-heat/scorep/hyb_2x2/profile.cubex", cache_dir=cache_dir) as exp:
        node = exp.metrics("pop-mpi")["serialisation_efficiency"]
    assert node.value is None and "wait states" in node.reason


def test_remapped_report_gives_the_metrics_of_its_raw_profile(shared_traces, cache_dir):
    """tauonk summary.cubex is profile.cubex remapped by scalasca -examine (MANIFEST 4.2): Cube's own
    hierarchy (execution, mpi_point2point, omp_time, omp_idle_threads ...) gives the metrics the raw
    profile's derived hierarchy gives (the parallel regions' own time is OpenMP management in both)."""
    d = shared_traces / "tauonk-btmz/scorep_bt-mz_B_8x4_trace"
    with popview.open(d / "summary.cubex", cache_dir=cache_dir) as remapped, \
            popview.open(d / "profile.cubex", cache_dir=cache_dir) as raw:
        a, b = remapped.metrics("hybrid-additive"), raw.metrics("hybrid-additive")
        management = [e.profile().inclusive_totals("omp_management")[e.profile().roots()].sum() for e in (remapped, raw)]
    assert management[0] == pytest.approx(9.7832, abs=1e-4) and management[1] == pytest.approx(management[0], rel=1e-9)
    for m in ("process_efficiency", "process_load_balance", "mpi_communication_efficiency"):
        assert a.value(m) == pytest.approx(b.value(m), abs=1e-3), m
    for m in ("parallel_efficiency", "thread_efficiency"):
        # neither measures the masters' fork and join: both give the same upper bound
        assert a[m].bound == b[m].bound == "upper", m
        assert a.value(m) == pytest.approx(b.value(m), abs=1e-3), m
    for m in ("amdahl_efficiency", "openmp_region_efficiency"):
        # no provable direction from the useful time alone: both withhold the same figure
        assert a.value(m) is None and b.value(m) is None, m
        shown = [float(n[m].reason.rsplit("gives ", 1)[1].rstrip("%")) for n in (a, b)]
        assert shown[0] == pytest.approx(shown[1], abs=0.1), m
    assert a.inconsistencies(1e-9) == []


MODELS = ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path", "io", "computation")
REGION_107 = "callpath:main/!$omp parallel @heat_hybrid.c:107"
REGION_119 = "callpath:main/!$omp parallel @heat_hybrid.c:119"
FOR_107 = REGION_107 + "/!$omp for @heat_hybrid.c:107"
FOR_119 = REGION_119 + "/!$omp for @heat_hybrid.c:119"
# focus -> (least number of metrics both give exactly, what the profile cannot give and why)
FORKS = ("useful", "fork and join")
# where the useful time is the only unmeasured input: what the profile gives as an upper bound
BOUNDED = {"global_efficiency", "parallel_efficiency", "hybrid_parallel_efficiency", "communication_efficiency",
           "hybrid_communication_efficiency", "thread_efficiency", "openmp_parallel_efficiency",
           "openmp_communication_efficiency", "useful_time", "computation_granularity",
           "computation_granularity_collective", "hybrid_parallel_efficiency_by_paradigm",
           "hybrid_parallel_efficiency_by_cause"}
AGREEMENT_CASES = [
    ("hyb_1x2", "whole", 8, FORKS), ("hyb_1x2", "callpath:main", 8, FORKS),
    ("hyb_1x2", REGION_107, 2, FORKS), ("hyb_1x2", REGION_119, 2, FORKS),
    ("hyb_1x2", FOR_107, 34, None), ("hyb_1x2", FOR_119, 34, None),
    ("hyb_2x2", "whole", 8, FORKS), ("hyb_2x2", "callpath:main", 8, FORKS),
    ("hyb_2x2", REGION_107, 2, FORKS), ("hyb_2x2", REGION_119, 2, FORKS),
    ("hyb_2x2", FOR_107, 34, None),
    # the worker waits at the loop's barrier while its master, descheduled, has not begun: R is the union
    # of the team's visits, which per-thread totals cannot give
    ("hyb_2x2", FOR_119, 12, ("runtime", "union of the threads' visits")),
]


@pytest.mark.parametrize(("run", "focus", "least", "lacking"), AGREEMENT_CASES)
def test_scorep_trace_and_profile_of_one_run_agree(shared_traces, cache_dir, run, focus, least, lacking):
    """popview-heat: traces.otf2 and profile.cubex were written by the same Score-P run: every
    metric both give agrees within 0.01 (the profile has no ideal-network figures). Where masters
    fork teams in the focus, the profile charges their fork and join time (THREAD_FORK to the team's
    begin, its end to THREAD_JOIN) to the calling path as computation: on 2x2 (4 threads on 2 cores)
    2.361 s of descheduled masters, useful 6.687 s against the trace's 4.334 s. The profile does not
    give the metrics that depend on that split, and says why with the value Cube's Advisor shows,
    except those that can only grow with the useful time while their other inputs are exact: those
    it gives as upper bounds, and the trace's value is at most the bound (within 0.01); the trace
    gives every one of them (docs/metrics.md)."""
    d = shared_traces / "popview-heat/scorep" / run
    with popview.open(d / "traces.otf2", cache_dir=cache_dir) as trace, \
            popview.open(d / "profile.cubex", cache_dir=cache_dir) as profile:
        compared, apart, withheld, bounded = 0, [], [], {}
        for model in MODELS:
            a, b = trace.metrics(model, focus, use_replay=False), profile.metrics(model, focus)
            for _, node in a.walk():
                other = b.find(node.id)
                if node.value is None or other is None:
                    continue
                if other.value is None:
                    if "not available from this profile" in (other.reason or ""):
                        withheld.append(other)
                    continue
                if other.bound == "upper":
                    bounded[node.id] = other
                    if node.value > other.value + 0.01:
                        apart.append(f"{model} {node.id}: trace {node.value:.4f} above the profile's upper bound "
                                     f"{other.value:.4f}")
                    continue
                assert other.bound is None, other.bound
                compared += 1
                if abs(node.value - other.value) > 0.01:
                    apart.append(f"{model} {node.id}: trace {node.value:.4f}, profile {other.value:.4f}")
        unmeasured = focus_inputs(profile, focus).unmeasured
    assert not apart, "\n".join(apart)
    assert compared >= least
    if lacking is None:
        assert not withheld and not bounded
        return
    quantity, words = lacking
    assert quantity in unmeasured
    assert withheld and all(words in n.reason for n in withheld)
    ids = {n.id for n in withheld}
    if quantity == "useful" and "runtime" not in unmeasured:
        # R exact, the useful time the true one plus the masters' fork and join: bounds where provable
        assert set(bounded) == BOUNDED and not ids & BOUNDED
        assert all(n.reason.startswith("upper bound") and "fork and join" in n.reason for n in bounded.values())
        assert all("as Cube's Advisor does, gives" in n.reason for n in withheld)
    else:
        # R itself is not known (a parallel region, or a team in the focus at different times): no bounds
        assert not bounded
        assert {"parallel_efficiency", "hybrid_parallel_efficiency"} <= ids


def test_profile_counts_the_masters_fork_and_join_as_computation(shared_traces, cache_dir):
    """The cause, measured: on 2x2 the trace's masters spend 2.361 s between THREAD_FORK and their
    team's begin and between its end and THREAD_JOIN (otf2-print: 0.661 + 0.609 s on rank 0, 0.657 +
    0.435 s on rank 1; 0.0087 s in all on 1x2), exactly the useful time by which the profile exceeds
    the trace, and the profile's main exclusive time on rank 0 (1.8245 s) equals the trace's."""
    from popview.model.categories import CAT
    d = shared_traces / "popview-heat/scorep/hyb_2x2"
    with popview.open(d / "traces.otf2", cache_dir=cache_dir) as trace, \
            popview.open(d / "profile.cubex", cache_dir=cache_dir) as profile:
        t, p = focus_inputs(trace, "whole"), focus_inputs(profile, "whole")
        fork_join = t.cat[t.masters, CAT["omp_management"]]
        bound = profile.metrics("computation")["useful_time"]
        pe = profile.metrics("pop-mpi")["parallel_efficiency"], trace.metrics("pop-mpi", use_replay=False)
        assert trace.metrics("computation").value("useful_time") == pytest.approx(4.333, abs=0.002)
    assert fork_join.sum() == pytest.approx(2.361, abs=0.01)
    assert p.useful.sum() - t.useful.sum() == pytest.approx(fork_join.sum(), abs=0.01)
    assert bound.bound == "upper" and bound.value == pytest.approx(6.687, abs=0.002)
    # 33.6 % from the profile, at most that: the trace measures 21.8 %
    assert pe[0].bound == "upper" and pe[0].value == pytest.approx(0.336, abs=0.001)
    assert pe[1].value("parallel_efficiency") == pytest.approx(0.218, abs=0.001)
    np.testing.assert_allclose(t.outside_mpi, p.outside_mpi, atol=0.01)


def test_btmz_scout_regions_add_up_and_show_the_barrier(shared_traces, cache_dir):
    """BT-MZ 8x4 (Scalasca scout): the per-region children of the OpenMP region efficiency are each
    region's share of the run's loss and add up to their parent; with x_solve's parallel region as
    the focus its own efficiency shows the implicit-barrier waiting (the last thread of each team
    waits a quarter of the region)."""
    x_solve = "MAIN__/ITERATION/adi_/x_solve_/!$omp parallel @x_solve.f:46"
    with popview.open(shared_traces / TAUONK_SCOUT, cache_dir=cache_dir) as exp:
        whole = exp.metrics("hybrid-additive")["openmp_region_efficiency"]
        region = exp.metrics("hybrid-additive", f"callpath:{x_solve}")["openmp_region_efficiency"]
        prof = exp.profile()
        cp = prof.find(x_solve)
        wait, time = prof.by_location("omp_ibarrier_wait", cp), prof.by_location("time", cp)
    lost = sum(1 - c.value for c in whole.children if c.factor)
    assert 1 - whole.value == pytest.approx(lost, abs=1e-9)
    assert all(0 <= c.value <= 1 for c in whole.children)
    assert (wait / time).max() > 0.2                                   # the last thread waits
    assert 1 - region.value >= wait.sum() / time.sum() > 0.05            # the barrier shows in the figure
    assert region.value < 0.95
