"""The HTML report end to end: a synthetic run with known figures, a
synthetic series with its scaling plot, bookmarks with pictures, and the
CLI on PyPOP's EPOCH series against its published model factors."""
from __future__ import annotations

import base64
import csv
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.report import BookmarkShot, bookmarks_of, build_report
from popview.analysis.report.warnings import _overlap, _union
from popview.cli import main
from popview.session.model import Session
from popview.testing.synthetic import Shape, write, write_scaling_series

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


class Outline(HTMLParser):
    """Headings, table cells and images of a page; fails on unbalanced tables."""

    def __init__(self):
        super().__init__()
        self.headings, self.cells, self.images, self.depth, self._tag = [], [], [], 0, None

    def handle_starttag(self, tag, attrs):
        self._tag = tag
        self.depth += tag == "table"
        if tag == "img":
            self.images.append(dict(attrs)["src"])

    def handle_endtag(self, tag):
        self.depth -= tag == "table"
        assert self.depth >= 0

    def handle_data(self, data):
        if self._tag in ("h2", "h3") and data.strip():
            self.headings.append(data.strip())
        if self._tag == "td":
            self.cells.append(data.strip())


def outline(text: str) -> Outline:
    o = Outline()
    o.feed(text)
    assert o.depth == 0
    return o


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    ex = write(d / "h.prv", Shape(processes=2, threads=2, iterations=3, serial_fraction=0.1, rank_weights=(1, 1.5),
                                  init_ns=100_000))
    with popview.open(d / "h.prv", cache_dir=d / "cache") as exp:
        yield exp, ex


def test_one_run_report_has_the_figures_and_bookmarks(hybrid):
    exp, ex = hybrid
    shots = [BookmarkShot("imbalance", "rank 1 works 1.5 x more", "main/timestep", PNG),
             BookmarkShot("no picture", "", "")]
    text = build_report([exp], Focus.whole(), None, shots)
    o = outline(text)
    assert o.headings[:5] == ["Experiments", "Focus of analysis", "Warnings", "POP metrics", "Hybrid additive"]
    assert "Computation / I/O" in o.headings and "Bookmarks" in o.headings
    assert "Scaling" not in o.headings                          # one run: nothing to scale
    pe = ex.parallel_efficiency()
    assert f"{pe * 100:.1f} %" in o.cells
    assert o.images == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert "rank 1 works 1.5 x more" in text and "(no picture of this view)" in text
    assert "needs the FP_ARITH_INST_RETIRED" in text            # n/a rows say why
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")   # self-contained


def test_report_follows_the_focus_and_the_chosen_variants(hybrid):
    exp, ex = hybrid
    text = build_report([exp], Focus.on_callpath("main/timestep"), ["pop-mpi"])
    o = outline(text)
    assert [h for h in o.headings if h in ("POP MPI", "Hybrid additive", "Computation / I/O")] == ["POP MPI"]
    assert "main/timestep" in text
    loop = ex.iteration_ns * 3
    assert f"{ex.useful_ns.mean() / loop * 100:.1f} %" in o.cells
    with pytest.raises(ValueError, match="unknown variant"):
        build_report([exp], None, ["pop-hybrid"])


def test_bookmarks_come_from_a_session():
    s = Session()
    b = s.add_bookmark("loop", {"app": {"focus": {"kind": "callpath", "callpath": "main/loop"}}}, "slow halo")
    s.add_bookmark("bare", {})
    shots = bookmarks_of(s, {b.id: PNG})
    assert [(x.name, x.note, x.focus, x.picture) for x in shots] == [
        ("loop", "slow halo", "main/loop", PNG), ("bare", "", "", None)]


def test_series_report_has_scaling_table_and_plot(tmp_path, cache_dir):
    runs = write_scaling_series(tmp_path, shapes=((1, 1), (2, 1), (4, 1)), total_work_ns=2_000_000, iterations=2)
    exps = [popview.open(p, cache_dir=cache_dir) for p, _ in runs]
    try:
        text = build_report(exps[::-1])
    finally:
        for e in exps:
            e.close()
    o = outline(text)
    assert "Scaling" in o.headings
    assert re.search(r"<th>1x1 \(ref\)</th><th>2x1</th><th>4x1</th>", text)
    assert text.count("<svg") >= 3 and "Speedup" in text
    speed = [ex.runtime_ns for _, ex in runs]
    assert f"{speed[0] / speed[2]:.2f}" in o.cells


def test_flush_overlap_is_measured_against_the_focus_union():
    union = _union(np.array([5, 0, 20, 8]), np.array([10, 3, 30, 12]))
    assert [list(u) for u in union] == [[0, 5, 20], [3, 12, 30]]
    got = _overlap(np.array([0, 2, 11, 25, 40]), np.array([100, 6, 21, 26, 50]), union)
    assert list(got) == [20, 2, 2, 1, 0]


@pytest.mark.shared
def test_cli_report_of_pypop_epoch_series(shared_traces, tmp_path_factory, capsys):
    d = shared_traces / "pypop" / "mpi" / "epoch_example_traces"
    out = tmp_path_factory.mktemp("epoch") / "epoch.html"
    paths = [str(d / f"epoch_{n}proc.prv.gz") for n in (16, 1, 4)]
    assert main(["report", *paths, "-o", str(out), "--cache-dir", str(out.parent / "cache")]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text = out.read_text()
    o = outline(text)
    assert re.search(r"<th>1x1 \(ref\)</th><th>4x1</th><th>16x1</th>", text)
    ref = {row[""]: row for row in csv.DictReader(open(d / "precomputed.csv"))}["16"]
    for key, name in (("Parallel Efficiency", "Parallel efficiency"), ("MPI Load Balance", "Load balance"),
                      ("MPI Communication Efficiency", "Communication efficiency"),
                      ("Computation Scaling", "Computation scalability"), ("IPC Scaling", "IPC scalability")):
        shown = o.cells[o.cells.index(name) + 3]                  # the 16x1 column
        assert float(shown.rstrip(" %")) == pytest.approx(float(ref[key]) * 100,
                                                          abs=0.15), key
    assert o.cells[o.cells.index("Speedup") + 3] == f"{float(ref['Speedup']):.2f}"
    assert "flushed its buffers" in text                         # EPOCH's tracer flushed inside the run
    assert "None: bookmarks and pictures" in text
    assert out.stat().st_mode & 0o044                           # readable like any written file


def test_cli_rejects_an_unknown_reference(shared_traces, tmp_path, capsys):
    d = shared_traces / "pypop" / "mpi" / "epoch_example_traces"
    code = main(["report", str(d / "epoch_1proc.prv.gz"), "-o", str(tmp_path / "r.html"),
                 "--reference", "64x1", "--cache-dir", str(tmp_path / "cache")])
    assert code == 2
    assert "--reference 64x1: no run has that path or shape label (runs: 1x1)" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_cli_names_a_missing_call_path(hybrid, tmp_path, capsys):
    exp, _ = hybrid
    code = main(["report", str(exp.source), "-o", str(tmp_path / "r.html"), "--focus", "callpath:main/nope",
                 "--cache-dir", str(exp.cache_path.parent)])
    assert code == 2
    assert "no call path 'main/nope'" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_a_profile_has_no_duration_not_zero_seconds(shared_traces, tmp_path, capsys):
    """The Experiments table gave a Cube profile (no timestamps) a duration of '0 s';
    `popview info` says 'not recorded', the window 'n/a'."""
    profile = shared_traces / "popview-heat" / "scorep" / "hyb_2x2" / "profile.cubex"
    out = tmp_path / "r.html"
    assert main(["report", str(profile), "-o", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    row = out.read_text().split("profile.cubex")[0].rsplit("<tr>", 1)[1]
    assert "not recorded" in row and ">0 s<" not in row


def test_run_duration_uses_the_shared_seconds_format(hybrid):
    """The Experiments table wrote durations as '0.0123 s' / '1.397e+04 s' (its own format);
    it now says what every other seconds figure says: '12.3 ms', '13,970 s (3.9 h)'."""
    from popview.analysis.report.nodes import format_seconds
    exp, _ = hybrid
    duration_ns = exp.info()["duration_ns"]
    assert duration_ns and duration_ns < 1e9            # sub-second: the old format wrote '0.0xxx s'
    cells = outline(build_report([exp], Focus.whole(), None, [])).cells
    assert format_seconds(duration_ns / 1e9) in cells
    assert f"{duration_ns / 1e9:.4g} s" not in cells
