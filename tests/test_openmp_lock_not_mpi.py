"""Extrae writes state 5 "Synchronization" while a thread takes or releases an OpenMP lock
(event 60000006), in the serial part too. In a trace without MPI that is OpenMP
synchronisation: the ImageMagick 8-thread trace showed 0.042 s in MPI categories though
it defines no MPI."""
from __future__ import annotations

import pytest

import popview
from tests.paraver.prvtext import write_trace

S = 1e-9
HEADER = "#Paraver (27/11/2026 at 10:00):1000_ns:1(1):1:1(1:1),0\n"
BODY = """1:1:1:1:1:0:100:1
1:1:1:1:1:100:160:5
1:1:1:1:1:160:700:1
1:1:1:1:1:700:740:5
1:1:1:1:1:740:1000:1
2:1:1:1:1:100:60000006:3
2:1:1:1:1:160:60000006:6
2:1:1:1:1:700:60000006:5
2:1:1:1:1:740:60000006:0
"""


MPI = ("mpi_p2p", "mpi_collective", "mpi_sync", "mpi_other", "mpi_io")


def _totals(prof, metric):
    if metric == "mpi":
        return sum(_totals(prof, m) for m in MPI if m in prof.values)
    return sum(float(prof.by_location(metric, int(r), True).sum()) for r in prof.roots())


def test_lock_synchronisation_is_openmp_not_mpi(tmp_path):
    prv = write_trace(tmp_path, body=BODY, header=HEADER, name="lock", pcf=None, row=None)
    with popview.open(prv, cache_dir=tmp_path / "cache") as exp:
        assert exp.definitions.paradigms == ["openmp"]
        prof = exp.profile()
        assert _totals(prof, "mpi") == 0.0
        assert _totals(prof, "omp_sync") == pytest.approx(100 * S)
        assert _totals(prof, "time") == pytest.approx(1000 * S)


def test_synchronisation_in_an_mpi_trace_stays_mpi(tmp_path):
    """With MPI in the trace, a Synchronization state outside the MPI calls stays MPI (as before)."""
    prv = write_trace(tmp_path, body=BODY.replace("60000006:3", "60000006:3\n2:1:1:1:1:50:50000002:0"),
                      header=HEADER, name="mpi", pcf=None, row=None)
    with popview.open(prv, cache_dir=tmp_path / "cache") as exp:
        assert "mpi" in exp.definitions.paradigms
        assert _totals(exp.profile(), "mpi") == pytest.approx(100 * S)
