"""I/O efficiency and shares (seed 000 2.2; METRICS.md 5)."""
from __future__ import annotations

from popview.analysis.models.base import EXACT, UPPER, Context, Model, NotAvailable, Spec, ratio

# Basic Analysis flags I/O above this share of the time.
IO_WARNING_SHARE = 0.05


def _total(ctx: Context) -> float:
    t = float(ctx.x.cat.sum())
    if t <= 0:
        raise NotAvailable("the focus holds no time")
    return t


def file_io(ctx: Context):
    """Per thread, the time in file I/O: POSIX I/O and MPI-IO (BSC basicanalysis' I/O
    efficiency counts both: 29.76 % MPI-IO + 0.27 % POSIX at 63.45 % PE gave 67.42 %, seed 000)."""
    return ctx.x.time("io") + ctx.x.time("mpi_io")


def io_eff(ctx: Context):
    u = ctx.useful()
    io = file_io(ctx)
    return ratio(u.mean(), (u + io).mean()), {"avg_useful_s": u.mean(), "avg_file_io_s": io.mean()}


def share(cat: str):
    def compute(ctx: Context):
        part = float(ctx.x.time(cat).sum())
        return part / _total(ctx), {f"{cat}_s": part, "total_time_s": _total(ctx)}
    return compute


MODEL = Model("io", "I/O", "File I/O against useful computation", roots=(
    Spec("io_efficiency", "I/O efficiency", "avg(useful) / avg(useful + file_io)",
         "Useful computation against useful computation plus file I/O (POSIX I/O and MPI-IO: neither is "
         "useful)", io_eff,
         bound=lambda ctx: UPPER if file_io(ctx).sum() > 0 else EXACT),
    Spec("mpi_io_share", "MPI-IO share", "time in MPI-IO / total time",
         f"Share of all threads' time in MPI-IO calls (warned above {IO_WARNING_SHARE:.0%})", share("mpi_io"),
         kind="value"),
    Spec("posix_io_share", "POSIX I/O share", "time in file I/O outside MPI / total time",
         f"Share of all threads' time in file I/O outside MPI (warned above {IO_WARNING_SHARE:.0%})", share("io"),
         kind="value"),
))


def warn_shares(node) -> None:
    if node.id in ("mpi_io_share", "posix_io_share") and node.value is not None and node.value > IO_WARNING_SHARE:
        node.warnings.append(f"{node.value:.1%} of the time is file I/O (threshold {IO_WARNING_SHARE:.0%})")


POST = {"mpi_io_share": lambda ctx, node: warn_shares(node), "posix_io_share": lambda ctx, node: warn_shares(node)}
