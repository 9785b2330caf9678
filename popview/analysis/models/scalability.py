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


# a clock does not run this much faster in one run than in another of the same program and machine
FREQUENCY_MARGIN = 1.10
CLOCK_SPREAD = 1.5
CLOCK_CAUSE = ("the cycle counter stops while time runs inside what is counted as computation (a blocking "
               "read, a sleep or a wait inside a user region or a profile's computation call path), so the "
               "slower-clocked runs' useful time holds time without work")


def clock_rate(x) -> float | None:
    """Hz during useful computation: cycles over the useful time they were read in; None without them."""
    c = x.counter(CYC)
    share = x.counter_shares.get(CYC, 1.0)
    if c is None or isinstance(share, str) or not share > 0:
        return None
    u = float(x.useful.sum()) * share
    return float(c.sum()) / u if u > 0 and c.sum() > 0 else None


def frequency_warning(node, label: str, ref_label: str) -> str | None:
    """Why a frequency scalability clearly above 100 % is not a faster clock (the tum-pos-gccg
    Cube profiles: 0.73-1.93 GHz on a 2.7 GHz machine, 238 %); the figure stays as computed."""
    v, f, fr = node.value, node.inputs.get("frequency_hz"), node.inputs.get("frequency_ref_hz")
    if v is None or not v > FREQUENCY_MARGIN or not f or not fr:
        return None
    return (f"{v:.0%}, above 100 %: the clock rate during useful computation reads {f / 1e9:.3g} GHz in {label} "
            f"against {fr / 1e9:.3g} GHz in the reference {ref_label}; a core does not clock that much faster "
            f"from one run to another; more likely {CLOCK_CAUSE}; the computation scalability carries the same "
            "factor")


def clock_spread_note(rates: list[tuple[str, float | None]]) -> str | None:
    """A note when the runs' clock rates during useful computation differ by more than CLOCK_SPREAD,
    naming each run's rate and the likely cause."""
    known = [(lab, r) for lab, r in rates if r]
    if len(known) < 2:
        return None
    lo, hi = min(r for _, r in known), max(r for _, r in known)
    if hi / lo <= CLOCK_SPREAD:
        return None
    listed = ", ".join(f"{lab} {r / 1e9:.3g} GHz" for lab, r in known)
    return (f"clock rates during useful computation differ by {hi / lo:.2g}x across the runs ({listed}): a "
            f"machine's clock does not vary that much; more likely {CLOCK_CAUSE}; frequency and computation "
            "scalability above 100 % come from that")
