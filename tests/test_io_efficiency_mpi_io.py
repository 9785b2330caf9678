"""I/O efficiency counts MPI-IO as file I/O, as BSC basicanalysis does (seed 000, Fig. 17:
29.76 % MPI-IO and 0.27 % POSIX I/O at a parallel efficiency of 63.45 % give an I/O
efficiency of 67.42 %). popview counted POSIX I/O only: the 720-rank mini-lpt profile, 90.1 %
of its time in MPI_File_* calls, read "I/O efficiency 100.0 %" beside "MPI-IO share 90.1 %"."""
from __future__ import annotations

import pytest

from popview.analysis.focus import Focus
from popview.experiment import open as open_experiment
from tests.paraver.prvtext import HEADER, ROW, write_trace

PCF = """STATES
1    Running
12   I/O

EVENT_TYPE
0    50000005    MPI I/O
VALUES
0   Outside MPI
1   MPI_File_write
"""

# rank 0: computes 0-600, writes through MPI-IO 600-1000; rank 1: computes 0-800, writes 800-1000
BODY = """1:1:1:1:1:0:600:1
1:1:1:1:1:600:1000:12
1:2:1:2:1:0:800:1
1:2:1:2:1:800:1000:12
2:1:1:1:1:600:50000005:1
2:1:1:1:1:1000:50000005:0
2:2:1:2:1:800:50000005:1
2:2:1:2:1:1000:50000005:0
"""


def test_mpi_io_is_file_io(tmp_path):
    prv = write_trace(tmp_path / "t", BODY, HEADER, pcf=PCF, row=ROW)
    with open_experiment(prv, tmp_path / "cache") as exp:
        tree = exp.metrics("io", Focus.whole())
        assert tree.value("mpi_io_share") == pytest.approx(600 / 2000)
        assert tree.value("posix_io_share") == 0
        assert tree.value("io_efficiency") == pytest.approx(700 / 1000)     # avg(U) / avg(U + file I/O): was 1.0
