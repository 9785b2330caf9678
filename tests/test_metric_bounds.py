"""Upper bounds (MetricNode.bound): a Score-P profile's useful time is the true one plus the masters'
OpenMP fork and join, so a figure that can only grow with it while its other inputs are exact is
shown as an upper bound, "<= 33.6 %", in the table, the JSON / CSV, the HTML report and the Advisor,
and is not rated as an exact value (docs/metrics.md)."""
from __future__ import annotations

import csv
import io
import json
from html import escape

import pytest

from popview.analysis.node import MetricNode
from popview.analysis.report import html, nodes
from popview.cli import main

PROFILE_2X2 = "popview-heat/scorep/hyb_2x2/profile.cubex"
REASON = "upper bound: the useful time includes the masters' fork and join"


def _bound(value=0.336):
    return MetricNode("parallel_efficiency", "Parallel efficiency", value=value, bound="upper", reason=REASON)


def test_a_bound_reads_as_at_most_and_is_not_rated_as_exact():
    node, exact = _bound(), MetricNode("parallel_efficiency", "Parallel efficiency", value=0.336)
    assert nodes.format_value(node) == "\u2264 33.6 %" and nodes.format_value(exact) == "33.6 %"
    assert nodes.rating_word(exact) == "Very poor"
    assert nodes.rating_word(node) == "at most Very poor (upper bound)"
    assert nodes.rating_word(_bound(0.97)) == "at most Excellent (upper bound)"
    assert ("Upper bound", REASON) in nodes.help_lines(node)
    assert node.to_dict()["bound"] == "upper" and "bound" not in exact.to_dict()
    assert node.to_dict()["reason"] == REASON
    page = html.metric_tree([node, exact])
    assert page.count('class="fill bound"') == 1 and "\u2264 33.6 %" in page and escape(REASON) in page


def test_an_unavailable_node_is_no_bound():
    node = MetricNode("x", "X", value=None, bound="upper", reason="not available: why")
    assert nodes.format_value(node) == "n/a" and nodes.bound(node) is None


def test_cli_shows_the_scorep_profile_bounds(shared_traces, tmp_path, capsys):
    path = str(shared_traces / PROFILE_2X2)
    args = ["metrics", path, "--cache-dir", str(tmp_path / "cache"), "--model", "pop-mpi"]
    assert main(args) == 0
    out = capsys.readouterr().out
    pe = next(line for line in out.splitlines() if line.lstrip().startswith("Parallel efficiency"))
    assert pe.rstrip().endswith("\u2264 33.6 %")
    assert "upper bound (\u2264): Communication efficiency, Global efficiency, Parallel efficiency: " in out
    assert "n/a: Load balance: not available from this profile" in out
    assert main([*args, "--format", "csv"]) == 0
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert rows["parallel_efficiency"]["bound"] == "upper"
    assert float(rows["parallel_efficiency"]["value"]) == pytest.approx(0.3361, abs=1e-4)
    assert rows["parallel_efficiency"]["reason"].startswith("upper bound: Score-P's profile charges")
    assert rows["load_balance"]["bound"] == "" and rows["load_balance"]["value"] == ""
    assert main([*args, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ge = doc["runs"][0]["models"]["pop-mpi"]["metrics"][0]
    assert ge["id"] == "global_efficiency" and ge["bound"] == "upper"


def test_a_difference_keeps_an_upper_bound_only_when_the_subtrahend_is_exact():
    from popview.analysis.node import MetricTree
    from popview.analysis.tree_delta import difference_tree

    def tree(node):
        return MetricTree("pop-mpi", "POP MPI", "x", "whole", [node])

    exact = MetricNode("parallel_efficiency", "Parallel efficiency", value=0.218)
    bound_minus_exact = difference_tree(tree(_bound()), tree(exact), "profile", "trace").roots[0]
    assert bound_minus_exact.bound == "upper" and bound_minus_exact.value == pytest.approx(0.118)
    assert nodes.format_value(bound_minus_exact) == "\u2264 +11.8 pp"
    exact_minus_bound = difference_tree(tree(exact), tree(_bound()), "trace", "profile").roots[0]
    assert exact_minus_bound.value is None and "only an upper bound" in exact_minus_bound.reason


def test_a_scaling_table_of_profiles_marks_each_runs_bound(shared_traces, tmp_path):
    """Score-P 1x2 and 2x2 profiles: each run's parallel efficiency is an upper bound; the global
    efficiency against the other run has no provable direction."""
    import popview
    from popview.analysis.focus import Focus
    from popview.analysis.report import html as page
    from popview.analysis.report.series import build

    runs = [popview.open(shared_traces / f"popview-heat/scorep/{r}/profile.cubex", cache_dir=tmp_path)
            for r in ("hyb_1x2", "hyb_2x2")]
    try:
        t = build(runs, "pop-mpi", Focus.whole())
    finally:
        for e in runs:
            e.close()
    pe, ge = t.row("parallel_efficiency"), t.row("global_efficiency")
    assert pe.bounds == ["upper", "upper"] and all(pe.text(i).startswith("\u2264 ") for i in range(2))
    assert ge.bounds[0] == "upper" and ge.values[1] is None and "not available" in ge.reasons[1]
    assert json.loads(t.to_json())["metrics"][1]["upper_bounds"] == ["1x2", "2x2"]
    assert "\u2264 " + f"{pe.values[1] * 100:.1f} %" in page.scaling_table(t)


def test_candidates_of_a_profile_read_a_bound_as_at_most(shared_traces, tmp_path):
    """A bound below the threshold is low for sure: a candidate, written "Thread efficiency <= 0.64"."""
    import popview
    from popview.analysis.report import candidates

    with popview.open(shared_traces / PROFILE_2X2, cache_dir=tmp_path) as exp:
        found = candidates.find(exp, "hybrid-additive", threshold=0.8)
    main_path = next(c for c in found if c.path == "main")
    assert "Thread efficiency \u2264 0.64" in main_path.summary()


def test_a_superlinear_global_efficiency_is_not_called_inconsistent(tmp_path):
    """tum-pos-gccg cojack metis 8 against 4 ranks: computation scalability 157.8 %, global efficiency
    116.4 % was flagged 'the inputs are inconsistent (e.g. an ideal runtime longer than the measured
    one)'; it is the superlinear computation scalability, a measured fact."""
    import popview
    from popview.testing.synthetic import Shape, write
    write(tmp_path / "r1.prv", Shape(processes=1, iterations=2, work_ns=2_000_000))
    write(tmp_path / "r2.prv", Shape(processes=2, iterations=2, work_ns=400_000))
    ref = popview.open(tmp_path / "r1.prv", cache_dir=tmp_path / "c")
    run = popview.open(tmp_path / "r2.prv", cache_dir=tmp_path / "c")
    tree = run.metrics("pop-mpi", "whole", reference=ref, use_replay=False)
    node = next(n for _, n in tree.walk() if n.id == "global_efficiency")
    assert node.value > 1 and tree.value("computation_scalability") > 1
    assert node.warnings and "superlinear" in node.warnings[0] and "inconsistent" not in node.warnings[0]
