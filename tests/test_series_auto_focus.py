"""`--focus auto` on a series analyses every run over one focus. Each run
proposed its own: popview-heat Extrae 1x1 its source-term region's iterations
0-199, 1x2 and 2x2 MPI_Waitall's 1-199, so the reference held one iteration
more than the runs compared with it, and the table's heading named the first
run's focus only."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

import popview
from popview.analysis import focus_map
from popview.analysis.focus import Focus


def _runs(monkeypatch, proposals, applies=lambda exp, f: True):
    exps = [SimpleNamespace(label=f"r{i}", is_trace=True) for i in range(len(proposals))]
    by_run = {id(e): p for e, p in zip(exps, proposals)}
    monkeypatch.setattr("popview.analysis.metrics.propose_focus", lambda e: by_run[id(e)])
    monkeypatch.setattr(focus_map, "_applies", applies)
    return exps


def test_the_first_proposal_every_run_has_is_taken(monkeypatch):
    region = Focus.iterations("region", 0, 199)
    waitall = Focus.iterations("MPI_Waitall", 1, 199)
    exps = _runs(monkeypatch, [(region, "region repeats"), (waitall, "call"), (waitall, "call")])
    focus, note = focus_map.common_focus(exps, Focus("auto"))
    assert focus == region                                    # was 'auto': each run its own
    assert "for every run, as r0 proposes it" in note and "MPI_Waitall iterations 1-199" in note


def test_without_a_common_focus_each_run_keeps_its_own_and_the_note_says_so(monkeypatch):
    a, b = Focus.on_callpath("main/a"), Focus.on_callpath("main/b")
    exps = _runs(monkeypatch, [(a, "x"), (b, "y")], applies=lambda exp, f: False)
    focus, note = focus_map.common_focus(exps, Focus("auto"))
    assert focus.kind == "auto" and "compare different parts of the program" in note


def test_equal_proposals_are_kept(monkeypatch):
    f = Focus.iterations("loop", 2, 9)
    focus, note = focus_map.common_focus(_runs(monkeypatch, [(f, "why"), (f, "why")]), Focus("auto"))
    assert focus == f and note == "automatic focus: loop iterations 2-9 - why"


@pytest.mark.shared
def test_heat_extrae_series_has_one_automatic_focus(shared_traces, tmp_path):
    d = shared_traces / "popview-heat/extrae"
    s = popview.series([d / f"{r}/{r}.prv" for r in ("hyb_1x1", "hyb_1x2", "hyb_2x2")], focus="auto",
                       cache_dir=tmp_path, use_replay=False)
    assert s.focus.kind == "iterations"
    notes = [n for t in s.trees("hybrid-additive") for n in t.notes if n.startswith("iterations ")]
    assert len({n.split(":")[0] for n in notes}) == 1, notes        # one region's iterations in every run
