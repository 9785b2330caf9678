"""Scalability factors against a reference run (the run itself when alone):
computation = IPC x instruction x frequency scalability (METRICS.md 1)."""
from __future__ import annotations

from popview.analysis.models.base import EXACT, Context, NotAvailable, Spec, ratio, self_referenced

INS, CYC = "PAPI_TOT_INS", "PAPI_TOT_CYC"


def _ref(ctx: Context) -> dict:
    return {"reference": 1.0 if ctx.ref_is_self else 0.0}


def _compared(ctx: Context) -> None:
    if ctx.no_reference:
        raise NotAvailable("no reference focus: the time window does not carry over to the other runs")


def computation(ctx: Context):
    _compared(ctx)
    u, u_ref = ctx.useful().sum(), ctx.useful(ctx.ref).sum()
    return ratio(u_ref * ctx.weak_factor(), u), {"useful_total": u, "useful_total_ref": u_ref,
                                                 "weak_factor": ctx.weak_factor()}


def ipc(ctx: Context):
    _compared(ctx)
    i, c = ctx.counter_scaled(INS), ctx.counter_scaled(CYC)
    ir, cr = ctx.counter_scaled(INS, ctx.ref), ctx.counter_scaled(CYC, ctx.ref)
    return ratio(i / c, ir / cr), {"ipc": i / c, "ipc_ref": ir / cr}


def instruction(ctx: Context):
    _compared(ctx)
    i, ir = ctx.counter_scaled(INS), ctx.counter_scaled(INS, ctx.ref)
    return ratio(ir * ctx.weak_factor(), i), {"instructions": i, "instructions_ref": ir,
                                              "weak_factor": ctx.weak_factor()}


def frequency(ctx: Context):
    _compared(ctx)
    share, share_ref = ctx.counter_share(CYC), ctx.counter_share(CYC, ctx.ref)
    c, u = ctx.counter(CYC), ctx.useful().sum() * share
    cr, ur = ctx.counter(CYC, ctx.ref), ctx.useful(ctx.ref).sum() * share_ref
    return ratio(c / u, cr / ur), {"frequency_hz": c / u, "frequency_ref_hz": cr / ur}


COMPUTATION = Spec(
    "computation_scalability", "Computation scalability",
    "strong: sum(useful_ref) / sum(useful); weak: x n / n_ref",
    "How the total useful computation time grows with the processing elements, against the reference run",
    computation, kind="scalability", combine="product", bound=self_referenced(EXACT), children=(
        Spec("ipc_scalability", "IPC scalability", "IPC / IPC_ref, IPC = sum ins / sum cyc",
             "Instructions per cycle during useful computation, against the reference", ipc, kind="scalability"),
        Spec("instruction_scalability", "Instruction scalability", "strong: sum ins_ref / sum ins; weak: x n / n_ref",
             "Useful instructions executed, against the reference", instruction, kind="scalability"),
        Spec("frequency_scalability", "Frequency scalability", "f / f_ref, f = sum cyc / sum useful",
             "Clock rate during useful computation, against the reference", frequency, kind="scalability",
             bound=self_referenced(EXACT)),
    ))


def global_efficiency(parallel_id: str):
    def compute(ctx: Context):
        pe = ctx.useful().mean() / ctx.runtime()
        cs, _ = computation(ctx)
        return pe * cs, {"parallel_efficiency": pe, "computation_scalability": cs}
    return compute
