"""`popview paramedir TRACE CFG...`: each cfg histogram written as paramedir writes it.

On PyPOP's EPOCH traces the tables of PyPOP's own cfgs, read back the way PyPOP and BSC's
modelfactors read paramedir's output, give the per-run figures of modelfactors.csv and the
metrics of precomputed.csv; on a synthetic run, the per-rank figures the generator knows."""
from __future__ import annotations

import csv

import numpy as np
import pytest

from popview.analysis.cfg import Binning, CfgView, Criterion, Derivation, Function, Histogram, Window
from popview.analysis.cfg.paramedir import parse_table
from popview.analysis.cfg.writer import write_cfg
from popview.cli import main
from popview.testing import synthetic

EPOCH = "pypop/mpi/epoch_example_traces"
CFGS = "paraver-cfgs/pypop/pypop/cfgs"
RANKS = (1, 2, 4, 8, 16)
DBL_MAX = 1.7976931348623157e308


def _errors(err: str) -> str:
    """stderr without the first-use note on compiling the kernels (it depends on the machine)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("popview: preparing popview for first use"))


def _per_thread(path):
    """PyPOP's reading (load_paraver_histdata + reindex_by_thread): THREAD rows only."""
    columns, rows = parse_table(path.read_text())
    return columns, {k: v for k, v in rows.items() if k.startswith("THREAD")}


def _modelfactors(directory):
    table = {}
    for line in (directory / "modelfactors.csv").read_text().splitlines():
        parts = line.lstrip("#").split(";")
        if len(parts) > 1:
            table[parts[0]] = [float(x) for x in parts[1:]]
    return table


def _precomputed(directory):
    with open(directory / "precomputed.csv") as f:
        return {int(row[""]): row for row in csv.DictReader(f)}


@pytest.mark.parametrize("index", range(len(RANKS)))
def test_pypop_cfg_tables_give_modelfactors_and_precomputed(shared_traces, tmp_path, index, capsys):
    directory = shared_traces / EPOCH
    trace = directory / f"epoch_{RANKS[index]}proc.prv.gz"
    cfgs = [str(shared_traces / CFGS / name) for name in
            ("total_useful_computation.cfg", "useful_instructions.cfg", "useful_cycles.cfg",
             "serial_useful_computation_no_omp.cfg", "total_runtime_excl_disabled.cfg")]
    out = tmp_path / "out"
    assert main(["paramedir", str(trace), *cfgs, "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert _errors(capsys.readouterr().err) == ""
    useful_cols, useful = _per_thread(out / "total_useful_computation")
    ins_cols, ins = _per_thread(out / "useful_instructions")
    cyc_cols, cyc = _per_thread(out / "useful_cycles")
    # one column each, as PyPOP's paramedir_analyze(statistic_names=[name]) requires
    assert useful_cols == ["Running"] and len(ins_cols) == 1      # Useful's column: a state, named and len(cyc_cols) == 1
    assert list(useful) == [f"THREAD 1.{r + 1}.1" for r in range(RANKS[index])] == list(ins) == list(cyc)
    useful_us = np.array([v[0] for v in useful.values()]) / 1e3        # the cfg's window is in ns
    instructions = np.array([v[0] for v in ins.values()])
    cycles = np.array([v[0] for v in cyc.values()])
    mf = _modelfactors(directory)
    assert useful_us.sum() == pytest.approx(mf["Useful duration (total)"][index], rel=1e-6)
    assert useful_us.max() == pytest.approx(mf["Useful duration (maximum)"][index], rel=1e-6)
    assert useful_us.mean() == pytest.approx(mf["Useful duration (average)"][index], rel=1e-6)
    assert instructions.sum() == pytest.approx(mf["Useful instructions (total)"][index], rel=1e-6)
    assert cycles.sum() == pytest.approx(mf["Useful cycles (total)"][index], rel=1e-6)
    pre = _precomputed(directory)[RANKS[index]]
    assert instructions.sum() / cycles.sum() == pytest.approx(float(pre["Average IPC"]), rel=1e-6)
    assert cycles.sum() / useful_us.sum() / 1e3 == pytest.approx(float(pre["Average Frequency (Ghz)"]), rel=1e-6)
    # the cfgs PyPOP's PRVTrace runs first on an MPI-only trace: serial useful computation and
    # the runtime without tracing-disabled time give its parallel efficiency and load balance
    _, serial = _per_thread(out / "serial_useful_computation_no_omp")
    _, runtime = _per_thread(out / "total_runtime_excl_disabled")
    serial = np.array([v[0] for v in serial.values()])
    runtime = np.array([v[0] for v in runtime.values()])
    np.testing.assert_allclose(serial / 1e3, useful_us, rtol=1e-12)
    assert serial.mean() / runtime.max() == pytest.approx(float(pre["Parallel Efficiency"]), rel=1e-6)
    assert serial.mean() / serial.max() == pytest.approx(float(pre["MPI Load Balance"]), rel=1e-6)
    assert runtime.max() / 1e3 == pytest.approx(mf["Runtime (us)"][index], rel=1e-6)


def test_the_table_has_paramedirs_layout(shared_traces, tmp_path, capsys):
    trace = shared_traces / EPOCH / "epoch_2proc.prv.gz"
    cfg = shared_traces / CFGS / "useful_instructions.cfg"
    assert main(["paramedir", str(trace), str(cfg), "--cache-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "\t[0.00..1,000,000,000,000,000,000.00]\t"        # grouped, as paramedir writes it
    assert lines[1].startswith("THREAD 1.1.1\t") and lines[1].endswith("\t")
    assert lines[3] == "" and [line.split("\t")[0] for line in lines[4:10]] == \
        ["Total", "Average", "Maximum", "Minimum", "StDev", "Avg/Max"]
    assert lines[4] == "Total\t87640358419.00\t"


# -- synthetic -------------------------------------------------------------------------------

def _useful_counter_cfg(path, counter: int, statistic="Sum bursts"):
    counter_window = Window("Counter", 1, functions={"thread": Function("Next Evt Val")})
    counter_window.filters.criteria["evt_type"] = Criterion("=", (counter,))
    useful = Window("Useful", 2, functions={"thread": Function("Useful")}, units="Nanoseconds")
    product = Window("Useful counter", 3, derivation=Derivation("product", (1, 2)))
    useful_time = Histogram("Useful time", Binning(2, True, 1, 1, 1), 2, "Time",
                            data_range=(-DBL_MAX, DBL_MAX), burst_range=(-DBL_MAX, DBL_MAX))
    counted = Histogram("Useful counter", Binning(3, False, 0, 1e18, 1e18), 3, statistic,
                        data_range=(-DBL_MAX, DBL_MAX), burst_range=(-DBL_MAX, DBL_MAX))
    view = CfgView("t", "3.4", "new", windows=[counter_window, useful, product], histograms=[useful_time, counted])
    path.write_text(write_cfg(view))
    return path


def test_synthetic_run_per_rank_useful_time_and_counters(tmp_path, capsys):
    shape = synthetic.Shape(processes=3, threads=1, iterations=4, rank_weights=(1.0, 1.5, 0.5))
    trace = tmp_path / "run.prv"
    expected = synthetic.write(trace, shape)
    ins = _useful_counter_cfg(tmp_path / "ins.cfg", synthetic.INS)
    cyc = _useful_counter_cfg(tmp_path / "cyc.cfg", synthetic.CYC)
    out = tmp_path / "out"
    assert main(["paramedir", str(trace), str(ins), str(cyc), "-o", str(out), "--all-histograms",
                 "--cache-dir", str(tmp_path / "c")]) == 0
    assert _errors(capsys.readouterr().err) == ""
    # every histogram: the first as <name>.1, the last as <name>, the file paramedir writes
    assert sorted(p.name for p in out.iterdir()) == ["cyc", "cyc.1", "ins", "ins.1"]
    columns, useful = _per_thread(out / "ins.1")
    assert columns == ["Running"]
    np.testing.assert_allclose([v[0] for v in useful.values()], expected.useful_ns, rtol=1e-9)
    _, counted = _per_thread(out / "ins")
    np.testing.assert_allclose([v[0] for v in counted.values()], expected.instructions, rtol=1e-9)
    _, counted = _per_thread(out / "cyc")
    np.testing.assert_allclose([v[0] for v in counted.values()], expected.cycles, rtol=1e-9)


def test_what_cannot_be_evaluated_is_one_line_each_and_exit_2_when_nothing_is_written(tmp_path, capsys):
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, iterations=2))
    cfg = _useful_counter_cfg(tmp_path / "avg.cfg", synthetic.INS, statistic="Stdev Burst Time")
    text = cfg.read_text().replace("Analyzer2D.Statistic: Time", "Analyzer2D.Statistic: Stdev Burst Time")
    cfg.write_text(text)
    assert main(["paramedir", str(trace), str(cfg), "--cache-dir", str(tmp_path / "c")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = _errors(captured.err).strip().split("\n")
    assert "Traceback" not in captured.err
    # paramedir writes the last histogram only: the one line says why it is not evaluated
    assert err[0].startswith("popview: avg.cfg: histogram 'Useful counter' not evaluated: ")
    assert "'Stdev Burst Time'" in err[0]
    assert err[1] == "popview: error: nothing of the given cfgs could be evaluated: nothing written"


def test_a_refused_cfg_is_one_line_and_exit_2_the_others_still_written(tmp_path, capsys):
    trace = tmp_path / "run.prv"
    synthetic.write(trace, synthetic.Shape(processes=2, iterations=2))
    bad = tmp_path / "dimemas.cfg"
    bad.write_text("#DIMEMAS_CONFIGURATION\n")
    good = _useful_counter_cfg(tmp_path / "ins.cfg", synthetic.INS)
    assert main(["paramedir", str(trace), str(bad), str(good), "--cache-dir", str(tmp_path / "c")]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = _errors(captured.err).strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("popview: error: ") and "dimemas.cfg" in lines[0]
    assert captured.out.startswith("\t[0.00..1,000,000,000,000,000,000.00]\t\n")     # the last histogram


def test_a_missing_trace_is_one_line(tmp_path, capsys):
    cfg = _useful_counter_cfg(tmp_path / "ins.cfg", synthetic.INS)
    assert main(["paramedir", str(tmp_path / "nothing.prv"), str(cfg), "--cache-dir", str(tmp_path / "c")]) == 2
    err = _errors(capsys.readouterr().err)
    assert err.count("\n") == 1 and err.startswith("popview: error: ") and "Traceback" not in err


NS = "Nanoseconds"          # a cfg window without window_units is in microseconds, as in Paraver
OMP_TYPES = (60000001, 60000005, 60000018, 60000023)      # the event types PyPOP's OpenMP cfgs stack


def _openmp_cfg(path):
    """PyPOP's serial / OpenMP useful computation and OpenMP runtime, built here: the OpenMP
    function stack (Last Evt Val, Stacked Val), useful inside it (product, Sign) and outside
    it (substract, Sign)."""
    useful = Window("Total Useful", 1, functions={"thread": Function("Useful")}, units=NS)
    functions = Window("OMP Functions", 2, functions={"thread": Function("Last Evt Val")}, units=NS,
                       compose={"compose_thread": Function("Stacked Val")})
    functions.filters.criteria["evt_type"] = Criterion("=", OMP_TYPES)
    omp_useful = Window("OMP Useful", 3, derivation=Derivation("product", (1, 2)), units=NS,
                        compose={"topcompose1": Function("Sign")})
    serial = Window("Serial Useful", 4, derivation=Derivation("substract", (1, 3)), units=NS,
                    compose={"topcompose1": Function("Sign")})
    full = (-DBL_MAX, DBL_MAX)
    view = CfgView("t", "3.4", "new", windows=[useful, functions, omp_useful, serial], histograms=[
        Histogram("Serial Useful", Binning(4, True, 1, 1, 1), 4, "Time", data_range=full, burst_range=full),
        Histogram("OMP Useful", Binning(3, True, 1, 1, 1), 3, "Time", data_range=full, burst_range=full),
        Histogram("OMP Functions", Binning(2, False, 1, 100000, 100000), 2, "Time", data_range=full,
                  burst_range=full)])
    path.write_text(write_cfg(view))
    return path


def test_synthetic_hybrid_run_serial_and_openmp_useful_time(tmp_path, capsys):
    shape = synthetic.Shape(processes=2, threads=3, iterations=3, serial_fraction=0.3, thread_weights=(1, 1.2, 0.8))
    trace = tmp_path / "hybrid.prv"
    expected = synthetic.write(trace, shape)
    out = tmp_path / "out"
    cfg = _openmp_cfg(tmp_path / "omp.cfg")
    assert main(["paramedir", str(trace), str(cfg), "-o", str(out), "--all-histograms",
                 "--cache-dir", str(tmp_path / "c")]) == 0
    assert _errors(capsys.readouterr().err) == ""
    serial, omp_useful, omp_runtime = ([v[0] for v in _per_thread(out / name)[1].values()]
                                       for name in ("omp.1", "omp.2", "omp"))
    masters = np.arange(0, 6, 3)
    np.testing.assert_array_equal(np.asarray(serial)[masters], expected.serial_useful_ns)
    assert np.delete(serial, masters).tolist() == [0.0] * 4           # workers: useful only in parallel regions
    np.testing.assert_array_equal(omp_useful, expected.omp_useful_ns)
    np.testing.assert_array_equal(np.asarray(omp_runtime)[masters], expected.openmp_ns)


def test_imagemagick_openmp_useful_time_adds_up(shared_traces, tmp_path, capsys):
    """PyPOP's own OpenMP cfgs on its ImageMagick traces: serial + OpenMP useful time is the
    total useful time of each thread, and OpenMP useful time fits in the OpenMP runtime."""
    trace = shared_traces / "pypop/openmp/imagemagick_example_traces/omp4.prv.gz"
    cfgs = [str(shared_traces / CFGS / name) for name in
            ("serial_useful_computation.cfg", "omp_useful_computation.cfg", "omp_total_runtime.cfg",
             "total_useful_computation.cfg")]
    out = tmp_path / "out"
    assert main(["paramedir", str(trace), *cfgs, "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert _errors(capsys.readouterr().err) == ""
    serial, omp_useful, omp_runtime, total = (
        np.array([v[0] for v in _per_thread(out / name)[1].values()])
        for name in ("serial_useful_computation", "omp_useful_computation", "omp_total_runtime",
                     "total_useful_computation"))
    assert len(total) == 4 and serial[0] > 0 and (omp_useful > 0).all()
    np.testing.assert_allclose(serial + omp_useful, total, rtol=1e-12)
    assert (omp_useful <= omp_runtime).all()


def test_mpi_call_profile_is_named_from_the_pcf_with_empty_columns_hidden(shared_traces, tmp_path, capsys):
    """parami's mpi_stats.cfg (% Time of the MPI call, HideCols): Paraver's MPI call profile."""
    trace = shared_traces / EPOCH / "epoch_4proc.prv.gz"
    cfg = shared_traces / "paraver-cfgs/parami/cfgs/mpi/analysis/mpi_stats.cfg"
    out = tmp_path / "mpi.txt"
    assert main(["paramedir", str(trace), str(cfg), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    columns, rows = _per_thread(out)
    assert columns[0] == "Outside MPI" and {"MPI_Sendrecv", "MPI_Allreduce", "MPI_Init"} <= set(columns)
    assert len(columns) < 201                                   # 0..200 asked, the empty ones hidden
    np.testing.assert_allclose([v.sum() for v in rows.values()], 100.0, atol=0.05)   # 2 decimals each


def test_synthetic_percent_time_of_states_by_name(tmp_path, capsys):
    trace = tmp_path / "run.prv"
    expected = synthetic.write(trace, synthetic.Shape(processes=2, iterations=3))
    states = Window("States", 1, functions={"thread": Function("State As Is")})
    full = (-DBL_MAX, DBL_MAX)
    view = CfgView("t", "3.4", "new", windows=[states], histograms=[
        Histogram("State profile", Binning(1, False, 0, 20, 1), 1, "% Time", data_range=full, burst_range=full,
                  gui={"Analyzer2D.HideCols": "True"})])
    cfg = tmp_path / "states.cfg"
    cfg.write_text(write_cfg(view))
    out = tmp_path / "states.txt"
    assert main(["paramedir", str(trace), str(cfg), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    columns, rows = _per_thread(out)
    assert "Running" in columns
    running = np.array([v[columns.index("Running")] for v in rows.values()])
    np.testing.assert_allclose(running, expected.useful_ns / expected.runtime_ns * 100, atol=0.006)


def test_a_profile_is_refused_in_one_line(tmp_path, capsys):
    from popview.readers.cube.export import write_cubex
    from popview.testing.synthetic_profile import small_definitions, small_profile

    profile = tmp_path / "p.cubex"
    write_cubex(profile, small_profile(), small_definitions())
    cfg = _useful_counter_cfg(tmp_path / "ins.cfg", synthetic.INS)
    assert main(["paramedir", str(profile), str(cfg), "--cache-dir", str(tmp_path / "c")]) == 2
    captured = capsys.readouterr()
    err = _errors(captured.err)
    assert captured.out == "" and err.count("\n") == 1 and "a profile has no timeline" in err


# -- paramedir's outputs: the last histogram, timelines, names ---------------------------------

def test_a_cfg_with_several_histograms_gives_its_last_one_named_as_paramedir_names_it(tmp_path, capsys):
    trace = tmp_path / "run.prv"
    expected = synthetic.write(trace, synthetic.Shape(processes=2, iterations=2))
    cfg = _useful_counter_cfg(tmp_path / "ins.cfg", synthetic.INS)          # Useful time, then Useful counter
    out = tmp_path / "out"
    out.mkdir()                                                # -o: a folder (one output, no folder: that file)
    assert main(["paramedir", str(trace), str(cfg), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert [p.name for p in out.iterdir()] == ["ins"]          # the cfg's name without .cfg, as paramedir
    _, counted = _per_thread(out / "ins")                      # the last histogram only
    np.testing.assert_allclose([v[0] for v in counted.values()], expected.instructions, rtol=1e-9)
    # an output name right after the cfg, as paramedir takes it
    assert main(["paramedir", str(trace), str(cfg), "mine.txt", "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert (out / "mine.txt").read_text() == (out / "ins").read_text()


def test_cfgs_are_taken_in_path_order_and_a_later_output_replaces_an_earlier_one(tmp_path, capsys):
    trace = tmp_path / "run.prv"
    expected = synthetic.write(trace, synthetic.Shape(processes=2, iterations=2))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ins = _useful_counter_cfg(tmp_path / "b" / "x.cfg", synthetic.INS)
    cyc = _useful_counter_cfg(tmp_path / "a" / "x.cfg", synthetic.CYC)
    out = tmp_path / "out"
    # given b before a: paramedir's std::map takes a/x.cfg first, b/x.cfg's output replaces it
    assert main(["paramedir", str(trace), str(ins), str(cyc), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    _, counted = _per_thread(out / "x")
    np.testing.assert_allclose([v[0] for v in counted.values()], expected.instructions, rtol=1e-9)


def _event_trace(path):
    """One thread, 1000 ns: events of type 50000001 at 100 (5, then 7 at the same instant) and 400 (0)."""
    path.write_text("#Paraver (01/01/26 at 00:00):1000_ns:1(1):1:1(1:1)\n"
                    "1:1:1:1:1:0:1000:1\n"
                    "2:1:1:1:1:100:50000001:5\n"
                    "2:1:1:1:1:100:50000001:7\n"
                    "2:1:1:1:1:400:50000001:0\n")
    return path


def _event_window_cfg(path, function="Last Evt Val", units="Nanoseconds"):
    states = Window("States", 1, functions={"thread": Function("State As Is")}, units=units)
    last = Window("Calls", 2, functions={"thread": Function(function)}, units=units)
    last.filters.criteria["evt_type"] = Criterion("=", (50000001,))
    path.write_text(write_cfg(CfgView("t", "3.4", "new", windows=[states, last])))
    return path


@pytest.mark.parametrize("function, lines", [
    # Last Evt Val: an interval starts at each event; the first of two at one instant lasts no time
    ("Last Evt Val", ["1.1.1\t0.00\t100.00\t0.00", "1.1.1\t100.00\t0.00\t5.00", "1.1.1\t100.00\t300.00\t7.00",
                      "1.1.1\t400.00\t600.00\t0.00"]),
    # Next Evt Val: an interval ends at each event; the second of two at one instant lasts no time
    ("Next Evt Val", ["1.1.1\t0.00\t100.00\t5.00", "1.1.1\t100.00\t0.00\t7.00", "1.1.1\t100.00\t300.00\t0.00",
                      "1.1.1\t400.00\t600.00\t0.00"]),
])
def test_a_timeline_only_cfg_writes_its_last_window_as_paramedir_s_csv(tmp_path, capsys, function, lines):
    trace = _event_trace(tmp_path / "ev.prv")
    cfg = _event_window_cfg(tmp_path / "calls.cfg", function)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["paramedir", str(trace), str(cfg), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    assert [p.name for p in out.iterdir()] == ["calls.csv"]     # dumpWindow adds .csv
    # row (a.t.th), begin and duration in the window's units, the value; 2 decimals
    assert (out / "calls.csv").read_text().splitlines() == lines


def test_a_timeline_in_microseconds_and_an_output_name_with_csv(tmp_path, capsys):
    trace = _event_trace(tmp_path / "ev.prv")
    cfg = _event_window_cfg(tmp_path / "calls.cfg", units="Microseconds")
    assert main(["paramedir", str(trace), str(cfg), str(tmp_path / "v.csv"), "--cache-dir", str(tmp_path / "c")]) == 0
    assert (tmp_path / "v.csv").read_text().splitlines()[:2] == ["1.1.1\t0.00\t0.10\t0.00", "1.1.1\t0.10\t0.00\t5.00"]


def test_paramedir_s_trace_units_option(tmp_path, capsys):
    trace = _event_trace(tmp_path / "ev.prv")
    cfg = _event_window_cfg(tmp_path / "calls.cfg", units="Microseconds")
    assert main(["paramedir", str(trace), str(cfg), "-tu", "--cache-dir", str(tmp_path / "c")]) == 0
    # paramedir -tu: begin and duration as whole trace units, whatever the window's units
    assert capsys.readouterr().out.splitlines() == ["1.1.1\t0\t100\t0.00", "1.1.1\t100\t0\t5.00",
                                                    "1.1.1\t100\t300\t7.00", "1.1.1\t400\t600\t0.00"]
