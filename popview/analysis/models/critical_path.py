"""Critical-path model (seed 000 2.1.4; METRICS.md 4), inputs from the replay:
t_i = TL-CUE of thread i (its useful time), PL-CUE per process, G-CUE,
G-COO (not the ideal-network R_ideal of the other models). Their product is the parallel efficiency avg(t) / R."""
from __future__ import annotations

import numpy as np

from popview.analysis.models.base import UPPER, Context, Model, NotAvailable, Spec, ratio


def _team_max(ctx: Context) -> float:
    """sum_j |PT_j| max_{k in PT_j} t_k."""
    x = ctx.x
    u = ctx.useful()
    mx = np.zeros(x.n_processes)
    np.maximum.at(mx, x.process, u)
    return float((x.threads_per_process * mx).sum())


def _pl_cue(ctx: Context) -> np.ndarray:
    rp = ctx.need_replay()
    pl = np.asarray(rp.pl_cue, np.float64)
    if len(pl) < ctx.x.n_processes:
        raise NotAvailable("the replay gave no process-local critical path for every process")
    return pl[:ctx.x.n_processes]


def parallel(ctx):
    u = ctx.useful()
    return ratio(u.mean(), ctx.runtime()), {"avg_useful_s": u.mean(), "runtime_s": ctx.runtime()}


def lb(ctx):
    u = ctx.useful()
    return u.mean() / u.max(), {"avg_useful_s": u.mean(), "max_useful_s": u.max()}


def lb_omp(ctx):
    u = ctx.useful()
    tm = _team_max(ctx)
    return ratio(u.sum(), tm), {"sum_useful_s": u.sum(), "sum_team_max_s": tm}


def lb_mpi(ctx):
    u = ctx.useful()
    tm = _team_max(ctx)
    return ratio(tm, ctx.x.n_threads * u.max()), {"sum_team_max_s": tm, "threads": ctx.x.n_threads,
                                                  "max_useful_s": u.max()}


def comm(ctx):
    u = ctx.useful()
    return ratio(u.max(), ctx.runtime()), {"max_useful_s": u.max(), "runtime_s": ctx.runtime()}


def ser(ctx):
    rp = ctx.need_replay()
    u = ctx.useful()
    return ratio(u.max(), rp.g_cue), {"max_useful_s": u.max(), "g_cue_s": rp.g_cue}


def ser_omp(ctx):
    pl = _pl_cue(ctx)
    u = ctx.useful()
    return ratio(u.max(), pl.max()), {"max_useful_s": u.max(), "max_pl_cue_s": pl.max()}


def ser_mpi(ctx):
    pl = _pl_cue(ctx)
    rp = ctx.need_replay()
    return ratio(pl.max(), rp.g_cue), {"max_pl_cue_s": pl.max(), "g_cue_s": rp.g_cue}


def te(ctx):
    ctx.some_useful()            # as pop_mpi.transfer
    rp = ctx.need_replay()
    return ratio(rp.g_cue, ctx.runtime()), {"g_cue_s": rp.g_cue, "runtime_s": ctx.runtime()}


def te_omp(ctx):
    ctx.some_useful()            # as pop_mpi.transfer
    rp = ctx.need_replay()
    return ratio(rp.g_coo, ctx.runtime()), {"g_coo_s": rp.g_coo, "runtime_s": ctx.runtime()}


def te_mpi(ctx):
    ctx.some_useful()            # as pop_mpi.transfer
    rp = ctx.need_replay()
    return ratio(rp.g_cue, rp.g_coo), {"g_cue_s": rp.g_cue, "g_coo_s": rp.g_coo}


MODEL = Model("critical-path", "Critical path", "Critical-path based model (MPI and OpenMP factors from a replay)",
              roots=(Spec(
                  "parallel_efficiency", "Parallel efficiency", "avg(t) / R = load_balance x communication_efficiency",
                  "Share of the runtime threads spend in useful computation, on average", parallel, combine="product",
                  bound=UPPER, children=(
                      Spec("load_balance", "Load balance", "avg(t) / max(t)", "Imbalance of useful computation",
                           lb, combine="product", children=(
                               Spec("load_balance_mpi", "MPI load balance",
                                    "sum_j |PT_j| max_{k in PT_j} t_k / (T max_i t_i)",
                                    "Imbalance between processes (their busiest threads)", lb_mpi),
                               Spec("load_balance_openmp", "OpenMP load balance",
                                    "T avg(t_i) / sum_j |PT_j| max_{k in PT_j} t_k",
                                    "Imbalance among the threads of each process", lb_omp),
                           )),
                      Spec("communication_efficiency", "Communication efficiency", "max(t) / R",
                           "Time lost to dependencies and transfers", comm, combine="product", bound=UPPER,
                           children=(
                               Spec("serialisation_efficiency", "Serialisation efficiency (critical path)",
                                    "max_i t_i / G-CUE", "Dependencies along the critical path", ser,
                                    combine="product", bound=UPPER,
                                    children=(
                                        Spec("serialisation_efficiency_mpi", "MPI serialisation efficiency",
                                             "max_j PL-CUE_j / G-CUE", "Dependencies between processes", ser_mpi),
                                        Spec("serialisation_efficiency_openmp", "OpenMP serialisation efficiency",
                                             "max_i t_i / max_j PL-CUE_j", "Dependencies among threads", ser_omp),
                                    )),
                               Spec("transfer_efficiency", "Transfer efficiency (critical path)", "G-CUE / R",
                                    "Time spent in runtimes along the critical path", te, combine="product",
                                    children=(
                                        Spec("transfer_efficiency_mpi", "MPI transfer efficiency", "G-CUE / G-COO",
                                             "MPI time on the critical path", te_mpi),
                                        Spec("transfer_efficiency_openmp", "OpenMP transfer efficiency", "G-COO / R",
                                             "OpenMP runtime time on the critical path", te_omp),
                                    )),
                           )),
                  )),))

# a run without MPI (pure OpenMP): the process-level factors named as such, never with MPI names
NO_MPI_NAMES = {"load_balance_mpi": "Process load balance (critical path; one process: no MPI in this run)",
                "serialisation_efficiency_mpi": "Process-level serialisation (critical path; no MPI in this run)",
                "transfer_efficiency_mpi": "Process-level transfer (critical path; no MPI in this run)"}
NO_MPI_UNAVAILABLE: tuple[str, ...] = ()
