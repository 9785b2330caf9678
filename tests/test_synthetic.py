"""The synthetic writer: its traces convert, and hold what it says they hold."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.model.states import RUNNING
from popview.testing.synthetic import Shape, write, write_scaling_series


def _open(tmp_path, shape, cache_dir):
    expected = write(tmp_path / "t.prv", shape)
    return popview.open(tmp_path / "t.prv", cache_dir=cache_dir), expected


def _visits(exp, name):
    calls = exp.reader.read("calls")
    names = np.array([exp.definitions.callpath_name(int(c)).rsplit("/", 1)[-1] for c in calls["callpath"]])
    return int((names == name).sum())


@pytest.mark.parametrize("shape", [
    Shape(processes=3, threads=2, iterations=4, rank_weights=(1, 3, 5), serial_fraction=0.2,
          parallel_regions=2, init_ns=5000, fini_ns=3000),
    Shape(processes=1, threads=4, iterations=3, allreduce=False, barrier=False, fork_ns=500,
          thread_weights=(1, 2, 3, 4)),
    Shape(processes=4, threads=1, iterations=5, sendrecv=False, allreduce=False, counters=False),
])
def test_counts_and_useful_time_match(tmp_path, cache_dir, shape):
    exp, ex = _open(tmp_path, shape, cache_dir)
    with exp:
        info = exp.info()
        assert info["records"]["states"] == ex.counts["states"]
        assert info["records"]["events"] == ex.counts["events"]
        assert info["records"]["messages"] == ex.counts["messages"]
        assert info["duration_ns"] == ex.runtime_ns
        assert (info["processes"], info["threads_per_process"]) == (shape.processes, shape.threads)
        assert not info["warnings"]
        st = exp.reader.read("states")
        running = st["state"] == RUNNING
        useful = np.bincount(st["loc"][running], weights=(st["end"] - st["begin"])[running],
                             minlength=shape.processes * shape.threads)
        np.testing.assert_array_equal(useful, ex.useful_ns)
        assert _visits(exp, "timestep") == ex.counts["timestep_visits"]
        assert _visits(exp, "MPI_Barrier") == ex.counts["barrier_visits"]
        assert _visits(exp, "MPI_Sendrecv") == ex.counts["sendrecv_visits"]


def test_linear_imbalance_closed_form(tmp_path):
    P = 4
    ex = write(tmp_path / "lb.prv", Shape(processes=P, iterations=3, rank_weights=tuple(1 + 2 * r for r in range(P)),
                                          sendrecv=False, allreduce=False))
    assert ex.load_balance() == pytest.approx(P / (2 * P - 1), rel=1e-12)
    assert ex.iteration_ns == ex.shape.work_ns * (2 * P - 1) + ex.shape.mpi_cost_ns


def test_counters_count_useful_computation_only(tmp_path):
    ex = write(tmp_path / "c.prv", Shape(processes=2, threads=2, iterations=2, ipc=2.0, ghz=3.0))
    np.testing.assert_allclose(ex.cycles, ex.useful_ns * 3.0, rtol=1e-9)
    assert ex.ipc() == pytest.approx(2.0)


def test_file_is_in_time_order(tmp_path):
    write(tmp_path / "o.prv", Shape(processes=2, threads=2, iterations=3, parallel_regions=2, init_ns=10, fini_ns=10))
    lines = (tmp_path / "o.prv").read_text().splitlines()[2:]
    times = [int(line.split(":")[5]) for line in lines]
    assert times == sorted(times)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        Shape(processes=2, allreduce=False, barrier=False)
    with pytest.raises(ValueError):
        Shape(processes=2, rank_weights=(1.0,))


def test_scaling_series_converts(tmp_path, cache_dir):
    runs = write_scaling_series(tmp_path, shapes=((1, 2), (2, 2)), iterations=3)
    for path, ex in runs:
        with popview.open(path, cache_dir=cache_dir) as exp:
            assert exp.label == ex.shape.label
            assert exp.info()["records"]["states"] == ex.counts["states"]
