"""Rows above the thread against BSC's paramedir (paraver-kernel) on the shared traces: task
rows of tasks with two threads (popview-heat Extrae 2x2), application rows, derived windows
with a task-level parent, and the communication functions' intervals that these are cut by.

paramedir writes the last window of a timeline cfg as a CSV (`-tu`: times in trace units,
one line per interval: row, begin, duration, value with two decimals). popview drops the
intervals of no duration (several records at one instant) that paramedir writes; the lines
compared are paramedir's without them. Frozen: the number of those lines and their SHA-256,
as paramedir wrote them on 2026-11-27 (paraver-kernel abbc7c3); live, with POPVIEW_PARAMEDIR,
the text itself. Histograms over task and application rows (a shared cfg with a histogram
added at test time) are compared with paramedir's tables the same two ways.
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np
import pytest

from popview.analysis.cfg import parse_cfg, read_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
from popview.analysis.cfg.paramedir import evaluate_cfg, format_table, row_labels

CFGS = "paraver-cfgs"
TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
          "epoch16": "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
          "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"}

IN_MPI = "parami/cfgs/mpi/views/advanced/in_MPI_call.cfg"                  # task rows, Thread i, Sign
RECV_APPL = "parami/cfgs/mpi/views/advanced/receive_bandwidth_appl.cfg"     # application rows, Recv BandWidth
STATES_OMP = "parami/cfgs/OpenMP/views/states_only_useful_openmp.cfg"      # derived: a thread and a task parent
RECV_BW = "compss/files/paraver/cfgs/comm/receive_bandwidth.cfg"           # intervals at each comm record
S_R_BW = "parami/cfgs/mpi/views/point2point/s_r_bandwidth.cfg"             # send + receive bandwidth

# paramedir -tu's CSV of the cfg's last window, intervals of no duration left out: (lines, sha256)
TIMELINES = {
    ("heat2x2", IN_MPI): (4826, "7b5af076914806f5e39bf53cbc345482cc69816333d4747603648c33a93905bb"),
    ("heat2x2", RECV_APPL): (1101, "69729234eab0012302c831ce57ac6c96adb3a27b9cc5e52dd8ea715f308ba4d0"),
    ("heat2x2", RECV_BW): (1104, "4664f78647f977b09c25eda2c6e7f712a4053fc347c8b234f9609fd520299913"),
    ("heat2x2", S_R_BW): (2204, "f1728954b1c7dc1cb40728783c84b7086b2f1e514e0521f0bc9ff0fdef81761d"),
    ("epoch4", IN_MPI): (14988, "b7944d20138517d25fd92a2fd4b383495f7585f302d477e84257996e28cca8e7"),
    ("epoch4", RECV_APPL): (5189, "efb5c43ccb0e237e822a17e6e4ab4383f715142908351a743c002dc5b1cf8a83"),
    ("epoch4", STATES_OMP): (15010, "c5df09fb9c1ca55b6dc2c93ff760c713233211ad965d422f7c8873eaf1866c99"),
    ("epoch4", RECV_BW): (7672, "7b3801e689870e30b6409db637b79964769c46273098d36b09c6c92a53fcb360"),
    ("epoch4", S_R_BW): (12852, "993563fb05d6f88a92102f798d0b8739dd8d3df431dae63d4e8bec0807044be4"),
    ("epoch16", IN_MPI): (61312, "3d85f4818955433428aa6c520fdaf083f63542b12377208bf7c83ead5f850fef"),
    ("epoch16", RECV_APPL): (21729, "cc647c2d4cdfde2c412589861be2eda0bd2f865f4feb07fbe3a72403b31e88b2"),
    ("epoch16", STATES_OMP): (61406, "dbdc51f78dcb96a865ff6557a2795c4de2955e8bd39ef94835c0ed740bbb0c6b"),
    ("epoch16", RECV_BW): (31683, "08eed45261056dd83fbfc00449e112f52c1c1e9ed61e99a48e15b1d84eedc99d"),
    ("epoch16", S_R_BW): (53412, "32dda3e51a9e09905a6c47b1e972ef94196d906fdf79907fa52e11aeac2c2855"),
}

# A histogram added to a shared cfg (window 1 as control and data window)
HISTOGRAM = """
< NEW ANALYZER2D >
Analyzer2D.Name: levels
Analyzer2D.X: 366
Analyzer2D.ControlWindow: 1
Analyzer2D.DataWindow: 1
Analyzer2D.Accumulator: Semantic
Analyzer2D.Statistic: {statistic}
Analyzer2D.CalculateAll: True
Analyzer2D.Parameters: 4 -1.79769313486232e+308 1.79769313486232e+308 -1.79769313486232e+308 1.79769313486232e+308
Analyzer2D.AnalysisLimits: Alltrace
Analyzer2D.ComputeYScale: False
Analyzer2D.Minimum: 0.000000000000
Analyzer2D.Maximum: {maximum}
Analyzer2D.Delta: {maximum}
"""
TASK_TIME = (IN_MPI, "Time", "1.000000000000")                 # time in MPI and not, per task
APPL_AVERAGE = (RECV_APPL, "Average value", "1000000000.000000000000")

# Written by paramedir on the shared traces (2026-11-27)
_TOTALS_HEAT = ("\nTotal\t5636657.32\t923199.92\t\nAverage\t2818328.66\t461599.96\t\nMaximum\t2904726.02\t547997.32\t\n"
                "Minimum\t2731931.30\t375202.60\t\nStDev\t86397.36\t86397.36\t\nAvg/Max\t0.97\t0.84\t\n\n")
FROZEN = {
    ("heat2x2", APPL_AVERAGE):
        "\t[0.00..1,000,000,000.00]\t\nAPPL 1\t0.25\t\n\nTotal\t0.25\t\nAverage\t0.25\t\nMaximum\t0.25\t\n"
        "Minimum\t0.25\t\nStDev\t0.00\t\nAvg/Max\t1.00\t\n\n",
    ("heat2x2", TASK_TIME):           # two threads per task; columns 0 and 1: Sign's values have no names
        "\t0\t1\t\nTASK 1.1\t2731931.30\t547997.32\t\nTASK 1.2\t2904726.02\t375202.60\t\n" + _TOTALS_HEAT,
    ("epoch4", TASK_TIME):
        "\t0\t1\t\nTASK 1.1\t5924166.46\t158185.75\t\nTASK 1.2\t6002862.00\t79490.21\t\n"
        "TASK 1.3\t5885902.59\t196449.62\t\nTASK 1.4\t5884831.30\t197520.91\t\n\n"
        "Total\t23697762.36\t631646.49\t\nAverage\t5924440.59\t157911.62\t\nMaximum\t6002862.00\t197520.91\t\n"
        "Minimum\t5884831.30\t79490.21\t\nStDev\t47968.91\t47968.91\t\nAvg/Max\t0.99\t0.80\t\n\n",
}




def timeline_csv(view, trace: TraceColumns) -> str:
    """The cfg's last window as paramedir -tu writes it (LabelConstructor::objectLabel without
    the level tag: 1.t.th, a.t, a; trace units), without intervals of no duration."""
    window = view.windows[-1]
    timeline = evaluate_window(view, window.position, trace)
    h = trace.levels()
    if window.level == "thread":
        task = h.thread_task
        first = np.searchsorted(task, task)
        labels = [f"{h.task_appl[t] + 1}.{t - np.searchsorted(h.task_appl, h.task_appl[t]) + 1}.{i - first[i] + 1}"
                  for i, t in enumerate(task)]
    elif window.level == "task":
        labels = [f"{a + 1}.{i - np.searchsorted(h.task_appl, a) + 1}" for i, a in enumerate(h.task_appl)]
    else:
        labels = [str(i + 1) for i in range(timeline.n_rows)]
    return "".join(f"{labels[r]}\t{b}\t{e - b}\t{v:.2f}\n"
                   for r, b, e, v in zip(timeline.row, timeline.begin, timeline.end, timeline.value))


def _digest(text: str) -> tuple[int, str]:
    return len(text.splitlines()), hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("name,cfg", sorted(TIMELINES))
def test_timeline_is_what_paramedir_wrote(shared_traces, traces, name, cfg):
    _, trace = traces(name)
    assert _digest(timeline_csv(read_cfg(shared_traces / CFGS / cfg), trace)) == TIMELINES[name, cfg]


def _with_histogram(shared_traces, case) -> str:
    cfg, statistic, maximum = case
    return (shared_traces / CFGS / cfg).read_text() + HISTOGRAM.format(statistic=statistic, maximum=maximum)


def _table(shared_traces, traces, name, case) -> str:
    exp, trace = traces(name)
    view = parse_cfg(_with_histogram(shared_traces, case), "levels.cfg")
    tables, skipped = evaluate_cfg(view, trace, row_labels(exp.definitions), exp.definitions, as_paramedir=True)
    assert not skipped
    return "".join(format_table(t) for t in tables)


@pytest.mark.parametrize("name,case", sorted(FROZEN))
def test_histogram_over_task_and_application_rows_is_what_paramedir_wrote(shared_traces, traces, name, case):
    assert _table(shared_traces, traces, name, case) == FROZEN[name, case]


# -- live, against a paramedir binary ------------------------------------------------------------



def _run(paramedir: str, trace: Path, cfg: Path, out: Path, *options: str) -> None:
    subprocess.run([paramedir, *options, str(trace), str(cfg), str(out)], capture_output=True, text=True,
                   cwd=str(out.parent), timeout=600, check=True)


@pytest.mark.parametrize("name,cfg", sorted(TIMELINES))
def test_timeline_is_what_real_paramedir_writes(paramedir, shared_traces, traces, tmp_path, name, cfg):
    _run(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, tmp_path / "out", "-tu")
    written = (tmp_path / "out.csv").read_text()
    without_empty = "".join(line for line in written.splitlines(True) if line.split("\t")[2] != "0")
    _, trace = traces(name)
    assert timeline_csv(read_cfg(shared_traces / CFGS / cfg), trace) == without_empty


@pytest.mark.parametrize("name", ["heat2x2", "epoch4"])
@pytest.mark.parametrize("case", [TASK_TIME, APPL_AVERAGE])
def test_level_histograms_are_what_real_paramedir_writes(paramedir, shared_traces, traces, tmp_path, name, case):
    cfg = tmp_path / "levels.cfg"
    cfg.write_text(_with_histogram(shared_traces, case))
    _run(paramedir, shared_traces / TRACES[name], cfg, tmp_path / "out")
    assert _table(shared_traces, traces, name, case) == (tmp_path / "out").read_text()
