"""Hybrid additive MPI serialisation and transfer efficiencies from the replay
(seed 001; METRICS.md 2): mpi_ideal[p] = G-COM - outside_mpi[p], where
G-COM is the ideal runtime when MPI outside OpenMP costs nothing. With
non_mpi[p] = openmp[p] + serial_useful[p] and nothing else outside MPI on
the masters, serialisation = 1 - (G-COM - max non_mpi) / R and transfer =
G-COM / R; their inefficiencies sum to the MPI communication inefficiency."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import popview
from popview.analysis.focus import Focus
from popview.analysis.metrics import focus_inputs
from popview.analysis.replay import replay
from popview.testing import replay_cases as cases
from popview.testing.synthetic import Shape, write

EXACT = {"rel": 1e-9, "abs": 1e-12}
IDS = ("mpi_communication_efficiency", "mpi_serialisation_efficiency", "mpi_transfer_efficiency")


def _additive(exp, focus="whole"):
    """(MPI communication, serialisation, transfer efficiency)."""
    tree = exp.metrics("hybrid-additive", focus)
    return tuple(tree.value(i) for i in IDS)


def _case(tmp_path, make, **kw):
    path, _ = make(tmp_path / "trace", **kw)
    return popview.open(path, cache_dir=tmp_path / "cache")


def test_hybrid_case_closed_form(tmp_path):
    """Per iteration process p runs serial s then a region of fork 50 + max work;
    paths serial + max work are 300 (A) and 700 (B); the allreduce ends 100
    after the last join. R = 3 (700 + 50 + 100) = 2550; G-COM = 3 (700 + 50) =
    2250; non_mpi = (350, 750, 350) and (750, 350, 750) summed: 1450, 1850."""
    with _case(tmp_path, cases.hybrid) as exp:
        comm, ser, transfer = _additive(exp)
        assert comm == pytest.approx(1850 / 2550, **EXACT)
        assert ser == pytest.approx(1 - (2250 - 1850) / 2550, **EXACT)
        assert transfer == pytest.approx(2250 / 2550, **EXACT)
        rp = replay(exp)
        np.testing.assert_allclose(rp.outside_mpi, [1450e-6, 1850e-6], rtol=1e-12)
        np.testing.assert_allclose(rp.mpi_ideal, [800e-6, 400e-6], rtol=1e-12)


@pytest.mark.parametrize("ranks", [2, 4])
def test_pipeline_closed_form(tmp_path, ranks):
    """Each rank works 1000 in a chain (transfers of 100, a final barrier of 50):
    on the ideal network the chain still takes ranks x 1000."""
    with _case(tmp_path, cases.pipeline, ranks=ranks) as exp:
        r = ranks * 1000 + (ranks - 1) * 100 + 50
        comm, ser, transfer = _additive(exp)
        assert comm == pytest.approx(1000 / r, **EXACT)
        assert ser == pytest.approx(1 - (ranks - 1) * 1000 / r, **EXACT)
        assert transfer == pytest.approx(ranks * 1000 / r, **EXACT)


def test_pure_transfer_closed_form(tmp_path):
    with _case(tmp_path, cases.transfer, iterations=5, work=1000.0, cost=250.0) as exp:
        comm, ser, transfer = _additive(exp)
        assert ser == pytest.approx(1.0, **EXACT)
        assert transfer == pytest.approx(1000 / 1250, **EXACT)
        assert comm == pytest.approx(transfer, **EXACT)


def test_synthetic_2x4_hybrid_closed_form(tmp_path, cache_dir):
    """The synthetic schedule waits only for imbalance (ring neighbours, then
    collectives): serialisation 1, transfer = max non_mpi / R. MPI_Init and
    MPI_Finalize (state "Others" inside MPI calls) cost nothing on the ideal
    network; the OpenMP synchronisation state inside regions is OpenMP time."""
    shape = Shape(processes=2, threads=4, iterations=3, work_ns=900_000, rank_weights=(1.0, 1.6),
                  thread_weights=(1.0, 1.2, 0.8, 1.4), serial_fraction=0.15, parallel_regions=2, fork_ns=3_000,
                  init_ns=40_000, fini_ns=20_000)
    ex = write(tmp_path / "h.prv", shape)
    with popview.open(tmp_path / "h.prv", cache_dir=cache_dir) as exp:
        non_mpi = (ex.openmp_ns + ex.serial_useful_ns) / 1e9
        r = ex.runtime_ns / 1e9
        comm, ser, transfer = _additive(exp)
        assert ser == pytest.approx(1.0, **EXACT)
        assert transfer == pytest.approx(non_mpi.max() / r, **EXACT)
        rp = replay(exp)
        np.testing.assert_allclose(rp.outside_mpi, non_mpi, rtol=1e-12)
        assert rp.g_com == pytest.approx(non_mpi.max(), **EXACT)
        mpi = r - non_mpi
        np.testing.assert_allclose(rp.mpi_ideal, non_mpi.max() - non_mpi, rtol=1e-12, atol=1e-15)
        assert np.all(rp.mpi_ideal <= mpi)


@st.composite
def _shapes(draw):
    P = draw(st.integers(1, 4))
    T = draw(st.integers(1, 4))
    weights = st.floats(0.2, 3.0, allow_nan=False)
    return Shape(
        processes=P, threads=T, iterations=draw(st.integers(1, 3)),
        work_ns=draw(st.integers(10_000, 1_000_000)),
        rank_weights=tuple(draw(st.lists(weights, min_size=P, max_size=P))),
        thread_weights=tuple(draw(st.lists(weights, min_size=T, max_size=T))),
        serial_fraction=draw(st.sampled_from([0.0, 0.2, 0.7])), parallel_regions=draw(st.integers(1, 3)),
        sendrecv=draw(st.booleans()), allreduce=draw(st.booleans()) or P == 1, barrier=True,
        mpi_cost_ns=draw(st.integers(1, 50_000)), fork_ns=draw(st.integers(0, 5_000)),
        init_ns=draw(st.sampled_from([0, 30_000])), fini_ns=draw(st.sampled_from([0, 10_000])))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=_shapes(), window=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_mpi_serialisation_and_transfer_bounded(shape, window):
    """Both in [0, 1], mpi_ideal within [0, mpi] per process, the inefficiencies
    sum to the MPI communication inefficiency: whole run and a random window."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.prv"
        ex = write(path, shape)
        with popview.open(path, cache_dir=Path(tmp) / "cache") as exp:
            t0, t1 = sorted(int(f * ex.runtime_ns) for f in window)
            focuses = [Focus.whole()] + ([Focus.window(t0, t1)] if t1 > t0 else [])
            for focus in focuses:
                comm, ser, transfer = _additive(exp, focus)
                if comm is None:          # a window without useful computation: nothing to bound
                    continue
                assert -1e-12 <= ser <= 1 + 1e-12 and -1e-12 <= transfer <= 1 + 1e-12, (focus, ser, transfer)
                assert (1 - ser) + (1 - transfer) == pytest.approx(1 - comm, abs=1e-12)
                x = focus_inputs(exp, focus)
                mpi = x.runtime - (x.openmp + x.serial_useful)
                ideal = replay(exp, focus).mpi_ideal
                assert np.all(ideal >= -1e-15) and np.all(ideal <= mpi + 1e-12), (focus, ideal, mpi)
