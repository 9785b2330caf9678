"""Property checks of the POP models on real traces and profiles.

Opens a trace or profile through the public API, as a notebook would, and
checks for every model variant, on the whole run, the automatic focus and
the largest call paths:

- range: every efficiency lies in [0, 1], or is "not available" with a
  named cause (scalabilities may exceed 1); an upper bound (a Score-P
  profile's useful time includes the masters' fork and join) lies in
  [0, 1] too and names why it is a bound;
- additive: a parent's inefficiency is the sum of its children's;
- product: a multiplicative parent is the product of its factors;
- identity: the relations of the formula sheet (docs/metrics.md) hold
  between nodes, whatever the tree declares;
- critical path: its segments follow each other in time, start at the
  focus's start and add up to the runtime within 1 %.

    python -m popview.testing.properties ../shared/traces -o violations.md --cache-dir /tmp/c
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import popview
from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from popview.analysis.node import combined

TOLERANCE = 1e-6            # identities hold exactly up to rounding
CP_TOLERANCE = 0.01         # critical path vs runtime
TOP_CALLPATHS = 3
MODELS = ("pop-mpi", "hybrid-additive", "hybrid-multiplicative", "critical-path", "io", "computation")
SUFFIXES = (".prv", ".prv.gz", ".otf2", ".cubex")

# parent = product (or additive sum) of children, from the formula sheet
IDENTITIES = {
    "pop-mpi": [("product", "global_efficiency", ("parallel_efficiency", "computation_scalability")),
                ("product", "parallel_efficiency", ("load_balance", "communication_efficiency")),
                ("product", "communication_efficiency", ("serialisation_efficiency", "transfer_efficiency"))],
    "hybrid-multiplicative": [
        ("product", "hybrid_parallel_efficiency", ("hybrid_load_balance", "hybrid_communication_efficiency")),
        ("product", "hybrid_parallel_efficiency", ("mpi_parallel_efficiency", "openmp_parallel_efficiency")),
        ("product", "mpi_parallel_efficiency", ("mpi_load_balance", "mpi_communication_efficiency")),
        ("product", "mpi_communication_efficiency", ("mpi_serialisation_efficiency", "mpi_transfer_efficiency")),
        ("product", "openmp_parallel_efficiency", ("openmp_load_balance", "openmp_communication_efficiency"))],
    "hybrid-additive": [
        ("additive", "parallel_efficiency", ("process_efficiency", "thread_efficiency")),
        ("additive", "process_efficiency", ("process_load_balance", "mpi_communication_efficiency")),
        ("additive", "mpi_communication_efficiency", ("mpi_serialisation_efficiency", "mpi_transfer_efficiency")),
        ("additive", "thread_efficiency", ("amdahl_efficiency", "openmp_region_efficiency"))],
    "critical-path": [
        ("product", "parallel_efficiency", ("load_balance", "communication_efficiency")),
        ("product", "load_balance", ("load_balance_mpi", "load_balance_openmp")),
        ("product", "communication_efficiency", ("serialisation_efficiency", "transfer_efficiency")),
        ("product", "serialisation_efficiency", ("serialisation_efficiency_mpi", "serialisation_efficiency_openmp")),
        ("product", "transfer_efficiency", ("transfer_efficiency_mpi", "transfer_efficiency_openmp"))],
}


@dataclass(frozen=True)
class Violation:
    trace: str
    model: str
    focus: str
    metric: str
    value: float | None
    rule: str

    def row(self) -> str:
        v = "n/a" if self.value is None else f"{self.value:.6g}"
        return f"| {self.trace} | {self.model} | {self.focus} | {self.metric} | {v} | {self.rule} |"


def real_inputs(root: Path) -> list[Path]:
    """Every trace and profile under `root`, sorted."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))


def check_tree(tree, trace: str, focus: str) -> list[Violation]:
    """Range, named causes, declared combinations and the formula sheet's identities of one tree."""
    out = []

    def bad(node_id, value, rule):
        out.append(Violation(trace, tree.model, focus, node_id, value, rule))

    for _, n in tree.walk():
        if n.value is None:
            if not (n.reason or "").strip():
                bad(n.id, None, "not available without a named cause")
            continue
        if n.bound is not None and (n.bound != "upper" or not (n.reason or "").strip()):
            bad(n.id, n.value, f"a bound ({n.bound}) without the direction 'upper' and its cause")
        if not math.isfinite(n.value):
            bad(n.id, n.value, "not finite")
        elif n.kind == "efficiency" and not -TOLERANCE <= n.value <= 1 + TOLERANCE:
            bad(n.id, n.value, "efficiency outside [0, 1]")
        expected = combined(n)
        if expected is not None and abs(expected - n.value) > TOLERANCE:
            bad(n.id, n.value, f"{n.combine} children give {expected:.6g}")
    for kind, parent, children in IDENTITIES.get(tree.model, ()):
        values = [tree.value(i) for i in (parent, *children)]
        if any(v is None for v in values):
            continue
        p, parts = values[0], values[1:]
        expected = float(np.prod(parts)) if kind == "product" else 1 - sum(1 - v for v in parts)
        if abs(expected - p) > TOLERANCE:
            bad(parent, p, f"{kind} identity: {' x '.join(children) if kind == 'product' else ' + '.join(children)}"
                f" gives {expected:.6g}")
    return out


def check_critical_path(exp, focus: Focus, trace: str, label: str) -> list[Violation]:
    """The G-CUE path of the replay: in time order, from the focus's start, as long as the runtime."""
    from popview.analysis.replay import replay
    from popview.analysis.replay.records import Calls
    from popview.analysis.replay.weights import focus_mask
    rp = replay(exp, focus)
    mask = focus_mask(exp, focus, Calls(exp.reader))
    out = []

    def bad(metric, value, rule):
        out.append(Violation(trace, "critical-path", label, metric, value, rule))

    b, e = rp.critical_path["begin"], rp.critical_path["end"]
    r_ns = rp.r * 1e9
    if not len(b):
        bad("critical_path", None, "empty critical path")
        return out
    if r_ns <= 0:
        return out
    length = float((e - b).sum())
    if focus.kind == "callpath":
        span = mask.t_stop - mask.t_start
        if length > (1 + CP_TOLERANCE) * span:
            bad("critical_path_length", length / 1e9,
                f"{len(b)} segments add up to {length / 1e9:.6g} s, longer than the focus's span {span / 1e9:.6g} s")
    elif abs(length - r_ns) > CP_TOLERANCE * r_ns:
        bad("critical_path_length", length / 1e9,
            f"{len(b)} segments add up to {length / 1e9:.6g} s, runtime {rp.r:.6g} s (> 1 % apart)")
    if (np.diff(b) < 0).any() or (e < b).any():
        bad("critical_path_order", float((np.diff(b) < 0).sum()),
            "segments not in time order (count of backward steps)")
    start = float(b.min())
    if focus.kind != "callpath":
        if abs(start - mask.t_start) > CP_TOLERANCE * r_ns:
            bad("critical_path_start", start / 1e9,
                f"starts at {start / 1e9:.6g} s, the focus at {mask.t_start / 1e9:.6g} s")
    return out


def top_callpaths(exp, n: int = TOP_CALLPATHS) -> list[str]:
    """The `n` call paths with the largest inclusive time, roots and artificial regions left out."""
    from popview.analysis.report.candidates import callpath_shares
    prof = exp.profile()
    if not prof.has("time"):
        return []
    shares = callpath_shares(prof)
    roots = set(int(r) for r in prof.roots())
    keep = [int(c) for c in np.argsort(-shares, kind="stable")
            if int(c) not in roots and prof.regions[prof.callpath_region[c]].role != "artificial"
            and shares[c] > 0]
    return [prof.path(c) for c in keep[:n]]


def check_experiment(exp, trace: str, models=MODELS, top: int = TOP_CALLPATHS, critical_path: bool = True,
                     refusals: list[str] | None = None) -> list[Violation]:
    """Every check on the whole run, the automatic focus and the `top` largest call paths; a model
    refused as a whole (FocusError, its cause named) goes to `refusals`."""
    out = []
    refusals = [] if refusals is None else refusals
    foci = [("whole", Focus.whole()), ("auto", Focus.parse("auto"))]
    foci += [(f"callpath:{p}", Focus.on_callpath(p)) for p in top_callpaths(exp, top)]
    for label, focus in foci:
        resolved = focus
        for model in models:
            try:
                tree = exp.metrics(model, focus)
            except FocusError as exc:       # the whole model not available, with its cause named
                refusals.append(f"{model} on {label}: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - any crash is a finding
                out.append(Violation(trace, model, label, "-", None, f"crash: {type(exc).__name__}: {exc}"))
                continue
            if label == "auto":
                resolved = _resolved(exp)
                label_shown = f"auto ({tree.focus})"
            else:
                label_shown = label
            out += check_tree(tree, trace, label_shown)
        if critical_path and exp.is_trace and resolved.kind != "auto":
            try:
                out += check_critical_path(exp, resolved, trace, label if label != "auto" else f"auto ({resolved.label()})")
            except Exception as exc:  # noqa: BLE001
                out.append(Violation(trace, "critical-path", label, "critical_path", None,
                                     f"crash: {type(exc).__name__}: {exc}"))
    return out


def _resolved(exp) -> Focus:
    from popview.analysis.metrics import propose_focus
    return propose_focus(exp)[0]


@dataclass
class FileResult:
    violations: list[Violation]
    refused: str | None = None                      # the file does not open: its one-line message
    unavailable: list[str] = field(default_factory=list)   # models refused with their cause


def check_file(path: Path, root: Path, cache_dir: Path, **kw) -> FileResult:
    """Every check on one input."""
    from popview.readers import InputError
    name = str(path.relative_to(root))
    try:
        exp = popview.open(path, cache_dir=cache_dir)
    except InputError as exc:
        return FileResult([], refused=str(exc).splitlines()[0])
    except Exception as exc:  # noqa: BLE001
        return FileResult([Violation(name, "-", "-", "open", None, f"crash: {type(exc).__name__}: {exc}")])
    unavailable: list[str] = []
    try:
        with exp:
            return FileResult(check_experiment(exp, name, refusals=unavailable, **kw), unavailable=unavailable)
    except Exception as exc:  # noqa: BLE001
        return FileResult([Violation(name, "-", "-", "-", None, f"crash: {type(exc).__name__}: {exc}")],
                          unavailable=unavailable)


def report(results: dict[str, FileResult], seconds: float) -> str:
    violations = [v for r in results.values() for v in r.violations]
    refused = {k: r.refused for k, r in results.items() if r.refused}
    lines = ["# Property violations on the real traces", "",
             f"Generated by `python -m popview.testing.properties` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}:",
             f"{len(results)} inputs checked, {len(refused)} refused with a message, {len(violations)} violations, "
             f"{seconds:.0f} s.", "",
             "| trace | model | focus | metric | value | rule |", "|---|---|---|---|---|---|"]
    lines += [v.row() for v in violations]
    if refused:
        lines += ["", "## Inputs refused (a clear message, not a violation)", ""]
        lines += [f"- {k}: {v}" for k, v in sorted(refused.items())]
    models = {k: r.unavailable for k, r in results.items() if r.unavailable}
    if models:
        lines += ["", "## Models not available as a whole (cause named)", ""]
        lines += [f"- {k}: {'; '.join(sorted(set(x.split(': ', 1)[1] for x in u)))} ({len(u)} model x focus)"
                  for k, u in sorted(models.items())]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m popview.testing.properties", description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("-o", "--output", type=Path)
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--only", action="append", default=[], help="substring of the inputs to check")
    ap.add_argument("--top", type=int, default=TOP_CALLPATHS)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    cache = args.cache_dir or Path(tempfile.mkdtemp(prefix="popview-properties-"))
    results = {}
    for path in real_inputs(args.root):
        name = str(path.relative_to(args.root))
        if args.only and not any(x in name for x in args.only):
            continue
        t0 = time.perf_counter()
        results[name] = r = check_file(path, args.root, cache, top=args.top)
        print(f"{name}: {len(r.violations)} violations{' (refused)' if r.refused else ''} "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    text = report(results, time.perf_counter() - started)
    if args.output:
        tmp = args.output.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(args.output)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
