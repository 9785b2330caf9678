"""Strong or weak scaling without instruction counts: the useful time decides by the rule the
instructions do. LULESH (Cube, no counters, 27-343 ranks, weak) was taken as strong ('strong
scaling assumed: no instruction counts to tell'): computation scalability 3.1 % and speed-up
0.40 at 343 ranks, 39.5 % with --scaling weak."""
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


def test_useful_time_per_pe_that_does_not_fall_means_weak(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 1000))          # each rank did the one rank's work again
    assert s.scaling == "weak"                            # 'strong scaling assumed' on the old code
    assert "no instruction counts" in s.scaling_reason and "1 PEs 1e-06 s, 2 PEs 1e-06 s" in s.scaling_reason
    assert "--scaling strong" in s.scaling_reason
    assert s.trees("pop-mpi")[1].value("computation_scalability") == pytest.approx(1.0)
    assert s.scaling_reason in s.trees("pop-mpi")[1].notes


def test_useful_time_per_pe_that_halves_means_strong(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 500))
    assert s.scaling == "strong" and "falls with more of them" in s.scaling_reason
    assert s.trees("pop-mpi")[1].value("computation_scalability") == pytest.approx(1.0)


def test_a_requested_mode_is_kept(tmp_path, cache_dir):
    s = Series(_runs(tmp_path, cache_dir, 1000), scaling="strong")
    assert s.scaling == "strong" and s.scaling_reason == "strong scaling (as requested)"


@pytest.mark.skipif(not LULESH.is_dir(), reason="shared traces absent")
def test_lulesh_is_taken_as_weak(tmp_path):
    runs = [LULESH / f"lulesh.p{p}.size25.r1/profile.cubex" for p in (27, 64, 125, 216, 343)]
    s = Series([popview.open(r, cache_dir=tmp_path) for r in runs])
    assert s.scaling == "weak", s.scaling_reason
    assert s.trees("pop-mpi")[-1].value("computation_scalability") == pytest.approx(0.395, abs=0.005)
