"""Declarative metric models: a tree of Specs evaluated against a Context."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from popview.analysis.inputs import FocusInputs
from popview.analysis.node import RATED, MetricNode

REPLAY_MISSING = "needs the replay engine (ideal-network replay)"


class NotAvailable(Exception):
    """A metric whose inputs this experiment / focus does not have; the message says why."""


class Unmeasured(NotAvailable):
    """A metric whose inputs the source did not measure apart (FocusInputs.unmeasured): a Cube
    profile charges the masters' OpenMP fork and join time to computation in the calling path."""

    def __init__(self, message: str, quantity: str):
        super().__init__(message)
        self.quantity = quantity


UPPER, EXACT = "upper", "exact"
"""Spec.bound: how a value read from a useful time that includes the masters' fork and join
(U_source = U + F, F >= 0; FocusInputs.useful_includes) relates to the true one: UPPER, it can
only grow with the useful time while its other inputs are exact; EXACT, the useful time cancels."""


@dataclass
class Context:
    """What a model may read: the focus inputs, the reference run's, the replay."""

    x: FocusInputs
    ref: FocusInputs
    ref_label: str = "this run"
    ref_is_self: bool = True
    scaling: str = "strong"
    replay_loader: Callable[[], object] | None = None
    replay_reason: str = REPLAY_MISSING
    no_reference: str | None = None        # why the scalabilities have no reference to compare with
    # read unmeasured inputs as the source gives them: True (all, for the reason) or the quantities to read
    lenient: bool | frozenset = False
    _replay: object | None = None

    @property
    def replay(self):
        """The replay result, run on first use; None (and replay_reason set) when there is none."""
        if self._replay is None and self.replay_loader is not None:
            loader, self.replay_loader = self.replay_loader, None
            try:
                self._replay = loader()
            except Exception as exc:  # noqa: BLE001 - any failure of the replay makes its metrics unavailable
                self.replay_reason = f"the replay failed: {exc}"
        return self._replay

    def need_replay(self):
        rp = self.replay
        if rp is None:
            raise NotAvailable(self.replay_reason)
        return rp

    def _measured(self, inputs: FocusInputs, quantity: str) -> None:
        if quantity in inputs.unmeasured and not (self.lenient is True or quantity in (self.lenient or ())):
            raise Unmeasured(inputs.unmeasured[quantity], quantity)

    def runtime(self) -> float:
        self._measured(self.x, "runtime")
        if self.x.runtime <= 0:
            raise NotAvailable("the focus has no duration")
        return self.x.runtime

    def useful(self, inputs: FocusInputs | None = None) -> np.ndarray:
        """Per location: useful time, when the source measures it apart from the OpenMP runtime."""
        self._measured(inputs or self.x, "useful")
        return self.some_useful(inputs)

    def outside_mpi(self) -> np.ndarray:
        """Per process: the master's time outside MPI (FocusInputs.outside_mpi), when measured."""
        self.some_useful()
        self._measured(self.x, "outside_mpi")
        return self.x.outside_mpi

    def some_useful(self, inputs: FocusInputs | None = None) -> np.ndarray:
        """Per location: the useful time as the inputs hold it, for metrics that do not depend on how
        the masters' time outside parallel regions splits into computation and fork / join."""
        u = (inputs or self.x).useful
        if not len(u) or u.max() <= 0:
            raise NotAvailable("no useful computation (state Running) in the focus")
        return u

    def counter(self, name: str, inputs: FocusInputs | None = None) -> float:
        c = (inputs or self.x).counter(name)
        if c is None:
            raise NotAvailable(f"the experiment has no {name} counter")
        total = float(c.sum())
        if total <= 0:
            raise NotAvailable(f"{name} is zero during useful computation in the focus")
        return total

    def counter_share(self, name: str, inputs: FocusInputs | None = None) -> float:
        """The share of the useful time `name` was read in (1 unless the counter sets rotate)."""
        share = (inputs or self.x).counter_shares.get(name, 1.0)
        if isinstance(share, str):
            raise NotAvailable(share)
        if share <= 0:
            raise NotAvailable(f"{name} was not read during useful computation in the focus (its counter set "
                               "was not active)")
        return share

    def counter_scaled(self, name: str, inputs: FocusInputs | None = None) -> float:
        """The counter over the whole useful time: as read, over the share of it read in."""
        share = self.counter_share(name, inputs)
        return self.counter(name, inputs) / share

    def weak_factor(self) -> float:
        """n / n_ref for weak scaling, 1 for strong."""
        return self.x.n_threads / self.ref.n_threads if self.scaling == "weak" else 1.0


Compute = Callable[[Context], tuple[float, dict]]


@dataclass(frozen=True)
class Spec:
    id: str
    name: str
    formula: str
    description: str
    compute: Compute
    kind: str = "efficiency"
    unit: str = ""
    combine: str | None = None
    children: tuple["Spec", ...] = ()
    factor: bool = True
    spread: Callable[[Context], np.ndarray] | None = None
    # UPPER / EXACT (or a function of the Context giving one, or None): what the value is when the
    # source's useful time includes the masters' fork and join; None: no provable direction, n/a
    bound: str | Callable[[Context], str | None] | None = None


@dataclass(frozen=True)
class Model:
    id: str
    title: str
    description: str
    roots: tuple[Spec, ...]


def evaluate(spec: Spec, ctx: Context) -> MetricNode:
    node = MetricNode(id=spec.id, name=spec.name, description=spec.description, formula=spec.formula,
                      kind=spec.kind, unit=spec.unit, combine=spec.combine, factor=spec.factor,
                      children=[evaluate(c, ctx) for c in spec.children])
    try:
        _fill(node, spec, ctx)
    except Unmeasured as exc:
        if not _as_bound(node, spec, ctx, exc):
            node.value, node.reason = None, str(exc) + _as_counted(spec, ctx)
    except NotAvailable as exc:
        node.value, node.reason = None, str(exc)
    except ZeroDivisionError:
        node.value, node.reason = None, "division by zero: an input is zero in this focus"
    if node.value is not None and spec.kind == "efficiency" and node.value > 1 + 1e-9:
        node.warnings.append(_above_100(node))
    if node.value is not None and node.value < -1e-9 and spec.kind == "efficiency":
        node.warnings.append("below 0: the inputs are inconsistent; shown unclipped")
    return node


def _above_100(node: MetricNode) -> str:
    """Why an efficiency exceeds 100 %: a global efficiency carrying a superlinear computation
    scalability (less useful time in total than the reference: cache effects, less redundant
    work) is a measured fact, not an inconsistency."""
    cs, pe = node.inputs.get("computation_scalability"), node.inputs.get("parallel_efficiency")
    if cs is not None and cs > 1 and (pe is None or pe <= 1 + 1e-9):
        return (f"above 100 % ({node.value:.4f}): the computation scalability is {cs:.1%}, superlinear (less "
                "useful time in total than the reference run: cache effects, less redundant work); shown as is")
    return (f"above 100 % ({node.value:.4f}): the inputs are inconsistent "
            "(e.g. an ideal runtime longer than the measured one); shown unclipped")


def _fill(node: MetricNode, spec: Spec, ctx: Context) -> None:
    value, inputs = spec.compute(ctx)
    node.inputs = {k: float(v) for k, v in inputs.items()}
    if value is None or not np.isfinite(value):
        raise NotAvailable("the inputs give no finite value (division by zero)")
    node.value = float(value)
    if spec.spread is not None:
        s = np.asarray(spec.spread(ctx), np.float64)
        if len(s):
            node.min, node.avg, node.max = float(s.min()), float(s.mean()), float(s.max())


BOUND_REASON = (
    "upper bound: {includes}; this figure can only grow with the useful time, and its other inputs (R, the "
    "time outside MPI, the reference) are exact, so the true value is at most this; the trace of the run "
    "gives it exactly")


def _as_bound(node: MetricNode, spec: Spec, ctx: Context, exc: Unmeasured) -> bool:
    """A metric whose only unmeasured input is the useful time, read as the source gives it when
    its direction is provable (Spec.bound): an upper bound, or exact where the useful time cancels.
    Not where R is unmeasured too (a parallel region as the focus: the fork and join lie outside it,
    its useful time is not the true one plus them, and R is not known)."""
    direction = spec.bound(ctx) if callable(spec.bound) else spec.bound
    if direction not in (UPPER, EXACT) or exc.quantity != "useful" or "runtime" in ctx.x.unmeasured:
        return False
    try:
        _fill(node, spec, replace(ctx, lenient=frozenset({"useful"})))
    except (NotAvailable, ZeroDivisionError):
        node.value, node.inputs, node.min, node.avg, node.max = None, {}, None, None, None
        return False
    if direction == UPPER:
        includes = ctx.x.useful_includes or ctx.ref.useful_includes or "the useful time includes time that is not"
        node.bound, node.reason = UPPER, BOUND_REASON.format(includes=includes)
    return True


def self_referenced(direction: str) -> Callable[[Context], str | None]:
    """Spec.bound of a figure against the reference run: provable only when the run is its own reference."""
    return lambda ctx: direction if ctx.ref_is_self else None


def _as_counted(spec: Spec, ctx: Context) -> str:
    """The value the source's own reading gives (what Cube's Advisor shows), for the reason."""
    try:
        value, _ = spec.compute(replace(ctx, lenient=True))
    except (NotAvailable, ZeroDivisionError):
        return ""
    if value is None or not np.isfinite(value):
        return ""
    shown = f"{value:.1%}" if spec.kind in RATED else f"{value:.6g}{(' ' + spec.unit) if spec.unit else ''}"
    return f"; counting that time as computation, as Cube's Advisor does, gives {shown}"


def ratio(a: float, b: float) -> float:
    if b == 0:
        raise ZeroDivisionError
    return a / b


NO_MPI = "no MPI in this run"
NO_MPI_LOSS = ("No MPI in this run: the process level's loss is the master's time neither computing nor in "
               "OpenMP parallel regions (start-up, file I/O, runtime outside the regions, tracer flushing)")
# the hybrid models' process-level rows in a run without MPI (their NO_MPI_NAMES; NO_MPI_UNAVAILABLE unless a
# model sets its own)
NO_MPI_PROCESS_LB = "Process load balance (one process: no MPI in this run)"
NO_MPI_OUTSIDE = "Process level: time outside computation and OpenMP (no MPI in this run)"
NO_MPI_UNAVAILABLE = ("mpi_serialisation_efficiency", "mpi_transfer_efficiency")


def without_mpi(exp, x: FocusInputs) -> bool:
    """A run with no MPI at all: one process and no MPI paradigm in its definitions (the trace's own
    word: a pure OpenMP Extrae trace may still put a few states of its tracer in MPI categories)."""
    paradigms = getattr(getattr(exp, "definitions", None), "paradigms", None) or ()
    return x.n_processes <= 1 and "mpi" not in paradigms


def thread_word(exp) -> str | None:
    """What takes OpenMP's place in the hybrid models' names in a threaded run without OpenMP
    ("pthreads"; METRICS.md: any X of MPI+X takes OpenMP's place unchanged), or None."""
    paradigms = set(getattr(getattr(exp, "definitions", None), "paradigms", None) or ())
    return "pthreads" if "pthread" in paradigms and "openmp" not in paradigms else None


def relabel_threads(roots, word: str) -> None:
    """The rows named after OpenMP named after the run's threading instead (their ids unchanged)."""
    for root in roots:
        for _, node in root.walk():
            node.name = node.name.replace("OpenMP", word)
            node.description = node.description.replace("OpenMP", word)


def relabel_without_mpi(roots, names: dict[str, str], unavailable: tuple[str, ...]) -> None:
    """A run without MPI: its process-level rows named as the process level (names: id -> name,
    description NO_MPI_LOSS where the name says so), the rows that only MPI gives not available."""
    for root in roots:
        for _, node in root.walk():
            if node.id in names:
                node.name = names[node.id]
                if node.name == NO_MPI_OUTSIDE:
                    node.description = NO_MPI_LOSS
            elif node.id in unavailable:
                node.value, node.reason, node.inputs, node.warnings = None, NO_MPI, {}, []
                node.min = node.avg = node.max = node.bound = None
