"""Hybrid additive model (seeds 000 2.1.2, 001; METRICS.md 2): a parent's
inefficiency (1 - efficiency) is the sum of its children's.

The process level uses non_mpi[p] = openmp[p] + serial_useful[p] (the
master's time in parallel regions plus its useful time outside them), as
PyPOP does, so that mpi[p] = R - non_mpi[p] and the MPI children sum
exactly to their parent. A worker thread's useful time all counts as
useful time in parallel regions. One OpenMP-region child per parallel
region (all instances of one outlined function); what no single region
explains (MPI inside regions, worker computation outside them) is its own
child, so the children always sum to the parent.

MPI serialisation and transfer use mpi_ideal[p] from the replay: G-COM
(the runtime when MPI outside OpenMP costs nothing) minus the master's time
outside MPI, or non_mpi[p] where that is larger (a worker computing past
its master's visits of a call path), so 0 <= mpi_ideal[p] <= mpi[p]
and both efficiencies lie in [0, 1]; when the master does nothing but
non_mpi work and MPI, serialisation = 1 - (G-COM - max non_mpi) / R and
transfer = G-COM / R, as PyPOP forms them from Dimemas's ideal runtime."""
from __future__ import annotations

import numpy as np

from popview.analysis.models.base import (NO_MPI_OUTSIDE, NO_MPI_PROCESS_LB, UPPER, Context, Model, NotAvailable, Spec, ratio, self_referenced)
from popview.analysis.models.scalability import COMPUTATION, global_efficiency
from popview.analysis.node import MetricNode


def _non_mpi(ctx: Context) -> np.ndarray:
    return ctx.outside_mpi()


def _avg_non_mpi(ctx: Context) -> float:
    ctx.outside_mpi()
    return ctx.x.weighted_avg(ctx.x.openmp) + ctx.x.weighted_avg(ctx.x.serial_useful)


def parallel(ctx: Context):
    u = ctx.useful()
    return ratio(u.mean(), ctx.runtime()), {"avg_useful_s": u.mean(), "runtime_s": ctx.runtime()}


def process(ctx: Context):
    ctx.some_useful()
    a = _avg_non_mpi(ctx)
    return ratio(a, ctx.runtime()), {"avg_openmp_plus_serial_s": a, "runtime_s": ctx.runtime()}


def process_lb(ctx: Context):
    ctx.some_useful()
    m, a, r = float(_non_mpi(ctx).max()), _avg_non_mpi(ctx), ctx.runtime()
    return 1 - (m - a) / r, {"max_openmp_plus_serial_s": m, "avg_openmp_plus_serial_s": a, "runtime_s": r}


def mpi_comm(ctx: Context):
    ctx.some_useful()
    m = float(_non_mpi(ctx).max())
    return ratio(m, ctx.runtime()), {"max_openmp_plus_serial_s": m, "runtime_s": ctx.runtime()}


def _mpi_ideal(ctx: Context) -> np.ndarray:
    rp = ctx.need_replay()
    ideal = np.asarray(rp.mpi_ideal, np.float64)
    if len(ideal) < ctx.x.n_processes:
        raise NotAvailable("the replay gave no ideal MPI time for every process")
    # a worker computing beyond its master's visits raises non_mpi above the master's own
    # time outside MPI: G-COM less the larger of the two stays within [0, mpi]
    replay_outside = np.asarray(rp.outside_mpi, np.float64)[:ctx.x.n_processes]
    return ideal[:ctx.x.n_processes] - np.maximum(_non_mpi(ctx) - replay_outside, 0.0)


def mpi_transfer(ctx: Context):
    ideal = _mpi_ideal(ctx)
    r = ctx.runtime()
    mpi = r - _non_mpi(ctx)
    return (r - mpi.min() + ideal.min()) / r, {"min_mpi_s": mpi.min(), "min_mpi_ideal_s": ideal.min(), "runtime_s": r}


def mpi_serialisation(ctx: Context):
    ideal = _mpi_ideal(ctx)
    r = ctx.runtime()
    return (r - ideal.min()) / r, {"min_mpi_ideal_s": ideal.min(), "runtime_s": r}


def thread(ctx: Context):
    u = ctx.useful()
    a, r = _avg_non_mpi(ctx), ctx.runtime()
    return 1 - (a - u.mean()) / r, {"avg_openmp_plus_serial_s": a, "avg_useful_s": u.mean(), "runtime_s": r}


def amdahl(ctx: Context):
    ctx.useful()
    x = ctx.x
    lost = float((x.serial_useful * (x.threads_per_process - 1)).sum() / x.n_threads)
    return 1 - lost / ctx.runtime(), {"serial_useful_x_idle_threads_avg_s": lost, "runtime_s": ctx.runtime()}


def omp_region(ctx: Context):
    ctx.useful()
    x = ctx.x
    lost = x.weighted_avg(x.openmp) - float(x.omp_useful.mean())
    return 1 - lost / ctx.runtime(), {"avg_openmp_s": x.weighted_avg(x.openmp),
                                      "avg_omp_useful_s": float(x.omp_useful.mean()), "runtime_s": ctx.runtime()}


def _busiest(x, reg) -> np.ndarray:
    """Per process: the useful time of its most useful thread in the region."""
    busiest = np.zeros(x.n_processes)
    np.maximum.at(busiest, x.process, reg.useful)
    return busiest


def _region_imbalance(x, reg) -> float:
    """avg over threads of (the most useful thread of its process - its own) useful time in the region."""
    return float((_busiest(x, reg)[x.process] - reg.useful).mean())


def _region_openmp(x, reg) -> np.ndarray:
    """Per process: the master's time in the region, never less than a thread computes in it
    (as FocusInputs.openmp): a Cube profile starts the master's region time at its enter,
    after the fork, while a worker's may start before it."""
    return np.maximum(reg.openmp, _busiest(x, reg))


def _region_node(x, reg) -> MetricNode:
    r = x.runtime
    avg_openmp = float((x.threads_per_process * _region_openmp(x, reg)).sum() / x.n_threads)
    lost = avg_openmp - float(reg.useful.mean())
    imbalance = _region_imbalance(x, reg)
    parts = [MetricNode(
        id=f"openmp_region_load_balance:{reg.name}", name="Thread load balance", kind="efficiency",
        value=1 - imbalance / r, description=f"Time threads wait for the busiest thread of their team in {reg.name}",
        formula="1 - avg_t(max_t' omp_useful_region[p,t'] - omp_useful_region[p,t]) / R",
        inputs={"avg_imbalance_s": imbalance, "runtime_s": r}),
        MetricNode(
        id=f"openmp_region_overhead:{reg.name}", name="Fork, join and runtime", kind="efficiency",
        value=1 - (lost - imbalance) / r,
        description=f"Time of {reg.name} in which even the busiest thread of a team does not compute: "
                    "fork, join, scheduling, synchronisation, a descheduled master",
        formula="1 - avg_t(openmp_region[p] - max_t' omp_useful_region[p,t']) / R",
        inputs={"avg_openmp_s": avg_openmp, "avg_imbalance_s": imbalance, "runtime_s": r})]
    return MetricNode(
        id=f"openmp_region_efficiency:{reg.name}", name=f"Region {reg.name}", kind="efficiency", value=1 - lost / r,
        description=f"OpenMP region efficiency of the parallel region {reg.name}",
        formula="1 - avg_t(openmp_region[p] - omp_useful_region[p,t]) / R", combine="additive", children=parts,
        inputs={"avg_openmp_s": avg_openmp, "avg_omp_useful_s": float(reg.useful.mean()), "runtime_s": r})


def region_nodes(ctx: Context, parent: MetricNode) -> None:
    """One child per parallel region (split into its load balance and the rest), plus the
    part no region explains; dropped, with the reason, when the regions would hold more
    lost time than their parent."""
    x = ctx.x
    if parent.value is None or not x.regions or x.runtime <= 0:
        return
    children = [_region_node(x, reg) for reg in x.regions]
    rest = (1 - parent.value) - sum(1 - c.value for c in children)
    if rest < -0.005:
        parent.warnings.append(f"no split by parallel region: the regions hold {-rest:.1%} of R more lost time "
                               "than the OpenMP level as a whole (records of one thread straddle region limits)")
        return
    parent.children.extend(children)
    if abs(rest) > 1e-12:
        beyond = (f"; the {x.regions_left_out} parallel regions beyond the listed ones, which have no sums of "
                  "their own" if x.regions_left_out else "")
        parent.children.append(MetricNode(
            id="openmp_region_efficiency:unattributed", name="Outside the listed regions", kind="efficiency",
            value=1 - max(rest, 0.0),
            description="Thread-level time no single parallel region accounts for: MPI calls inside "
                        "regions, worker computation outside them, OpenMP runtime calls of the serial "
                        "part (lock waits), regions cut by the focus" + beyond,
            formula="parent inefficiency - sum of the regions' inefficiencies"))
    parent.combine = "additive"


REGION = Spec("openmp_region_efficiency", "OpenMP region efficiency",
              "1 - avg_t(openmp[p] - omp_useful[p,t]) / R",
              "Time lost inside OpenMP parallel regions (imbalance, scheduling, synchronisation)", omp_region)

PARALLEL = Spec(
    "parallel_efficiency", "Parallel efficiency", "avg(useful) / R = process_efficiency + thread_efficiency - 1",
    "Share of the runtime the threads spend in useful computation, on average", parallel, combine="additive",
    spread=lambda c: c.useful() / c.runtime(), bound=UPPER, children=(
        Spec("process_efficiency", "Process efficiency", "(avg(openmp) + avg(serial_useful)) / R",
             "Efficiency of the MPI level", process, combine="additive", children=(
                 Spec("process_load_balance", "MPI load balance (additive)",
                      "1 - (max_p(openmp + serial_useful) - avg(openmp) - avg(serial_useful)) / R",
                      "Imbalance of the time processes spend outside MPI", process_lb),
                 Spec("mpi_communication_efficiency", "MPI communication efficiency (additive)",
                      "max_p(openmp + serial_useful) / R", "Time the busiest process loses in MPI",
                      mpi_comm, combine="additive", children=(
                          Spec("mpi_serialisation_efficiency", "MPI serialisation efficiency (additive)",
                               "(R - min_p mpi_ideal[p]) / R", "MPI time left on an ideal network",
                               mpi_serialisation),
                          Spec("mpi_transfer_efficiency", "MPI transfer efficiency (additive)",
                               "(R - min_p mpi[p] + min_p mpi_ideal[p]) / R",
                               "MPI time due to the network", mpi_transfer),
                      )),
             )),
        Spec("thread_efficiency", "Thread efficiency", "1 - (avg(openmp) + avg(serial_useful) - avg(useful)) / R",
             "Efficiency of the OpenMP level", thread, combine="additive", bound=UPPER, children=(
                 Spec("amdahl_efficiency", "Amdahl efficiency (serial region)",
                      "1 - (sum_p serial_useful[p] (t_p - 1) / T) / R",
                      "Time worker threads idle while the master computes alone", amdahl),
                 REGION,
             )),
    ))

MODEL = Model("hybrid-additive", "Hybrid additive", "POP hybrid MPI+OpenMP model, additive (inefficiencies sum)",
              roots=(Spec("global_efficiency", "Global efficiency", "parallel_efficiency x computation_scalability",
                          "Overall efficiency against the reference run", global_efficiency("parallel_efficiency"),
                          combine="product", bound=self_referenced(UPPER), children=(PARALLEL, COMPUTATION)),))
POST = {"openmp_region_efficiency": region_nodes}

# a run without MPI (pure OpenMP): the process level named as such, never with MPI names
NO_MPI_NAMES = {"process_load_balance": NO_MPI_PROCESS_LB,
                "mpi_communication_efficiency": NO_MPI_OUTSIDE}
