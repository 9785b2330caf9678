"""Computation figures: IPC, clock rate, instructions, granularity,
vectorisation when the FP counters exist (seed 000 2.3, 3.2.3, 3.3.4; METRICS.md 5)."""
from __future__ import annotations

import re

from popview.analysis.models.base import UPPER, Context, Model, NotAvailable, Spec, ratio
from popview.analysis.models.scalability import CYC, INS

# (width in bits, counter name patterns) for the FP operation classes of the vectorisation formula.
FP_CLASSES = {
    "scalar_single": (32, r"SCALAR_SINGLE"), "scalar_double": (64, r"SCALAR_DOUBLE"),
    "packed128_single": (128, r"128B_PACKED_SINGLE"), "packed128_double": (128, r"128B_PACKED_DOUBLE"),
    "packed256_single": (256, r"256B_PACKED_SINGLE"), "packed256_double": (256, r"256B_PACKED_DOUBLE"),
    "packed512_single": (512, r"512B_PACKED_SINGLE"), "packed512_double": (512, r"512B_PACKED_DOUBLE"),
}


def _shares(ctx: Context, *names: str, inputs=None) -> dict:
    """The read shares as inputs, for counters read only part of the time (rotating sets)."""
    return {f"{n}_read_share": ctx.counter_share(n, inputs) for n in names
            if ctx.counter_share(n, inputs) < 1}


def ipc(ctx: Context):
    i, c = ctx.counter_scaled(INS), ctx.counter_scaled(CYC)
    return i / c, {"instructions": i, "cycles": c, **_shares(ctx, INS, CYC)}


def clock(ctx: Context):
    share = ctx.counter_share(CYC)
    c, u = ctx.counter(CYC), ctx.useful().sum() * share
    return c / u / 1e9, {"cycles": c, "useful_total_s": u, **_shares(ctx, CYC)}


def instructions(ctx: Context):
    i = ctx.counter_scaled(INS)
    return i, {"instructions": i, **_shares(ctx, INS)}


def useful_total(ctx: Context):
    u = ctx.useful().sum()
    return u, {"useful_total_s": u}


def granularity(counter: str):
    def compute(ctx: Context):
        calls = ctx.x.counter(counter)
        if calls is None or calls.sum() <= 0:
            raise NotAvailable("no MPI calls in the focus" if counter == "mpi_calls" else "no MPI collective calls")
        u = ctx.useful().sum()
        return ratio(u, float(calls.sum())), {"useful_total_s": u, "calls": float(calls.sum())}
    return compute


def _fp(ctx: Context) -> dict[str, float]:
    found = {}
    for key, (_, pattern) in FP_CLASSES.items():
        for name, values in ctx.x.counters.items():
            if re.search(pattern, name.upper()):
                found[key] = float(values.sum())
    if not found:
        raise NotAvailable("needs the FP_ARITH_INST_RETIRED scalar / packed counters")
    return found


def vectorization(ctx: Context):
    fp = _fp(ctx)
    total = sum(fp.values())
    if total <= 0:
        raise NotAvailable("no floating-point instructions in the focus")
    weighted = sum(FP_CLASSES[k][0] * v for k, v in fp.items())
    return weighted / (512 * total), fp


def vector_ratio(precision: str):
    def compute(ctx: Context):
        fp = _fp(ctx)
        scalar = fp.get(f"scalar_{precision}", 0.0)
        packed = sum(v for k, v in fp.items() if k.startswith("packed") and k.endswith(precision))
        return ratio(packed, scalar + packed), {"scalar": scalar, "packed": packed}
    return compute


MODEL = Model("computation", "Computation", "Instruction-level figures of useful computation", roots=(
    Spec("ipc", "IPC", "sum ins / sum cyc during useful computation", "Instructions per cycle", ipc, kind="value"),
    Spec("clock_rate", "Clock rate", "sum cyc / sum useful", "Average frequency during useful computation",
         clock, kind="value", unit="GHz"),
    Spec("useful_instructions", "Useful instructions", "sum ins", "Instructions during useful computation",
         instructions, kind="value"),
    Spec("useful_time", "Useful computation time", "sum useful", "Useful computation summed over threads",
         useful_total, kind="value", unit="s", bound=UPPER),
    Spec("computation_granularity", "Computation granularity", "sum useful / number of MPI calls",
         "Useful computation between two MPI calls, on average", granularity("mpi_calls"), kind="value", unit="s",
         bound=UPPER, children=(Spec("computation_granularity_collective", "Granularity (collectives)",
                        "sum useful / number of MPI collective calls",
                        "Useful computation between two collective calls", granularity("mpi_collective_calls"),
                        kind="value", unit="s", bound=UPPER),)),
    Spec("vectorization_efficiency", "Vectorization efficiency",
         "(32 SS + 64 SD + 128 (PS128 + PD128) + 256 (PS256 + PD256) + 512 (PS512 + PD512)) / (512 x FP ins)",
         "Share of the widest vector width the FP instructions use", vectorization),
    Spec("vectorization_ratio_single", "Vectorization ratio (single)", "packed / (scalar + packed)",
         "Share of single-precision FP instructions that are packed", vector_ratio("single")),
    Spec("vectorization_ratio_double", "Vectorization ratio (double)", "packed / (scalar + packed)",
         "Share of double-precision FP instructions that are packed", vector_ratio("double")),
))
