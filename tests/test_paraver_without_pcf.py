"""A Paraver trace without its .pcf keeps the figures it has with it: Extrae's event types
still say which regions are MPI point-to-point calls, collectives, OpenMP parallel
constructs and outlined functions, though their values are unnamed. Regions the reader
met with no name were all plain functions: the OpenMP split per parallel region was lost,
the workers were not grafted below their master's region, collectives were not
synchronised by the replay and "Granularity (collectives)" said "no MPI collective calls"
(the audit of 27 Nov on popview-heat 2x2: serialisation 27.3 -> 27.7 %, critical-path
OpenMP serialisation 75.2 -> 100 %)."""
from __future__ import annotations

import shutil

import pytest

from popview.analysis.focus import Focus
from popview.experiment import open as open_experiment
from popview.testing.synthetic import Shape, write


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    d = tmp_path_factory.mktemp("pcf")
    named = d / "named" / "run.prv"
    named.parent.mkdir()
    write(named, Shape(processes=2, threads=2, iterations=6, parallel_regions=2, rank_weights=(1.0, 1.5),
                       thread_weights=(1.0, 1.6), serial_fraction=0.1))
    bare = d / "bare" / "run.prv"
    bare.parent.mkdir()
    shutil.copy(named, bare)
    shutil.copy(named.with_suffix(".row"), bare.with_suffix(".row"))
    return named, bare, d / "cache"


def _values(tree) -> list:
    return [round(n.value, 9) if n.value is not None else None for _, n in tree.walk()]


def test_the_regions_keep_their_roles_and_the_figures_their_values(twins):
    named, bare, cache = twins
    with open_experiment(named, cache) as a, open_experiment(bare, cache) as b:
        assert not b.definitions.flags["pcf"]
        roles = sorted({(r.paradigm, r.role) for r in a.definitions.regions if r.paradigm in ("mpi", "openmp")})
        bare_roles = sorted({(r.paradigm, r.role) for r in b.definitions.regions if r.paradigm in ("mpi", "openmp")})
        assert ("openmp", "parallel") in bare_roles and ("mpi", "collective") in bare_roles, bare_roles
        assert {role for _, role in bare_roles} <= {role for _, role in roles} | {"collective", "point2point"}
        assert b.definitions.flags.get("threads_grafted") == a.definitions.flags.get("threads_grafted") is True
        for model in ("pop-mpi", "hybrid-additive", "critical-path"):
            ta, tb = a.metrics(model, Focus.whole()), b.metrics(model, Focus.whole())
            # the per-region split too (its ids name the regions: by type and value without the .pcf)
            assert [n.id.split(":")[0] for _, n in ta.walk()] == [n.id.split(":")[0] for _, n in tb.walk()], model
            assert _values(ta) == pytest.approx(_values(tb), abs=1e-9), model
        ca, cb = a.metrics("computation", Focus.whole()), b.metrics("computation", Focus.whole())
        assert cb.value("computation_granularity_collective") == pytest.approx(
            ca.value("computation_granularity_collective"))
