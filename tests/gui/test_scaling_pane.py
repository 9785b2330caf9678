"""The scaling view as a view: runs as columns, coloured cells, reference and
mode changes, exports (stub trees; the real engine's figures are checked in
tests/test_report_series.py)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import Qt

import popview
from popview.analysis.node import MetricNode as Node
from popview.analysis.node import MetricTree
from popview.analysis.report.scale import hex_colour
from popview.experiment import Experiment
from popview.gui.scaling import ScalingPane
from popview.gui.state import AppState
from popview.testing.synthetic import write_scaling_series

pytestmark = pytest.mark.gui


def stub_metrics(self, model, focus, reference=None, mode="strong", **_kw):
    """Parallel efficiency falls with the number of processes; scalability is relative to the reference."""
    p, t = self.shape()
    rp, _ = reference.shape()
    runtime = 8.0 / p if mode == "strong" else 2.0 * (1 + 0.1 * p)
    root = Node("global_efficiency", "Global efficiency", value=0.9 / p ** 0.25, inputs={"runtime": runtime},
                children=[Node("parallel_efficiency", "Parallel efficiency", value=1.0 - 0.05 * p),
                          Node("computation_scalability", "Computation scalability", value=rp / p + 0.5,
                               kind="scalability"),
                          Node("serialisation_efficiency", "Serialisation efficiency", value=None,
                               reason="needs message records")])
    return MetricTree(model, model, self.name, focus.label(), [root])


@pytest.fixture(scope="module")
def series_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("scaling")
    write_scaling_series(d, shapes=((1, 2), (2, 2), (4, 2)), total_work_ns=4_000_000, iterations=2)
    return d


@pytest.fixture
def pane(qtbot, series_dir, monkeypatch):
    monkeypatch.setattr(Experiment, "metrics", stub_metrics, raising=False)
    state = AppState()
    p = ScalingPane(state)
    qtbot.addWidget(p)
    paths = sorted(series_dir.glob("*.prv"), reverse=True)
    exps = [popview.open(path, cache_dir=series_dir / "cache") for path in paths]
    for e in exps:
        state.add_experiment(e)
    yield p
    for e in exps:
        e.close()


def _cells(pane, row_name):
    it = pane.tree.findItems(row_name, Qt.MatchExactly | Qt.MatchRecursive, 0)[0]
    return it, [it.text(c) for c in range(1, pane.tree.columnCount())]


def test_runs_are_columns_ordered_by_size_with_reference(pane):
    headers = [pane.tree.headerItem().text(c) for c in range(pane.tree.columnCount())]
    assert headers == ["Metric", "1x2 (ref)", "2x2", "4x2"]
    item, cells = _cells(pane, "Parallel efficiency")
    assert cells == ["95.0 %", "90.0 %", "80.0 %"]
    assert item.parent().text(0) == "Global efficiency"
    assert item.background(1).color().name() == hex_colour(0.95)
    _, cells = _cells(pane, "Serialisation efficiency")
    assert cells == ["n/a"] * 3
    _, speed = _cells(pane, "Speedup")
    assert speed == ["1.00", "2.00", "4.00"]


def test_reference_and_mode_are_changeable(pane):
    pane.set_reference(2)
    _, cells = _cells(pane, "Computation scalability")
    assert cells == ["450.0 %", "250.0 %", "150.0 %"]
    assert pane.tree.headerItem().text(3) == "4x2 (ref)"
    pane.set_mode("weak")
    assert pane.table.mode == "weak"
    _, speed = _cells(pane, "Speedup")
    ref_rt = 2.0 * 1.4
    expected = [ref_rt / (2.0 * (1 + 0.1 * p)) * (2 * p) / 8 for p in (1, 2, 4)]
    assert speed == [f"{v:.2f}" for v in expected]
    assert "weak scaling" in pane.status.text()


def test_exports(pane, tmp_path):
    pane.export_csv(tmp_path / "t.csv")
    pane.export_json(tmp_path / "t.json")
    pane.export_png(tmp_path / "p.png")
    pane.export_svg(tmp_path / "p.svg")
    csv_lines = (tmp_path / "t.csv").read_text().splitlines()
    assert csv_lines[0] == "metric,name,1x2,2x2,4x2"
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["reference"] == "1x2" and [r["label"] for r in data["runs"]] == ["1x2", "2x2", "4x2"]
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.fromstring((tmp_path / "p.svg").read_text())


def test_one_run_asks_for_more(qtbot, monkeypatch):
    monkeypatch.setattr(Experiment, "metrics", stub_metrics, raising=False)
    state = AppState()
    p = ScalingPane(state)
    qtbot.addWidget(p)
    assert "two or more runs" in p.status.text()
    assert p.table is None
