"""The hybrid models on popview-heat, a real MPI+OpenMP program with built-in
imbalances (../shared/traces/popview-heat/README.md), and on the real traces
with one thread per process.

- The Extrae series 1x1 / 1x2 / 2x2 agrees with BSC basicanalysis's table
  within 0.01 wherever that table has a value (all threads as equal units).
- The imbalances show where the program puts them: MPI load balance below 1
  at 2x2 (rank 1 owns 1.5x the rows), the source-term region carries the
  OpenMP load imbalance, an Amdahl loss on the threaded runs.
- Multiplicative products are exact, additive children sum to their parent.
- With one thread per process every OpenMP factor is 1 within 0.01.
"""
from __future__ import annotations

import csv

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.report.candidates import callpath_shares

HEAT = "popview-heat"
RUNS = ("hyb_1x1", "hyb_1x2", "hyb_2x2")
BASIC = {"Parallel efficiency": "parallel_efficiency", "Load balance": "load_balance",
         "Communication efficiency": "communication_efficiency",
         "Serialization efficiency": "serialisation_efficiency", "Transfer efficiency": "transfer_efficiency",
         "Computation scalability": "computation_scalability", "Global efficiency": "global_efficiency",
         "Speedup": "speedup"}
HYBRID = ("hybrid-additive", "hybrid-multiplicative")
ONE_THREAD = ("pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz", "extraeCoursecodes/MPItraces/prime_v0.prv",
              "tracer-stencil4d/traces-32/traces.otf2", "pipit/ping-pong-otf2/traces.otf2",
              "profet-paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv", "popview-heat/extrae/hyb_1x1/hyb_1x1.prv")
OPENMP_FACTORS = {"hybrid-multiplicative": ("openmp_parallel_efficiency", "openmp_load_balance",
                                            "openmp_communication_efficiency"),
                  "hybrid-additive": ("thread_efficiency", "amdahl_efficiency", "openmp_region_efficiency")}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def series(shared_traces, cache):
    d = shared_traces / HEAT / "extrae"
    return popview.series([d / r / f"{r}.prv" for r in RUNS], cache_dir=cache)


def _basic_table(shared_traces) -> dict[str, list[float]]:
    path = shared_traces / HEAT / "reference" / "basicanalysis_series_hyb_1x1_1x2_2x2" / "modelfactors.csv"
    with open(path, newline="") as f:
        return {row[0]: [float(v) / 100 if row[0] != "Speedup" else float(v) for v in row[1:]]
                for row in csv.reader(f, delimiter=";") if row and row[0] in BASIC}


def test_extrae_series_agrees_with_basicanalysis(series, shared_traces):
    table = series.table("pop-mpi")
    checked = 0
    for name, values in _basic_table(shared_traces).items():
        for run, want in zip(series.labels, values):
            if np.isnan(want):
                continue
            got = table.loc[BASIC[name], run]
            assert got == pytest.approx(want, abs=0.01), f"{name} {run}: {got} vs basicanalysis {want}"
            checked += 1
    assert checked >= 20


def test_mpi_imbalance_at_2x2(series):
    trees = {m: series.trees(m)[2] for m in HYBRID}
    assert trees["hybrid-multiplicative"].find("mpi_load_balance").value < 0.99
    assert trees["hybrid-additive"].find("process_load_balance").value < 0.99


def test_source_term_region_carries_the_openmp_imbalance(series):
    for tree in series.trees("hybrid-additive")[1:]:
        lb = {n.id.split(":", 1)[1]: n.value for _, n in tree.walk() if n.id.startswith("openmp_region_load_balance:")}
        source = [v for k, v in lb.items() if k.endswith(("_omp_fn.0", "_omp_fn.0 @heat_hybrid.c:107"))]
        jacobi = [v for k, v in lb.items() if k.endswith(("_omp_fn.1", "_omp_fn.1 @heat_hybrid.c:119"))]
        assert len(source) == len(jacobi) == 1, lb
        assert 1 - source[0] > 0.01 and 1 - source[0] > 5 * (1 - jacobi[0]), (tree.experiment, lb)


def test_amdahl_loss_on_threaded_runs(series):
    amdahl = [t.find("amdahl_efficiency").value for t in series.trees("hybrid-additive")]
    assert amdahl[0] == pytest.approx(1, abs=1e-9)
    assert amdahl[1] < 0.95 and amdahl[2] < 0.98


def _check_tree(tree, where):
    for _, node in tree.walk():
        if node.value is None:
            continue
        if node.kind == "efficiency":
            assert -1e-9 <= node.value <= 1 + 1e-9 or node.warnings, f"{where}: {node.id} = {node.value}"
        kids = [c for c in node.children if c.value is not None and c.factor]
        if not kids or len(kids) < len([c for c in node.children if c.factor]):
            continue
        if node.combine == "product":
            assert np.prod([c.value for c in kids]) == pytest.approx(node.value, rel=1e-9), f"{where}: {node.id}"
        elif node.combine == "additive":
            lost = sum(1 - c.value for c in kids)
            assert lost == pytest.approx(1 - node.value, abs=1e-9), f"{where}: {node.id}"


@pytest.mark.parametrize("trace", ["extrae/hyb_1x2/hyb_1x2.prv", "extrae/hyb_2x2/hyb_2x2.prv",
                                   "scorep/hyb_1x2/traces.otf2", "scorep/hyb_2x2/traces.otf2"])
def test_heat_whole_and_call_paths_consistent(shared_traces, cache, trace):
    exp = popview.open(shared_traces / HEAT / trace, cache_dir=cache)
    profile = exp.profile()
    shares = callpath_shares(profile)
    top = [profile.path(int(c)) for c in np.argsort(-shares, kind="stable")[:8] if shares[c] >= 0.01]
    for model in ("pop-mpi", *HYBRID):
        _check_tree(exp.metrics(model, use_replay=False), f"{trace} {model} whole")
        for path in top:
            _check_tree(exp.metrics(model, Focus.on_callpath(path), use_replay=False), f"{trace} {model} {path}")


@pytest.mark.parametrize("trace", ONE_THREAD)
def test_one_thread_per_process_openmp_factors_are_one(shared_traces, cache, trace):
    exp = popview.open(shared_traces / trace, cache_dir=cache)
    for model, ids in OPENMP_FACTORS.items():
        tree = exp.metrics(model, use_replay=False)
        for metric in ids:
            assert tree.find(metric).value == pytest.approx(1, abs=0.01), f"{trace} {model} {metric}"


def test_a_time_window_carries_over_as_the_iterations_it_holds(shared_traces, cache):
    d = shared_traces / HEAT / "extrae"
    runs = [d / r / f"{r}.prv" for r in ("hyb_2x2", "hyb_1x1", "hyb_1x2")]
    s = popview.series(runs, focus=Focus.window(1_000_000_000, 1_200_000_000), cache_dir=cache, use_replay=False)
    assert s.focus.kind == "iterations" and s.focus.first > 0
    assert "every run is compared over these iterations" in s.focus_note
    for tree in s.trees("pop-mpi"):
        assert tree.focus == s.focus.label()
        assert 0 < tree.find("parallel_efficiency").value <= 1


def test_a_window_without_whole_iterations_shows_the_run_alone(shared_traces, cache):
    d = shared_traces / HEAT / "extrae"
    exp = popview.open(d / "hyb_2x2" / "hyb_2x2.prv", cache_dir=cache)
    ref = popview.open(d / "hyb_1x1" / "hyb_1x1.prv", cache_dir=cache)
    tree = exp.metrics("pop-mpi", Focus.window(1_000_000_000, 1_000_100_000), reference=ref, use_replay=False)
    assert tree.find("global_efficiency").value is None
    assert "time window does not carry over" in tree.find("computation_scalability").reason
    assert any("this run is shown alone" in n for n in tree.notes)
    with pytest.raises(ValueError, match="no whole iteration"):
        popview.series([exp, ref], focus=Focus.window(1_000_000_000, 1_000_100_000))


def test_a_run_dominated_by_mpi_init_says_so_next_to_the_figure(shared_traces, cache):
    exp = popview.open(shared_traces / "tracer-stencil4d" / "traces-32" / "traces.otf2", cache_dir=cache)
    tree = exp.metrics("hybrid-multiplicative", use_replay=False)
    assert any("MPI_Init takes" in w and "automatic focus" in w for w in tree.roots[0].warnings)
    heat = popview.open(shared_traces / HEAT / "scorep" / "hyb_1x2" / "traces.otf2", cache_dir=cache)
    assert not any("MPI_Init" in w for w in heat.metrics("pop-mpi", use_replay=False).roots[0].warnings)


def _values(tree, bound=None) -> dict[str, float]:
    return {n.id: n.value for _, n in tree.walk() if n.value is not None and n.kind == "efficiency"
            and n.bound == bound}


@pytest.mark.parametrize("run", ["hyb_1x2", "hyb_2x2"])
def test_scorep_trace_agrees_with_the_profile_of_the_same_run(shared_traces, cache, run):
    """Every efficiency both give agrees within 0.01. The profile counts the masters' fork and join
    time as computation in main (2x2, 4 threads on 2 cores: descheduled masters between ThreadFork
    and their team's begin), so it gives the process level, which does not depend on that split, and
    gives as upper bounds what can only grow with the useful time (the trace's value is at most the
    bound), withholding the rest with the reason; the useful time differs by that fork and join time."""
    d = shared_traces / HEAT / "scorep" / run
    trace = popview.open(d / "traces.otf2", cache_dir=cache)
    profile = popview.open(d / "profile.cubex", cache_dir=cache)
    process_level = {"process_efficiency", "process_load_balance", "mpi_communication_efficiency",
                     "mpi_parallel_efficiency", "mpi_load_balance"}
    bounded = {"global_efficiency", "parallel_efficiency", "thread_efficiency", "communication_efficiency",
               "hybrid_parallel_efficiency", "hybrid_communication_efficiency", "openmp_parallel_efficiency",
               "openmp_communication_efficiency", "hybrid_parallel_efficiency_by_paradigm",
               "hybrid_parallel_efficiency_by_cause"}
    compared, below = set(), set()
    for model in ("pop-mpi", *HYBRID):
        t, p = (_values(e.metrics(model, use_replay=False)) for e in (trace, profile))
        for metric in t.keys() & p.keys():
            assert t[metric] == pytest.approx(p[metric], abs=0.01), f"{run} {model} {metric}"
            compared.add(metric)
        assert "parallel_efficiency" in t or "hybrid_parallel_efficiency" in t
        upper = _values(profile.metrics(model), bound="upper")
        for metric in t.keys() & upper.keys():
            assert t[metric] <= upper[metric] + 0.01, f"{run} {model} {metric}: above the profile's bound"
            below.add(metric)
    assert compared == process_level
    assert below == bounded
    if run == "hyb_2x2":
        from popview.analysis.metrics import focus_inputs
        from popview.model.categories import CAT
        t, p = focus_inputs(trace, "whole"), focus_inputs(profile, "whole")
        fork = t.cat[t.masters, CAT["omp_management"]].sum()
        assert p.useful.sum() - t.useful.sum() == pytest.approx(fork, rel=0.05)


def test_candidates_show_efficiencies_in_range_and_name_their_region(shared_traces, cache):
    from popview.analysis.report import candidates
    exp = popview.open(shared_traces / HEAT / "extrae" / "hyb_2x2" / "hyb_2x2.prv", cache_dir=cache)
    found = {model: candidates.find(exp, model, threshold=0.8) for model in HYBRID}
    assert found["hybrid-additive"]
    for cands in found.values():
        for c in cands:
            assert all(0 <= v <= 1 for _, v in c.low), c.summary()
            assert not any(name == "Fork, join and runtime" for name, _ in c.low), c.summary()


def test_a_name_shared_by_two_models_means_one_quantity(series):
    """docs/metrics.md, Labels: a name says its model where two models define a quantity of the
    same name differently. On heat 2x2 the critical-path model's "Serialisation efficiency" was
    73.3 % and its "Transfer efficiency" 33.9 % beside POP MPI's 27.3 % and 90.9 % (G-CUE, the
    critical path with free runtimes, against R_ideal, the ideal network), in one `--model all`
    table and report."""
    from popview.analysis.models import ALL
    seen: dict[str, dict[str, float]] = {}
    for model in ALL:
        for _, node in series.trees(model)[-1].walk():
            if ":" not in node.id and node.value is not None:
                seen.setdefault(node.name, {}).setdefault(model, node.value)
    clashes = {name: v for name, v in seen.items() if len(v) > 1 and max(v.values()) - min(v.values()) > 1e-9}
    assert not clashes, clashes


@pytest.mark.parametrize("trace", ["extrae/hyb_2x2/hyb_2x2.prv", "scorep/hyb_2x2/traces.otf2"])
def test_auto_focus_falls_back_on_the_mpi_call_made_once_per_iteration(shared_traces, cache, trace):
    """heat has no repeating user region (its loop is inline in main): the automatic focus takes the
    iterations of the MPI call every process makes once per iteration, from the second visit to the
    last (200 iterations: 1-199), not the whole run with its initialisation, and says so."""
    with popview.open(shared_traces / HEAT / trace, cache_dir=cache) as exp:
        tree = exp.metrics("pop-mpi", "auto", use_replay=False)
        whole = exp.metrics("pop-mpi", "whole", use_replay=False)
    assert tree.focus.endswith("iterations 1-199") and tree.focus.split("/")[-1].startswith("MPI_")
    assert any(n.startswith("automatic focus:") and "once per iteration" in n for n in tree.notes)
    assert tree.value("parallel_efficiency") != pytest.approx(whole.value("parallel_efficiency"), abs=1e-6)
