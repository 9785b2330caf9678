"""`popview metrics`: table, JSON and CSV output, focus and model options, errors."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from popview.cli import main
from popview.testing.synthetic import Shape, write, write_scaling_series


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("series")
    return [str(p) for p, _ in write_scaling_series(d, shapes=((1, 2), (2, 2)), iterations=3)], d / "cache"


def test_table_has_metrics_as_rows_and_runs_as_columns(runs, capsys):
    paths, cache = runs
    assert main(["metrics", *paths, "--cache-dir", str(cache), "--no-replay", "--model", "pop-mpi"]) == 0
    out = capsys.readouterr().out
    header = [line for line in out.splitlines() if line.startswith("POP MPI")][0]
    assert "1x2" in header and "2x2" in header
    assert any(line.lstrip().startswith("Load balance") and "%" in line for line in out.splitlines())
    assert "n/a: Serialisation efficiency, Transfer efficiency: replay not requested" in out


def test_the_model_that_fits_is_picked_and_named_values_carry_units(runs, capsys):
    paths, cache = runs
    assert main(["metrics", *paths, "--cache-dir", str(cache), "--no-replay"]) == 0
    out = capsys.readouterr().out
    assert "Model: Hybrid additive (fits the data: MPI + OpenMP" in out     # threads: as the report picks
    assert any(line.startswith("Hybrid additive") for line in out.splitlines())
    assert main(["metrics", *paths, "--cache-dir", str(cache), "--no-replay", "--model", "computation"]) == 0
    lines = capsys.readouterr().out.splitlines()
    useful = next(line for line in lines if line.startswith("Useful computation time"))
    clock = next(line for line in lines if line.startswith("Clock rate"))
    assert useful.rstrip().endswith(" ms") and clock.rstrip().endswith(" GHz"), (useful, clock)


def test_a_folder_is_a_series_and_the_reference_is_a_path_or_a_label(runs, capsys):
    paths, cache = runs
    folder = str(Path(paths[0]).parent)
    args = ["metrics", folder, "--cache-dir", str(cache), "--no-replay", "--format", "json"]
    assert main(args + ["--reference", "2x2"]) == 0
    by_label = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in by_label["runs"]] == ["1x2", "2x2"]
    assert by_label["reference"] == paths[1]
    assert main(args + ["--reference", paths[1]]) == 0
    assert json.loads(capsys.readouterr().out)["reference"] == paths[1]
    assert main(args + ["--reference", "9x9"]) == 2
    assert "--reference 9x9: no run has that path or shape label (runs: 1x2, 2x2)" in capsys.readouterr().err


def test_json_carries_ids_values_inputs_and_reasons(runs, capsys, tmp_path):
    paths, cache = runs
    target = tmp_path / "m.json"
    assert main(["metrics", *paths, "--cache-dir", str(cache), "--format", "json", "--model", "all",
                 "--focus", "callpath:main/timestep", "-o", str(target), "--no-replay"]) == 0
    doc = json.loads(target.read_text())
    assert doc["focus"] == {"kind": "callpath", "callpath": "main/timestep"}
    run = doc["runs"][1]
    assert set(run["models"]) == {"pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path",
                                  "computation", "io"}
    ge = run["models"]["pop-mpi"]["metrics"][0]
    assert ge["id"] == "global_efficiency" and 0 < ge["value"] <= 1 and ge["inputs"]
    ser = ge["children"][0]["children"][1]["children"][0]
    assert ser["id"] == "serialisation_efficiency" and ser["value"] is None and ser["reason"]


def test_csv_has_one_row_per_metric_and_run(runs, capsys):
    paths, cache = runs
    assert main(["metrics", *paths, "--cache-dir", str(cache), "--format", "csv", "--model", "hybrid-additive",
                 "--reference", paths[1], "--scaling", "weak", "--no-replay"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["run"] for r in rows} == {"1x2", "2x2"}
    ref_rows = [r for r in rows if r["run"] == "2x2" and r["metric"] == "computation_scalability"]
    assert float(ref_rows[0]["value"]) == pytest.approx(1.0)
    assert len({(r["run"], r["metric"]) for r in rows}) == len(rows)


def test_bad_focus_and_missing_file_fail_cleanly(runs, capsys, tmp_path):
    paths, cache = runs
    assert main(["metrics", paths[0], "--cache-dir", str(cache), "--focus", "callpath:no/such"]) == 2
    assert "no call path" in capsys.readouterr().err
    assert main(["metrics", paths[0], "--focus", "sideways"]) == 2
    assert main(["metrics", str(tmp_path / "absent.prv"), "--cache-dir", str(cache)]) == 2


def test_window_focus_from_the_command_line(tmp_path, capsys):
    write(tmp_path / "w.prv", Shape(processes=2, iterations=4))
    assert main(["metrics", str(tmp_path / "w.prv"), "--cache-dir", str(tmp_path / "c"),
                 "--focus", "window:0.001:0.003", "--no-replay"]) == 0
    assert "Focus: 0.001 s - 0.003 s" in capsys.readouterr().out


def test_an_unknown_option_for_the_window_is_refused_not_opened_as_a_file(capsys, monkeypatch):
    import popview.gui.app

    monkeypatch.setattr(popview.gui.app, "run_gui", lambda argv: pytest.fail("the window must not open"))
    assert main(["--cache-dir", "/tmp/x", "run.prv"]) == 2
    assert "unknown option --cache-dir" in capsys.readouterr().err


def test_a_trace_and_its_profile_are_two_views_of_one_run(shared_traces, tmp_path, capsys):
    """Score-P heat 2x2 traces.otf2 and profile.cubex given together: both columns were headed
    "hyb_2x2 (2x2)", and the profile was the trace's reference (the trace's global efficiency
    "not available from this profile", computation scalability 154 %, in `diff --show metrics`)."""
    run = shared_traces / "popview-heat" / "scorep" / "hyb_2x2"
    cache = ["--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    assert main(["metrics", str(run / "traces.otf2"), *cache]) == 0
    alone = json.loads(capsys.readouterr().out)["runs"][0]["models"]["hybrid-additive"]
    for order in ((run / "profile.cubex", run / "traces.otf2"), (run / "traces.otf2", run / "profile.cubex")):
        assert main(["metrics", *map(str, order), *cache]) == 0
        doc = json.loads(capsys.readouterr().out)
        labels = {Path(r["source"]).name: r["label"] for r in doc["runs"]}
        assert labels == {"traces.otf2": "2x2 trace", "profile.cubex": "2x2 profile"}
        trace = next(r for r in doc["runs"] if r["source"].endswith("traces.otf2"))["models"]["hybrid-additive"]
        assert trace["metrics"] == alone["metrics"], "the trace's figures are its own, whatever else is given with it"


def test_a_series_of_traces_and_profiles_compares_like_with_like(shared_traces, tmp_path):
    import popview
    scorep = shared_traces / "popview-heat" / "scorep"
    paths = [scorep / r / f for r in ("hyb_1x2", "hyb_2x2") for f in ("traces.otf2", "profile.cubex")]
    s = popview.series(paths, cache_dir=tmp_path / "cache")
    assert s.labels == ["1x2 trace", "1x2 profile", "2x2 trace", "2x2 profile"]
    ref = {Path(e.source).parent.name + "/" + Path(e.source).name: Path(s.reference_of(e).source)
           for e in s.experiments}
    assert ref["hyb_1x2/traces.otf2"] == ref["hyb_2x2/traces.otf2"] == scorep / "hyb_1x2" / "traces.otf2"
    assert ref["hyb_1x2/profile.cubex"] == ref["hyb_2x2/profile.cubex"] == scorep / "hyb_1x2" / "profile.cubex"
    # the traces given as their experiment folders (popview metrics scorep/ hyb_*/profile.cubex)
    s = popview.series([scorep / "hyb_1x2", scorep / "hyb_1x2" / "profile.cubex"], cache_dir=tmp_path / "cache")
    assert s.labels == ["1x2 trace", "1x2 profile"]
    assert [s.reference_of(e) is e for e in s.experiments] == [True, True]


def test_a_folder_of_run_folders_is_a_series(tmp_path, capsys):
    """Extrae writes each run into a folder of its own: `popview metrics extrae/` (holding
    hyb_1x1/, hyb_1x2/, hyb_2x2/) said "no trace or profile in this folder"."""
    from popview.runs import runs_in
    top = tmp_path / "extrae"
    for procs in (1, 2, 4):
        (top / f"run_{procs}x1").mkdir(parents=True)
        write(top / f"run_{procs}x1" / f"run_{procs}x1.prv", Shape(processes=procs, iterations=2))
    (top / "notes").mkdir()                               # a folder without a run is no run
    assert runs_in(top) == [(top / f"run_{p}x1" / f"run_{p}x1.prv", "extrae") for p in (1, 2, 4)]
    assert main(["metrics", str(top), "--cache-dir", str(tmp_path / "cache"), "--no-replay",
                 "--format", "csv"]) == 0
    assert {row["run"] for row in csv.DictReader(io.StringIO(capsys.readouterr().out))} == {"1x1", "2x1", "4x1"}


def test_runs_of_one_shape_and_name_from_two_tools_are_told_apart(shared_traces, tmp_path, capsys):
    """heat 2x2 from Extrae and from Score-P: both named hyb_2x2, both traces; the columns read
    'hyb_2x2 trace (2x2)hyb_2x2 trace (2x2)', run together in 14-character columns."""
    heat = shared_traces / "popview-heat"
    runs = [heat / "extrae" / "hyb_2x2" / "hyb_2x2.prv", heat / "scorep" / "hyb_2x2" / "traces.otf2"]
    assert main(["metrics", *map(str, runs), "--cache-dir", str(tmp_path / "cache"), "--no-replay"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Hybrid additive"))
    labels = header[len("Hybrid additive"):].split()
    assert len(labels) == 4 and labels[0] == labels[2] == "2x2" and labels[1] != labels[3], header


def test_columns_stay_apart_with_long_values(tmp_path, capsys):
    """Useful instructions in the hundreds of billions (EPOCH: 84,792,039,818) ran into the next
    run's column: '84,792,039,81887,643,808,043'."""
    paths = []
    for p in (1, 2):
        write(tmp_path / f"r{p}.prv", Shape(processes=p, iterations=1, work_ns=20_000_000_000))
        paths.append(str(tmp_path / f"r{p}.prv"))
    assert main(["metrics", *paths, "--cache-dir", str(tmp_path / "cache"), "--no-replay",
                 "--model", "computation"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Useful instructions"))
    cells = line[len("Useful instructions"):].split()
    assert len(cells) == 2 and all(len(c.replace(",", "")) >= 11 for c in cells), line


def test_a_reason_of_some_runs_says_which(tmp_path, capsys):
    """A series' n/a lines named no run: Score-P heat's two profiles each printed 'not available
    from this profile ... gives 95.0%' and '... gives 84.2%' with no way to tell which was which."""
    write(tmp_path / "a.prv", Shape(processes=1, iterations=2))
    write(tmp_path / "b.prv", Shape(processes=2, iterations=2, counters=False))
    assert main(["metrics", str(tmp_path / "a.prv"), str(tmp_path / "b.prv"), "--cache-dir",
                 str(tmp_path / "cache"), "--no-replay", "--model", "computation"]) == 0
    out = capsys.readouterr().out
    assert "  n/a [2x1]: IPC, Useful instructions: the experiment has no PAPI_TOT_INS counter" in out, out
    assert "  n/a: Vectorization efficiency" in out            # a reason of every run names none


def test_runs_given_in_any_order_are_columns_smallest_first(tmp_path, capsys):
    """A shell's epoch_*.prv.gz lists 16proc before 1proc: the columns read 16x1, 1x1, 2x1, ...
    (the report and the window's Scaling table order a series smallest first, metrics did not)."""
    paths = []
    for p in (4, 1, 2):
        write(tmp_path / f"run_{p}proc.prv", Shape(processes=p, iterations=2))
        paths.append(str(tmp_path / f"run_{p}proc.prv"))
    assert main(["metrics", *paths, "--cache-dir", str(tmp_path / "cache"), "--no-replay"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("POP MPI"))
    assert header.split()[2:] == ["1x1", "2x1", "4x1"], header
    assert "Pure MPI (1 process, 1 thread each)" in out          # not "1 processes"
