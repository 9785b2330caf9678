"""Nested parallel regions and more parallel regions than the cumulative sums keep (64):
closed-form figures."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.metrics import focus_inputs
from popview.cache.cumulative import MAX_REGIONS
from popview.model.categories import CAT
from popview.testing.otf2_writer import write_nested_trace
from popview.testing.properties import check_experiment
from popview.testing.synthetic import Shape, write

NS = 1e-9


def test_nested_team_closed_form(tmp_path):
    """otf2_writer.nested_script, 1 rank x 3 threads, main [0, 100]: the master forks team 0
    (threads 0, 1) at 10 and joins it at 92, its region [12, 85]; inside it thread 1 forks team 1
    (threads 1, 2) at 21, joined at 52, whose thread 2 is in its region [24, 49]. The nested region
    belongs to the outer one (one region); thread 2 counts as a thread of the process.
      useful: master 10 + 8 serial, 74 in the region (team begin 11 .. leave 85, less nothing);
              thread 1: region [12, 89] less its own fork 21..22 and join wait 50..52 = 74;
              thread 2: its region [24, 49] = 25
      master in the region (fork .. join) 82; R 100."""
    written = write_nested_trace(tmp_path / "t")
    with popview.open(written.anchor, cache_dir=tmp_path / "cache") as exp:
        x = focus_inputs(exp, "whole")
        np.testing.assert_allclose(x.useful, np.array([92, 74, 25]) * NS)
        np.testing.assert_allclose(x.serial_useful, [18 * NS])
        np.testing.assert_allclose(x.openmp, [82 * NS])
        np.testing.assert_allclose(x.cat[:, CAT["omp_management"]], np.array([8, 3, 0]) * NS)   # forks, joins
        assert [r.name for r in x.regions] == ["main/!$omp parallel @x.c:10"]
        np.testing.assert_allclose(x.regions[0].useful, np.array([74, 74, 25]) * NS)
        add = exp.metrics("hybrid-additive", use_replay=False)
        assert add.value("parallel_efficiency") == pytest.approx((92 + 74 + 25) / 3 / 100)
        assert add.value("process_efficiency") == pytest.approx(1.0)
        assert add.value("amdahl_efficiency") == pytest.approx(1 - 18 * 2 / 3 / 100)
        assert add.value("openmp_region_efficiency") == pytest.approx(1 - (82 - (74 + 74 + 25) / 3) / 100)
        region = add["openmp_region_efficiency"].children
        assert len(region) == 1
        assert region[0].children[0].value == pytest.approx(1 - (0 + 0 + 49) / 3 / 100)     # thread load balance
        assert region[0].children[1].value == pytest.approx(1 - (82 - 74) / 100)             # fork, join, runtime
        assert add.inconsistencies(1e-12) == []
        mult = exp.metrics("hybrid-multiplicative", use_replay=False)
        assert mult.value("openmp_load_balance") == pytest.approx((92 + 74 + 25) / 3 / 92)
        assert check_experiment(exp, "nested") == []


K = MAX_REGIONS + 6


@pytest.fixture(scope="module")
def many_regions(tmp_path_factory):
    """1 process x 2 threads, 2 iterations of a serial part and 70 parallel regions whose threads
    compute w = (2250, 6750) ns each (thread weights 1 : 3), no MPI."""
    d = tmp_path_factory.mktemp("many-regions")
    shape = Shape(processes=1, threads=2, iterations=2, parallel_regions=K, thread_weights=(1.0, 3.0),
                  serial_fraction=0.1, allreduce=False, barrier=False, work_ns=700_000)
    ex = write(d / "m.prv", shape)
    with popview.open(d / "m.prv", cache_dir=d / "cache") as exp:
        yield exp, shape, ex


def test_more_regions_than_the_sums_keep(many_regions):
    exp, shape, ex = many_regions
    N, R = shape.iterations, ex.runtime_ns
    w = ex.region_omp_useful_ns[0] / N
    assert tuple(w) == (2250, 6750)
    loss = N * (w.max() - w.mean()) / R                       # each region's share of the OpenMP loss
    assert any(w.startswith(f"{K} OpenMP parallel regions, more than {MAX_REGIONS}")
               for w in exp.definitions.warnings)
    tree = exp.metrics("hybrid-additive", use_replay=False)
    parent = tree["openmp_region_efficiency"]
    assert parent.value == pytest.approx(1 - K * loss, rel=1e-12)
    listed = [c for c in parent.children if c.id != "openmp_region_efficiency:unattributed"]
    assert len(listed) == MAX_REGIONS
    assert all(c.value == pytest.approx(1 - loss, rel=1e-12) for c in listed)
    rest = tree["openmp_region_efficiency:unattributed"]
    assert rest.value == pytest.approx(1 - (K - MAX_REGIONS) * loss, rel=1e-12)
    assert f"the {K - MAX_REGIONS} parallel regions beyond the listed ones" in rest.description
    assert any(n.startswith(f"{K - MAX_REGIONS} parallel regions (outlined functions) have no sums") for n in tree.notes)
    assert tree.inconsistencies(1e-12) == []
    # a region beyond the 64 as the focus: the call path's own time, exact
    focus = f"callpath:main/timestep/parallel (open)/solve_region_{K}._omp_fn.{K - 1}"
    x = focus_inputs(exp, focus)
    assert x.runtime == pytest.approx(N * w.max() * NS, rel=1e-12)
    np.testing.assert_allclose(x.useful, N * w * NS, rtol=1e-12)
    assert exp.metrics("hybrid-additive", focus, use_replay=False).value("parallel_efficiency") == \
        pytest.approx(w.mean() / w.max(), rel=1e-12)
