"""POP MPI model (multiplicative; seeds 002, 003; METRICS.md 1)."""
from __future__ import annotations

from popview.analysis.models.base import UPPER, Context, Model, Spec, ratio, self_referenced
from popview.analysis.models.scalability import COMPUTATION, global_efficiency


def parallel(ctx: Context):
    u = ctx.useful()
    return ratio(u.mean(), ctx.runtime()), {"avg_useful_s": u.mean(), "runtime_s": ctx.runtime()}


def load_balance(ctx: Context):
    u = ctx.useful()
    return u.mean() / u.max(), {"avg_useful_s": u.mean(), "max_useful_s": u.max()}


def communication(ctx: Context):
    u = ctx.useful()
    return ratio(u.max(), ctx.runtime()), {"max_useful_s": u.max(), "runtime_s": ctx.runtime()}


def serialisation(ctx: Context):
    rp = ctx.need_replay()
    u = ctx.useful()
    return ratio(u.max(), rp.r_ideal), {"max_useful_s": u.max(), "ideal_runtime_s": rp.r_ideal}


def transfer(ctx: Context):
    ctx.some_useful()            # with none, R_ideal is 0 (all is MPI): 0 % would read as transfer's
    rp = ctx.need_replay()
    return ratio(rp.r_ideal, ctx.runtime()), {"ideal_runtime_s": rp.r_ideal, "runtime_s": ctx.runtime()}


PARALLEL = Spec(
    "parallel_efficiency", "Parallel efficiency", "avg(useful) / R = load_balance x communication_efficiency",
    "Share of the runtime the processing elements spend in useful computation, on average",
    parallel, combine="product", spread=lambda c: c.useful() / c.runtime(), bound=UPPER, children=(
        Spec("load_balance", "Load balance", "avg(useful) / max(useful)",
             "How evenly useful computation is spread over the processing elements", load_balance,
             spread=lambda c: c.useful() / c.useful().max()),
        Spec("communication_efficiency", "Communication efficiency",
             "max(useful) / R = serialisation_efficiency x transfer_efficiency",
             "Time lost to communication by the most loaded processing element", communication,
             combine="product", bound=UPPER, children=(
                 Spec("serialisation_efficiency", "Serialisation efficiency", "max(useful) / R_ideal",
                      "Time lost waiting for dependencies even on an ideal network", serialisation,
                      bound=UPPER),
                 Spec("transfer_efficiency", "Transfer efficiency", "R_ideal / R",
                      "Time lost to data transfer (latency, bandwidth)", transfer),
             )),
    ))

MODEL = Model("pop-mpi", "POP MPI", "POP parallel efficiency model for MPI (multiplicative)", roots=(
    Spec("global_efficiency", "Global efficiency", "parallel_efficiency x computation_scalability",
         "Overall efficiency against the reference run", global_efficiency("parallel_efficiency"),
         combine="product", bound=self_referenced(UPPER), children=(PARALLEL, COMPUTATION)),
))
