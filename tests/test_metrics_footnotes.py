"""`popview metrics` says a recurring reason once: a Score-P profile's 500-character
explanation of why the OpenMP factors are not available was printed on every n/a
line (both OpenMP lines, and again under every model with --model all). Now each
shared clause is a numbered footnote under the last table, the lines refer to it and
keep what is their own; the JSON keeps every reason whole."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from popview.cli import main
from popview.commands.metrics import Footnotes
from tests.paraver.prvtext import HEADER, PCF, write_trace

HEAT_PROFILE = Path("/work/shared/traces/popview-heat/scorep/hyb_2x2/profile.cubex")
NO_INS = "the experiment has no PAPI_TOT_INS counter"


def _body() -> str:
    lines = []
    for task in (1, 2):
        lines += [f"1:{task}:1:{task}:1:{b}:{b + 100}:1" for b in range(0, 1000, 100)]
    return "\n".join(lines) + "\n"


def test_footnotes_keep_what_a_line_says_of_its_own():
    long = "x" * 50
    notes = Footnotes([f"{long}; gives 80%", f"{long}; gives 84%", "short; short"])
    assert notes.cite(f"{long}; gives 80%") == (" [1]", "gives 80%")
    assert notes.cite(f"{long}; gives 84%") == (" [1]", "gives 84%")
    assert notes.cite("short; short") == ("", "short; short")      # short clauses stay inline
    assert notes.render() == f"\nReasons:\n  [1] {long}\n"


def test_a_reason_under_every_model_is_said_once(tmp_path, capsys):
    trace = write_trace(tmp_path / "t", body=_body(), header=HEADER, pcf=PCF)
    args = ["metrics", str(trace), "--model", "all", "--no-replay", "--cache-dir", str(tmp_path / "c")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count(NO_INS) == 1, out                # once per model on the old code
    assert "Reasons:\n" in out and "n/a: IPC" in out
    refs = [line for line in out.splitlines() if line.startswith("  n/a: IPC")]
    assert len(refs) > 2 and all("[" in r and NO_INS not in r for r in refs), refs
    assert main(args + ["--format", "json"]) == 0
    assert json.dumps(json.loads(capsys.readouterr().out)).count(NO_INS) > 2     # every reason whole


@pytest.mark.skipif(not HEAT_PROFILE.exists(), reason="shared traces absent")
def test_score_p_profile_s_fork_and_join_explanation_once(tmp_path, capsys):
    assert main(["metrics", str(HEAT_PROFILE), "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("Score-P's profile times a parallel region on its master") == 1, out
    assert "gives 84.2%" in out and "gives 80.0%" in out              # each line keeps its own figure
