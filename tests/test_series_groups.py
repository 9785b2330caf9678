"""A folder of runs whose names differ in more than their size is several series:
tum-pos-gccg/pent holds scorep-pent-{classical,metis}-{4,8,64}; `popview metrics` on
it made one interleaved series with the classical 4-rank run as the metis runs'
reference too."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from popview.cli import main
from popview.runs import series_groups
from tests.paraver.prvtext import HEADER, write_trace

PENT = Path("/work/shared/traces/tum-pos-gccg/pent")
ONE = "#Paraver (01/02/2024 at 10:00):1000_ns:1(1):1:1(1:1),0\n"
PCF = "DEFAULT_OPTIONS\n\nSTATES\n1    Running\n"


def _run(name, p):
    return SimpleNamespace(name=name, shape=lambda: (p, 1))


def test_names_that_differ_in_more_than_size_are_apart():
    runs = [_run("gccg-classical-4", 4), _run("gccg-metis-4", 4), _run("gccg-classical-8", 8),
            _run("gccg-metis-8", 8)]
    groups = series_groups(runs)
    assert [(name, [r.name for r in g]) for name, g in groups] == [
        ("gccg-classical-N", ["gccg-classical-4", "gccg-classical-8"]),
        ("gccg-metis-N", ["gccg-metis-4", "gccg-metis-8"])]


def test_versions_of_one_size_and_a_plain_series_stay_one():
    versions = [_run(f"prime_v{i}", 16) for i in range(3)]          # code versions, one size: a comparison
    assert series_groups(versions) == [(None, versions)]
    epoch = [_run(f"epoch_{p}proc", p) for p in (1, 2, 4)]
    assert series_groups(epoch) == [(None, epoch)]
    hybrid = [SimpleNamespace(name=f"hyb_{p}x{t}", shape=lambda p=p, t=t: (p, t)) for p, t in ((1, 1), (1, 2), (2, 2))]
    assert series_groups(hybrid) == [(None, hybrid)]


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "runs"
    for part in ("classical", "metis"):
        write_trace(d, body="1:1:1:1:1:0:1000:1\n", header=ONE, pcf=PCF, row=None, name=f"g-{part}-1")
        write_trace(d, body="1:1:1:1:1:0:500:1\n1:1:1:2:1:0:500:1\n", header=HEADER, pcf=PCF, row=None,
                    name=f"g-{part}-2")
    return d


def test_metrics_on_the_folder_analyses_each_series_apart(folder, tmp_path, capsys):
    args = ["metrics", str(folder), "--no-replay", "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("Warning: the runs form 2 series by their names") and "g-classical-N, g-metis-N" in out
    assert "== Series g-classical-N (2 runs) ==" in out and "== Series g-metis-N (2 runs) ==" in out
    assert main(args + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in doc["series"]] == ["g-classical-N", "g-metis-N"]
    for s in doc["series"]:                              # each against its own 1-rank run
        assert Path(s["reference"]).name == f"{s['name'][:-1]}1.prv"
    # a reference given: one series, as asked
    assert main(args + ["--reference", str(folder / "g-classical-1.prv")]) == 0
    assert "== Series" not in capsys.readouterr().out


@pytest.mark.skipif(not PENT.is_dir(), reason="shared traces absent")
def test_tum_pos_gccg_pent_is_two_series(tmp_path, capsys):
    assert main(["metrics", str(PENT), "--format", "json", "--cache-dir", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in doc["series"]] == ["scorep-pent-classical-N", "scorep-pent-metis-N"]
    assert "metis-4" in doc["series"][1]["reference"]


def test_report_on_the_folder_warns(folder, tmp_path, capsys):
    assert main(["report", str(folder), "-o", str(tmp_path / "r.html"), "--cache-dir", str(tmp_path / "c")]) == 0
    err = capsys.readouterr().err
    assert "warning: the runs form 2 series by their names" in err and "g-classical-N, g-metis-N" in err
