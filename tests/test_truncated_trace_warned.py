"""A trace cut short (its last line without a newline: a copy or a write that stopped) is
read, but its figures count the part missing as lost time: `popview metrics`, the Advisor
and the report say so, with how much of the run the records miss. `metrics` said nothing
(the audit of 27 Nov: popview-heat's 1x2 cut at 48 % of its bytes gave a parallel
efficiency of 35.7 % instead of 66.6 %, without a word)."""
from __future__ import annotations

import json
import shutil

import pytest

from popview.analysis.focus import Focus
from popview.analysis.report import warnings as warn
from popview.cli import main
from popview.experiment import open as open_experiment
from popview.testing.synthetic import Shape, write


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("cut")
    whole = d / "whole" / "run.prv"
    whole.parent.mkdir()
    write(whole, Shape(processes=2, threads=1, iterations=40))
    cut = d / "cut" / "run.prv"
    cut.parent.mkdir()
    data = whole.read_bytes()
    at = data.index(b"\n", len(data) // 2) + 5          # inside a line, about half-way through the run
    cut.write_bytes(data[:at])
    for side in (".pcf", ".row"):
        shutil.copy(whole.with_suffix(side), cut.with_suffix(side))
    return whole, cut, d / "cache"


def test_metrics_says_the_trace_is_truncated_and_how_much_is_missing(traces, capsys):
    whole, cut, cache = traces
    assert main(["metrics", str(cut), "--cache-dir", str(cache), "--no-replay", "--model", "pop-mpi"]) == 0
    out = capsys.readouterr().out
    line = next((ln for ln in out.splitlines() if ln.startswith("Warning:")), "")
    assert "run.prv is truncated (its last line has no newline): its records stop at" in line, out
    assert "short of the" in line and "counts the part missing as time lost" in line
    assert main(["metrics", str(whole), "--cache-dir", str(cache), "--no-replay", "--model", "pop-mpi"]) == 0
    assert "Warning" not in capsys.readouterr().out        # an intact trace: nothing said


def test_json_carries_each_runs_warnings(traces, capsys):
    whole, cut, cache = traces
    assert main(["metrics", str(whole), str(cut), "--cache-dir", str(cache), "--no-replay", "--format", "json",
                 "--model", "pop-mpi"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [bool(r["warnings"]) for r in runs] == [False, True]
    assert "is truncated" in runs[1]["warnings"][0]


def test_the_advisor_and_report_warnings_carry_it_unless_the_focus_ends_before_the_cut(traces):
    _, cut, cache = traces
    with open_experiment(cut, cache) as exp:
        end = warn.records_end(exp)
        assert 0.3 * exp.definitions.t_end < end < 0.7 * exp.definitions.t_end
        tree = exp.metrics("pop-mpi", Focus.whole(), use_replay=False)
        found = warn.collect(exp, [tree], Focus.whole())
        assert any("is truncated" in w for w in found), found
        early = Focus.window(0, end // 2)
        assert not any("is truncated" in w for w in warn.collect(exp, [tree], early))


def test_convert_lists_the_readers_warnings(traces, capsys, tmp_path):
    """`popview convert` on a login node said 'converted' and nothing of a truncated file; it now
    lists the reader's warnings under the run, as `info` does."""
    _, cut, _ = traces
    assert main(["convert", str(cut), "--cache-dir", str(tmp_path / "c")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{cut}: converted -> ")
    assert "  warning: run.prv: last line has no newline (truncated file?)" in lines[1:], lines
