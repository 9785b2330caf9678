"""The automatic focus without a repeating user region: of the MPI calls made once per
iteration, the one whose iterations cover the most of the run. heat's loop is
Irecv/Isend, MPI_Waitall, computation, MPI_Allreduce: visits 1..199 of the Allreduce (the
call holding the most time) started after the second iteration's computation."""
from __future__ import annotations

import pytest

import popview
from popview.analysis.autofocus import propose
from popview.analysis.gather import iteration_window

HEAT = "popview-heat"


@pytest.mark.shared
@pytest.mark.parametrize("trace", ["extrae/hyb_2x2/hyb_2x2.prv", "scorep/hyb_2x2/traces.otf2"])
def test_heat_iterations_start_at_the_earliest_call(shared_traces, tmp_path, trace):
    with popview.open(shared_traces / HEAT / trace, cache_dir=tmp_path) as exp:
        focus, note = propose(exp)
        assert focus.kind == "iterations" and focus.callpath.endswith("MPI_Waitall"), note
        assert (focus.first, focus.last) == (1, 199)
        assert "MPI_Waitall is made 200 times" in note and "MPI_Allreduce" in note   # says what was chosen
        t0, t1 = iteration_window(exp, focus.callpath, 1, 199)
        a0, a1 = iteration_window(exp, focus.callpath.replace("MPI_Waitall", "MPI_Allreduce"), 1, 199)
        assert t0 < a0 and t1 - t0 > a1 - a0


@pytest.mark.shared
def test_calls_that_do_not_pace_a_loop_are_no_iterations(shared_traces, tmp_path):
    """EPOCH (4 ranks): MPI_Barrier and MPI_Comm_free are each made 4 times; Comm_free's visits
    1-3 span 91 % of the run but one 'iteration' holds nearly all of it: the whole run stays."""
    path = shared_traces / "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz"
    with popview.open(path, cache_dir=tmp_path) as exp:
        focus, note = propose(exp)
        assert focus.kind == "whole", note
