"""A run without MPI (pure OpenMP) never shows MPI names: the hybrid models' process level is
named as such, the rows only MPI gives are not available with the reason."""
from __future__ import annotations

import pytest

import popview
from popview.testing.synthetic import Shape, write

PURE_OPENMP = Shape(processes=1, threads=4, iterations=3, work_ns=800_000, thread_weights=(1.0, 1.2, 0.8, 1.4),
                    serial_fraction=0.2, allreduce=False, barrier=False, sendrecv=False)


@pytest.fixture
def openmp_run(tmp_path, cache_dir):
    write(tmp_path / "omp.prv", PURE_OPENMP)
    exp = popview.open(tmp_path / "omp.prv", cache_dir=cache_dir)
    exp.definitions.paradigms[:] = [p for p in exp.definitions.paradigms if p != "mpi"]
    yield exp
    exp.close()


@pytest.mark.parametrize("model", ["hybrid-additive", "hybrid-multiplicative", "critical-path"])
def test_no_mpi_names_in_a_run_without_mpi(openmp_run, model):
    tree = openmp_run.metrics(model)
    for _, n in tree.walk():
        if n.name.startswith("MPI") or "MPI x" in n.name:
            assert n.value is None and n.reason == "no MPI in this run", (n.id, n.name, n.value)
    assert tree.inconsistencies(1e-12) == []


def test_the_additive_process_level_of_a_run_without_mpi(openmp_run):
    tree = openmp_run.metrics("hybrid-additive")
    assert "no MPI in this run" in tree["process_load_balance"].name
    loss = tree["mpi_communication_efficiency"]
    assert loss.name.startswith("Process level") and loss.value == pytest.approx(
        tree.value("process_efficiency"), rel=1e-12)       # one process: no imbalance
    assert tree["mpi_transfer_efficiency"].value is None


def test_an_mpi_run_keeps_its_mpi_names(tmp_path, cache_dir):
    write(tmp_path / "mpi.prv", Shape(processes=2, threads=2, iterations=2))
    with popview.open(tmp_path / "mpi.prv", cache_dir=cache_dir) as exp:
        assert exp.metrics("hybrid-additive")["process_load_balance"].name == "MPI load balance (additive)"
