"""The replay on PyPOP's EPOCH traces against BSC modelfactors' Dimemas figures.

Reference values: modelfactors.csv beside the traces ("Runtime (ideal)",
"Useful duration (ideal, max)") and precomputed.csv (serialisation and
transfer efficiency). docs/replay.md explains the differences.
"""
from __future__ import annotations

import csv

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.metrics import focus_inputs
from popview.analysis.replay import replay

pytestmark = pytest.mark.shared
RANKS = (1, 2, 4, 8, 16)


@pytest.fixture(scope="module")
def epoch(shared_traces, tmp_path_factory):
    folder = shared_traces / "pypop" / "mpi" / "epoch_example_traces"
    cache = tmp_path_factory.mktemp("epoch-cache")
    runs = {n: popview.open(folder / f"epoch_{n}proc.prv.gz", cache_dir=cache) for n in RANKS}
    return folder, runs


def _modelfactors(folder) -> dict[str, list[float]]:
    rows = {}
    for line in (folder / "modelfactors.csv").read_text().splitlines():
        parts = line.lstrip("#").split(";")
        if len(parts) == len(RANKS) + 1:
            rows[parts[0]] = [float(x) for x in parts[1:]]
    return rows


def _precomputed(folder) -> dict[int, dict[str, float]]:
    with open(folder / "precomputed.csv") as f:
        return {int(r[""]): {k: float(v) for k, v in r.items() if k and k != "Hybrid Layout"} for r in csv.DictReader(f)}


def _efficiencies(exp, model: str, ideal: str = "r_ideal") -> tuple[float, float, float]:
    """(ideal runtime in us, serialisation, transfer) as modelfactors forms them."""
    result = replay(exp, model=model)
    useful_max = replay(exp).tl_cue.max()
    serialisation = result.tl_cue.max() / getattr(result, ideal)
    transfer = useful_max / result.r / serialisation
    return getattr(result, ideal) * 1e6, serialisation, transfer


def test_dimemas_model_reproduces_dimemas(epoch):
    folder, runs = epoch
    mf, pre = _modelfactors(folder), _precomputed(folder)
    for i, n in enumerate(RANKS):
        r_ideal, ser, te = _efficiencies(runs[n], "dimemas")
        # Dimemas's ideal runtime to 0.2 ms (of 2.3-21.9 s), its efficiencies to 1e-4
        assert r_ideal == pytest.approx(mf["Runtime (ideal)"][i], abs=200), n
        assert replay(runs[n], model="dimemas").tl_cue.max() * 1e6 == pytest.approx(
            mf["Useful duration (ideal, max)"][i], abs=2), n
        assert ser == pytest.approx(pre[n]["MPI Serialisation Efficiency"], abs=1e-4), n
        assert te == pytest.approx(pre[n]["MPI Transfer Efficiency"], abs=1e-4), n


def test_useful_critical_path_is_at_most_dimemas_and_close(epoch):
    """G-CUE (useful computation only, collectives by their semantics, no
    rendezvous) never takes longer than Dimemas's replay; the efficiencies
    formed from it stay within PyPOP's own test tolerance (0.01)."""
    folder, runs = epoch
    mf, pre = _modelfactors(folder), _precomputed(folder)
    for i, n in enumerate(RANKS):
        g_cue, ser, te = _efficiencies(runs[n], "lamport", "g_cue")
        assert g_cue < mf["Runtime (ideal)"][i], n
        assert ser == pytest.approx(pre[n]["MPI Serialisation Efficiency"], abs=0.01), n
        assert te == pytest.approx(pre[n]["MPI Transfer Efficiency"], abs=0.01), n


def test_ideal_network_runtime_is_close_to_dimemas(epoch):
    """R_ideal (every non-MPI interval keeps its length) lies between G-CUE and
    the measured runtime, within 0.2 % of Dimemas's, and gives Dimemas's
    efficiencies within 0.01."""
    folder, runs = epoch
    mf, pre = _modelfactors(folder), _precomputed(folder)
    for i, n in enumerate(RANKS):
        r_ideal, ser, te = _efficiencies(runs[n], "lamport")
        assert r_ideal == pytest.approx(mf["Runtime (ideal)"][i], rel=0.002), n
        assert ser == pytest.approx(pre[n]["MPI Serialisation Efficiency"], abs=0.01), n
        assert te == pytest.approx(pre[n]["MPI Transfer Efficiency"], abs=0.01), n
        result = replay(runs[n])
        assert result.g_cue <= result.r_ideal <= result.r
        assert not result.approximate and result.n_unmatched == 0
        assert result.serialisation_efficiency * result.transfer_efficiency == pytest.approx(
            result.tl_cue.max() / result.r, rel=1e-12)


def test_single_rank_differs_by_io_time_exactly(epoch):
    """With one rank nothing waits: Dimemas's ideal runtime is the useful time
    plus the I/O bursts (state 12), which G-CUE does not weigh; R_ideal is the
    rank's time outside MPI (R minus its MPI time in the metric inputs)."""
    folder, runs = epoch
    exp = runs[1]
    states = exp.reader.read("states")
    io = float(((states["end"] - states["begin"])[states["state"] == 12]).sum()) / 1e3
    result = replay(exp)
    assert result.g_cue * 1e6 + io == pytest.approx(_modelfactors(folder)["Runtime (ideal)"][0], abs=1.0)
    assert np.isclose(result.g_cue, result.tl_cue.max())
    x = focus_inputs(exp, Focus.whole())
    outside_mpi = x.runtime - x.mpi[0]          # all but MPI: I/O and tracer overhead too
    assert result.r_ideal == pytest.approx(outside_mpi, abs=1e-9)
    assert result.non_mpi[0] == pytest.approx(outside_mpi, abs=1e-9)
