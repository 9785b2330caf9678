"""Which POP metric variants fit an experiment, and which one to show first."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """One tab of the Advisor: a label and the metric models it shows."""

    key: str
    label: str
    models: tuple[str, ...]


VARIANTS = (
    Variant("pop-mpi", "POP MPI", ("pop-mpi",)),
    Variant("hybrid-additive", "Hybrid additive", ("hybrid-additive",)),
    Variant("hybrid-multiplicative", "Hybrid multiplicative (BSC)", ("hybrid-multiplicative",)),
    Variant("critical-path", "Critical path", ("critical-path",)),
    Variant("computation-io", "Computation / I/O", ("computation", "io")),
)
BY_KEY = {v.key: v for v in VARIANTS}

_THREAD_PARADIGMS = {"openmp", "pthread"}
_GPU_PARADIGMS = {"cuda", "hip", "opencl"}


def _shape(exp) -> tuple[int, int]:
    return exp.shape()


def applicable(exp) -> list[Variant]:
    """The variants whose inputs this experiment can have.

    Hybrid models need a second level of parallelism (threads or a GPU);
    POP MPI needs processes, unless there is no second level (a serial run);
    the critical-path model needs the records of a trace (a profile has none).
    """
    paradigms = set(exp.definitions.paradigms)
    procs, threads = _shape(exp)
    hybrid = threads > 1 or bool(paradigms & (_THREAD_PARADIGMS | _GPU_PARADIGMS))
    mpi = procs > 1 or "mpi" in paradigms or not hybrid
    out = [BY_KEY["pop-mpi"]] if mpi else []
    if hybrid:
        out += [BY_KEY["hybrid-additive"], BY_KEY["hybrid-multiplicative"]]
    if exp.is_trace:
        out.append(BY_KEY["critical-path"])
    out.append(BY_KEY["computation-io"])
    return out


def preferred(exp) -> tuple[Variant, str]:
    """The variant that fits the data, and a sentence saying why."""
    paradigms = set(exp.definitions.paradigms)
    procs, threads = _shape(exp)
    if paradigms & _GPU_PARADIGMS:
        gpu = "/".join(sorted(p.upper() for p in paradigms & _GPU_PARADIGMS))
        host = f"MPI + {gpu}" if procs > 1 or "mpi" in paradigms else f"{gpu} in one process"
        return BY_KEY["hybrid-multiplicative"], (
            f"{host}: the multiplicative (BSC) model, over the host threads (the device streams are not "
            "analysed; the host's time waiting for them is lost at the process level).")
    if threads > 1 or paradigms & _THREAD_PARADIGMS:
        what = "OpenMP" if "openmp" in paradigms else "threads"
        if procs > 1 or "mpi" in paradigms:
            return BY_KEY["hybrid-additive"], (
                f"MPI + {what} ({procs} x {threads}): the additive model splits the loss between "
                "the process and the thread level.")
        return BY_KEY["hybrid-additive"], (
            f"{what} in one process ({threads} thread{'' if threads == 1 else 's'}): the additive model's thread level "
            "(serial region, parallel regions) is where the loss lies.")
    return BY_KEY["pop-mpi"], f"Pure MPI ({procs} process{'es' if procs != 1 else ''}, 1 thread each): the POP MPI model applies."
