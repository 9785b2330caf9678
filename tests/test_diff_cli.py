"""`popview diff A B`: call paths that changed most, A - B, with both values; runs of
different shapes refused unless collapsed; the TeaLeaf before / after pair."""
from __future__ import annotations

import json

import pytest

from popview.cli import main
from popview.testing.synthetic import Shape, write


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("pair")
    slow, fast = d / "slow.prv", d / "fast.prv"
    write(slow, Shape(processes=2, iterations=4, work_ns=2_000_000))
    write(fast, Shape(processes=2, iterations=4, work_ns=1_000_000))
    other = d / "wide.prv"
    write(other, Shape(processes=4, iterations=4, work_ns=1_000_000))
    return str(slow), str(fast), str(other), str(d / "cache")


def test_diff_of_a_run_with_itself_lists_nothing(pair, capsys):
    slow, _, _, cache = pair
    assert main(["diff", slow, slow, "--cache-dir", cache]) == 0
    assert "(no call path differs)" in capsys.readouterr().out


def test_the_slower_compute_is_the_largest_change(pair, capsys):
    slow, fast, _, cache = pair
    assert main(["diff", slow, fast, "--cache-dir", cache, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    top = out["callpaths"][0]
    assert top["a_minus_b"] == pytest.approx(top["a"] - top["b"]) and top["a_minus_b"] > 0
    assert top["in"] == "both" and out["unit"] == "sec"


def test_different_shapes_are_refused_then_collapsed(pair, capsys):
    slow, _, wide, cache = pair
    assert main(["diff", slow, wide, "--cache-dir", cache]) == 2
    err = capsys.readouterr().err
    assert "different numbers of locations (2, 4)" in err and err.rstrip().endswith(
        "(--collapse process or --collapse run)"), "the option that compares them is named"
    assert main(["diff", wide, slow, "--cache-dir", cache, "--collapse", "process"]) == 2
    err = capsys.readouterr().err          # in the runs' order (A has 4 processes), was sorted: [2, 4]
    assert "different numbers of processes (4, 2)" in err and err.rstrip().endswith("(--collapse run)")
    assert main(["diff", slow, wide, "--cache-dir", cache, "--collapse", "run", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("callpath,a,b,a_minus_b,in")


def test_tealeaf_before_and_after(shared_traces, tmp_path, capsys):
    base = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_baseline_8x12_trace" / "scout.cubex"
    opt = shared_traces / "archer2-scalasca" / "scorep_tea_leaf_optimized_8x12_trace" / "scout.cubex"
    assert main(["diff", str(opt), str(base), "--cache-dir", str(tmp_path), "--format", "json", "--top", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["callpaths"][0]
    # the optimised CG kernel: calc_p's worksharing loop, 252 s less over all threads
    assert first["callpath"].endswith("calc_p_/!$omp parallel @tea_leaf_cg.f90:284/!$omp do @tea_leaf_cg.f90:294")
    assert first["a_minus_b"] == pytest.approx(-252.487, abs=1e-3)
    assert all(r["in"] == "both" for r in out["callpaths"])
