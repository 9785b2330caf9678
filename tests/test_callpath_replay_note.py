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
