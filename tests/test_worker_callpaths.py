"""OpenMP worker threads of Paraver traces: their outlined functions hang below the
parallel region their master opened (as in Cube), in the call tree, the profile, the
OpenMP histogram and the per-region figures, on a closed-form run and on real Extrae runs."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis import histograms
from popview.analysis.focus import Focus
from popview.analysis.metrics import focus_inputs
from popview.testing.synthetic import Shape, write

SHAPE = dict(processes=2, threads=3, iterations=4, serial_fraction=0.2, parallel_regions=2, fork_ns=1_000,
             thread_weights=(1.0, 2.0, 3.0), rank_weights=(1.0, 1.5))


def _outlined_callpaths(defs) -> list[int]:
    return [cp for cp, r in enumerate(defs.callpath_region) if defs.regions[int(r)].role == "outlined"]


@pytest.mark.parametrize("worker_records", [False, True], ids=["extrae-workers", "workers-record-construct"])
def test_worker_time_lies_under_the_masters_parallel_region(tmp_path, cache_dir, worker_records):
    shape = Shape(**SHAPE, worker_parallel_records=worker_records)
    ex = write(tmp_path / "w.prv", shape)
    with popview.open(tmp_path / "w.prv", cache_dir=cache_dir) as exp:
        defs = exp.definitions
        outlined = _outlined_callpaths(defs)
        assert len(outlined) == shape.parallel_regions          # one call path per function, none at the root
        prof = exp.profile()
        for k in range(shape.parallel_regions):
            path = f"main/timestep/parallel (open)/solve_region_{k + 1}._omp_fn.{k}"
            cp = prof.find(path)
            assert cp is not None, path
            np.testing.assert_allclose(prof.by_location("comp", cp), ex.region_omp_useful_ns[k] / 1e9, rtol=1e-12)
            assert (prof.by_location("visits", cp, inclusive=False) == shape.iterations).all()
        region = prof.find("main/timestep/parallel (open)")
        np.testing.assert_allclose(prof.by_location("comp", region), ex.omp_useful_ns / 1e9, rtol=1e-12)
        time = prof.matrix("time", inclusive=True)
        own = prof.matrix("time", inclusive=False)
        for cp in range(prof.n_callpaths):        # a parent's time is its own plus its children's
            np.testing.assert_allclose(time[cp], own[cp] + time[prof.children(cp)].sum(axis=0), atol=1e-12)
        table = histograms.build(exp, "openmp")
        col = table.col_labels.index("parallel (open)")
        masters = np.arange(0, shape.processes * shape.threads, shape.threads)
        np.testing.assert_allclose(table.stats["time"][masters, col], ex.openmp_ns, rtol=1e-12)
        workers = np.setdiff1d(np.arange(len(defs.locations)), masters)
        # a worker is inside the region for its own visits: the construct's when it records it, else the function's
        expected = np.repeat(ex.openmp_ns, shape.threads) if worker_records else ex.omp_useful_ns
        np.testing.assert_allclose(table.stats["time"][workers, col], expected[workers], rtol=1e-12)
        assert (table.stats["count"][workers, col] == shape.iterations * shape.parallel_regions).all()
        b = histograms.cell_intervals(exp, table, int(workers[0]), col)
        assert len(b[0]) == shape.iterations * shape.parallel_regions
        x = focus_inputs(exp, Focus.whole())
        for k, reg in enumerate(x.regions):
            np.testing.assert_allclose(reg.useful, ex.region_omp_useful_ns[k] / 1e9, rtol=1e-9)


def test_threads_without_parallel_regions_stay_where_they_are(shared_traces, cache_dir):
    path = shared_traces / "extrae-pthread-example/my-example.prv"
    with popview.open(path, cache_dir=cache_dir) as exp:
        assert not exp.definitions.flags.get("threads_grafted")


@pytest.mark.parametrize("run", ["hyb_1x2", "hyb_2x2"])
def test_extrae_hybrid_workers_under_the_region(shared_traces, cache_dir, run):
    path = shared_traces / f"popview-heat/extrae/{run}/{run}.prv"
    with popview.open(path, cache_dir=cache_dir) as exp:
        defs = exp.definitions
        parent = np.asarray(defs.callpath_parent)
        assert all(parent[cp] >= 0 for cp in _outlined_callpaths(defs))      # none at the root
        prof = exp.profile()
        region = prof.find("!$omp parallel")          # Extrae's "REGION (open)"
        workers = np.array([i for i, loc in enumerate(defs.locations) if loc.thread > 0])
        useful = prof.by_location("comp", None)[workers]
        assert (useful > 0.3).all()
        # all a worker's computation lies in the region's functions, as the per-region figures say
        functions = [prof.find(f"!$omp parallel/main._omp_fn.{k} @heat_hybrid.c:{line}") for k, line in ((0, 107), (1, 119))]
        assert None not in functions
        in_functions = sum(prof.by_location("comp", cp)[workers] for cp in functions)
        np.testing.assert_allclose(in_functions, useful, rtol=1e-9)
        x = focus_inputs(exp, Focus.whole())
        per_region = sum(reg.useful for reg in x.regions)
        np.testing.assert_allclose(per_region[workers], useful, rtol=1e-9)
        table = histograms.build(exp, "openmp")
        col = table.col_labels.index("!$omp parallel")
        worker_time = table.stats["time"][workers, col] / 1e9
        assert (worker_time >= useful - 1e-9).all()         # their outlined functions run inside the region
        assert (worker_time <= prof.by_location("time", region)[workers] + 1e-9).all()


def _defs_two_threads():
    from popview.model.definitions import Definitions, Location, Process, Region
    d = Definitions()
    d.processes = [Process("rank 0", 0)]
    d.locations = [Location("master", 0, 0), Location("worker", 0, 1)]
    d.regions = [Region("main"), Region("parallel", "openmp", "parallel"), Region("fn", "user", "outlined"),
                 Region("flush", "measurement", "flush")]
    return d


def test_graft_a_worker_that_starts_before_its_masters_enter_is_stamped():
    """Master: main [0, 100) > parallel [40, 60) > fn [45, 55). Worker: fn [30, 50) begins
    before the master's parallel enter (a descheduled master), flush [80, 90) after every
    region stays at the root; the worker's root call path of fn goes away."""
    from popview.cache.grafting import graft_workers
    # call paths as built: 0 main, 1 main/parallel, 2 main/parallel/fn, 3 fn (worker root), 4 flush (worker root)
    parent = np.array([-1, 0, 1, -1, -1])
    region = np.array([0, 1, 2, 2, 3])
    part = {"loc": np.array([0, 0, 0, 1, 1], np.int32), "begin": np.array([0, 40, 45, 30, 80], np.int64),
            "end": np.array([100, 60, 55, 50, 90], np.int64), "callpath": np.array([0, 1, 2, 3, 4], np.int32),
            "depth": np.array([0, 1, 2, 0, 0], np.int16)}
    new_parent, new_region, grafted = graft_workers([part], parent, region, _defs_two_threads())
    assert grafted == 1
    assert list(new_parent) == [-1, 0, 1, -1] and list(new_region) == [0, 1, 2, 3]
    assert list(part["callpath"]) == [0, 1, 2, 2, 3]


def test_graft_workers_temporaries_follow_the_grafted_rows_not_all_rows(monkeypatch):
    """2 M visits of which 2000 are grafted (a worker's visits inside the region; the others
    after it, or the master's): the temporaries of grafting stay near the grafted rows
    (anchors for them only, the other columns read a chunk at a time), where one int64 per
    visit would be 16 MB."""
    import tracemalloc

    from popview.cache import grafting
    monkeypatch.setattr(grafting, "CHUNK", 1 << 12, raising=False)
    n, n_in = 2_000_000, 1000
    # call paths: 0 main, 1 main/parallel, 2 main/parallel/fn, 3 fn (worker root), 4 flush (worker root), 5 fn/flush
    parent = np.array([-1, 0, 1, -1, -1, 3])
    region = np.array([0, 1, 2, 2, 3, 3])
    n_master = n // 2
    n_worker = n - n_master
    begin_m = np.arange(n_master, dtype=np.int64) * 10
    begin_m[1] = 40          # the parallel region [40, 40 + 20 n_in)
    cp_m = np.zeros(n_master, np.int32)
    cp_m[1] = 1
    end_m = begin_m + 5
    end_m[1] = 40 + 20 * n_in
    depth_m = np.zeros(n_master, np.int16)
    depth_m[1] = 1
    begin_m[2:] += 40 + 20 * n_in
    end_m[2:] += 40 + 20 * n_in
    # worker: n_in fn visits inside the region each with a flush nested, then flush visits after it
    begin_w = np.arange(n_worker, dtype=np.int64) * 10 + 50
    end_w = begin_w + 5
    cp_w = np.full(n_worker, 4, np.int32)
    depth_w = np.zeros(n_worker, np.int16)
    cp_w[:2 * n_in:2], cp_w[1:2 * n_in:2], depth_w[1:2 * n_in:2] = 3, 5, 1
    end_w[:2 * n_in:2] = begin_w[:2 * n_in:2] + 8
    begin_w[2 * n_in:] += 40 + 20 * n_in
    end_w[2 * n_in:] += 40 + 20 * n_in
    part = {"loc": np.r_[np.zeros(n_master, np.int32), np.ones(n_worker, np.int32)],
            "begin": np.r_[begin_m, begin_w], "end": np.r_[end_m, end_w], "callpath": np.r_[cp_m, cp_w],
            "depth": np.r_[depth_m, depth_w]}
    tracemalloc.start()
    new_parent, new_region, grafted = grafting.graft_workers([part], parent, region, _defs_two_threads())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert grafted == n_in
    # 0 main, 1 main/parallel, 2 main/parallel/fn, 3 flush (worker root), 4 main/parallel/fn/flush
    assert list(new_parent) == [-1, 0, 1, -1, 2] and list(new_region) == [0, 1, 2, 3, 3]
    w = part["callpath"][n_master:]
    assert (w[:2 * n_in:2] == 2).all() and (w[1:2 * n_in:2] == 4).all() and (w[2 * n_in:] == 3).all()
    assert peak < 2_000_000, peak
