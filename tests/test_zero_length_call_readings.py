"""Counter readings of an MPI call shorter than the clock's tick: Extrae writes its entry and
its exit at one time t, each record with its counters; the entry's reading closes the useful
burst ending at t, the exit's counts the call itself (the zero-length interval [t, t)).
popview added both to the burst: useful instructions of the EPOCH traces were above
BSC's modelfactors / paramedir figures (4 ranks: 88,523,883,587 for 88,518,412,143; 16
ranks: 93,242,514,399 for 93,158,874,793), and IPC, instruction and frequency scalability
with them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from popview.analysis.focus import Focus
from popview.analysis.metrics import focus_inputs
from popview.experiment import open as open_experiment
from tests.paraver.prvtext import HEADER, PCF, ROW, write_trace

# rank 0: useful 0-600, a zero-length MPI_Send at 600 (entry and exit stamped 600), useful
# 600-800, MPI_Allreduce 800-1000; rank 1: useful 0-800, MPI_Allreduce 800-1000.
BODY = """1:1:1:1:1:0:600:1
1:1:1:1:1:600:800:1
1:1:1:1:1:800:1000:13
1:2:1:2:1:0:800:1
1:2:1:2:1:800:1000:13
2:1:1:1:1:600:50000001:3:42000050:1200:42000059:600
2:1:1:1:1:600:50000001:0:42000050:7777:42000059:5555
2:1:1:1:1:800:50000002:10:42000050:400:42000059:200
2:1:1:1:1:1000:50000002:0:42000050:50:42000059:40
2:2:1:2:1:800:50000002:10:42000050:2400:42000059:800
2:2:1:2:1:1000:50000002:0:42000050:60:42000059:30
"""


def test_the_second_reading_at_one_time_is_not_the_bursts(tmp_path):
    prv = write_trace(tmp_path / "t", BODY, HEADER, pcf=PCF, row=ROW)
    with open_experiment(prv, tmp_path / "cache") as exp:
        x = focus_inputs(exp, Focus.whole())
        assert x.counters["PAPI_TOT_INS"].tolist() == [1200 + 400, 2400]       # not 1200 + 7777 + 400
        assert x.counters["PAPI_TOT_CYC"].tolist() == [600 + 200, 800]
        # a window over the first burst only, through the window sums: the same attribution
        w = focus_inputs(exp, Focus.window(0, 700))
        assert w.counters["PAPI_TOT_INS"][0] == pytest.approx(1200 + 400 * 100 / 200)


def test_the_kernel_carries_the_last_reading_across_its_calls():
    from popview.cache.cumulative import add_readings, no_reading_yet

    begin, end = np.array([0, 10], np.int64), np.array([10, 20], np.int64)
    cat = np.zeros(2, np.int8)
    which = np.array([0, 0], np.int32)
    time, value = np.array([10, 10], np.int64), np.array([5, 9], np.int64)
    out, last = np.zeros((2, 1)), no_reading_yet(1)
    add_readings(which[:1], time[:1], value[:1], np.array([False]), begin, end, cat, 7, out, last)
    add_readings(which[1:], time[1:], value[1:], np.array([False]), begin, end, cat, 7, out, last)
    assert out[:, 0].tolist() == [5, 0]


EPOCH = Path(__file__).resolve().parents[2] / "shared" / "traces" / "pypop" / "mpi" / "epoch_example_traces"


@pytest.mark.skipif(not EPOCH.is_dir(), reason="the shared EPOCH traces are absent")
def test_epoch_useful_instructions_and_cycles_are_modelfactors(tmp_path):
    # modelfactors.csv (BSC basicanalysis on the same traces): useful instructions, cycles total
    with open_experiment(EPOCH / "epoch_4proc.prv.gz", tmp_path) as exp:
        x = focus_inputs(exp, Focus.whole())
        assert int(x.counters["PAPI_TOT_INS"].sum()) == 88518412143
        assert int(x.counters["PAPI_TOT_CYC"].sum()) == 47406198069
