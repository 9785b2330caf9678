"""A parallel region runs from its master's fork to its join: the master's wait
for its team after its leave (OTF2: leave, ThreadTeamEnd .. ThreadJoin) is
OpenMP fork / join time of the region, not the master's serial computation,
and a focus on a region without MPI shows every MPI factor at 1 even where
descheduled workers stamp the end of the closing barrier after their
master's leave. Closed form: otf2_writer.late_barrier_script; real: the
Score-P popview-heat 2x2 trace (4 threads on 2 cores), the Jacobi region."""
from __future__ import annotations

import numpy as np
import pytest

import popview
from popview.analysis.metrics import focus_inputs
from popview.model.categories import CAT
from popview.testing.otf2_writer import LATE_BARRIER, PARALLEL, write_late_barrier_trace

NS = 1e-9
N = LATE_BARRIER["iterations"]
REGION = f"callpath:main/{PARALLEL}"
MPI_FACTORS = {"hybrid-additive": ("mpi_communication_efficiency", "mpi_serialisation_efficiency",
                                   "mpi_transfer_efficiency"),
               "hybrid-multiplicative": ("mpi_communication_efficiency", "mpi_serialisation_efficiency",
                                         "mpi_transfer_efficiency")}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("late-barrier")
    with popview.open(write_late_barrier_trace(d / "trace").anchor, cache_dir=d / "cache") as e:
        yield e


def test_the_masters_join_wait_is_openmp_not_serial_computation(synthetic):
    x = focus_inputs(synthetic, "whole")
    m = x.masters
    join = np.array(LATE_BARRIER["join"])
    # main [0, 100 + 1000 N]: before the first fork 100, per iteration from the join to MPI_Barrier and
    # from its end to the next fork
    np.testing.assert_allclose(x.cat[m, CAT["comp_serial"]], (100 + N * (300 - join + 600)) * NS)
    # fork 50 (ThreadFork .. team begin) and join (leave .. ThreadJoin) per iteration
    np.testing.assert_allclose(x.cat[m, CAT["omp_management"]], N * (50 + join - 160) * NS)
    np.testing.assert_allclose(x.cat[m, CAT["comp_parallel"]], N * 100 * NS)


def test_region_focus_holds_the_whole_team_and_no_mpi_loss(synthetic):
    x = focus_inputs(synthetic, REGION)
    join = np.array(LATE_BARRIER["join"])
    assert x.runtime == pytest.approx(N * join.max() * NS)          # fork to join on rank 0
    np.testing.assert_allclose(x.openmp, N * join * NS)               # each master, fork to join
    np.testing.assert_allclose(x.mpi, 0, atol=1e-15)
    # every thread is in the region for its master's fork .. join: workers included
    np.testing.assert_allclose(x.cat.sum(axis=1), np.repeat(N * join * NS, 2))
    worker = np.flatnonzero(x.thread > 0)
    leave = np.array(LATE_BARRIER["worker_leave"])
    np.testing.assert_allclose(x.cat[worker, CAT["omp_sync"]], N * (leave - 140) * NS)   # the late barrier
    np.testing.assert_allclose(x.useful, N * np.array([100, 130, 100, 130]) * NS)
    add = synthetic.metrics("hybrid-additive", REGION)
    mult = synthetic.metrics("hybrid-multiplicative", REGION)
    for tree, ids in ((add, MPI_FACTORS["hybrid-additive"]), (mult, MPI_FACTORS["hybrid-multiplicative"])):
        for metric in ids:
            assert tree.value(metric) == pytest.approx(1, abs=1e-12), (tree.model, metric)
    # the processes' different time in the region is MPI load imbalance: avg(270, 210) / 270
    assert add.value("process_load_balance") == pytest.approx(240 / 270)
    assert mult.value("mpi_load_balance") == pytest.approx(240 / 270)
    # useful avg (100 + 130) / 2 per iteration over R = 270 per iteration
    assert add.value("parallel_efficiency") == pytest.approx(115 / 270)
    assert any("less than R" in n for n in add.notes)


def test_scorep_heat_jacobi_region_has_no_mpi_loss(shared_traces, cache_dir):
    """Before: MPI communication efficiency 71.3 %, transfer 71.7 % (additive and
    multiplicative) on a region without an MPI call: 0.28 s of workers stamping the
    end of the closing barrier after their master's leave read as MPI time."""
    path = shared_traces / "popview-heat/scorep/hyb_2x2/traces.otf2"
    focus = "callpath:main/!$omp parallel @heat_hybrid.c:119"
    with popview.open(path, cache_dir=cache_dir) as exp:
        x = focus_inputs(exp, focus)
        assert x.mpi.max() == 0
        # no thread is in the region longer than its master (fork to join)
        total = x.cat.sum(axis=1)
        assert (total <= total[x.masters][x.process] + 1e-9).all()
        assert x.runtime == pytest.approx(total[x.masters].max(), rel=1e-9)
        for model, ids in MPI_FACTORS.items():
            tree = exp.metrics(model, focus)
            for metric in ids:
                assert tree.value(metric) == pytest.approx(1, abs=1e-9), (model, metric, tree.value(metric))
            for _, node in tree.walk():
                if node.kind == "efficiency" and node.value is not None:
                    assert -1e-9 <= node.value <= 1 + 1e-9, (model, node.id, node.value)
        # the masters' join wait is OpenMP management, not useful: the workers' barrier ends late
        mgmt = x.cat[x.masters, CAT["omp_management"]]
        assert (mgmt > 0.5 * x.openmp).all()


EXTRAE_SHAPE = dict(processes=2, threads=3, iterations=4, serial_fraction=0.2, parallel_regions=2, fork_ns=1_000,
                    thread_weights=(1.0, 2.0, 3.0), rank_weights=(1.0, 1.5), worker_parallel_records=False)


def test_outlined_function_focus_counts_the_waiting_master(tmp_path, cache_dir):
    """Extrae's workers record only their outlined function: in a focus on it the master,
    done with its own chunk, waits (Synchronization, inside the parallel construct) while
    its slower workers still run theirs. That time is the call path's OpenMP time: every
    MPI factor is 1, R is the busiest thread's time in the function, the per-process
    difference is MPI load imbalance. (Before: the master's time in the focus was its own
    chunk, and the rest read as MPI loss.)"""
    from popview.testing.synthetic import Shape, write
    shape = Shape(**EXTRAE_SHAPE)
    ex = write(tmp_path / "w.prv", shape)
    P, T = shape.processes, shape.threads
    with popview.open(tmp_path / "w.prv", cache_dir=cache_dir) as exp:
        for k in range(shape.parallel_regions):
            focus = f"callpath:main/timestep/parallel (open)/solve_region_{k + 1}._omp_fn.{k}"
            useful = ex.region_omp_useful_ns[k] * NS                     # per location, in this function
            busiest = useful.reshape(P, T).max(axis=1)                   # per process
            x = focus_inputs(exp, focus)
            assert x.runtime == pytest.approx(busiest.max(), rel=1e-9)
            np.testing.assert_allclose(x.openmp, busiest, rtol=1e-9)
            np.testing.assert_allclose(x.useful, useful, rtol=1e-9)
            masters = x.masters
            # the master's wait for its team is synchronisation, its own chunk computation
            np.testing.assert_allclose(x.cat[masters, CAT["omp_sync"]], busiest - useful[masters], rtol=1e-9)
            add = exp.metrics("hybrid-additive", focus)
            mult = exp.metrics("hybrid-multiplicative", focus)
            for tree, ids in ((add, MPI_FACTORS["hybrid-additive"]),
                              (mult, MPI_FACTORS["hybrid-multiplicative"])):
                for metric in ids:
                    assert tree.value(metric) == pytest.approx(1, abs=1e-9), (k, tree.model, metric)
            r = busiest.max()
            assert add.value("process_load_balance") == pytest.approx(1 - (r - busiest.mean()) / r, rel=1e-9)
            assert add.value("thread_efficiency") == pytest.approx(1 - (busiest.mean() - useful.mean()) / r, rel=1e-9)
            for _, node in mult.walk():
                if node.kind == "efficiency" and node.value is not None:
                    assert -1e-9 <= node.value <= 1 + 1e-9, (k, node.id, node.value)


def test_extrae_heat_outlined_functions_have_no_mpi_loss(shared_traces, cache_dir):
    """popview-heat Extrae 2x2 (4 threads on 2 cores): each worker runs its chunk of an
    outlined function after its master has finished its own and waits in the join. Before:
    a focus on main._omp_fn.0 (no MPI in it) read MPI communication efficiency 64.8 % and
    transfer 74.3 %, on main._omp_fn.1 63.1 % and 65.3 %. Now every MPI factor is 1, the
    children's figures stay within the parallel region's, and no thread is in a focus
    longer than R nor computes in a region longer than its master is in it."""
    path = shared_traces / "popview-heat/extrae/hyb_2x2/hyb_2x2.prv"
    with popview.open(path, cache_dir=cache_dir) as exp:
        parent = focus_inputs(exp, "callpath:!$omp parallel")
        whole = focus_inputs(exp, "whole")
        for reg in whole.regions:
            team = np.bincount(whole.process, reg.useful)
            assert (team <= whole.threads_per_process * reg.openmp + 1e-9).all(), reg.name
            assert (reg.useful <= reg.openmp[whole.process] + 1e-9).all(), reg.name
        useful = np.zeros(parent.n_threads)
        for k, line in ((0, 107), (1, 119)):
            focus = f"callpath:!$omp parallel/main._omp_fn.{k} @heat_hybrid.c:{line}"
            x = focus_inputs(exp, focus)
            assert x.mpi.max() == 0
            assert (x.cat.sum(axis=1) <= x.runtime + 1e-9).all()
            assert x.runtime <= parent.runtime + 1e-9
            useful += x.useful
            for model, ids in MPI_FACTORS.items():
                tree = exp.metrics(model, focus)
                for metric in ids:
                    assert tree.value(metric) == pytest.approx(1, abs=1e-9), (k, model, metric, tree.value(metric))
                assert tree.inconsistencies(1e-9) == [], (k, model)
                for _, node in tree.walk():
                    if node.kind == "efficiency" and node.value is not None:
                        assert -1e-9 <= node.value <= 1 + 1e-9, (k, model, node.id, node.value)
        np.testing.assert_allclose(useful, parent.useful, rtol=1e-9)     # the functions hold the region's work


LATE = dict(EXTRAE_SHAPE, workers_after_master=True, init_ns=50_000, fini_ns=20_000)


@pytest.fixture(scope="module")
def late_workers(tmp_path_factory):
    """Extrae's pattern on an oversubscribed node (popview-heat Extrae 2x2): every worker runs its
    chunk only after its master has finished its own, the master waits in Fork/Join meanwhile, and
    a worker's first record is its first chunk (Not created before)."""
    from popview.testing.synthetic import Shape, write
    d = tmp_path_factory.mktemp("late-workers")
    shape = Shape(**LATE)
    ex = write(d / "late.prv", shape)
    with popview.open(d / "late.prv", cache_dir=d / "cache") as exp:
        yield exp, shape, ex


def test_late_workers_writer_records_the_extrae_pattern(late_workers):
    exp, shape, ex = late_workers
    T, N = shape.threads, shape.iterations
    x = focus_inputs(exp, "whole")
    np.testing.assert_allclose(x.useful, ex.useful_ns * NS, rtol=1e-12)
    np.testing.assert_allclose(x.openmp, ex.openmp_ns * NS, rtol=1e-12)
    np.testing.assert_allclose(x.mpi, ex.mpi_ns * NS, rtol=1e-12)
    assert x.runtime == pytest.approx(ex.runtime_ns * NS, rel=1e-12)
    # the masters wait for their workers' chunks in Fork/Join: fork + the slowest worker, per region
    work = ex.region_omp_useful_ns.reshape(shape.parallel_regions, shape.processes, T)
    join = work[:, :, 1:].max(axis=2).sum(axis=0)                         # per process, all iterations
    np.testing.assert_allclose(x.cat[x.masters, CAT["omp_management"]],
                               (join + N * shape.parallel_regions * shape.fork_ns) * NS, rtol=1e-12)
    # a worker's first record is its first chunk: Not created from 0 (idle time, not computation)
    first = shape.init_ns + (ex.serial_useful_ns + work[0, :, 0]) / N + shape.fork_ns   # per process
    workers = np.flatnonzero(x.thread > 0)
    np.testing.assert_allclose(x.cat[workers, CAT["omp_idle"]], first[x.process[workers]] * NS, rtol=1e-12)
    assert ex.counts["parallel_visits"] == N * shape.processes * shape.parallel_regions


def test_late_workers_closed_form_metrics(late_workers):
    """Whole run: every hybrid-additive figure from the schedule. A focus on one outlined function:
    per instance the team is in it for the master's chunk and then its slowest worker's, so R and
    each process's OpenMP time are N (w_master + max w_worker); every MPI factor is 1."""
    exp, shape, ex = late_workers
    P, T, K = shape.processes, shape.threads, shape.parallel_regions
    R = ex.runtime_ns
    serial = ex.serial_useful_ns
    add = exp.metrics("hybrid-additive", "whole", use_replay=False)
    assert add.value("parallel_efficiency") == pytest.approx(ex.useful_ns.mean() / R, rel=1e-12)
    assert add.value("process_efficiency") == pytest.approx((ex.openmp_ns + serial).mean() / R, rel=1e-12)
    assert add.value("amdahl_efficiency") == pytest.approx(1 - (serial * (T - 1)).sum() / (P * T) / R, rel=1e-12)
    assert add.value("openmp_region_efficiency") == pytest.approx(
        1 - (ex.openmp_ns.mean() - ex.omp_useful_ns.mean()) / R, rel=1e-12)
    assert add.inconsistencies(1e-12) == []
    for k in range(K):
        focus = f"callpath:main/timestep/parallel (open)/solve_region_{k + 1}._omp_fn.{k}"
        useful = ex.region_omp_useful_ns[k].reshape(P, T)              # all iterations
        team = useful[:, 0] + useful[:, 1:].max(axis=1)                 # per process
        x = focus_inputs(exp, focus)
        assert x.runtime == pytest.approx(team.max() * NS, rel=1e-12)
        np.testing.assert_allclose(x.openmp, team * NS, rtol=1e-12)
        np.testing.assert_allclose(x.useful, useful.reshape(-1) * NS, rtol=1e-12)
        np.testing.assert_allclose(x.cat[x.masters, CAT["omp_management"]], useful[:, 1:].max(axis=1) * NS,
                                   rtol=1e-12)
        for model, ids in MPI_FACTORS.items():
            tree = exp.metrics(model, focus, use_replay=False)
            for metric in ids[:1]:
                assert tree.value(metric) == pytest.approx(1, abs=1e-12), (k, model, metric)
        add = exp.metrics("hybrid-additive", focus, use_replay=False)
        assert add.value("parallel_efficiency") == pytest.approx(useful.mean() / team.max(), rel=1e-12)
        assert add.value("process_load_balance") == pytest.approx(team.mean() / team.max(), rel=1e-12)
        assert add.value("thread_efficiency") == pytest.approx(1 - (team.mean() - useful.mean()) / team.max(),
                                                               rel=1e-12)
