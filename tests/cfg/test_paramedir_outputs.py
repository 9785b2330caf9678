"""What `popview paramedir` writes for a cfg, byte for byte against BSC's paramedir.

paramedir writes, for each cfg, its last histogram (a cfg's earlier histograms are computed and
dropped) or, for a cfg without a histogram, its last window's timeline (TextOutput::dumpWindow:
row, begin, duration, value). `paramedir_job` gives that text. On EPOCH 4, EPOCH 16 and
popview-heat Extrae 2x2:

- frozen: the SHA-256 of each file real paramedir (paraver-kernel built from its public source)
  wrote, in paramedir_digests.json (made by running this file: `python
  tests/cfg/test_paramedir_outputs.py PARAMEDIR`), compared with popview's text without paramedir;
- live: with POPVIEW_PARAMEDIR, both run and compared byte for byte.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from popview.analysis.cfg import read_cfg
from popview.analysis.cfg.paramedir import Options, paramedir_job

CFGS = "paraver-cfgs"
TRACES = {"epoch4": "pypop/mpi/epoch_example_traces/epoch_4proc.prv.gz",
          "epoch16": "pypop/mpi/epoch_example_traces/epoch_16proc.prv.gz",
          "heat2x2": "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"}
DIGESTS = Path(__file__).with_name("paramedir_digests.json")

# cfgs with histograms: the last one byte for byte on the three traces
HISTOGRAMS = (
    "basicanalysis/cfgs/cycles.cfg", "basicanalysis/cfgs/instructions.cfg", "basicanalysis/cfgs/runtime.cfg",
    "basicanalysis/cfgs/timings.cfg", "compss/files/paraver/cfgs/comm/communication_matrix.cfg",
    "compss/files/paraver/cfgs/comm/process_bandwidth.cfg", "compss/files/paraver/cfgs/python/3dp_tasks_phase.cfg",
    "parami/cfgs/General/analysis/2dc_cyc_ipc.cfg", "parami/cfgs/General/analysis/2dh_useful_duration.cfg",
    "parami/cfgs/General/analysis/3dc_instr_ipc_useful.cfg",
    "parami/cfgs/General/analysis/LB_analysis.cfg",                  # 4 histograms: the last one
    "parami/cfgs/General/analysis/efficiency.cfg",
    "parami/cfgs/General/analysis/mapping.cfg",                      # topcompose Add: a column 1 past the end
    "parami/cfgs/General/link_to_source/by_call_stack/2dp_MPItime_line.cfg",   # derived, .pcf names, sorted
    "parami/cfgs/burst_mode/2dh_granularity.cfg",
    "parami/cfgs/counters_PAPI/3dh_instructions.cfg",                # 100 planes: a plane label line
    "parami/cfgs/counters_PAPI/architecture/3dh_percentpreempted_useful.cfg",
    "parami/cfgs/counters_PAPI/performance/2dh_duration_IPC.cfg", "parami/cfgs/mpi/analysis/3dh_duration_MPIcall.cfg",
    "parami/cfgs/mpi/analysis/3dh_size_call.cfg", "parami/cfgs/mpi/analysis/connectivity.cfg",
    "parami/cfgs/mpi/analysis/mpi_stats.cfg", "parami/cfgs/mpi/analysis/other/CommComp_overlap.cfg",
    "parami/cfgs/mpi/analysis/other/call_duration_histogram.cfg",     # task rows, Stacked Val
    "parami/cfgs/mpi/analysis/other/communication_matrix.cfg", "parami/cfgs/nanox/general/analysis/3dh_ipc_uf.cfg",
    "parami/cfgs/sampling+folding/2dp_sampled_function.cfg",        # derived: columns named from the .pcf
    "pypop/pypop/cfgs/omp_useful_computation.cfg", "pypop/pypop/cfgs/omp_useful_computation_loop.cfg",
    "pypop/pypop/cfgs/omp_useful_computation_task.cfg", "pypop/pypop/cfgs/serial_useful_computation.cfg",
    "pypop/pypop/cfgs/serial_useful_computation_no_omp.cfg", "pypop/pypop/cfgs/serial_useful_computation_omp_loop.cfg",
    "pypop/pypop/cfgs/serial_useful_computation_omp_task.cfg", "pypop/pypop/cfgs/total_runtime.cfg",
    "pypop/pypop/cfgs/total_runtime_excl_disabled.cfg", "pypop/pypop/cfgs/total_useful_computation.cfg",
    "pypop/pypop/cfgs/useful_cycles.cfg", "pypop/pypop/cfgs/useful_instructions.cfg",
)
# cfgs without a histogram: the last window's timeline byte for byte on the three traces
TIMELINES = (
    "parami/cfgs/CUDA/views/cuda_views.cfg",
    "parami/cfgs/General/link_to_source/by_call_stack/MPI_caller.cfg",     # derived, zero-length intervals
    "parami/cfgs/General/sanity_checks/Events_too_close.cfg",              # Int. Between Evt at one instant
    "parami/cfgs/General/views/executing_cpu.cfg", "parami/cfgs/General/views/state_as_is.cfg",
    "parami/cfgs/General/views/useful.cfg", "parami/cfgs/General/views/useful_duration.cfg",
    "parami/cfgs/General/views/state_duration.cfg",        # Idle after the last record: its begin time
    "parami/cfgs/counters_PAPI/performance/Useful_ipc.cfg", "parami/cfgs/mpi/views/MPI_call.cfg",
    "parami/cfgs/mpi/views/MPI_call_duration.cfg", "parami/cfgs/mpi/views/advanced/in_MPI_call.cfg",
    "parami/cfgs/mpi/views/advanced/receive_bandwidth_appl.cfg",           # application rows: '1'
    "parami/cfgs/mpi/views/collectives/MPI_collective_call.cfg",
    "parami/cfgs/mpi/views/mpi_msg_size.cfg", "parami/cfgs/mpi/views/point2point/MPI_p2p_call.cfg",
    "parami/cfgs/mpi/views/point2point/p2p_size.cfg", "parami/cfgs/nanox/general/views/state_as_is.cfg",
    "paraver-kernel/test/cutter/qsort_beo3.prv.cfg",
    "paraver-kernel/test/cutter/state_as_is.zoom_original.cfg",           # a zoomed time window
    "paraver-kernel/test/cutter/zoom.state_as_is.originaltime-0.cfg",
    "paraver-kernel/test/cutter/zoom.state_as_is.originaltime-1.cfg",
)
# byte for byte where paramedir writes something (it refuses them on the other traces, as popview)
# or, for the communication windows, on EPOCH 4 only (see docs/paraver-cfg.md)
_COUNTERS = ("parami/cfgs/counters_PAPI/architecture/L1D_misses.cfg",
             "parami/cfgs/counters_PAPI/architecture/L2_Total_miss_ratio.cfg",
             "parami/cfgs/counters_PAPI/performance/Cycles.cfg", "parami/cfgs/counters_PAPI/performance/IPC.cfg",
             "parami/cfgs/counters_PAPI/performance/MIPS.cfg", "parami/cfgs/counters_PAPI/performance/instructions.cfg",
             "parami/cfgs/counters_PAPI/program/L_S_mix.cfg", "parami/cfgs/OpenMP/views/states_only_useful_openmp.cfg",
             "compss/files/paraver/cfgs/histograms_HW_counters.cfg", "parami/cfgs/OpenMP/analysis/Amdahl.cfg",
             "parami/cfgs/clustering/3dh_ipc_clusterID.cfg", "pypop/pypop/cfgs/total_res_stl_cycles.cfg")
ON_SOME = {
    "epoch4": _COUNTERS + ("compss/files/paraver/cfgs/comm/receive_bandwidth.cfg",
                           "parami/cfgs/mpi/views/point2point/late_receivers.cfg",
                           "parami/cfgs/mpi/views/point2point/s_r_bandwidth.cfg"),
    "epoch16": _COUNTERS,
    "heat2x2": ("parami/cfgs/OpenMP/analysis/3dh_duration_pf.cfg", "parami/cfgs/OpenMP/analysis/omp_profile.cfg",
                "pypop/pypop/cfgs/omp_total_runtime.cfg", "pypop/pypop/cfgs/omp_total_runtime_loop.cfg",
                "pypop/pypop/cfgs/omp_total_runtime_task.cfg", "parami/cfgs/OpenMP/views/parallel_functions.cfg"),
}
# paramedir's output options (-tu, -e, -p, -npr), byte for byte too
OPTION_CASES = (
    ("epoch4", "-tu", "parami/cfgs/General/views/state_as_is.cfg"),
    ("epoch4", "-tu", "parami/cfgs/counters_PAPI/performance/IPC.cfg"),
    ("heat2x2", "-tu", "parami/cfgs/mpi/views/advanced/in_MPI_call.cfg"),
    ("epoch4", "-e", "parami/cfgs/General/analysis/mapping.cfg"),       # the first k columns (paramedir's way)
    ("epoch4", "-e", "parami/cfgs/General/link_to_source/by_call_stack/2dp_MPItime_line.cfg"),
    ("heat2x2", "-e", "parami/cfgs/mpi/analysis/mpi_stats.cfg"),
    ("epoch4", "-p", "parami/cfgs/mpi/analysis/3dh_duration_MPIcall.cfg"),
    ("epoch4", "-p", "parami/cfgs/General/link_to_source/by_call_stack/2dp_MPItime_line.cfg"),
    ("heat2x2", "-p", "parami/cfgs/OpenMP/analysis/3dh_duration_pf.cfg"),
    ("epoch4", "-npr", "parami/cfgs/General/analysis/LB_analysis.cfg"),
    ("epoch4", "-npr", "basicanalysis/cfgs/timings.cfg"),
    ("heat2x2", "-npr", "parami/cfgs/General/analysis/2dh_useful_duration.cfg"),
)
OPTIONS = {"-tu": Options(trace_units=True), "-e": Options(empty_columns=True), "-p": Options(only_plane=True),
           "-npr": Options(precision=10)}
CASES = sorted({(name, cfg) for name in TRACES for cfg in HISTOGRAMS + TIMELINES}
               | {(name, cfg) for name, cfgs in ON_SOME.items() for cfg in cfgs})




def _popview(traces, shared_traces, name: str, cfg: str, option: str | None = None) -> str | None:
    exp, columns = traces(name)
    return paramedir_job(read_cfg(shared_traces / CFGS / cfg), columns, exp.definitions,
                         options=OPTIONS[option] if option else Options()).text


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("name,cfg", CASES)
def test_popview_writes_the_file_paramedir_wrote(shared_traces, traces, name, cfg):
    expected = json.loads(DIGESTS.read_text())[f"{name} {cfg}"]
    text = _popview(traces, shared_traces, name, cfg)
    assert text is not None and (len(text.encode()), _sha256(text)) == (expected["bytes"], expected["sha256"])


def _paramedir_output(paramedir: str, trace: Path, cfg: Path, where: Path, *options: str) -> str | None:
    """Run paramedir on one cfg in `where`; the text of the file it wrote (None: none)."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run([paramedir, *options, str(trace), str(cfg), "out"], capture_output=True, text=True,
                   cwd=str(where), timeout=900)
    for name in ("out", "out.csv"):
        if (where / name).is_file():
            return (where / name).read_text()
    return None




@pytest.mark.parametrize("name,cfg", CASES)
def test_same_bytes_as_real_paramedir(paramedir, shared_traces, traces, tmp_path, name, cfg):
    theirs = _paramedir_output(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, tmp_path)
    assert theirs is not None
    assert _popview(traces, shared_traces, name, cfg) == theirs


@pytest.mark.parametrize("name,option,cfg", OPTION_CASES)
def test_popview_writes_the_file_paramedir_wrote_with_the_option(shared_traces, traces, name, option, cfg):
    expected = json.loads(DIGESTS.read_text())[f"{name} {option} {cfg}"]
    text = _popview(traces, shared_traces, name, cfg, option)
    assert text is not None and (len(text.encode()), _sha256(text)) == (expected["bytes"], expected["sha256"])


@pytest.mark.parametrize("name,option,cfg", OPTION_CASES)
def test_same_bytes_as_real_paramedir_with_the_option(paramedir, shared_traces, traces, tmp_path, name, option, cfg):
    theirs = _paramedir_output(paramedir, shared_traces / TRACES[name], shared_traces / CFGS / cfg, tmp_path, option)
    assert theirs is not None
    assert _popview(traces, shared_traces, name, cfg, option) == theirs


def freeze(paramedir: str, shared: Path) -> None:
    """Write paramedir_digests.json: what `paramedir` writes for every case."""
    import tempfile
    digests = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, cfg) in enumerate(CASES):
            text = _paramedir_output(paramedir, shared / TRACES[name], shared / CFGS / cfg, Path(tmp) / str(k))
            if text is None:
                raise SystemExit(f"paramedir wrote nothing for {cfg} on {name}")
            digests[f"{name} {cfg}"] = {"bytes": len(text.encode()), "sha256": _sha256(text)}
        for k, (name, option, cfg) in enumerate(OPTION_CASES):
            text = _paramedir_output(paramedir, shared / TRACES[name], shared / CFGS / cfg, Path(tmp) / f"o{k}", option)
            digests[f"{name} {option} {cfg}"] = {"bytes": len(text.encode()), "sha256": _sha256(text)}
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    from tests.conftest import SHARED_TRACES
    freeze(sys.argv[1], SHARED_TRACES)
