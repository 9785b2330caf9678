"""The call-path focus's replay note says which serialisation reads 1. It said
"MPI serialisation reads 1" under POP MPI too, whose serialisation there is
max useful / R_ideal of each process's own non-MPI time (popview-heat 2x2,
the source-term region: 64.8 %; TraceR stencil, TRACER_Loop: 4.8 %)."""
from __future__ import annotations

import popview
from popview.analysis.focus import Focus
from tests.paraver.prvtext import write_trace


def test_the_note_names_the_factors_that_read_1(tmp_path, cache_dir):
    with popview.open(write_trace(tmp_path), cache_dir=cache_dir) as exp:
        tree = exp.metrics("pop-mpi", Focus.on_callpath("main_loop"))
        note = next(n for n in tree.notes if n.startswith("replay: call-path focus"))
        assert "hybrid and critical-path models read 1" in note
        assert "POP MPI's serialisation holds only each process's own time" in note


def test_an_mpi_calls_transfer_is_not_available_as_its_parents_are(tmp_path, cache_dir):
    """Inside an MPI call there is no useful computation: parallel, communication and
    serialisation efficiency read n/a, but transfer read 0 % (R_ideal 0: everything is MPI, and
    the call-path focus follows no dependency), a figure an analyst would read as 'all is lost
    to data transfer'. Every transfer of every model now says why it is not available."""
    ids = {"pop-mpi": ["transfer_efficiency"],
           "critical-path": ["transfer_efficiency", "transfer_efficiency_mpi", "transfer_efficiency_openmp"]}
    with popview.open(write_trace(tmp_path), cache_dir=cache_dir) as exp:
        for model, names in ids.items():
            tree = exp.metrics(model, Focus.on_callpath("main_loop/MPI_Allreduce"))
            nodes = {n.id: n for n in tree.nodes()}
            for name in names:
                assert nodes[name].value is None, (model, name, nodes[name].value)
                assert "no useful computation" in nodes[name].reason, (model, name)
