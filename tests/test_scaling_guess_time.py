"""Strong or weak scaling without instruction counts: time cannot tell a weak-scaling series
from a strong one whose computation does not scale, so the series stays strong, and the reason
says when the useful time per processing element does not fall and how to ask for weak.
LULESH (Cube, no counters, 27-343 ranks, weak) read 3.1 % computation scalability at 343 ranks
under 'strong scaling assumed: no instruction counts to tell', with no word of the evidence;
39.5 % with --scaling weak."""
from __future__ import annotations

from pathlib import Path

import pytest

import popview
from popview.analysis.series import Series
from tests.paraver.prvtext import HEADER, write_trace

LULESH = Path("/work/shared/traces/extrap/perf_taint/lulesh")
ONE = "#Paraver (01/02/2024 at 10:00):1000_ns:1(1):1:1(1:1),0\n"
NO_COUNTERS = """DEFAULT_OPTIONS

STATES
1    Running
"""


def _runs(tmp_path, cache_dir, work_each: int):
    one = write_trace(tmp_path / "one", body="1:1:1:1:1:0:1000:1\n", header=ONE, pcf=NO_COUNTERS, row=None)
    two = write_trace(tmp_path / "two", header=HEADER.replace("1000_ns", f"{work_each}_ns"), pcf=NO_COUNTERS,
                      row=None, body=f"1:1:1:1:1:0:{work_each}:1\n1:1:1:2:1:0:{work_each}:1\n")
    return [popview.open(p, cache_dir=cache_dir) for p in (one, two)]


def test_useful_time_per_pe_that_does_not_fall_is_said_not_guessed(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 1000))          # each rank did the one rank's work again
    assert s.scaling == "strong"                          # the loss stays visible: 50 %
    assert s.trees("pop-mpi")[1].value("computation_scalability") == pytest.approx(0.5)
    assert "no instruction counts" in s.scaling_reason and "1 PEs 1e-06 s, 2 PEs 1e-06 s" in s.scaling_reason
    assert "does not fall" in s.scaling_reason and "--scaling weak" in s.scaling_reason
    assert s.scaling_reason in s.trees("pop-mpi")[1].notes


def test_useful_time_per_pe_that_halves_means_strong(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 500))
    assert s.scaling == "strong" and "falls with more of them" in s.scaling_reason
    assert s.trees("pop-mpi")[1].value("computation_scalability") == pytest.approx(1.0)


def test_a_requested_mode_is_kept(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 1000), scaling="strong")
    assert s.scaling == "strong" and s.scaling_reason == "strong scaling (as requested)"


@pytest.mark.skipif(not LULESH.is_dir(), reason="shared traces absent")
def test_lulesh_says_its_evidence_and_weak_on_request(tmp_path):
    runs = [popview.open(LULESH / f"lulesh.p{p}.size25.r1/profile.cubex", cache_dir=tmp_path)
            for p in (27, 64, 125, 216, 343)]
    s = Series(runs)
    assert s.scaling == "strong" and "--scaling weak" in s.scaling_reason, s.scaling_reason
    assert s.trees("pop-mpi")[-1].value("computation_scalability") == pytest.approx(0.031, abs=0.002)
    weak = Series(runs, scaling="weak")
    assert weak.trees("pop-mpi")[-1].value("computation_scalability") == pytest.approx(0.395, abs=0.005)
