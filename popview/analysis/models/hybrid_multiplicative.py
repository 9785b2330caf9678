"""Hybrid multiplicative model (BSC; seed 000 2.1.3; METRICS.md 3): every
parent is the product of its children. Any X in MPI+X takes OpenMP's place."""
from __future__ import annotations

from popview.analysis.models.base import (NO_MPI_OUTSIDE, NO_MPI_PROCESS_LB, UPPER, Context, Model, Spec, ratio, self_referenced)
from popview.analysis.models.scalability import COMPUTATION, global_efficiency
from popview.analysis.node import ALTERNATIVES


def _outside(ctx: Context):
    return ctx.outside_mpi()


def hybrid_pe(ctx):
    u = ctx.useful()
    return ratio(u.mean(), ctx.runtime()), {"avg_useful_s": u.mean(), "runtime_s": ctx.runtime()}


def hybrid_ce(ctx):
    u = ctx.useful()
    return ratio(u.max(), ctx.runtime()), {"max_useful_s": u.max(), "runtime_s": ctx.runtime()}


def hybrid_lb(ctx):
    u = ctx.useful()
    return u.mean() / u.max(), {"avg_useful_s": u.mean(), "max_useful_s": u.max()}


def mpi_pe(ctx):
    o = _outside(ctx)
    return ratio(o.sum(), len(o) * ctx.runtime()), {"sum_outside_mpi_s": o.sum(), "processes": len(o),
                                                     "runtime_s": ctx.runtime()}


def mpi_ce(ctx):
    o = _outside(ctx)
    return ratio(o.max(), ctx.runtime()), {"max_outside_mpi_s": o.max(), "runtime_s": ctx.runtime()}


def mpi_lb(ctx):
    o = _outside(ctx)
    return ratio(o.mean(), o.max()), {"avg_outside_mpi_s": o.mean(), "max_outside_mpi_s": o.max()}


def mpi_ser(ctx):
    rp = ctx.need_replay()
    o = _outside(ctx)
    return ratio(o.max(), rp.r_ideal), {"max_outside_mpi_s": o.max(), "ideal_runtime_s": rp.r_ideal}


def mpi_te(ctx):
    ce, _ = mpi_ce(ctx)
    se, _ = mpi_ser(ctx)
    return ratio(ce, se), {"mpi_communication_efficiency": ce, "mpi_serialisation_efficiency": se}


def _quotient(a, b, names):
    def compute(ctx):
        va, _ = a(ctx)
        vb, _ = b(ctx)
        return ratio(va, vb), {names[0]: va, names[1]: vb}
    return compute


MPI = Spec("mpi_parallel_efficiency", "MPI parallel efficiency (multiplicative)", "sum_p outside_mpi[p] / (P x R)",
           "Share of the runtime processes spend outside MPI", mpi_pe, combine="product", children=(
               Spec("mpi_load_balance", "MPI load balance (multiplicative)", "mpi_parallel_efficiency / mpi_communication_efficiency",
                    "Imbalance of the time processes spend outside MPI", mpi_lb),
               Spec("mpi_communication_efficiency", "MPI communication efficiency (multiplicative)", "max_p outside_mpi[p] / R",
                    "Time the busiest process loses in MPI", mpi_ce, combine="product", children=(
                        Spec("mpi_serialisation_efficiency", "MPI serialisation efficiency (multiplicative)",
                             "max_p outside_mpi[p] / R_ideal", "MPI time left on an ideal network", mpi_ser),
                        Spec("mpi_transfer_efficiency", "MPI transfer efficiency (multiplicative)",
                             "mpi_communication_efficiency / mpi_serialisation_efficiency",
                             "MPI time due to the network", mpi_te),
                    )),
           ))
OPENMP = Spec("openmp_parallel_efficiency", "OpenMP parallel efficiency (multiplicative)",
              "hybrid_parallel_efficiency / mpi_parallel_efficiency",
              "Efficiency of the threads within the time processes spend outside MPI",
              _quotient(hybrid_pe, mpi_pe, ("hybrid_parallel_efficiency", "mpi_parallel_efficiency")),
              combine="product", bound=UPPER, children=(
                  Spec("openmp_load_balance", "OpenMP load balance (multiplicative)", "hybrid_load_balance / mpi_load_balance",
                       "Imbalance among threads", _quotient(hybrid_lb, mpi_lb, ("hybrid_load_balance",
                                                                                 "mpi_load_balance"))),
                  Spec("openmp_communication_efficiency", "OpenMP communication efficiency (multiplicative)",
                       "hybrid_communication_efficiency / mpi_communication_efficiency",
                       "Time lost to the threading runtime (fork/join, synchronisation, serial parts)",
                       _quotient(hybrid_ce, mpi_ce, ("hybrid_communication_efficiency",
                                                     "mpi_communication_efficiency")), bound=UPPER),
              ))

BY_PARADIGM = Spec("hybrid_parallel_efficiency_by_paradigm", "By paradigm: MPI x OpenMP", "mpi_parallel_efficiency x "
                   "openmp_parallel_efficiency = avg(useful) / R",
                   "The hybrid parallel efficiency split by paradigm: the processes' time outside MPI, then the "
                   "threads' useful share of it. One of two alternative splits; its product is the parent",
                   hybrid_pe, combine="product", bound=UPPER, children=(MPI, OPENMP))
BY_CAUSE = Spec("hybrid_parallel_efficiency_by_cause", "By cause: load balance x communication",
                "hybrid_load_balance x hybrid_communication_efficiency = avg(useful) / R",
                "The hybrid parallel efficiency split by cause over all threads: uneven useful work, then the time "
                "the busiest thread loses. One of two alternative splits; its product is the parent",
                hybrid_pe, combine="product", bound=UPPER, children=(
                    Spec("hybrid_load_balance", "Hybrid load balance", "avg(useful) / max(useful)",
                         "How evenly useful computation is spread over all threads", hybrid_lb),
                    Spec("hybrid_communication_efficiency", "Hybrid communication efficiency", "max(useful) / R",
                         "Time the busiest thread loses outside useful computation", hybrid_ce, bound=UPPER),
                ))

HYBRID = Spec("hybrid_parallel_efficiency", "Hybrid parallel efficiency", "avg(useful) / R",
              "Share of the runtime the threads spend in useful computation, on average; split two alternative "
              "ways (by paradigm, by cause), each equal to it", hybrid_pe,
              combine=ALTERNATIVES, spread=lambda c: c.useful() / c.runtime(), bound=UPPER,
              children=(BY_PARADIGM, BY_CAUSE))

MODEL = Model("hybrid-multiplicative", "Hybrid multiplicative (BSC)",
              "BSC hybrid model: MPI and OpenMP factors multiply", roots=(
                  Spec("global_efficiency", "Global efficiency", "hybrid_parallel_efficiency x computation_scalability",
                       "Overall efficiency against the reference run", global_efficiency("hybrid_parallel_efficiency"),
                       combine="product", bound=self_referenced(UPPER), children=(HYBRID, COMPUTATION)),))


def _explain_quotient(ctx: Context, node) -> None:
    """A quotient factor above 1 is the model's, not the data's: name its cause."""
    if node.value is None or node.value <= 1 + 1e-9:
        return
    node.warnings = [f"above 100 % ({node.value:.4f}): the processes' time outside MPI is less balanced than "
                     "the threads' useful time (a process spends time outside MPI without computing: OpenMP "
                     "runtime, waiting threads); the BSC model's quotient exceeds 1 there"]


POST = {"openmp_load_balance": _explain_quotient}

# a run without MPI (pure OpenMP): the process level named as such, never with MPI names
NO_MPI_NAMES = {"hybrid_parallel_efficiency_by_paradigm": "By paradigm: process level x OpenMP (no MPI in this run)",
                "mpi_parallel_efficiency": "Process-level parallel efficiency (no MPI in this run)",
                "mpi_load_balance": NO_MPI_PROCESS_LB,
                "mpi_communication_efficiency": NO_MPI_OUTSIDE}
