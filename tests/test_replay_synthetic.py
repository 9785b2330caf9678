"""The replay against the closed-form figures of popview.testing.synthetic."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.replay import replay
from popview.testing.synthetic import Shape, write


@pytest.mark.parametrize("shape", [
    Shape(processes=3, threads=2, iterations=4, rank_weights=(1.0, 1.5, 0.8), thread_weights=(1.2, 0.8),
          serial_fraction=0.2, parallel_regions=2),
    Shape(processes=4, threads=1, iterations=3, rank_weights=(1.0, 0.5, 2.0, 1.0)),
])
def test_replay_matches_the_synthetic_schedule(tmp_path, shape):
    expected = write(tmp_path / "run.prv", shape)
    result = replay(popview.open(tmp_path / "run.prv", cache_dir=tmp_path / "cache"))
    np.testing.assert_allclose(result.tl_cue * 1e9, expected.useful_ns, rtol=1e-12)
    # identical, synchronised iterations: a process's own critical path is its
    # serial work plus, per parallel region, its slowest thread
    t = shape.threads
    per_region = expected.region_omp_useful_ns
    pl = expected.serial_useful_ns + np.array(
        [per_region[:, p * t:(p + 1) * t].max(axis=1).sum() for p in range(shape.processes)])
    np.testing.assert_allclose(result.pl_cue * 1e9, pl, rtol=1e-12)
    assert result.g_cue * 1e9 == pytest.approx(pl.max(), rel=1e-12)
    assert result.r * 1e9 == pytest.approx(expected.runtime_ns, rel=1e-12)
