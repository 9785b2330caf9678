"""Rows above the thread against BSC's paramedir (paraver-kernel) on the shared traces: task
rows of tasks with two threads (popview-heat Extrae 2x2), application rows, derived windows
with a task-level parent, and the communication functions' intervals that these are cut by.

paramedir writes the last window of a timeline cfg as a CSV (`-tu`: times in trace units,
one line per interval: row, begin, duration, value with two decimals). popview drops the
intervals of no duration (several records at one instant) that paramedir writes; the lines
compared are paramedir's without them. Frozen: the number of those lines and their SHA-256,
as paramedir wrote them on 2026-11-27 (paraver-kernel abbc7c3); live, with POPVIEW_PARAMEDIR,
the text itself. Histograms over task and application rows (a shared cfg with a histogram
added at test time) are compared with paramedir's tables the same two ways. The resource
model (CPU, node, system rows) is checked with in_MPI_call.cfg's window moved to those levels
(its text changed at test time), on Extrae-course prime too: 16 ranks on 4 nodes of 13, 1, 1
and 1 CPUs.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from popview.analysis.cfg import parse_cfg, read_cfg
from popview.analysis.cfg.evaluate import TraceColumns, evaluate_window
from popview.analysis.cfg.paramedir import evaluate_cfg, format_table, row_labels

from tests.cfg.test_paramedir_outputs import _sha256

CFGS = "paraver-cfgs"
TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
          "epoch16": "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
          "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv",
          "prime": "extraeCoursecodes/MPItraces/prime_v0.prv",      # 16 ranks on 4 nodes of 13, 1, 1, 1 CPUs
          "omp4": "pypop/openmp/imagemagick_example_traces/omp4.prv.gz"}    # one task of 4 threads

IN_MPI = "parami/cfgs/mpi/views/advanced/in_MPI_call.cfg"                  # task rows, Thread i, Sign
RECV_APPL = "parami/cfgs/mpi/views/advanced/receive_bandwidth_appl.cfg"     # application rows, Recv BandWidth
STATES_OMP = "parami/cfgs/OpenMP/views/states_only_useful_openmp.cfg"      # derived: a thread and a task parent
RECV_BW = "compss/files/paraver/cfgs/comm/receive_bandwidth.cfg"           # intervals at each comm record
S_R_BW = "parami/cfgs/mpi/views/point2point/s_r_bandwidth.cfg"             # send + receive bandwidth
NODE_BW = "parami/cfgs/mpi/views/node_bandwidth.cfg"                       # node rows: send + receive bandwidth

# in_MPI_call.cfg at the resource model's levels (its lines changed at test time): CPU rows (each
# the thread on it: Active Thd ...), node rows (their CPUs', idle ones too), the system's
_AS_IS = ("{topcompose2, Sign}", "{topcompose2, As Is}")
VARIANTS = {
    "node": (("window_level task", "window_level node"),),
    "cpu": (("window_level task", "window_level cpu"),),
    "system": (("window_level task", "window_level system"),),
    "node average": (("window_level task", "window_level node"), ("{node, Adding}", "{node, Average}"), _AS_IS),
    "system maximum": (("window_level task", "window_level system"), ("{system, Adding}", "{system, Maximum}"),
                       ("{node, Adding}", "{node, Minimum}"), ("{cpu, Active Thd}", "{cpu, Active Thd Sign}"), _AS_IS),
    "cpu values": (("window_level task", "window_level cpu"), ("{cpu, Active Thd}", "{cpu, Active Thd Val}"), _AS_IS,
                   ("window_semantic_module task Thread i { 1, { 1 1.000000000000 } }",
                    "window_semantic_module task Thread i { 1, { 1 1.000000000000 } }\n"
                    "window_semantic_module cpu Active Thd Val { 1, { 2 1.000000000000 4.000000000000 } }")),
}

# paramedir -tu's CSV of the cfg's last window, intervals of no duration left out: (lines, sha256)
TIMELINES = {
    ("heat2x2", IN_MPI): (4826, "7b5af076914806f5e39bf53cbc345482cc69816333d4747603648c33a93905bb"),
    ("heat2x2", RECV_APPL): (1101, "69729234eab0012302c831ce57ac6c96adb3a27b9cc5e52dd8ea715f308ba4d0"),
    ("heat2x2", RECV_BW): (1104, "4664f78647f977b09c25eda2c6e7f712a4053fc347c8b234f9609fd520299913"),
    ("heat2x2", S_R_BW): (2204, "f1728954b1c7dc1cb40728783c84b7086b2f1e514e0521f0bc9ff0fdef81761d"),
    ("epoch4", IN_MPI): (14988, "b7944d20138517d25fd92a2fd4b383495f7585f302d477e84257996e28cca8e7"),
    ("epoch4", RECV_APPL): (5189, "efb5c43ccb0e237e822a17e6e4ab4383f715142908351a743c002dc5b1cf8a83"),
    ("heat2x2", STATES_OMP): (11238, "875359000f2b490103d9e8f8546e5bba1a614e48d12ba095236d57fd8bfd9b4b"),
    ("omp4", STATES_OMP): (114322, "a66e5ba8a11d926c80edd5dad4639293714648e71156862d45722b16f0cf93e2"),
    ("epoch4", STATES_OMP): (15010, "c5df09fb9c1ca55b6dc2c93ff760c713233211ad965d422f7c8873eaf1866c99"),
    ("epoch4", RECV_BW): (7672, "7b3801e689870e30b6409db637b79964769c46273098d36b09c6c92a53fcb360"),
    ("epoch4", S_R_BW): (12852, "993563fb05d6f88a92102f798d0b8739dd8d3df431dae63d4e8bec0807044be4"),
    ("epoch16", IN_MPI): (61312, "3d85f4818955433428aa6c520fdaf083f63542b12377208bf7c83ead5f850fef"),
    ("epoch16", RECV_APPL): (21729, "cc647c2d4cdfde2c412589861be2eda0bd2f865f4feb07fbe3a72403b31e88b2"),
    ("epoch16", STATES_OMP): (61406, "dbdc51f78dcb96a865ff6557a2795c4de2955e8bd39ef94835c0ed740bbb0c6b"),
    ("epoch16", RECV_BW): (31683, "08eed45261056dd83fbfc00449e112f52c1c1e9ed61e99a48e15b1d84eedc99d"),
    ("epoch16", S_R_BW): (53412, "32dda3e51a9e09905a6c47b1e972ef94196d906fdf79907fa52e11aeac2c2855"),
    ("heat2x2", NODE_BW): (1101, "42be762c565f910ea78add4e45e79f4d8a9bf0c095ed768b56fd2118e49176a1"),
    ("epoch4", NODE_BW): (5189, "f0a921f010e859e0de35fef99f23f26eb43d29ad1dd76e0bf74f9b6bde8244f6"),
    ("epoch16", NODE_BW): (21729, "fc3f0745d6038b4dd31343da4a66d754949a743d97e85294bb53451c7e090005"),
}
# parami's mapping.cfg (window 2: Node ID) with the other object functions, and nb_procs_in_col.cfg
# (In Evt Range added up per application) with Thread i 1 (the cfg's Thread i 0 is 0 throughout)
MAPPING = "parami/cfgs/General/analysis/mapping.cfg"
NB_PROCS = "parami/cfgs/mpi/views/collectives/nb_procs_in_col.cfg"
PARALLEL_FUNCTIONS = "parami/cfgs/OpenMP/views/parallel_functions.cfg"
OBJECT_VARIANTS = {
    "Node ID": (MAPPING, ()),
    **{f: (MAPPING, (("{thread, Node ID}", "{thread, " + f + "}"),)) for f in
       ("Cpu ID", "Application ID", "TaskID", "Thread ID")},
    # parami's parallel_functions.cfg (Last Evt Val of the OpenMP parallel function) at task level
    "task Adding": (PARALLEL_FUNCTIONS, (("window_level thread", "window_level task"),)),
    "task Mode": (PARALLEL_FUNCTIONS, (("window_level thread", "window_level task"), ("{task, Adding}", "{task, Mode}"))),
    "In Evt Range": (NB_PROCS, (("Thread i { 1, { 1 0.000000000000 } }", "Thread i { 1, { 1 1.000000000000 } }"),)),
}
OBJECTS = {
    ("heat2x2", "Node ID"): (9638, "1e469d4c40cbcbf3d8b6b89e149749c8bf6e844602242520be64c19dcead2987"),
    ("heat2x2", "Cpu ID"): (9638, "41c7b64a5861e8abbeb515e83f10c6b393ff80c927bf2cb0cbdcc70c8cf1ab25"),
    ("heat2x2", "Application ID"): (9638, "1e469d4c40cbcbf3d8b6b89e149749c8bf6e844602242520be64c19dcead2987"),
    ("heat2x2", "TaskID"): (9638, "1c126abfedafa85023c6558899e27e109d9f5f00967f34b69b1d9975143d7844"),
    ("heat2x2", "Thread ID"): (9638, "41c7b64a5861e8abbeb515e83f10c6b393ff80c927bf2cb0cbdcc70c8cf1ab25"),
    ("heat2x2", "In Evt Range"): (809, "6982b4dbfc22025b62a1bfc25176dbefb615e3f134e9462c346cde8bc3684fdc"),
    ("epoch4", "Node ID"): (15013, "d83041f42de9b1ca839dfc056885acf895ba1ed4c80da58b0f6fbb10c3078449"),
    ("epoch4", "Cpu ID"): (15013, "a4d484a59dbb4b08bcac30bd6b9d353f8240c3207923c3ecbc053b1ff5e2c822"),
    ("epoch4", "In Evt Range"): (3649, "58f862a2d950c3c040c5aa1894e788f162a48a58b1e503c478ed26cd65e64580"),
    ("prime", "Node ID"): (1422, "c7dadf7eb4fb089cb2e5dc3e3223b28511883ec88a1a1e3dfd96da89a02ec2bb"),
    ("prime", "Cpu ID"): (1422, "efd34423c06930d9b703757eddc1f13ddccdeeb003659f681467f36bbb1aaeb4"),
    ("prime", "Application ID"): (1422, "22366ea99d8cdd82a181872034c8905d235662de2cd87709ca35f44fca7af739"),
    ("prime", "TaskID"): (1422, "efd34423c06930d9b703757eddc1f13ddccdeeb003659f681467f36bbb1aaeb4"),
    ("heat2x2", "task Adding"): (3202, "f680b172acc1b500d73f370927d182afa909b5a4f3b20fe83403139ab04acb66"),
    ("heat2x2", "task Mode"): (3202, "48e599e1e2a2b5c7fa9b393850e08ac36a3e68e11f00e48e622a75d7a1f8aac7"),
    ("omp4", "task Adding"): (17, "04e3c054de70d6cb1d2ebafdd2965ea4177f116a61ed7c46f7c9b096139dbaf9"),
    ("omp4", "task Mode"): (17, "096b6cf786744d6f9244191288d3280473f0a5333203f56761d6994c92876dcd"),
    ("prime", "In Evt Range"): (1216, "c69fd7d0ef0fdc35c638ef22e30df204fa2057a06d22f1807c3270f44e62a799"),
}
# The same for the resource-model variants of in_MPI_call.cfg (CPU rows labelled as paramedir's
# CSV labels them: 0, then each row with the next CPU's node.cpu)
RESOURCE = {
    ("heat2x2", "node"): (4824, "4bc2b630f3ded88feef4ad64a2974f0cf1eab6355fb7407f5560db167e1f9c3e"),
    ("heat2x2", "cpu"): (4828, "fe61bfc787e4ab708ea427776e6a1d66aea6b15de781aa3c5e39dfa9d2fdf7fe"),
    ("heat2x2", "system"): (4824, "7638cef5f2c12e838de9c0b0b8ec610564210fb648679bba02a4bc990509793b"),
    ("epoch4", "node"): (14982, "15e3052f1c10a8387b41ccea79ebab2f9512d25e1c282ec3f846284fd74fbca0"),
    ("epoch4", "cpu"): (14988, "f68926c91da500b3ad83276e2bbdfa0f1bb2d3bfd50deba1c539aaea1c34cf8a"),
    ("epoch4", "system"): (14982, "201176676a47cd3f0127c35e7b6ac2d10ff0a3517e0b3a93d35b588ce8c7e23b"),
    ("epoch16", "node"): (61250, "c844a1c1ef3299e567e02bb0c44eee4d35f89bca3b31acdb2a2b99f5108a2b42"),
    ("epoch16", "cpu"): (61312, "0bb6e7aaeb95e6cbb2a51d5f1f736d1acf5c1bf8442aff2ea93f072a6e5b6390"),
    ("epoch16", "system"): (61250, "9e5fd4617f842a3de34ed9502b9ea5f9c3c576d69a5ba7351a155ea5d1ffffdf"),
    ("prime", "node"): (1347, "a719f709590184042b53e8b3449fd8ec0059ed4642245e14eed1b6ed8ee3a148"),
    ("prime", "cpu"): (1360, "7a856f4c13577b1fdde06cc76f98ed536bbbb033d0689f327a8539270e0a9a02"),
    ("prime", "system"): (1341, "090d9d26d509f1259a57385f708fd1161004631901eb42257e5cea821ab04264"),
    ("heat2x2", "node average"): (4824, "3e2aeef032ada2376daae6149005f3c40fd12428a40827f360550ff2cbaa5e04"),
    ("heat2x2", "system maximum"): (4824, "7f8ca63ccf37f9f3ce41e28b1d99581fbc6e59d72b6588cb617780294428398c"),
    ("heat2x2", "cpu values"): (4828, "3cc7ed41a45e1abc141f8ca35622edd1c333473ee2fd18952d407f9c25ea369e"),
    ("epoch4", "node average"): (14982, "93761c63e7f0ff0d11b2cf3763a29e92e7a4fc9d7dd5e2e792c5337dc35f745e"),
    ("epoch4", "system maximum"): (14982, "0d95363a484d4171791bfb6db88c8a353c7159fbafe975543af6085247eca749"),
    ("epoch4", "cpu values"): (14988, "806613aa1296473a7930d3a783d69ab27e3c8c40541b3a0339f7cee970e93918"),
    ("prime", "node average"): (1347, "f0ee4df25358ccb252811956b70ada2979289e0d1b3b470216636917fb9eb32a"),
    ("prime", "system maximum"): (1341, "5a8854f1db0a012052abbef7f39c951626ab5149c07f3e7e48a2f89fee219dda"),
    ("prime", "cpu values"): (1360, "d13ff55f68d2b7a94a8d8cbf971cab92c3fa650569784e83ca2cc585f65803f8"),
    **OBJECTS,
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
NODE_TIME = (IN_MPI, "Time", "1.000000000000", "node")          # per node (named by the .row)
CPU_TIME = (IN_MPI, "Time", "1.000000000000", "cpu")

# parami's Amdahl.cfg on heat 2x2: Stacked Val over the pieces of task rows of two threads
AMDAHL = "parami/cfgs/OpenMP/analysis/Amdahl.cfg"
AMDAHL_OMP4 = ("\tEnd\t\nTASK 1.1\t0.67\t\n\nTotal\t0.67\t\nAverage\t0.67\t\nMaximum\t0.67\t\nMinimum\t0.67\t\n"
               "StDev\t0.00\t\nAvg/Max\t1.00\t\n\n")
AMDAHL_HEAT = ("\tEnd\t\nTASK 1.1\t0.12\t\nTASK 1.2\t0.13\t\n\nTotal\t0.26\t\nAverage\t0.13\t\nMaximum\t0.13\t\n"
               "Minimum\t0.12\t\nStDev\t0.00\t\nAvg/Max\t0.97\t\n\n")

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
    ("prime", NODE_TIME):
        "\t0\t1\t\nc7101\t610940.30\t1260542.48\t\nc7102\t1621750.58\t249732.19\t\nc7103\t1713969.98\t157512.79\t\n"
        "c7105\t1786750.07\t84732.70\t\n\nTotal\t5733410.94\t1752520.16\t\nAverage\t1433352.73\t438130.04\t\n"
        "Maximum\t1786750.07\t1260542.48\t\nMinimum\t610940.30\t84732.70\t\nStDev\t478406.65\t478406.65\t\n"
        "Avg/Max\t0.80\t0.35\t\n\n",
    ("heat2x2", NODE_TIME):
        "\t0\t1\t\nvm\t2649281.28\t630647.34\t\n\nTotal\t2649281.28\t630647.34\t\nAverage\t2649281.28\t630647.34\t\n"
        "Maximum\t2649281.28\t630647.34\t\nMinimum\t2649281.28\t630647.34\t\nStDev\t0.00\t0.00\t\n"
        "Avg/Max\t1.00\t1.00\t\n\n",
    ("heat2x2", CPU_TIME):
        "\t0\t1\t\n1.vm\t2731931.30\t547997.32\t\n2.vm\t3279928.62\t0.00\t\n3.vm\t2904726.02\t375202.60\t\n"
        "4.vm\t3279928.62\t0.00\t\n\nTotal\t12196514.56\t923199.92\t\nAverage\t3049128.64\t461599.96\t\n"
        "Maximum\t3279928.62\t547997.32\t\nMinimum\t2731931.30\t375202.60\t\nStDev\t238748.58\t86397.36\t\n"
        "Avg/Max\t0.93\t0.84\t\n\n",
}




def variant(shared_traces, name: str) -> str:
    """A shared cfg's text with a variant's lines changed (in_MPI_call.cfg's unless named; a
    timeline variant of a cfg with histograms without them, so that paramedir writes its last
    window)."""
    base = OBJECT_VARIANTS.get(name, (IN_MPI, ()))[0]
    text = (shared_traces / CFGS / base).read_text()
    for old, new in VARIANTS.get(name) or OBJECT_VARIANTS[name][1]:
        assert old in text
        text = text.replace(old, new)
    return text.split("< NEW ANALYZER2D >")[0] if name in OBJECT_VARIANTS else text


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
    elif window.level == "cpu":       # objectLabel of CPU i + 1 for row i (the kernel's), 0 for the first
        node = np.repeat(np.arange(len(h.node_cpus)), h.node_cpus)
        first = np.r_[0, np.cumsum(h.node_cpus)]
        labels = ["0"] + [f"{node[i] + 1}.{i - first[node[i]] + 1}" for i in range(timeline.n_rows - 1)]
    elif window.level == "node":
        labels = [str(i) for i in range(timeline.n_rows)]
    elif window.level in ("system", "workload"):
        labels = [""] * timeline.n_rows
    else:
        labels = [str(i + 1) for i in range(timeline.n_rows)]
    return "".join(f"{labels[r]}\t{b}\t{e - b}\t{v:.2f}\n"
                   for r, b, e, v in zip(timeline.row, timeline.begin, timeline.end, timeline.value))


def _digest(text: str) -> tuple[int, str]:
    return len(text.splitlines()), _sha256(text)


@pytest.mark.parametrize("name,cfg", sorted(TIMELINES))
def test_timeline_is_what_paramedir_wrote(shared_traces, traces, name, cfg):
    _, trace = traces(name)
    assert _digest(timeline_csv(read_cfg(shared_traces / CFGS / cfg), trace)) == TIMELINES[name, cfg]


@pytest.mark.parametrize("name,level", sorted(RESOURCE))
def test_resource_model_timeline_is_what_paramedir_wrote(shared_traces, traces, name, level):
    _, trace = traces(name)
    view = parse_cfg(variant(shared_traces, level), "variant.cfg")
    assert _digest(timeline_csv(view, trace)) == RESOURCE[name, level]


def _with_histogram(shared_traces, case) -> str:
    cfg, statistic, maximum, *level = case
    text = variant(shared_traces, level[0]) if level else (shared_traces / CFGS / cfg).read_text()
    return text + HISTOGRAM.format(statistic=statistic, maximum=maximum)


def _table(shared_traces, traces, name, case) -> str:
    exp, trace = traces(name)
    view = parse_cfg(_with_histogram(shared_traces, case), "levels.cfg")
    tables, skipped = evaluate_cfg(view, trace, row_labels(exp.definitions), exp.definitions, as_paramedir=True)
    assert not skipped
    return "".join(format_table(t) for t in tables)


@pytest.mark.parametrize("name,case", sorted(FROZEN))
def test_histogram_over_task_and_application_rows_is_what_paramedir_wrote(shared_traces, traces, name, case):
    assert _table(shared_traces, traces, name, case) == FROZEN[name, case]


@pytest.mark.parametrize("name,expected", [("heat2x2", AMDAHL_HEAT), ("omp4", AMDAHL_OMP4)])
def test_a_stack_over_task_rows_of_several_threads_is_what_paramedir_wrote(shared_traces, traces, name, expected):
    exp, trace = traces(name)
    tables, skipped = evaluate_cfg(read_cfg(shared_traces / CFGS / AMDAHL), trace, row_labels(exp.definitions),
                                   exp.definitions, as_paramedir=True)
    assert not skipped and "".join(format_table(t) for t in tables) == expected


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


@pytest.mark.parametrize("name,level", sorted(RESOURCE))
def test_resource_model_timeline_is_what_real_paramedir_writes(paramedir, shared_traces, traces, tmp_path, name,
                                                                 level):
    cfg = tmp_path / "variant.cfg"
    cfg.write_text(variant(shared_traces, level))
    _run(paramedir, shared_traces / TRACES[name], cfg, tmp_path / "out", "-tu")
    written = (tmp_path / "out.csv").read_text()
    _, trace = traces(name)
    assert timeline_csv(parse_cfg(cfg.read_text(), "variant.cfg"), trace) == \
        "".join(line for line in written.splitlines(True) if line.split("\t")[2] != "0")


@pytest.mark.parametrize("name", ["heat2x2", "epoch4", "prime"])
@pytest.mark.parametrize("case", [TASK_TIME, APPL_AVERAGE, NODE_TIME, CPU_TIME])
def test_level_histograms_are_what_real_paramedir_writes(paramedir, shared_traces, traces, tmp_path, name, case):
    cfg = tmp_path / "levels.cfg"
    cfg.write_text(_with_histogram(shared_traces, case))
    _run(paramedir, shared_traces / TRACES[name], cfg, tmp_path / "out")
    assert _table(shared_traces, traces, name, case) == (tmp_path / "out").read_text()
