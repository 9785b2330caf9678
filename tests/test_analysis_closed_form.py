"""POP metrics of synthetic traces whose figures are known in closed form."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.metrics import focus_inputs
from popview.testing.synthetic import Shape, write

NS = 1e9


def _open(tmp_path, cache_dir, shape, name="t.prv"):
    expected = write(tmp_path / name, shape)
    return popview.open(tmp_path / name, cache_dir=cache_dir), expected


@pytest.mark.parametrize("P", [2, 3, 4])
def test_linear_imbalance_gives_load_balance_p_over_2p_minus_1(tmp_path, cache_dir, P):
    W, cost = 1_000_000, 2_000
    shape = Shape(processes=P, iterations=5, work_ns=W, rank_weights=tuple(1 + 2 * r for r in range(P)),
                  sendrecv=False, allreduce=False, mpi_cost_ns=cost, init_ns=50_000, fini_ns=30_000)
    exp, _ = _open(tmp_path, cache_dir, shape)
    with exp:
        whole = exp.metrics("pop-mpi", "whole", use_replay=False)
        assert whole.value("load_balance") == pytest.approx(P / (2 * P - 1), rel=1e-12)
        loop = exp.metrics("pop-mpi", "callpath:main/timestep", use_replay=False)
        assert loop.value("load_balance") == pytest.approx(P / (2 * P - 1), rel=1e-12)
        # R = 5 iterations of W(2P-1) + barrier cost; avg useful = 5 W P
        assert loop.value("parallel_efficiency") == pytest.approx(W * P / (W * (2 * P - 1) + cost), rel=1e-12)
        assert loop.value("communication_efficiency") == pytest.approx(W * (2 * P - 1) / (W * (2 * P - 1) + cost))


@pytest.mark.parametrize("s,T", [(0.1, 2), (0.25, 4), (0.5, 3)])
def test_serial_fraction_gives_amdahl_efficiency(tmp_path, cache_dir, s, T):
    shape = Shape(processes=1, threads=T, iterations=4, work_ns=1_200_000, serial_fraction=s,
                  allreduce=False, barrier=False)
    exp, _ = _open(tmp_path, cache_dir, shape)
    with exp:
        tree = exp.metrics("hybrid-additive", "whole", use_replay=False)
        amdahl = 1 / (1 + s * (T - 1))          # Amdahl's speed-up divided by T
        assert tree.value("amdahl_efficiency") == pytest.approx(amdahl, rel=1e-9)
        assert tree.value("parallel_efficiency") == pytest.approx(amdahl, rel=1e-9)
        assert tree.value("openmp_region_efficiency") == pytest.approx(1.0, rel=1e-12)
        assert tree.value("process_efficiency") == pytest.approx(1.0, rel=1e-12)


HYBRID = Shape(processes=3, threads=4, iterations=3, work_ns=900_000, rank_weights=(1.0, 1.5, 2.0),
               thread_weights=(1.0, 1.2, 0.8, 1.4), serial_fraction=0.15, parallel_regions=3, fork_ns=3_000,
               init_ns=40_000, fini_ns=20_000)


@pytest.mark.parametrize("focus", ["whole", "callpath:main/timestep", "auto", "window:0.0001:0.0021"])
def test_hybrid_models_compose_exactly(tmp_path, cache_dir, focus):
    exp, _ = _open(tmp_path, cache_dir, HYBRID)
    with exp:
        add = exp.metrics("hybrid-additive", focus)
        mul = exp.metrics("hybrid-multiplicative", focus)
        for tree in (add, mul):
            assert tree.inconsistencies(1e-12) == []
        regions = [n for n in add["openmp_region_efficiency"].children]
        assert len([n for n in regions if n.id != "openmp_region_efficiency:unattributed"]) == 3
        lost = sum(1 - n.value for n in regions)
        assert 1 - add.value("openmp_region_efficiency") == pytest.approx(lost, abs=1e-12)
        # the thread imbalance shows where it is: in every region, not in the serial part
        assert all(n.value < 1 for n in regions if n.id != "openmp_region_efficiency:unattributed")


def test_hybrid_figures_match_the_schedule(tmp_path, cache_dir):
    exp, ex = _open(tmp_path, cache_dir, HYBRID)
    with exp:
        x = focus_inputs(exp, Focus.whole())
        np.testing.assert_allclose(x.useful, ex.useful_ns / NS, rtol=1e-12)
        np.testing.assert_allclose(x.serial_useful, ex.serial_useful_ns / NS, rtol=1e-12)
        np.testing.assert_allclose(x.openmp, ex.openmp_ns / NS, rtol=1e-12)
        np.testing.assert_allclose(x.mpi, ex.mpi_ns / NS, rtol=1e-12)
        assert x.runtime == ex.runtime_ns / NS
        for k, region in enumerate(x.regions):
            np.testing.assert_allclose(region.openmp, ex.region_openmp_ns[k] / NS, rtol=1e-12)
            np.testing.assert_allclose(region.useful, ex.region_omp_useful_ns[k] / NS, rtol=1e-12)
        tree = exp.metrics("hybrid-multiplicative", "whole", use_replay=False)
        assert tree.value("hybrid_load_balance") == pytest.approx(ex.load_balance(), rel=1e-12)
        assert tree.value("mpi_parallel_efficiency") == pytest.approx(
            ex.outside_mpi_ns.sum() / (3 * ex.runtime_ns), rel=1e-12)


def test_multiplicative_model_shows_two_alternative_splits_each_equal_to_its_parent(tmp_path, cache_dir):
    """Every child shown under a product node is one of its factors: the multiplicative model's
    two splits (by paradigm, by cause) are two labelled alternatives, each the parent's product."""
    exp, _ = _open(tmp_path, cache_dir, HYBRID)
    with exp:
        tree = exp.metrics("hybrid-multiplicative", "whole", use_replay=False)
    pe = tree["hybrid_parallel_efficiency"]
    for _, n in tree.walk():
        if n.combine == "product":
            assert all(c.factor for c in n.children), n.id
    splits = {c.id: c for c in pe.children}
    assert set(splits) == {"hybrid_parallel_efficiency_by_paradigm", "hybrid_parallel_efficiency_by_cause"}
    paradigm, cause = (splits["hybrid_parallel_efficiency_by_" + k] for k in ("paradigm", "cause"))
    assert "MPI x OpenMP" in paradigm.name and "load balance x communication" in cause.name
    assert [c.id for c in paradigm.children] == ["mpi_parallel_efficiency", "openmp_parallel_efficiency"]
    assert [c.id for c in cause.children] == ["hybrid_load_balance", "hybrid_communication_efficiency"]
    for split in (paradigm, cause):
        assert split.value == pytest.approx(pe.value, rel=1e-12)
        assert np.prod([c.value for c in split.children]) == pytest.approx(pe.value, rel=1e-12)
    assert tree.inconsistencies(1e-12) == []


def test_windows_clip_intervals_exactly(tmp_path, cache_dir):
    exp, ex = _open(tmp_path, cache_dir, HYBRID)
    with exp:
        st = exp.reader.read("states")
        cls = st["state"] == 1
        rng = np.random.default_rng(7)
        for _ in range(6):
            t0, t1 = np.sort(rng.integers(0, ex.runtime_ns, 2))
            if t1 == t0:
                continue
            x = focus_inputs(exp, Focus.window(int(t0), int(t1)))
            clipped = np.clip(st["end"], t0, t1) - np.clip(st["begin"], t0, t1)
            brute = np.bincount(st["loc"][cls], weights=clipped[cls], minlength=12) / NS
            np.testing.assert_allclose(x.useful, brute, rtol=1e-9, atol=1e-15)
            assert x.runtime == pytest.approx((t1 - t0) / NS)


def test_iterations_and_auto_focus(tmp_path, cache_dir):
    exp, ex = _open(tmp_path, cache_dir, HYBRID)
    with exp:
        it = focus_inputs(exp, Focus.iterations("main/timestep", 1, 1))
        assert it.runtime == pytest.approx(ex.iteration_ns / NS, rel=1e-12)
        np.testing.assert_allclose(it.useful, ex.useful_ns / NS / 3, rtol=1e-12)
        auto = exp.metrics("pop-mpi", "auto", use_replay=False)
        assert "main/timestep" in auto.focus and any("automatic focus" in n for n in auto.notes)
        loop = exp.metrics("pop-mpi", "iterations:main/timestep:0:2", use_replay=False)
        assert auto.value("parallel_efficiency") == pytest.approx(loop.value("parallel_efficiency"))
        with pytest.raises(FocusError):
            focus_inputs(exp, Focus.iterations("main/timestep", 0, 3))
        with pytest.raises(FocusError):
            focus_inputs(exp, Focus.on_callpath("main/nowhere"))


def test_counters_and_computation_figures(tmp_path, cache_dir):
    exp, ex = _open(tmp_path, cache_dir, Shape(processes=2, threads=2, iterations=3, ipc=1.25, ghz=2.5,
                                               serial_fraction=0.2))
    with exp:
        comp = exp.metrics("computation", "whole")
        assert comp.value("ipc") == pytest.approx(1.25, rel=1e-9)
        assert comp.value("clock_rate") == pytest.approx(2.5, rel=1e-9)
        assert comp.value("useful_instructions") == pytest.approx(ex.instructions.sum())
        # 3 MPI calls per iteration per process, 2 of them collective
        assert comp.value("computation_granularity") == pytest.approx(ex.useful_ns.sum() / NS / 18)
        assert comp.value("computation_granularity_collective") == pytest.approx(ex.useful_ns.sum() / NS / 12)
        assert comp["vectorization_efficiency"].value is None
        assert "FP_ARITH" in comp["vectorization_efficiency"].reason


def test_missing_inputs_are_not_available_with_a_reason(tmp_path, cache_dir):
    exp, _ = _open(tmp_path, cache_dir, Shape(processes=2, iterations=2, counters=False))
    with exp:
        tree = exp.metrics("pop-mpi", "whole", use_replay=False)
        assert tree["ipc_scalability"].value is None and "PAPI_TOT_INS" in tree["ipc_scalability"].reason
        assert tree["serialisation_efficiency"].value is None and tree["serialisation_efficiency"].reason
        assert tree["computation_scalability"].value == pytest.approx(1.0)   # useful time needs no counter
        frame = tree.to_frame()
        assert frame.loc["ipc_scalability", "reason"]
        assert tree.to_dict()["metrics"][0]["id"] == "global_efficiency"


def test_an_efficiency_above_one_is_flagged_not_clipped(tmp_path, cache_dir):
    from popview.analysis.models.base import Context, evaluate
    from popview.analysis.models.pop_mpi import PARALLEL

    exp, _ = _open(tmp_path, cache_dir, Shape(processes=2, iterations=2))
    with exp:
        x = focus_inputs(exp, Focus.whole())

        class Replay:            # an "ideal" runtime shorter than the busiest useful time
            r_ideal = float(x.useful.max()) / 2

        node = evaluate(PARALLEL, Context(x=x, ref=x, replay_loader=lambda: Replay()))
        ser = [n for _, n in node.walk() if n.id == "serialisation_efficiency"][0]
        assert ser.value == pytest.approx(2.0)
        assert ser.warnings and "unclipped" in ser.warnings[0]


def test_series_scalabilities_and_scaling_guess(tmp_path, cache_dir):
    from popview.testing.synthetic import write_scaling_series
    runs = write_scaling_series(tmp_path / "series", shapes=((1, 2), (2, 2), (4, 2)), iterations=3)
    s = popview.series([p for p, _ in runs], cache_dir=cache_dir, use_replay=False)
    assert s.reference.label == "1x2" and s.scaling == "strong"
    table = s.table("pop-mpi")
    exp1, exp4 = runs[0][1], runs[2][1]
    assert table.loc["computation_scalability", "4x2"] == pytest.approx(
        exp1.useful_ns.sum() / exp4.useful_ns.sum(), rel=1e-12)
    assert table.loc["speedup", "4x2"] == pytest.approx(exp1.runtime_ns / exp4.runtime_ns, rel=1e-12)
    assert table.loc["instruction_scalability", "4x2"] == pytest.approx(
        exp1.instructions.sum() / exp4.instructions.sum(), rel=1e-12)
    weak = popview.series([p for p, _ in runs], cache_dir=cache_dir, scaling="weak", use_replay=False)
    assert weak.table("pop-mpi").loc["computation_scalability", "4x2"] == pytest.approx(
        exp1.useful_ns.sum() / exp4.useful_ns.sum() * 4, rel=1e-12)
    for trees in (s.trees("hybrid-additive"), s.trees("hybrid-multiplicative"), s.trees("pop-mpi")):
        for t in trees:
            assert t.inconsistencies(1e-12) == []
