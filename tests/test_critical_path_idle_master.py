"""A master's idle or unrecorded time is no OpenMP runtime: in the critical-path
model it weighs on G-COO, so a pure MPI run reads an OpenMP transfer
efficiency of 1. PROFET's chopped LULESH 7+1 (8 ranks, no OpenMP) read 96.0 %:
rank 5's first 38.7 ms carry no state, and G-COO left them out, blaming
them on OpenMP; they now count at the MPI level (MPI transfer 92.9 %), where
POP MPI and the hybrid models count such time."""
from __future__ import annotations

import pytest

import popview
from popview.analysis.replay import clear_cache
from tests.paraver.prvtext import HEADER, write_trace

# both ranks idle (state 0), or without any state, for their first 200 ns (a chopped trace)
START = {"idle": ("1:1:1:1:1:0:200:0\n", "1:2:1:2:1:0:200:0\n"), "gap": ("", "")}
BODY = """{rank0}1:1:1:1:1:200:700:1
1:1:1:1:1:700:1000:13
{rank1}1:2:1:2:1:200:900:1
1:2:1:2:1:900:1000:13
2:1:1:1:1:700:50000002:10
2:1:1:1:1:1000:50000002:0
2:2:1:2:1:900:50000002:10
2:2:1:2:1:1000:50000002:0
"""


@pytest.mark.parametrize("start", sorted(START))
def test_a_pure_mpi_run_has_no_openmp_transfer_loss(tmp_path, cache_dir, start):
    clear_cache()
    with popview.open(write_trace(tmp_path, body=BODY.format(rank0=START[start][0], rank1=START[start][1]), header=HEADER),
                      cache_dir=cache_dir) as exp:
        tree = exp.metrics("critical-path", "whole")
        assert tree.value("transfer_efficiency_openmp") == pytest.approx(1.0)     # 0.8 on the old code (G-COO 800 of 1000)
        assert tree.value("transfer_efficiency") == pytest.approx(
            tree.value("transfer_efficiency_mpi") * tree.value("transfer_efficiency_openmp"))
        assert tree.value("parallel_efficiency") == pytest.approx(1200 / 2 / 1000)


@pytest.mark.shared
def test_profet_chopped_lulesh_has_no_openmp_loss(shared_traces, tmp_path):
    clear_cache()
    exp = popview.open(shared_traces / "profet-paraver/lulesh_7+1_with_uncores_sockets1+2.chop8.prv",
                       cache_dir=tmp_path)
    tree = exp.metrics("critical-path", "whole")
    assert tree.value("transfer_efficiency_openmp") == pytest.approx(1.0)          # 0.9605 before
    assert tree.value("transfer_efficiency_mpi") == pytest.approx(tree.value("transfer_efficiency"))
