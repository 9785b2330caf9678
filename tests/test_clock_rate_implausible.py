"""A frequency scalability clearly above 100 % is explained, not hidden: the tum-pos-gccg
Cube profiles read 0.73-1.93 GHz on a 2.7 GHz machine (cycles stop while time runs in
computation), which made frequency scalability 238 % without a word. Synthetic Paraver
runs: two ranks Running 0-1000 ns, one run at 2 GHz, the other's cycles those of 0.8 GHz."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import popview
from popview.analysis.series import Series
from tests.paraver.prvtext import HEADER, PCF, write_trace

SHARED = Path("/work/shared/traces/tum-pos-gccg/cojack")


def _body(cycles: int) -> str:
    lines = []
    for task in (1, 2):
        lines += [f"1:{task}:1:{task}:1:{b}:{b + 100}:1" for b in range(0, 1000, 100)]
        lines += [f"2:{task}:1:{task}:1:{t}:42000059:{cycles}:42000050:300" for t in range(100, 1001, 100)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def runs(tmp_path, cache_dir):
    slow = popview.open(write_trace(tmp_path / "slow", body=_body(80), header=HEADER, pcf=PCF), cache_dir=cache_dir)
    fast = popview.open(write_trace(tmp_path / "fast", body=_body(200), header=HEADER, pcf=PCF), cache_dir=cache_dir)
    yield slow, fast
    slow.close()
    fast.close()


def test_frequency_scalability_above_100_is_warned_and_kept(runs):
    slow, fast = runs
    tree = fast.metrics("pop-mpi", "whole", reference=slow)
    node = next(n for _, n in tree.walk() if n.id == "frequency_scalability")
    assert node.value == pytest.approx(2.5)                       # shown as computed, not clamped
    assert node.warnings and "0.8 GHz" in node.warnings[0] and "2 GHz" in node.warnings[0], node.warnings
    assert "cycle counter stops" in node.warnings[0]
    # the other way round (40 %) is a real slow-down: no word
    back = slow.metrics("pop-mpi", "whole", reference=fast)
    assert not next(n for _, n in back.walk() if n.id == "frequency_scalability").warnings


def test_a_series_names_runs_whose_clock_rates_differ(runs):
    s = Series(list(runs))
    for model in ("pop-mpi", "computation"):
        notes = [n for n in s.trees(model)[0].notes if n.startswith("clock rates")]
        assert notes and "2.5x" in notes[0] and "0.8 GHz" in notes[0] and "2 GHz" in notes[0], notes


def test_cli_table_and_json_carry_it(runs, capsys, tmp_path):
    from popview.cli import main
    slow, fast = runs
    args = ["metrics", str(slow.source), str(fast.source), "--reference", str(slow.source),
            "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "warning: Frequency scalability (2x1" in out and "250%, above 100 %" in out
    assert "note: clock rates during useful computation differ" in out
    assert main(args + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    run = doc["runs"][1]["models"]["pop-mpi"]
    assert any(n.startswith("clock rates") for n in run["notes"])
    assert "above 100 %" in json.dumps(run["metrics"])


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared traces absent")
def test_tum_pos_gccg_profiles_are_flagged(tmp_path):
    runs = sorted(str(p) for p in SHARED.glob("scorep-cojack-*/profile.cubex"))
    s = Series([popview.open(r, cache_dir=tmp_path) for r in runs])
    trees = s.trees("pop-mpi")
    assert any(n.startswith("clock rates") and "GHz" in n for n in trees[0].notes)
    warned = [t for t in trees for _, n in t.walk() if n.id == "frequency_scalability" and n.warnings]
    assert warned


def test_the_advisor_s_trees_carry_the_series_note(runs):
    """The Advisor compares a run with the reference among the series' runs (compute.variant)."""
    from popview.analysis.report import compute, variants
    slow, fast = runs
    v = variants.BY_KEY["pop-mpi"]
    trees = compute.variant(fast, v, popview.analysis.focus.Focus.whole(), reference=slow, series=[slow, fast])
    assert any(n.startswith("clock rates") for t in trees for n in t.notes)
    node = next(n for t in trees for _, n in t.walk() if n.id == "frequency_scalability")
    assert node.warnings


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared traces absent")
def test_a_superlinear_warning_points_at_the_clock(tmp_path):
    """cojack metis 8 against metis 4: global efficiency 116 % was put down to cache effects only."""
    runs = [popview.open(SHARED / f"scorep-cojack-metis-{p}/profile.cubex", cache_dir=tmp_path) for p in (4, 8)]
    tree = runs[1].metrics("pop-mpi", "whole", reference=runs[0])
    node = next(n for _, n in tree.walk() if n.id == "global_efficiency")
    assert node.value > 1 and any("superlinear" in w and "frequency scalability is 252%" in w
                                  for w in node.warnings), node.warnings


def test_a_superlinear_warning_points_at_the_clock_synthetic(tmp_path, cache_dir):
    """Half the useful time at 2.5x the clock rate: global efficiency 200 % put down to cache
    effects only on the old code."""
    short = _body(200).replace(":1000:", ":500:")
    lines = [ln for ln in short.splitlines() if not (ln.startswith("1:") and int(ln.split(":")[5]) >= 500)
             and not (ln.startswith("2:") and int(ln.split(":")[5]) > 500)]
    slow = popview.open(write_trace(tmp_path / "slow", body=_body(80), header=HEADER, pcf=PCF), cache_dir=cache_dir)
    fast = popview.open(write_trace(tmp_path / "fast", body="\n".join(lines) + "\n",
                                    header=HEADER.replace("1000_ns", "500_ns"), pcf=PCF),
                        cache_dir=cache_dir)
    with slow, fast:
        tree = fast.metrics("pop-mpi", "whole", reference=slow)
    node = next(n for _, n in tree.walk() if n.id == "global_efficiency")
    assert node.value > 1, node.value
    assert any("superlinear" in w and "frequency scalability is 250%" in w for w in node.warnings), node.warnings
