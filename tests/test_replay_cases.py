"""The replay on synthetic runs whose critical paths are known in closed form."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.replay import clear_cache, replay
from popview.testing import replay_cases as cases

EXACT = {"rel": 1e-9, "abs": 1e-12}


def _run(tmp_path, make, **kw):
    path, expected = make(tmp_path / "trace", **kw)
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    return exp, replay(exp), expected


def _assert_expected(result, expected):
    assert result.r == pytest.approx(expected.r, **EXACT)
    assert result.g_cue == pytest.approx(expected.g_cue, **EXACT)
    assert result.r_ideal == pytest.approx(expected.r_ideal, **EXACT)
    assert result.g_coo == pytest.approx(expected.g_coo, **EXACT)
    assert result.g_com == pytest.approx(expected.g_com, **EXACT)
    np.testing.assert_allclose(result.pl_cue, expected.pl_cue, rtol=1e-9)
    np.testing.assert_allclose(result.tl_cue, expected.tl_cue, rtol=1e-9)
    assert not result.approximate, result.notes
    # the critical-path profile accounts for every useful second on the path
    assert result.critical_path_profile.sum() + result.critical_path_outside == pytest.approx(result.g_cue, **EXACT)


@pytest.mark.parametrize("ranks", [2, 4, 7])
def test_pipeline_serialisation_is_one_over_ranks(tmp_path, ranks):
    exp, result, expected = _run(tmp_path, cases.pipeline, ranks=ranks)
    _assert_expected(result, expected)
    assert result.serialisation_efficiency == pytest.approx(1 / ranks, **EXACT)
    assert result.n_messages_matched == ranks - 1
    # the path runs through the ranks in order, each one's work once
    path = result.critical_path
    assert list(np.unique(path["loc"])) == list(range(ranks))
    assert np.all(np.diff(path["begin"]) >= 0)


def test_transfer_cost_gives_transfer_efficiency(tmp_path):
    exp, result, expected = _run(tmp_path, cases.transfer, iterations=5, work=1000.0, cost=250.0)
    _assert_expected(result, expected)
    assert result.transfer_efficiency == pytest.approx(1000 / 1250, **EXACT)
    assert result.serialisation_efficiency == pytest.approx(1.0, **EXACT)


@pytest.mark.parametrize("ranks", [2, 4])
def test_imbalanced_work_before_collectives(tmp_path, ranks):
    exp, result, expected = _run(tmp_path, cases.imbalanced_collectives, ranks=ranks)
    _assert_expected(result, expected)
    assert result.serialisation_efficiency == pytest.approx(1.0, **EXACT)
    load_balance = result.tl_cue.mean() / result.tl_cue.max()
    assert load_balance == pytest.approx(ranks / (2 * ranks - 1), **EXACT)
    assert result.n_collectives == 3


@pytest.mark.parametrize("kind", ["reduce", "bcast"])
def test_rooted_collectives_follow_the_root(tmp_path, kind):
    exp, result, expected = _run(tmp_path, cases.rooted, kind=kind)
    _assert_expected(result, expected)


def test_openmp_barrier_hands_clocks_over(tmp_path):
    exp, result, expected = _run(tmp_path, cases.openmp_barrier)
    _assert_expected(result, expected)


def _critical_path_factors(exp, result) -> dict[str, float]:
    """Seed 000 2.1.4 from a replay (tests only; the metric models own this)."""
    t = result.tl_cue
    proc = exp.definitions.location_process()
    n_threads = np.bincount(proc)
    per_proc_max = np.array([t[proc == p].max() for p in range(len(n_threads))])
    weighted_max = float((n_threads * per_proc_max).sum())
    return {
        "load_balance_openmp": t.sum() / weighted_max,
        "load_balance_mpi": weighted_max / (len(t) * t.max()),
        "serialisation_efficiency_openmp": t.max() / result.pl_cue.max(),
        "serialisation_efficiency_mpi": result.pl_cue.max() / result.g_cue,
        "transfer_efficiency_openmp": result.g_coo / result.r,
        "transfer_efficiency_mpi": result.g_cue / result.g_coo,
    }


def test_hybrid_factors_are_known_and_multiply_to_parallel_efficiency(tmp_path):
    exp, result, expected = _run(tmp_path, cases.hybrid)
    _assert_expected(result, expected)
    f = _critical_path_factors(exp, result)
    # from the parameters: useful 1000/700 (rank 0), 1100/1100 (rank 1); PL 1300/1700;
    # G-CUE 2100, G-COO 2400, runtime 2550 (microseconds)
    known = {"load_balance_openmp": 3900 / 4200, "load_balance_mpi": 4200 / 4400,
             "serialisation_efficiency_openmp": 1100 / 1700, "serialisation_efficiency_mpi": 1700 / 2100,
             "transfer_efficiency_openmp": 2400 / 2550, "transfer_efficiency_mpi": 2100 / 2400}
    for name, value in known.items():
        assert f[name] == pytest.approx(value, **EXACT), name
        assert f[name] < 1.0
    parallel_efficiency = result.tl_cue.mean() / result.r
    assert np.prod(list(f.values())) == pytest.approx(parallel_efficiency, **EXACT)


def test_window_focus_measures_only_the_window(tmp_path):
    path, expected = cases.imbalanced_collectives(tmp_path / "trace", ranks=3, iterations=3, work=1000.0, cost=100.0)
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    step = 5000 + 100                      # longest work + allreduce, microseconds
    window = Focus.window(step * 1000, 2 * step * 1000)
    result = replay(exp, window)
    assert result.r == pytest.approx(step * 1e-6, **EXACT)
    assert result.g_cue == pytest.approx(5000e-6, **EXACT)
    np.testing.assert_allclose(result.tl_cue, [1000e-6, 3000e-6, 5000e-6], rtol=1e-9)
    assert replay(exp, window) is result          # cached per cache file and focus


def test_callpath_focus_uses_the_masters_visits(tmp_path):
    path, expected = cases.hybrid(tmp_path / "trace")
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    result = replay(exp, Focus.on_callpath("!$omp parallel"))          # Extrae's "REGION (open)"
    # inside the parallel regions only the threads' work counts: per iteration
    # max(work) of the parameter set each process runs (A: 200, B: 500); no
    # dependency between processes is followed (each one's visits lie at other
    # times), so G-CUE is the longest process-local path and stays within R
    np.testing.assert_allclose(result.pl_cue, [(200 + 500 + 200) * 1e-6, (500 + 200 + 500) * 1e-6], rtol=1e-9)
    assert result.g_cue == pytest.approx(1200e-6, **EXACT)
    assert result.g_cue <= result.r_ideal <= result.r
    assert any("call-path focus" in n for n in result.notes)


def test_a_message_received_before_it_was_sent_is_not_followed(tmp_path):
    exp = popview.open(cases.skewed(tmp_path / "trace"), cache_dir=tmp_path / "cache")
    clear_cache()
    result = replay(exp)
    assert result.approximate
    assert any("before they were sent" in n for n in result.notes)
    assert not any("cyclic" in n for n in result.notes)      # the backwards message made the cycle
    # each rank's own 270 of work; rank 1's receive (at 150) waits for rank 0's send (clock 80)
    assert result.g_cue == pytest.approx(270e-6, **EXACT)
    assert result.r_ideal == pytest.approx(270e-6, **EXACT)
    path = result.critical_path
    assert path["begin"][0] == 0 and path["end"][-1] == 300 * 1000
    assert np.array_equal(path["begin"][1:], path["end"][:-1])


def test_iterations_focus_spans_the_chosen_visits(tmp_path):
    path, expected = cases.imbalanced_collectives(tmp_path / "trace", ranks=3, iterations=3, work=1000.0, cost=100.0)
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    # iterations 1-2 (0-based), as the metric inputs take them: the window from
    # the earliest entry of an MPI_Allreduce #1 (rank 0's, 1000 into step 2) to the
    # latest exit of #2; ranks 1 and 2 still work there for 2000 / 4000 of step 2
    result = replay(exp, Focus.iterations("MPI_Allreduce", 1, 2))
    step = 5000 + 100
    assert result.r == pytest.approx((2 * step - 1000) * 1e-6, **EXACT)
    assert result.g_cue == pytest.approx(9000e-6, **EXACT)
    np.testing.assert_allclose(result.tl_cue, [1000e-6, 5000e-6, 9000e-6], rtol=1e-9)
    path = result.critical_path
    assert path["begin"][0] == (step + 1000) * 1000 and path["end"][-1] == 3 * step * 1000


def test_dimemas_model_holds_large_sends_until_the_receive_is_posted(tmp_path):
    exp = popview.open(cases.rendezvous(tmp_path / "trace"), cache_dir=tmp_path / "cache")
    assert replay(exp).g_cue == pytest.approx(590e-6, **EXACT)
    assert replay(exp, model="dimemas").r_ideal == pytest.approx(600e-6, **EXACT)
    with pytest.raises(ValueError, match="unknown replay model"):
        replay(exp, model="scalasca")


def test_window_replays_only_the_messages_inside(tmp_path):
    path, expected = cases.transfer(tmp_path / "trace", iterations=5, work=1000.0, cost=250.0)
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    # from the middle of the 2nd computation to the end of the 4th exchange
    result = replay(exp, Focus.window(1750_000, 5000_000))
    assert result.r == pytest.approx(3250e-6, **EXACT)
    assert result.g_cue == pytest.approx((500 + 1000 + 1000) * 1e-6, **EXACT)
    # the exchanges ending at 2500 and 3750; the one arriving at the window's end changes nothing
    assert result.n_messages_matched == 2 * 2


def test_halves_the_reader_could_not_pair_are_reported(tmp_path):
    path, _ = cases.transfer(tmp_path / "trace", iterations=2)
    exp = popview.open(path, cache_dir=tmp_path / "cache")
    exp.definitions.warnings.append("3 MPI sends and 2 receives without a matching partner were left out")
    clear_cache()
    result = replay(exp)
    assert result.n_unmatched == 5 and result.approximate
    assert any("without a partner" in n for n in result.notes)
    clear_cache()


def test_barriers_belong_to_the_open_region_of_their_process():
    from popview.analysis.replay.openmp import enclosing_region

    regions = {"process": np.array([0, 0, 1]), "begin": np.array([0, 20, 5]), "end": np.array([10, 30, 15])}
    proc = np.array([0, 0, 1, 1, 0])
    time = np.array([25, 15, 5, 16, 0])
    assert list(enclosing_region(regions, proc, time)) == [1, -1, 2, -1, 0]


def test_openmp_barrier_time_weighs_on_the_ideal_network(tmp_path):
    """2 processes x 4 threads, Extrae-style OpenMP barriers (state 5): the
    classic serialisation counts the barrier time as non-MPI work."""
    exp, result, expected = _run(tmp_path, cases.hybrid_barriers)
    _assert_expected(result, expected)
    # microseconds: max useful 1200 (process 1, thread 2), R_ideal 1560, R 1660,
    # G-CUE 1500, G-COO 1600; masters outside MPI 1260 / 1560
    assert result.r_ideal == pytest.approx(1560e-6, **EXACT)
    assert result.g_coo == pytest.approx(1600e-6, **EXACT)     # the barrier is OpenMP runtime, not MPI
    np.testing.assert_allclose(result.non_mpi[[0, 4]], [1260e-6, 1560e-6], rtol=1e-9)
    known = {
        "pop-mpi": {"serialisation_efficiency": 1200 / 1560, "transfer_efficiency": 1560 / 1660},
        "hybrid-multiplicative": {"mpi_serialisation_efficiency": 1560 / 1560,
                                  "mpi_transfer_efficiency": 1560 / 1660},
        "critical-path": {"serialisation_efficiency": 1200 / 1500, "transfer_efficiency": 1500 / 1660,
                          "transfer_efficiency_openmp": 1600 / 1660, "transfer_efficiency_mpi": 1500 / 1600},
    }
    for model, values in known.items():
        tree = exp.metrics(model, "whole")
        for metric, value in values.items():
            assert tree.value(metric) == pytest.approx(value, **EXACT), (model, metric)
