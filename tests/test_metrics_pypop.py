"""popview's metrics on PyPOP's example traces against PyPOP's reference values.

EPOCH (MPI, 1-16 ranks): precomputed.csv = BSC modelfactors.csv / 100. Every
metric not needing the ideal-network replay agrees within 0.01 (PyPOP's own
tolerance). ImageMagick (OpenMP, 1-8 threads): the table of the MANIFEST
(PyPOP's OpenMP notebook); its IPC and frequency scalings use another
definition (docs/metrics.md), the others agree."""
from __future__ import annotations

import pandas as pd
import pytest

import popview

EPOCH = "pypop/mpi/epoch_example_traces"
# precomputed.csv column -> popview metric id (table row)
EPOCH_COLUMNS = {
    "Parallel Efficiency": "parallel_efficiency", "MPI Load Balance": "load_balance",
    "MPI Communication Efficiency": "communication_efficiency", "Computation Scaling": "computation_scalability",
    "Global Efficiency": "global_efficiency", "IPC Scaling": "ipc_scalability",
    "Instruction Scaling": "instruction_scalability", "Frequency Scaling": "frequency_scalability",
    "Speedup": "speedup", "Average IPC": "ipc", "Average Frequency (Ghz)": "clock_rate",
}
REPLAY_COLUMNS = {"MPI Serialisation Efficiency": "serialisation_efficiency",
                  "MPI Transfer Efficiency": "transfer_efficiency"}


@pytest.fixture(scope="module")
def epoch(shared_traces, tmp_path_factory):
    d = shared_traces / EPOCH
    runs = [d / f"epoch_{n}proc.prv.gz" for n in (1, 2, 4, 8, 16)]
    s = popview.series(runs, cache_dir=tmp_path_factory.mktemp("cache"), use_replay=False)
    return s, pd.read_csv(d / "precomputed.csv", index_col=0)


def test_epoch_agrees_with_pypop_within_001(epoch):
    s, ref = epoch
    table = s.table("pop-mpi")
    assert s.scaling == "strong" and s.reference.label == "1x1"
    for col, metric in EPOCH_COLUMNS.items():
        for procs, label in zip(ref.index, table.columns[2:]):
            assert table.loc[metric, label] == pytest.approx(ref.loc[procs, col], abs=0.01), (col, label)


def test_epoch_raw_figures_are_modelfactors(epoch):
    """Runtime and useful durations are BSC's to the nanosecond (modelfactors.csv, microseconds)."""
    s, _ = epoch
    runtime_us = [21898659.14, 11528373.56, 6082352.21, 3513565.33, 2339560.72]
    useful_max_us = [21882362.82, 11484151.34, 5999910.80, 3421581.67, 2242981.13]
    for x, r, u in zip(s.inputs, runtime_us, useful_max_us):
        assert x.runtime * 1e6 == pytest.approx(r, abs=0.01)
        assert x.useful.max() * 1e6 == pytest.approx(u, abs=0.01)


IMAGEMAGICK = "pypop/openmp/imagemagick_example_traces"
# threads -> (OpenMP region eff, serial region eff, parallel eff, instruction scaling, comp scaling,
#             global eff, speedup), from the MANIFEST's table
IMAGEMAGICK_TABLE = {
    1: (0.998414, 1.000000, 0.995348, 1.000000, 1.000000, 0.995348, 1.000000),
    2: (0.998448, 0.728963, 0.723112, 0.999995, 0.977705, 0.706990, 1.420588),
    8: (0.957615, 0.373220, 0.325171, 0.999994, 0.717507, 0.233313, 1.875224),
}
IMAGEMAGICK_IDS = ("openmp_region_efficiency", "amdahl_efficiency", "parallel_efficiency",
                   "instruction_scalability", "computation_scalability", "global_efficiency", "speedup")


def test_imagemagick_agrees_with_pypop_openmp_table(shared_traces, tmp_path_factory):
    d = shared_traces / IMAGEMAGICK
    s = popview.series([d / f"omp{n}.prv.gz" for n in IMAGEMAGICK_TABLE],
                       cache_dir=tmp_path_factory.mktemp("cache"), use_replay=False)
    table = s.table("hybrid-additive")
    for (threads, values), label in zip(IMAGEMAGICK_TABLE.items(), table.columns[2:]):
        for metric, want in zip(IMAGEMAGICK_IDS, values):
            assert table.loc[metric, label] == pytest.approx(want, abs=0.01), (metric, label)
