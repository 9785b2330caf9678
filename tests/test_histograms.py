"""Paraver-style tables and histograms: figures on known data, CSV export."""
from __future__ import annotations

import io

import numpy as np
import pytest

import popview
from popview.analysis import histograms
from popview.testing import synthetic
from tests.test_pyramid import INS, MPI, make_cache

CYC = 42000059


class _Exp:
    def __init__(self, reader):
        self.reader, self.definitions = reader, reader.definitions


@pytest.fixture
def small(tmp_path):
    # loc 0: Running [0,300) Waiting [300,400) Running [400,1024); loc 1: Running all along
    states = {"loc": [0, 0, 0, 1], "begin": [0, 300, 400, 0], "end": [300, 400, 1024, 1024], "state": [1, 3, 1, 1]}
    events = {"loc": [0, 0, 0, 0, 0, 0, 1, 1], "time": [300, 300, 300, 400, 1024, 1024, 1024, 1024],
              "type": [INS, CYC, MPI, MPI, INS, CYC, INS, CYC], "value": [600, 300, 1, 0, 1248, 1248, 100, 400]}
    with make_cache(tmp_path / "c.h5", states, events, 1024, extra_counters={CYC: "PAPI_TOT_CYC"}) as reader:
        yield _Exp(reader)


def test_state_table_times_and_shares(small):
    t = histograms.build(small, "states")
    assert t.col_labels == ["Running", "Waiting a message"]
    assert t.stats["time"].tolist() == [[924, 100], [1024, 0]]
    assert t.stats["% time"][0] == pytest.approx([924 / 1024 * 100, 100 / 1024 * 100])
    assert t.stats["bursts"].tolist() == [[2, 1], [1, 0]]
    assert t.stats["average burst"][0, 0] == 462


def test_state_table_clips_to_the_window(small):
    t = histograms.build(small, "states", 250, 450)
    assert t.stats["time"].tolist() == [[100, 100], [200, 0]]


def test_mpi_table_time_count_average(small):
    t = histograms.build(small, "mpi")
    assert t.col_labels == ["MPI_Send"]
    assert t.stats["time"][:, 0].tolist() == [100, 0]
    assert t.stats["count"][:, 0].tolist() == [1, 0]
    assert t.stats["average duration"][0, 0] == 100 and np.isnan(t.stats["average duration"][1, 0])
    with pytest.raises(histograms.NotAvailable, match="OpenMP"):
        histograms.build(small, "openmp")


def test_useful_burst_histogram(small):
    t = histograms.build(small, "useful", bins=4)
    edges = t.col_keys
    assert edges[0] == 300 and edges[-1] == pytest.approx(1024)
    assert t.stats["bursts"].sum(axis=1).tolist() == [2, 1]
    assert t.stats["bursts"][0, 0] == 1 and t.stats["bursts"][1, -1] == 1   # 300 ns first bin, 1024 ns last
    assert t.stats["time"].sum() == 300 + 624 + 1024


def test_duration_ipc_histogram(small):
    t = histograms.build(small, "duration_ipc", bins=4)
    # bursts: loc0 [0,300) IPC 2, [400,1024) IPC 1; loc1 [0,1024) IPC 0.25
    assert t.stats["bursts"].sum() == 3
    ipc_edges = t.row_keys
    for ipc, duration in ((2.0, 300), (1.0, 624), (0.25, 1024)):
        row = min(np.searchsorted(ipc_edges, ipc, side="right") - 1, 3)
        col = min(np.searchsorted(t.col_keys, duration, side="right") - 1, 3)
        assert t.stats["bursts"][row, col] >= 1
    row = int(np.searchsorted(ipc_edges, 2.0, side="right") - 1)
    loc, begin, end = histograms.cell_intervals(small, t, row, 0)
    assert (loc.tolist(), begin.tolist(), end.tolist()) == ([0], [0], [300])


def test_cell_intervals_of_a_state_cell(small):
    t = histograms.build(small, "states")
    loc, begin, end = histograms.cell_intervals(small, t, 0, 0)
    assert begin.tolist() == [0, 400] and end.tolist() == [300, 1024] and loc.tolist() == [0, 0]


def test_csv_export(small):
    t = histograms.build(small, "mpi")
    out = io.StringIO()
    histograms.write_csv(t, "time", out)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("time (ns),MPI_Send")
    assert lines[1:] == ["t0,100", "t1,0", "Total,100"]


def test_empty_window_is_refused(small):
    with pytest.raises(ValueError, match="empty"):
        histograms.build(small, "states", 500, 500)


def test_synthetic_useful_time_and_mpi_time(tmp_path):
    shape = synthetic.Shape(processes=3, threads=1, iterations=5, work_ns=1_000_000, rank_weights=(1.0, 1.2, 0.8))
    expected = synthetic.write(tmp_path / "s.prv", shape)
    with popview.open(tmp_path / "s.prv", cache_dir=tmp_path / "cache") as exp:
        states = histograms.build(exp, "states")
        running = states.col_labels.index("Running")
        assert states.stats["time"][:, running] == pytest.approx(expected.useful_ns)
        mpi = histograms.build(exp, "mpi")
        assert mpi.stats["time"].sum(axis=1) == pytest.approx(expected.mpi_ns)
        assert set(mpi.col_labels) <= {"MPI_Sendrecv", "MPI_Allreduce", "MPI_Barrier", "MPI_Init", "MPI_Finalize"}
        ipc = histograms.build(exp, "duration_ipc", bins=10)
        useful = histograms.build(exp, "useful", bins=10)
        assert ipc.stats["bursts"].sum() == useful.stats["bursts"].sum()
        row = np.flatnonzero(ipc.stats["bursts"].sum(axis=1))
        assert len(row) == 1 and ipc.row_keys[row[0]] <= shape.ipc < ipc.row_keys[row[0] + 1]
