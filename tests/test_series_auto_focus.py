"""`--focus auto` on a series analyses every run over one focus. Each run
proposed its own: popview-heat Extrae 1x1 its source-term region's iterations
0-199, 1x2 and 2x2 MPI_Waitall's 1-199, so the reference held one iteration
more than the runs compared with it, and the table's heading named the first
run's focus only. Then the series took the first run's proposal; now a user
region's iterations also leave out the first, and the focus most runs propose is
taken."""
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


def test_the_proposal_most_runs_make_is_taken(monkeypatch):
    """heat Extrae: 1x1 proposed its region's iterations, 1x2 and 2x2 MPI_Waitall's; the series took
    the first run's (0-199 on the old code) for all three."""
    region = Focus.iterations("region", 1, 199)
    waitall = Focus.iterations("MPI_Waitall", 1, 199)
    exps = _runs(monkeypatch, [(region, "region repeats"), (waitall, "call"), (waitall, "call")])
    focus, note = focus_map.common_focus(exps, Focus("auto"))
    assert focus == waitall                                   # was the first run's region
    assert "the proposal of most runs (2 of 3): r1, r2 propose it (call)" in note
    assert "r0 proposed region iterations 1-199" in note


def test_on_a_tie_the_earliest_run_s_proposal_is_taken(monkeypatch):
    a, b = Focus.iterations("a", 1, 9), Focus.iterations("b", 1, 9)
    focus, note = focus_map.common_focus(_runs(monkeypatch, [(a, "x"), (b, "y")]), Focus("auto"))
    assert focus == a and "r0 proposes it (x); r1 proposed b iterations 1-9" in note


def test_a_user_region_leaves_out_its_first_iteration_as_an_mpi_call_does(tmp_path, cache_dir):
    """One rule for both kinds of candidate: a user region repeated 6 times is proposed from its
    second iteration (0-5 on the old code, where an MPI call's visits started at 1); one repeated
    3 times keeps all 3."""
    from popview.analysis.autofocus import propose
    from popview.testing.synthetic import Shape, write
    for n, first in ((6, 1), (3, 0)):
        trace = tmp_path / f"t{n}.prv"
        write(trace, Shape(processes=2, iterations=n, work_ns=500_000, init_ns=10_000, fini_ns=10_000))
        with popview.open(trace, cache_dir=cache_dir) as exp:
            focus, why = propose(exp)
        assert focus.kind == "iterations" and focus.callpath.endswith("timestep"), (focus, why)
        assert (focus.first, focus.last) == (first, n - 1), focus
        assert ("first iteration (warm-up)" in why) == (first == 1), why


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
    assert s.focus == Focus.iterations(s.focus.callpath, 1, 199) and s.focus.callpath.endswith("MPI_Waitall"), s.focus
    assert "the proposal of most runs (2 of 3)" in s.focus_note
