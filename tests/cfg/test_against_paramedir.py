"""`popview paramedir` against BSC's paramedir (paraver-kernel), on the shared traces.

Two kinds of checks:

- frozen: tables real paramedir wrote (paraver-kernel built from its public source, run by hand
  on the shared traces, 2026-11-27) are stored here and compared byte for byte with what popview
  writes from the same shared traces, read at test time (skips without /work/shared);
- live: when POPVIEW_PARAMEDIR names a paramedir binary (or its wrapper script), every cfg of
  the collection that matches is run through both and compared byte for byte, a cfg paramedir
  refuses must be refused by popview too, and the cfgs popview saves (File > Save view as
  Paraver cfg, every colour mode) must load in paramedir without an error or warning.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from popview.analysis.cfg import parse_cfg, read_cfg
from popview.analysis.cfg.evaluate import evaluate_window
from popview.analysis.cfg.export import NotExportable, present_event_types, timeline_cfg
from popview.analysis.cfg.paramedir import NO_EVENTS, evaluate_cfg, format_table, parse_table, row_labels
from popview.analysis.cfg.writer import write_cfg
from popview.analysis.timeline_data import TimelineData

from tests.cfg.test_paramedir_outputs import _sha256

CFGS = "paraver-cfgs"
TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
          "epoch16": "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
          "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv",
          "namd": "bsc-folding/user-functions/444.namd.prv",            # user functions (60000019)
          "prime": "extraeCoursecodes/MPItraces/prime_v0.prv"}          # 16 ranks on 4 nodes

# Byte for byte the same as paramedir's output on EPOCH 4, EPOCH 16 and popview-heat Extrae 2x2.
EXACT = (
    "basicanalysis/cfgs/cycles.cfg",
    "basicanalysis/cfgs/instructions.cfg",
    "basicanalysis/cfgs/runtime.cfg",
    "basicanalysis/cfgs/timings.cfg",
    "compss/files/paraver/cfgs/comm/communication_matrix.cfg",
    "compss/files/paraver/cfgs/comm/process_bandwidth.cfg",    # Send + Recv BandWidth, no window_units: us
    "parami/cfgs/mpi/analysis/other/CommComp_overlap.cfg",     # Recv Messages in Transit
    "compss/files/paraver/cfgs/python/3dp_tasks_phase.cfg",   # column 0 named End
    "parami/cfgs/General/analysis/2dc_cyc_ipc.cfg",
    "parami/cfgs/General/analysis/2dh_useful_duration.cfg",    # computed range: the last label's bracket
    "parami/cfgs/burst_mode/2dh_granularity.cfg",
    "parami/cfgs/counters_PAPI/performance/2dh_duration_IPC.cfg",
    "parami/cfgs/General/analysis/3dc_instr_ipc_useful.cfg",
    "parami/cfgs/General/analysis/efficiency.cfg",
    "parami/cfgs/counters_PAPI/architecture/3dh_percentpreempted_useful.cfg",
    "parami/cfgs/mpi/analysis/3dh_duration_MPIcall.cfg",
    "parami/cfgs/mpi/analysis/3dh_size_call.cfg",              # Event Bytes, 3D
    "parami/cfgs/nanox/mpi/sanity_checks/2dt_brwds_nbbwrds.cfg",  # Join Bursts of in-transit records
    "parami/cfgs/mpi/analysis/connectivity.cfg",
    "parami/cfgs/mpi/analysis/mpi_stats.cfg",
    "parami/cfgs/mpi/analysis/other/communication_matrix.cfg",
    "parami/cfgs/nanox/general/analysis/3dh_ipc_uf.cfg",
    "pypop/pypop/cfgs/omp_useful_computation.cfg",
    "pypop/pypop/cfgs/omp_useful_computation_loop.cfg",
    "pypop/pypop/cfgs/omp_useful_computation_task.cfg",
    "pypop/pypop/cfgs/serial_useful_computation.cfg",
    "pypop/pypop/cfgs/serial_useful_computation_no_omp.cfg",
    "pypop/pypop/cfgs/serial_useful_computation_omp_loop.cfg",
    "pypop/pypop/cfgs/serial_useful_computation_omp_task.cfg",
    "pypop/pypop/cfgs/total_runtime.cfg",                  # Idle (state 0) up to the trace end, as Paraver
    "pypop/pypop/cfgs/total_runtime_excl_disabled.cfg",
    "pypop/pypop/cfgs/total_useful_computation.cfg",
    "pypop/pypop/cfgs/useful_cycles.cfg",
    "pypop/pypop/cfgs/useful_instructions.cfg",
)

# Byte for byte on one trace only (the others differ for a reason given in docs/paraver-cfg.md).
EXACT_ON = {"heat2x2": ("parami/cfgs/counters_PAPI/3dh_instructions.cfg",),      # Analyzer2D.Objects: 0
            "epoch4": ("parami/cfgs/clustering/3dh_ipc_clusterID.cfg", "pypop/pypop/cfgs/total_res_stl_cycles.cfg",
                       "parami/cfgs/OpenMP/analysis/Amdahl.cfg"),        # Stacked Val, then 1-Sign on top
            "namd": ("parami/cfgs/General/analysis/3dh_ufduration.cfg",  # Int. Between Evt, Stacked Val
                     "parami/cfgs/OpenMP/analysis/Amdahl.cfg"),
            # no messages in the trace: no communication record, zeros (or no partner column)
            "prime": ("parami/cfgs/mpi/analysis/3dh_size_call.cfg", "parami/cfgs/mpi/analysis/connectivity.cfg",
                      "compss/files/paraver/cfgs/comm/communication_matrix.cfg",
                      "parami/cfgs/nanox/mpi/sanity_checks/2dt_brwds_nbbwrds.cfg")}

# paramedir: "None of the events specified in the filter appear in the trace. File creation aborted."
REFUSED = {
    "epoch4": ("pypop/pypop/cfgs/omp_total_runtime.cfg", "parami/cfgs/OpenMP/analysis/omp_profile.cfg",
               "parami/cfgs/General/analysis/uf_profile.cfg", "compss/files/paraver/cfgs/3dh_duration_tasks.cfg"),
    "heat2x2": ("pypop/pypop/cfgs/total_res_stl_cycles.cfg", "parami/cfgs/spectral/periodicity.cfg",
                "parami/cfgs/clustering/3dh_ipc_clusterID.cfg"),
}

# Written by paramedir (paraver-kernel, public source) on the shared traces.
FROZEN = {
    ("heat2x2", "basicanalysis/cfgs/timings.cfg"):
        "\tRunning\tNot created\tScheduling and Fork/Join\tWait/WaitAll\tImmediate Send\tImmediate Receive\tI/O"
        "\tGroup Communication\tOthers\t\n"
        "THREAD 1.1.1\t629897.54\t24631.18\t2076980.43\t201994.42\t1041.12\t1444.71\t410.17\t343462.18\t55.32\t\n"
        "THREAD 1.1.2\t335462.63\t264082.43\t0.00\t0.00\t0.00\t0.00\t0.00\t0.00\t0.00\t\n"
        "THREAD 1.2.1\t814457.48\t0.00\t2089848.51\t219634.88\t1067.65\t1342.59\t419.43\t153079.77\t78.30\t\n"
        "THREAD 1.2.2\t564241.45\t264083.36\t0.00\t0.00\t0.00\t0.00\t0.00\t0.00\t0.00\t\n\n"
        "Total\t2344059.10\t552796.98\t4166828.94\t421629.29\t2108.77\t2787.30\t829.60\t496541.96\t133.62\t\n"
        "Average\t586014.78\t184265.66\t2083414.47\t210814.65\t1054.39\t1393.65\t414.80\t248270.98\t66.81\t\n"
        "Maximum\t814457.48\t264083.36\t2089848.51\t219634.88\t1067.65\t1444.71\t419.43\t343462.18\t78.30\t\n"
        "Minimum\t335462.63\t24631.18\t2076980.43\t201994.42\t1041.12\t1342.59\t410.17\t153079.77\t55.32\t\n"
        "StDev\t171290.85\t112878.62\t6434.04\t8820.23\t13.27\t51.06\t4.63\t95191.20\t11.49\t\n"
        "Avg/Max\t0.72\t0.70\t1.00\t0.96\t0.99\t0.96\t0.99\t0.72\t0.85\t\n\n",
    ("heat2x2", "pypop/pypop/cfgs/omp_useful_computation.cfg"):
        "\t1\t\nTHREAD 1.1.1\t221638819.00\t\nTHREAD 1.1.2\t335462634.00\t\nTHREAD 1.2.1\t376644167.00\t\n"
        "THREAD 1.2.2\t564241451.00\t\n\nTotal\t1497987071.00\t\nAverage\t374496767.75\t\nMaximum\t564241451.00\t\n"
        "Minimum\t221638819.00\t\nStDev\t123386458.17\t\nAvg/Max\t0.66\t\n\n",
    ("heat2x2", "pypop/pypop/cfgs/serial_useful_computation.cfg"):
        "\t1\t\nTHREAD 1.1.1\t408258720.00\t\nTHREAD 1.1.2\t0.00\t\nTHREAD 1.2.1\t437813310.00\t\nTHREAD 1.2.2\t0.00\t\n\n"
        "Total\t846072030.00\t\nAverage\t423036015.00\t\nMaximum\t437813310.00\t\nMinimum\t408258720.00\t\n"
        "StDev\t14777295.00\t\nAvg/Max\t0.97\t\n\n",
    ("epoch4", "compss/files/paraver/cfgs/comm/communication_matrix.cfg"):
        "\tTHREAD 1.1.1\tTHREAD 1.2.1\tTHREAD 1.3.1\tTHREAD 1.4.1\t\n"
        "THREAD 1.1.1\t0.00\t20523648.00\t41760.00\t10961136.00\t\n"
        "THREAD 1.2.1\t20734824.00\t0.00\t10961136.00\t41760.00\t\n"
        "THREAD 1.3.1\t41760.00\t10961136.00\t0.00\t20734824.00\t\n"
        "THREAD 1.4.1\t10961136.00\t41760.00\t20523648.00\t0.00\t\n\n"
        "Total\t31737720.00\t31526544.00\t31526544.00\t31737720.00\t\n"
        "Average\t10579240.00\t10508848.00\t10508848.00\t10579240.00\t\n"
        "Maximum\t20734824.00\t20523648.00\t20523648.00\t20734824.00\t\n"
        "Minimum\t41760.00\t41760.00\t41760.00\t41760.00\t\n"
        "StDev\t8452222.90\t8367809.64\t8367809.64\t8452222.90\t\n"
        "Avg/Max\t0.51\t0.51\t0.51\t0.51\t\n\n",
    ("epoch4", "parami/cfgs/mpi/analysis/other/CommComp_overlap.cfg"):      # Recv Messages in Transit
        "\t1\t2\t\nTHREAD 1.1.1\t0.46\t0.88\t\nTHREAD 1.2.1\t0.67\t0.92\t\nTHREAD 1.3.1\t0.43\t0.01\t\n"
        "THREAD 1.4.1\t0.46\t0.05\t\n\nTotal\t2.02\t1.86\t\nAverage\t0.50\t0.46\t\n"
        "Maximum\t0.67\t0.92\t\nMinimum\t0.43\t0.01\t\nStDev\t0.10\t0.44\t\nAvg/Max\t0.75\t0.51\t\n\n",
    ("heat2x2", "parami/cfgs/nanox/mpi/sanity_checks/2dt_brwds_nbbwrds.cfg"):     # bandwidth < 0, Join Bursts,
        "\t1\t\nTHREAD 1.1.1\t0.00\t\nTHREAD 1.1.2\t0.00\t\nTHREAD 1.2.1\t16085.62\t\n"   # controlled, Burst Time
        "THREAD 1.2.2\t0.00\t\n\nTotal\t16085.62\t\nAverage\t16085.62\t\nMaximum\t16085.62\t\n"
        "Minimum\t16085.62\t\nStDev\t0.00\t\nAvg/Max\t1.00\t\n\n",
    ("prime", "compss/files/paraver/cfgs/comm/communication_matrix.cfg"):     # no messages: no partner column
        "\t\n" + "".join(f"THREAD 1.{r}.1\t\n" for r in range(1, 17)) +
        "\nTotal\t\nAverage\t\nMaximum\t\nMinimum\t\nStDev\t\nAvg/Max\t\n\n",
    ("epoch16", "basicanalysis/cfgs/runtime.cfg"):          # StDev 0.03 of 16 equal rows: float rounding, kept
        "\t[0.00..200.00]\t\n" + "".join(f"THREAD 1.{r}.1\t2339560.72\t\n" for r in range(1, 17)) +
        "\nTotal\t37432971.58\t\nAverage\t2339560.72\t\nMaximum\t2339560.72\t\nMinimum\t2339560.72\t\n"
        "StDev\t0.03\t\nAvg/Max\t1.00\t\n\n",
}


# Digests (SHA-256 of the UTF-8 text) of tables too long to keep here, as paramedir wrote them.
FROZEN_SHA256 = {
    ("epoch4", "parami/cfgs/mpi/analysis/3dh_size_call.cfg"):          # Event Bytes (+ collective size), 3D
        "56abe427c9aa94fa3ac6f0fd65c196e0dc711ff3a2c47d9f40a83d09b453f65d",
    ("namd", "parami/cfgs/General/analysis/3dh_ufduration.cfg"): "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ("epoch4", "parami/cfgs/OpenMP/analysis/Amdahl.cfg"): "faa6894402d8b67bb5b22641ed561f8552e4ed9e0b5ec5cd0f552609d53b735f",
    ("heat2x2", "parami/cfgs/mpi/analysis/3dh_size_call.cfg"):
        "ff0ad940da732ea2e94a6b91481fb27815eb914730dbf1157c94e01fea7a8785",
}

# Timeline cfgs (no histogram: paramedir writes the cfg's last window, `-tu`: in trace units)
# whose last window popview evaluates to the same values everywhere on EPOCH 4, EPOCH 16 and
# popview-heat Extrae 2x2 (compared in the canonical form below).
TIMELINES = (
    "parami/cfgs/mpi/views/point2point/p2p_size.cfg",          # Event Bytes
    "parami/cfgs/mpi/views/mpi_msg_size.cfg",                  # Event Bytes + collective size
    "parami/cfgs/mpi/views/point2point/late_receivers.cfg",    # Event Bytes / MPI call duration
    "parami/cfgs/mpi/views/collectives/nb_procs_in_col.cfg",   # In Evt Range (0 throughout on these traces)
)

# Digests of paramedir's timeline dumps (-tu) in canonical form.
FROZEN_TIMELINE_SHA256 = {
    ("epoch4", "parami/cfgs/mpi/views/point2point/p2p_size.cfg"): "4fec258d1a76401dba3fd9a92c42f32cef2be121d497d5d55095c099462d48a1",
    ("heat2x2", "parami/cfgs/mpi/views/point2point/late_receivers.cfg"): "7b0a5f59d92f77196d6ca59c9fa670129145e1a74af0a9266ac74903394a3ab7",
}


# The communication-record functions on a cfg of the collection (parami's p2p_size: MPI
# point-to-point and other calls) whose function and message filter are changed:
# (function, logical, physical, extra filter line or None)
VARIANT_BASE = "parami/cfgs/mpi/views/point2point/p2p_size.cfg"
RECORD_FUNCTIONS = ("Number Of Sends", "Number Of Send Bytes", "Number Of Receives", "Number Of Receive Bytes",
                    "Comm Partner", "Comm Recv. Partner", "Last Tag", "Comm Size", "Last Send Dur.",
                    "Next Recv Dur.", "Last Send Size", "Event Sent Bytes", "Event Bytes", "Recv BandWidth",
                    "Send Messages in Transit")
FILTERS = {"logical": (True, False, None), "physical": (False, True, None), "both": (True, True, None),
           "tag != 0": (True, False, ("tag_msg", "!=", "1 0")), "from 1 or 3": (True, False, ("from_obj", "=", "2 1 3")),
           "bandwidth > 100": (True, False, ("bw_msg", ">", "1 100.0"))}

FROZEN_VARIANT_SHA256 = {
    ("epoch4", "Comm Recv. Partner", "logical"): "683e945186581ce05da5748b16c3e9b6a8625b4cc5d1ac460c737e38910cd821",
    ("epoch4", "Number Of Receive Bytes", "physical"): "d00e5839e0f0ac33a86e50da13cd1555406e1dbfdf8cea7e6379a79ef4ee41b8",
    ("heat2x2", "Event Bytes", "from 1 or 3"): "9131a66d24562c297187ec7d3dcbd11fc35b2be50441b9404fd84c5cc71ac16f",
}


# Compose functions that remember the row's sequence of intervals, on the same cfg: (thread
# function, compose_thread, topcompose2, topcompose1); the kernel applies topcompose2 first.
SEQUENCES = (("Last Evt Val", "Sign", "Stacked Val", "As Is"), ("Last Evt Val", "As Is", "Stacked Val", "1-Sign"),
             ("Next Evt Val", "As Is", "Stacked Val", "As Is"), ("Int. Between Evt", "As Is", "Nesting level", "As Is"),
             ("Last Evt Val", "Sign", "Join Bursts", "Burst Time"), ("Avg Next Evt Val", "As Is", "Delta", "As Is"),
             ("Event Bytes", "Sign", "Join Bursts", "As Is"), ("Number Of Receives", "As Is", "Burst Time", "As Is"),
             ("Comm Partner", "As Is", "Stacked Val", "Sign"), ("Avg Last Evt Val", "As Is", "Burst Time", "As Is"),
             ("Last Evt Val", "As Is", "Sign", "Add"))
FROZEN_SEQUENCE_SHA256 = {
    ("epoch4", ("Last Evt Val", "Sign", "Join Bursts", "Burst Time")): "c88c1157dc020f0774518202b7325daf59f0335308a26997b61ae7fee70e1d21",
    ("heat2x2", ("Int. Between Evt", "As Is", "Nesting level", "As Is")): "da5f847f52e4d0bec1df1ef0f0936ebcdfd011d7483929a340ac44082b237fb6",
    ("epoch4", ("Last Evt Val", "As Is", "Stacked Val", "1-Sign")): "3af2a307323e489ddf214ab0d53e20fe0c94ab19111fe3cb73b61f14d6c5ccc2",
}


# Event functions of the last event's value, with their parameters, on the same cfg
EVENT_VALUE_FUNCTIONS = {"In Evt Range": "{ 2, { 1 5.000000000000, 1 41.000000000000 } }",
                         "In Evt Val": "{ 1, { 2 41.000000000000 0.000000000000 } }",
                         "Not In Evt Val": "{ 1, { 2 41.000000000000 0.000000000000 } }",
                         "Given Evt Val": "{ 1, { 1 41.000000000000 } }"}


def event_value_cfg(shared_traces: Path, function: str) -> str:
    return variant_cfg(shared_traces, function, "logical") + \
        f"window_semantic_module thread {function} {EVENT_VALUE_FUNCTIONS[function]}\n"


def sequence_cfg(shared_traces: Path, case: tuple[str, str, str, str]) -> str:
    function, thread, top2, top1 = case
    text = variant_cfg(shared_traces, function, "logical")
    text = text.replace("{compose_thread, As Is}", "{compose_thread, %s}" % thread)
    text = text.replace("{topcompose2, As Is}", "{topcompose2, %s}" % top2)
    text = text.replace("{topcompose1, As Is}", "{topcompose1, %s}" % top1)
    if top1 == "Add":
        text += "window_semantic_module topcompose1 Add { 1, { 1 5.000000000000 } }\n"
    return text


# Controlled derived windows on parami's received_from_delayed (an old-format cfg): its window 3
# with the data window's function changed to Event Bytes of MPI calls and the control window to
# the MPI call itself (a value that falls back to 0 after each call), the cfg cut after window 3.
CONTROLLED = ("controlled: clear by", "controlled: maximum")
CONTROLLED_BASE = "parami/cfgs/nanox/mpi/scalasca_properties/received_from_delayed.cfg"
FROZEN_CONTROLLED_SHA256 = {
    ("epoch4", "controlled: clear by"): "4fec258d1a76401dba3fd9a92c42f32cef2be121d497d5d55095c099462d48a1",
    ("epoch16", "controlled: maximum"): "e8fc69005b87cbc9fbcabff1803f5b5a68c45ca15d2fcf8971e4db705526a818",
}


def controlled_cfg(shared_traces: Path, operation: str) -> str:
    text = (shared_traces / CFGS / CONTROLLED_BASE).read_text()
    text = text.replace("{thread, Comm Recv. Partner}", "{thread, Event Bytes}", 1)
    text = text.replace("{evt_type, None}", "{evt_type, [x,y]}", 1)
    at = text.index("window_analyzer_executed")
    text = text[:at] + "window_filter_module evt_type 2 50000001 50000003\n" + text[at:]
    text = text.replace("{compose_thread, Sign}", "{compose_thread, As Is}", 1)
    text = text.replace("window_operation controlled: clear by", f"window_operation {operation}", 1)
    text = text[:text.index("< NEW DISPLAYING WINDOW MPI call_c1_c1 >")].rstrip("#\n") + "\n"
    text = text.replace("number_of_windows 5", "number_of_windows 3")
    # the whole run in paramedir's dump too (the old-format windows give only a relative scale)
    return text.replace("window_open false", "window_open false\nwindow_begin_time_relative 0.000000000000\n"
                        "window_end_time_relative 1.000000000000")


def node_id_cfg(shared_traces: Path) -> str:
    """parami's mapping.cfg without its histogram: paramedir then writes its last window, Node ID."""
    text = (shared_traces / CFGS / "parami/cfgs/General/analysis/mapping.cfg").read_text()
    return text[:text.index("< NEW ANALYZER2D")].rstrip("#\n") + "\n"


FROZEN_NODE_ID_SHA256 = "fec7748c7b43da3cad53658d7ffd9ac27dbc18038d25144eeda897f3a6fe3ea5"


def variant_cfg(shared_traces: Path, function: str, variant: str) -> str:
    logical, physical, extra = FILTERS[variant]
    text = (shared_traces / CFGS / VARIANT_BASE).read_text()
    text = text.replace("{thread, Event Bytes}", "{thread, %s}" % function)
    text = text.replace("window_logical_filtered true", f"window_logical_filtered {str(logical).lower()}")
    text = text.replace("window_physical_filtered false", f"window_physical_filtered {str(physical).lower()}")
    if extra is not None:
        key, function_name, values = extra
        text = text.replace("{%s, All}" % key, "{%s, %s}" % (key, function_name))
        text += f"window_filter_module {key} {values}\n"
    return text


def _popview_variant(traces, name: str, text: str) -> str:
    _, columns = traces(name)
    view = parse_cfg(text, "variant.cfg")
    return _canonical(evaluate_window(view, len(view.windows), columns))


def canonical_timeline(rows) -> str:
    """A timeline as text that does not depend on how it is cut into intervals: per row (in
    order, numbered from 0) each run of equal values (2 decimals, as paramedir writes them)
    with a duration: `row<TAB>begin<TAB>duration<TAB>value`. `rows`: per row, its
    (begin, duration, value text) in time order."""
    out = []
    for r, intervals in enumerate(rows):
        current = None
        for begin, duration, value in intervals:
            if duration <= 0:
                continue
            if current is not None and current[2] == value and current[0] + current[1] == begin:
                current[1] += duration
                continue
            if current is not None:
                out.append(f"{r}\t{current[0]}\t{current[1]}\t{current[2]}\n")
            current = [begin, duration, value]
        if current is not None:
            out.append(f"{r}\t{current[0]}\t{current[1]}\t{current[2]}\n")
    return "".join(out)


def paramedir_timeline(path: Path) -> str:
    """paramedir's window dump (label, begin, duration, value per line) in canonical form."""
    rows: dict[str, list] = {}
    for line in path.read_text().splitlines():
        label, begin, duration, value = line.split("\t")
        rows.setdefault(label, []).append((int(begin), int(duration), value))
    return canonical_timeline(rows.values())


def _popview_timeline(traces, shared_traces, name: str, cfg: str) -> str:
    _, columns = traces(name)
    view = read_cfg(shared_traces / CFGS / cfg)
    return _canonical(evaluate_window(view, len(view.windows), columns))


def _canonical(t) -> str:
    rows = [[] for _ in range(t.n_rows)]
    for r, b, e, v in zip(t.row.tolist(), t.begin.tolist(), t.end.tolist(), t.value.tolist()):
        rows[r].append((b, e - b, f"{v:.2f}"))
    return canonical_timeline(rows)




def _popview(traces, shared_traces, name: str, cfg: str):
    exp, columns = traces(name)
    tables, skipped = evaluate_cfg(read_cfg(shared_traces / CFGS / cfg), columns, row_labels(exp.definitions),
                                   exp.definitions, as_paramedir=True)
    return "".join(format_table(t) for t in tables), skipped


@pytest.mark.parametrize("name,cfg", sorted(FROZEN))
def test_popview_writes_what_paramedir_wrote(shared_traces, traces, name, cfg):
    text, skipped = _popview(traces, shared_traces, name, cfg)
    assert skipped == []
    assert text == FROZEN[name, cfg]


@pytest.mark.parametrize("name,cfg", sorted(FROZEN_SHA256))
def test_popview_writes_the_digest_of_what_paramedir_wrote(shared_traces, traces, name, cfg):
    text, skipped = _popview(traces, shared_traces, name, cfg)
    assert skipped == []
    assert _sha256(text) == FROZEN_SHA256[name, cfg]


@pytest.mark.parametrize("name,cfg", sorted(FROZEN_TIMELINE_SHA256))
def test_popview_timeline_is_what_paramedir_dumped(shared_traces, traces, name, cfg):
    assert _sha256(_popview_timeline(traces, shared_traces, name, cfg)) == FROZEN_TIMELINE_SHA256[name, cfg]


@pytest.mark.parametrize("name,function,variant", sorted(FROZEN_VARIANT_SHA256))
def test_communication_function_is_what_paramedir_dumped(shared_traces, traces, name, function, variant):
    text = _popview_variant(traces, name, variant_cfg(shared_traces, function, variant))
    assert _sha256(text) == FROZEN_VARIANT_SHA256[name, function, variant]


@pytest.mark.parametrize("name,case", sorted(FROZEN_SEQUENCE_SHA256))
def test_sequence_compose_is_what_paramedir_dumped(shared_traces, traces, name, case):
    text = _popview_variant(traces, name, sequence_cfg(shared_traces, case))
    assert _sha256(text) == FROZEN_SEQUENCE_SHA256[name, case]


@pytest.mark.parametrize("name,operation", sorted(FROZEN_CONTROLLED_SHA256))
def test_controlled_window_is_what_paramedir_dumped(shared_traces, traces, name, operation):
    text = _popview_variant(traces, name, controlled_cfg(shared_traces, operation))
    assert _sha256(text) == FROZEN_CONTROLLED_SHA256[name, operation]


def test_node_id_is_what_paramedir_dumped(shared_traces, traces):
    text = _popview_variant(traces, "prime", node_id_cfg(shared_traces))
    assert text.count("\t4.00\n") == 1 and _sha256(text) == FROZEN_NODE_ID_SHA256     # the 16th rank on node 4


def test_canonical_timeline_joins_equal_runs_and_drops_instants():
    rows = [[(0, 5, "0.00"), (5, 0, "7.00"), (5, 3, "0.00"), (8, 2, "1.50")], [(0, 10, "2.00")]]
    assert canonical_timeline(rows) == "0\t0\t8\t0.00\n0\t8\t2\t1.50\n1\t0\t10\t2.00\n"


@pytest.mark.parametrize("name,cfg", [(n, c) for n, cs in sorted(REFUSED.items()) for c in cs])
def test_a_cfg_none_of_whose_events_is_in_the_trace_is_refused_as_paramedir_refuses_it(
        shared_traces, traces, name, cfg):
    text, skipped = _popview(traces, shared_traces, name, cfg)
    assert text == "" and skipped and all(s.reason == NO_EVENTS for s in skipped)


# -- live, against a paramedir binary ------------------------------------------------------------



def _run(paramedir: str, trace: Path, cfg: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([paramedir, str(trace), str(cfg), str(out)], capture_output=True, text=True,
                          cwd=str(out.parent), timeout=600)


@pytest.mark.parametrize("name", ["epoch4", "heat2x2"])
@pytest.mark.parametrize("cfg", EXACT + tuple(c for cs in REFUSED.values() for c in cs))
def test_same_bytes_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, cfg):
    out = tmp_path / "paramedir.txt"
    run = _run(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, out)
    text, skipped = _popview(traces, shared_traces, name, cfg)
    if "File creation aborted" in run.stdout:
        assert text == "" and all(s.reason == NO_EVENTS for s in skipped), run.stdout
        return
    assert run.returncode == 0 and out.is_file(), run.stdout + run.stderr
    assert text == out.read_text()


@pytest.mark.parametrize("name", ["epoch4", "epoch16", "heat2x2"])
@pytest.mark.parametrize("cfg", TIMELINES)
def test_same_timeline_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, cfg):
    assert _popview_timeline(traces, shared_traces, name, cfg) == \
        _paramedir_timeline(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, tmp_path)


def _paramedir_timeline(paramedir: str, trace: Path, cfg: Path, tmp_path: Path) -> str:
    """The last window of `cfg` as paramedir dumps it (`-tu`), in canonical form."""
    run = subprocess.run([paramedir, "-tu", str(trace), str(cfg), str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=str(tmp_path), timeout=600)
    dump = tmp_path / "out.csv"
    assert run.returncode == 0 and dump.is_file(), run.stdout + run.stderr
    return paramedir_timeline(dump)


def _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name: str, text: str) -> None:
    cfg = tmp_path / "variant.cfg"
    cfg.write_text(text)
    assert _popview_variant(traces, name, text) == \
        _paramedir_timeline(paramedir, shared_traces / TRACES[name], cfg, tmp_path)


@pytest.mark.parametrize("name", ["epoch4", "heat2x2"])
@pytest.mark.parametrize("variant", sorted(FILTERS))
@pytest.mark.parametrize("function", RECORD_FUNCTIONS)
def test_communication_function_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, function,
                                                  variant):
    _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, variant_cfg(shared_traces, function, variant))


@pytest.mark.parametrize("name", ["epoch4", "heat2x2", "prime"])
def test_node_id_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name):
    _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, node_id_cfg(shared_traces))


@pytest.mark.parametrize("name", ["epoch4", "heat2x2"])
@pytest.mark.parametrize("function", sorted(EVENT_VALUE_FUNCTIONS))
def test_event_value_function_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, function):
    _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, event_value_cfg(shared_traces, function))


@pytest.mark.parametrize("name", ["epoch4", "heat2x2"])
@pytest.mark.parametrize("case", SEQUENCES)
def test_sequence_compose_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, case):
    _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, sequence_cfg(shared_traces, case))


@pytest.mark.parametrize("name", ["epoch4", "epoch16", "heat2x2"])
@pytest.mark.parametrize("operation", CONTROLLED)
def test_controlled_window_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, operation):
    _same_variant_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, controlled_cfg(shared_traces, operation))


@pytest.mark.parametrize("name,cfg", [(n, c) for n, cs in sorted(EXACT_ON.items()) for c in cs])
def test_same_bytes_as_real_paramedir_on_one_trace(paramedir, shared_traces, traces, tmp_path, name, cfg):
    out = tmp_path / "paramedir.txt"
    run = _run(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, out)
    assert run.returncode == 0 and out.is_file(), run.stdout + run.stderr
    assert _popview(traces, shared_traces, name, cfg)[0] == out.read_text()


def test_the_histogram_s_selected_rows_alone_are_written(shared_traces, traces):
    text, _ = _popview(traces, shared_traces, "heat2x2", "parami/cfgs/counters_PAPI/3dh_instructions.cfg")
    rows = {line.split("\t")[0] for line in text.split("\n") if line.startswith("THREAD")}
    assert rows == {"THREAD 1.1.1"}                 # Analyzer2D.Objects: 0


@pytest.mark.parametrize("name", ["epoch4", "heat2x2"])
def test_every_saved_view_loads_in_real_paramedir(paramedir, shared_traces, traces, tmp_path, name):
    exp, _ = traces(name)
    present = present_event_types(exp.reader)
    t_end = int(exp.definitions.t_end)
    saved = 0
    for k, mode in enumerate(TimelineData(exp).modes()):
        try:
            view = timeline_cfg(exp.definitions, mode, t_end // 4, t_end // 2, 0.0, 2.0, present=present)
        except NotExportable:
            continue
        cfg = tmp_path / f"view{k}.cfg"
        cfg.write_text(write_cfg(view))
        run = _run(paramedir, shared_traces / TRACES[name], cfg, tmp_path / f"view{k}.out")
        assert run.returncode == 0 and run.stderr == "", (mode.label, run.stderr)
        assert run.stdout.strip().endswith("file written."), (mode.label, run.stdout)      # no warning either
        assert "appear in the trace" not in run.stdout, (mode.label, run.stdout)
        saved += 1
    kinds = {m.kind for m in TimelineData(exp).modes()}
    assert saved >= len(kinds & {"state", "mpi", "openmp", "useful", "ipc"})


def test_process_bandwidth_cells_are_what_paramedir_wrote(shared_traces, traces):
    """COMPSs comm/process_bandwidth on EPOCH 4: Integral of Send + Recv BandWidth (MB/s, the
    cfg has no window_units: microseconds) in 200 columns of 5 MB/s; paramedir's first cells."""
    text, skipped = _popview(traces, shared_traces, "epoch4", "compss/files/paraver/cfgs/comm/process_bandwidth.cfg")
    assert not skipped
    columns, rows = parse_table(text)
    assert len(columns) == 200 and columns[0] == "[0.01..5.01)" and columns[-1] == "[995.01..1,000.00]"
    paramedir_wrote = {"THREAD 1.1.1": [922.45, 42193.42, 41133.19, 361.94, 38903.05, 20880.0],
                       "THREAD 1.2.1": [1001.1, 82757.61, 754.45, 432.34, 39656.05, 20880.0],
                       "THREAD 1.3.1": [1031.93, 3023.62, 81864.68, 0.0, 103243.71, 0.0],
                       "THREAD 1.4.1": [1024.01, 1432.45, 83123.55, 0.0, 104744.57, 0.0]}
    for row, cells in paramedir_wrote.items():
        assert rows[row][:6].tolist() == cells, row
    assert round(float(rows["Total"].sum()), 2) == 13953236.43
