"""A call-path focus measures the same time in the metric inputs and in the
replay: each thread's time while its master is in the call path (a parallel
region from its fork) or, on OTF2 traces whose readers graft the workers'
visits, while the thread itself is. Closed form: replay_cases_otf2.late_worker_region."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.gather import gather
from popview.analysis.replay import replay
from popview.testing.replay_cases_otf2 import late_worker_region

US = 1e-6
FOCUS = Focus.on_callpath("main/!$omp parallel")


@pytest.fixture(scope="module")
def exp(tmp_path_factory):
    d = tmp_path_factory.mktemp("late-worker")
    with popview.open(late_worker_region(d / "trace"), cache_dir=d / "cache") as e:
        yield e


def test_inputs_count_the_fork_and_the_late_worker(exp):
    x = gather(exp, FOCUS)
    assert x.runtime == pytest.approx(520 * US)              # some thread of the process: 260 us x 2
    np.testing.assert_allclose(x.outside_mpi, [410 * US])    # the master from its fork to its join: 205 us x 2
    np.testing.assert_allclose(x.useful, [200 * US, 260 * US])


def test_replay_masks_the_same_time(exp):
    rp = replay(exp, FOCUS)
    assert rp.r == pytest.approx(520 * US)
    np.testing.assert_allclose(rp.outside_mpi, [410 * US])
    # the first instance: the worker's 10 us before its enter, 130 us of work and 110 us of barrier
    # after the master's fork clock (250 us); the second fork copies the master's clock after its
    # first instance, fork to join (205 us), and the worker adds its 250 us again
    assert rp.r_ideal == pytest.approx(455 * US)


@pytest.mark.parametrize("model, metric, expected", [
    ("pop-mpi", "serialisation_efficiency", 260 / 455),
    ("pop-mpi", "transfer_efficiency", 455 / 520),
])
def test_serialisation_and_transfer_closed_form(exp, model, metric, expected):
    assert exp.metrics(model, FOCUS).value(metric) == pytest.approx(expected)


@pytest.mark.parametrize("metric", ["mpi_serialisation_efficiency", "mpi_transfer_efficiency"])
def test_one_process_without_mpi_has_no_mpi_serialisation_nor_transfer(exp, metric):
    """The run is one rank without MPI: the hybrid model's MPI split (its master's 410 us outside
    MPI against R_ideal 455 us, 520 us of R) is not available, and says why."""
    node = exp.metrics("hybrid-multiplicative", FOCUS)[metric]
    assert node.value is None and "no MPI in this run" in (node.reason or "")


@pytest.mark.parametrize("model", ["pop-mpi", "hybrid-multiplicative", "hybrid-additive", "critical-path"])
def test_every_efficiency_within_bounds(exp, model):
    for _, node in exp.metrics(model, FOCUS).walk():
        if node.kind == "efficiency" and node.value is not None:
            assert -1e-9 <= node.value <= 1 + 1e-9, (node.id, node.value)
