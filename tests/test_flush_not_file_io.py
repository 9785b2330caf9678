"""The tracer writing its buffers is measurement overhead, not the program's file I/O. Extrae
writes state I/O (12) inside its flush event (40000003): popview counted it as POSIX I/O,
so the EPOCH traces' "POSIX I/O share" (0.14 % at 16 ranks) and popview-heat's (0.016 %
at 1x1) were Extrae's flushes alone, and the I/O efficiency fell with them; a trace that
flushes often would have crossed the 5 % file-I/O warning without the program doing any."""
from __future__ import annotations

import pytest

from popview.analysis.focus import Focus
from popview.experiment import open as open_experiment
from tests.paraver.prvtext import HEADER, ROW, write_trace

PCF = """STATES
1    Running
12   I/O

EVENT_TYPE
0    40000003    Flushing Traces
VALUES
0   End
1   Begin
"""

# rank 0: runs 0-500, the tracer flushes 500-700 (state I/O), runs 700-1000;
# rank 1: runs 0-800, reads a file 800-900 (state I/O, no flush), runs 900-1000
BODY = """1:1:1:1:1:0:500:1
1:1:1:1:1:500:700:12
1:1:1:1:1:700:1000:1
1:2:1:2:1:0:800:1
1:2:1:2:1:800:900:12
1:2:1:2:1:900:1000:1
2:1:1:1:1:500:40000003:1
2:1:1:1:1:700:40000003:0
"""


def test_the_tracers_flush_is_not_the_programs_io(tmp_path):
    prv = write_trace(tmp_path / "t", BODY, HEADER, pcf=PCF, row=ROW)
    with open_experiment(prv, tmp_path / "cache") as exp:
        tree = exp.metrics("io", Focus.whole())
        assert tree.value("posix_io_share") == pytest.approx(100 / 2000)       # rank 1's read only: was 300
        assert tree.value("io_efficiency") == pytest.approx(850 / 900)         # avg U 850, avg file I/O 50
        prof = exp.profile()
        root = prof.find("Flushing Traces")
        assert prof.by_location("io", root).sum() == 0                         # its time is other, not File I/O
