"""Strong or weak scaling is one decision per series, taken the same way by the Advisor
(report.compute.variant with the series) and the Scaling pane / `popview metrics` (Series)."""
from __future__ import annotations

import pytest

import popview
from popview.analysis.report import compute, variants
from popview.testing.synthetic import Shape, write

W = 1_000_000


def _run(tmp_path, cache_dir, name, processes, work_ns):
    write(tmp_path / f"{name}.prv", Shape(processes=processes, iterations=3, work_ns=work_ns, sendrecv=False))
    return popview.open(tmp_path / f"{name}.prv", cache_dir=cache_dir)


def test_the_advisor_takes_the_series_decision_not_the_current_run_against_the_reference(tmp_path, cache_dir):
    # instructions / processing elements against the reference: 1x2 0.5, 1x4 0.25, the current 1x8 1.0;
    # against the reference alone the current run reads weak (1.0 > 0.9), the series strong (0.583)
    ref = _run(tmp_path, cache_dir, "ref", 1, W)
    a = _run(tmp_path, cache_dir, "a", 2, W // 2)
    b = _run(tmp_path, cache_dir, "b", 4, W // 4)
    current = _run(tmp_path, cache_dir, "cur", 8, W)
    runs = [ref, a, b, current]
    s = popview.series(runs, reference=ref, use_replay=False)
    assert s.scaling == "strong" and "average 0.583" in s.scaling_reason
    [tree] = compute.variant(current, variants.BY_KEY["pop-mpi"], None, ref, runs)
    assert tree.notes[0].startswith(s.scaling_reason)
    # strong: sum useful_ref / sum useful = W / (8 W); weak would read 1.0
    assert tree.value("computation_scalability") == pytest.approx(1 / 8, rel=1e-6)
    pairwise = current.metrics("pop-mpi", reference=ref)
    assert pairwise.value("computation_scalability") == pytest.approx(1.0, rel=1e-6)  # the old, pairwise guess
