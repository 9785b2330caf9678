"""The report's parts that need no engine: rating scale, variant choice,
inline SVG plots, scaling-table exports, atomic writing."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

import popview
from popview.analysis.node import MetricNode, MetricTree
from popview.analysis.report import html, scale, svgplot, variants, write_report
from popview.analysis.report.table import ScalingTable, merge_rows
from popview.testing.synthetic import Shape, write


def test_rating_words_follow_pop_usage_and_agree_with_the_colours():
    assert [scale.rating(v) for v in (0.0, 0.39, 0.45, 0.614, 0.7999, 0.8, 0.85, 0.9499, 0.99955, 1.0, 1.7)] == [
        "Very poor", "Very poor", "Poor", "Fair", "Good", "Good", "Good", "Excellent", "Excellent", "Excellent",
        "Excellent"]
    assert scale.rating(None) == "not available"
    assert scale.rating(float("nan")) == "not available"
    for v in (0.45, 0.614, 0.79):                 # below POP's 80 %: a red or orange bar
        r, g, _ = scale.colour(v)
        assert r > g and scale.rating(v) in ("Poor", "Fair")
    for v in (0.8, 0.85, 0.97, 1.0):              # good: a green bar
        r, g, _ = scale.colour(v)
        assert g > r and scale.rating(v) in ("Good", "Excellent")


def test_colour_runs_red_to_green_and_greys_missing():
    red, mark, green = scale.colour(0.0), scale.colour(scale.ACCEPTABLE), scale.colour(1.0)
    assert red[0] > red[1] and green[1] > green[0]
    assert mark[1] > mark[0] * 0.9          # the acceptable mark is already on the green side
    assert scale.colour(1.5) == green       # above 100 % stays green
    assert scale.colour(None) == scale.colour(float("inf")) == (190, 190, 190)
    greens = [scale.colour(v / 10)[1] - scale.colour(v / 10)[0] for v in range(3, 11)]
    assert greens == sorted(greens)         # from red through yellow to green


def _exp(tmp_path, cache_dir, processes, threads):
    path = tmp_path / f"s{processes}x{threads}.prv"
    write(path, Shape(processes=processes, threads=threads, iterations=2))
    return popview.open(path, cache_dir=cache_dir)


def test_variants_offered_and_preselected(tmp_path, cache_dir):
    with _exp(tmp_path, cache_dir, 2, 1) as mpi, _exp(tmp_path, cache_dir, 2, 2) as hybrid:
        assert [v.key for v in variants.applicable(mpi)] == ["pop-mpi", "critical-path", "computation-io"]
        best, why = variants.preferred(mpi)
        assert best.key == "pop-mpi" and "Pure MPI" in why
        assert [v.key for v in variants.applicable(hybrid)] == [
            "pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path", "computation-io"]
        best, why = variants.preferred(hybrid)
        assert best.key == "hybrid-additive" and "OpenMP" in why


def _table(mode="strong"):
    runs = [MetricTree("pop-mpi", "POP MPI", label, "whole", [
        MetricNode("pe", "Parallel efficiency", value=v, children=[
            MetricNode("lb", "Load balance", value=lb),
            MetricNode("ser", "Serialisation", value=None, reason="needs messages")]),
        MetricNode("speedup", "Speedup", kind="value", value=s)])
        for label, v, lb, s in (("1x1", 0.9, 0.95, 1.0), ("4x1", 0.7, 0.75, 2.5))]
    return ScalingTable("pop-mpi", "whole", ["1x1", "4x1"], [1, 4], 0, mode, "as asked", merge_rows(runs),
                        [4.0, 1.6], runs)


def test_scaling_table_exports_and_speedup():
    t = _table()
    assert [(r.id, r.depth) for r in t.rows] == [("pe", 0), ("lb", 1), ("ser", 1), ("speedup", 0)]
    assert t.speedup() == pytest.approx([1.0, 2.5])
    assert t.ideal_speedup() == [1.0, 4.0]
    data = json.loads(t.to_json())
    assert data["metrics"][2]["not_available"] == {"1x1": "needs messages", "4x1": "needs messages"}
    assert data["runs"][1]["speedup"] == pytest.approx(2.5)
    assert data["runs"][1]["runtime_s"] == pytest.approx(1.6)
    lines = t.to_csv().splitlines()
    assert lines[0] == "metric,name,1x1,4x1"
    assert lines[1] == "pe,Parallel efficiency,0.9,0.7"
    assert lines[3] == "ser,Serialisation,,"
    assert lines[-1] == "runtime_s,Runtime (s),4.0,1.6"


def test_scaling_svg_is_well_formed_and_breaks_at_missing_points():
    svg = html.scaling_svg(_table())
    root = ET.fromstring(svg)
    polylines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert polylines                                   # ideal, measured, efficiencies
    plot = svgplot.LinePlot("t", "x", "y", [1, 2, 4, 8], [svgplot.Line("a", [0.5, None, 0.7, 0.8])])
    lines = ET.fromstring(svgplot.render(plot)).findall(".//{http://www.w3.org/2000/svg}polyline")
    assert [len(pl.get("points").split()) for pl in lines] == [1, 2]


def test_scaling_table_html_colours_cells_and_explains_missing():
    out = html.scaling_table(_table())
    assert f"background:{scale.hex_colour(0.9)}" in out
    assert "90.0 %" in out and "n/a" in out and "needs messages" in out


def test_write_report_is_atomic(tmp_path):
    target = tmp_path / "r.html"
    write_report(target, "<html>x</html>")
    assert target.read_text() == "<html>x</html>"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


class _Run:
    """Just what variant choice reads: paradigms, shape, trace or profile."""

    def __init__(self, paradigms, shape, is_trace=True):
        self.definitions = type("Defs", (), {"paradigms": paradigms})()
        self._shape, self.is_trace = shape, is_trace

    def shape(self):
        return self._shape


def test_gpu_and_openmp_runs_preselect_their_model_and_profiles_skip_the_critical_path():
    best, why = variants.preferred(_Run(["mpi", "cuda"], (4, 1)))
    assert best.key == "hybrid-multiplicative" and "CUDA" in why
    assert "hybrid-additive" in [v.key for v in variants.applicable(_Run(["mpi", "cuda"], (4, 1)))]
    best, why = variants.preferred(_Run(["openmp"], (1, 8)))
    assert best.key == "hybrid-additive" and "one process (8 threads)" in why and "MPI" not in why
    assert "pop-mpi" not in [v.key for v in variants.applicable(_Run(["openmp"], (1, 8)))]
    assert "one process (1 thread)" in variants.preferred(_Run(["openmp"], (1, 1)))[1]   # ImageMagick omp1
    assert "pop-mpi" in [v.key for v in variants.applicable(_Run(["openmp"], (2, 8)))]
    assert "pop-mpi" in [v.key for v in variants.applicable(_Run([], (1, 1)))]
    profile = _Run(["mpi"], (8, 1), is_trace=False)
    assert [v.key for v in variants.applicable(profile)] == ["pop-mpi", "computation-io"]


def test_colour_blind_palette_is_blue_at_the_top():
    try:
        scale.use_palette("colour-blind")
        top = scale.colour(1.0)
        assert top[2] > top[1] > top[0]                 # blue, no green to confuse with red
        assert scale.colour(0.0) == (165, 0, 38)
    finally:
        scale.use_palette("red-green")
    with pytest.raises(ValueError, match="unknown palette"):
        scale.use_palette("rainbow")


def test_warnings_name_burst_mode_and_inconsistent_efficiencies():
    from popview.analysis.report import warnings as warn
    run = _Run(["mpi"], (2, 1))
    run.definitions.flags = {"burst_mode": True}
    tree = MetricTree("pop-mpi", "POP MPI", "2x1", "whole", [MetricNode(
        "pe", "Parallel efficiency", value=1.02, children=[
            MetricNode("io", "I/O share", kind="value", value=0.2, warnings=["20.0 % of the time is file I/O"]),
            MetricNode("cs", "Computation scalability", kind="scalability", value=1.4)])],
        notes=["scalabilities are against this run itself"])
    found = warn.collect(run, [tree])
    assert found[0].startswith("Parallel efficiency is 102.0 %, above 100 %")
    assert found[1] == "I/O share: 20.0 % of the time is file I/O"
    assert found[2].startswith("Burst-mode trace")
    assert len(found) == 3                                   # a scalability above 100 % is no warning
    assert warn.notes([tree, tree]) == ["scalabilities are against this run itself"]


def test_rounding_noise_above_100_percent_is_not_inconsistent():
    from popview.analysis.node import MetricNode
    from popview.analysis.report import nodes

    assert nodes.rating_word(MetricNode("outside", "Outside the listed regions", value=1.002)) == "Excellent"
    assert nodes.rating_word(MetricNode("transfer", "Transfer efficiency", value=1.04)).startswith("Inconsistent")


@pytest.mark.parametrize(("seconds", "text"), [(13_970.4, "13,970 s (3.9 h)"), (12.5, "12.5 s"), (0.0032, "3.2 ms"),
                                               (1234.0, "1234 s"), (-20_000.0, "-20,000 s (-5.6 h)")])
def test_durations_read_without_exponents(seconds, text):
    """mini-lpt 720's useful time read "1.397e+04 s"."""
    from popview.analysis.report.nodes import format_seconds
    assert format_seconds(seconds) == text
