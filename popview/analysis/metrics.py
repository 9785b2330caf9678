"""POP metrics of one experiment: `metrics(exp, model, focus)` -> MetricTree."""
from __future__ import annotations

import numpy as np

from popview.analysis import algebra_meaning, models
from popview.analysis.focus import Focus
from popview.analysis.gather import gather
from popview.analysis.inputs import FocusInputs
from popview.analysis.models.base import (NO_MPI_UNAVAILABLE, REPLAY_MISSING, Context, evaluate, relabel_threads,
                                          relabel_without_mpi, thread_word, without_mpi)
from popview.analysis.node import MetricTree

WEAK_THRESHOLD = 0.9


def propose_focus(exp) -> tuple[Focus, str]:
    cache = exp.__dict__.setdefault("_auto_focus", [])
    if not cache:
        from popview.analysis.autofocus import propose
        cache.append(propose(exp))
    return cache[0]


def as_focus(focus) -> Focus:
    if focus is None:
        return Focus.whole()
    return Focus.parse(focus) if isinstance(focus, str) else focus


def focus_inputs(exp, focus) -> FocusInputs:
    """FocusInputs of `exp` for `focus`, cached on the experiment."""
    focus = as_focus(focus)
    cache = exp.__dict__.setdefault("_focus_inputs", {})
    if focus not in cache:
        cache[focus] = gather(exp, focus)
    return cache[focus]


def reference_focus(focus: Focus, reference=None) -> Focus:
    """The focus of the reference run: the same iterations when it has them; a time window
    never carries over (popview.analysis.focus_map maps it to iterations first)."""
    focus = as_focus(focus)
    if focus.kind in ("whole", "callpath", "auto"):
        return focus
    if focus.kind == "iterations" and reference is not None:
        from popview.analysis.focus_map import carries_to
        if carries_to(reference, focus):
            return focus
    return Focus.whole()


def guess_scaling(runs: list[FocusInputs], ref: FocusInputs) -> tuple[str, str]:
    """Weak when the instructions grow with the processing elements (Basic Analysis's rule)."""
    ratios = []
    for x in runs:
        if x is ref:
            continue
        ins, ins_ref = x.counter("PAPI_TOT_INS"), ref.counter("PAPI_TOT_INS")
        share, share_ref = (r.counter_shares.get("PAPI_TOT_INS", 1.0) for r in (x, ref))
        if ins is None or ins_ref is None or ins_ref.sum() <= 0 or isinstance(share, str) \
                or isinstance(share_ref, str) or not share > 0 or not share_ref > 0:
            return guess_scaling_from_time(runs, ref)
        ratios.append((ins.sum() / share) / (ins_ref.sum() / share_ref) / (x.n_threads / ref.n_threads))
    if not ratios:
        return "strong", "strong scaling: a single run"
    mean = sum(ratios) / len(ratios)
    kind = "weak" if mean > WEAK_THRESHOLD else "strong"
    return kind, (f"{kind} scaling guessed: instructions / processing elements, relative to the reference, "
                  f"average {mean:.3f} ({'>' if kind == 'weak' else '<='} {WEAK_THRESHOLD})")


def guess_scaling_from_time(runs: list[FocusInputs], ref: FocusInputs) -> tuple[str, str]:
    """Without instruction counts the series stays strong, but the reason says when the useful
    time per processing element does not fall with more of them ((U / U_ref) / (n / n_ref) above
    WEAK_THRESHOLD on average) and how to ask for weak scaling. Time cannot tell the two apart: a
    strong-scaling run whose computation does not scale (replicated work, lower IPC) looks just
    like a weak-scaling one, and taking it as weak would hide that loss. LULESH (Cube, no
    counters, 27-343 ranks, weak) reads 3.1 % computation scalability taken as strong."""
    rows = [(x, x.useful.sum() / x.n_threads) for x in runs]
    per_ref = ref.useful.sum() / ref.n_threads if ref.n_threads else 0.0
    if per_ref <= 0 or any(not per > 0 for _, per in rows):
        return "strong", "strong scaling assumed: no instruction counts, and no useful time to tell"
    ratios = [per / per_ref for x, per in rows if x is not ref]
    if not ratios:
        return "strong", "strong scaling: a single run"
    mean = sum(ratios) / len(ratios)
    listed = ", ".join(f"{x.n_threads} PEs {per:.4g} s" for x, per in rows)
    measure = f"useful time a PE: {listed}; (U / U_ref) / (n / n_ref) average {mean:.3f}"
    if mean > WEAK_THRESHOLD:
        return "strong", (f"strong scaling assumed: no instruction counts to tell, and the useful time per "
                          f"processing element does not fall with more of them ({measure} > {WEAK_THRESHOLD}): "
                          "either the computation does not scale, or each run's problem grew with its size: "
                          "then give --scaling weak")
    return "strong", (f"strong scaling guessed: no instruction counts; the useful time per processing element falls "
                      f"with more of them ({measure} <= {WEAK_THRESHOLD})")


def decide_scaling(inputs: list[FocusInputs], ref: FocusInputs, mode: str = "auto") -> tuple[str, str]:
    """Strong or weak scaling for a whole series, with its reason: `mode` when it is strong or weak,
    else guessed over every run of the series against the reference (guess_scaling). The one decision
    the Advisor, the Scaling pane, the report and `popview metrics` take for runs of one series."""
    if mode in ("strong", "weak"):
        return mode, f"{mode} scaling (as requested)"
    if mode != "auto":
        raise ValueError(f"scaling must be strong, weak or auto, not {mode!r}")
    return guess_scaling(inputs, ref)


def series_scaling(exps: list, focus, reference, mode: str = "auto") -> tuple[str, str]:
    """decide_scaling for runs `exps` (the reference among them) in `focus`: every run's inputs
    in the focus as the Series gathers them (popview.analysis.series)."""
    from popview.analysis.focus_map import common_focus

    focus = as_focus(focus)
    try:
        common, _ = common_focus(exps, focus)
    except ValueError:          # no focus every run has: each run's own, as the Advisor shows it
        common = None
    inputs = [focus_inputs(e, common if common is not None else reference_focus(focus, e)) for e in exps]
    return decide_scaling(inputs, inputs[[id(e) for e in exps].index(id(reference))], mode)


def _replay_loader(exp, focus: Focus, model: str):
    if not exp.is_trace:         # a Scalasca profile's wait states stand in for the replay
        from popview.analysis.wait_states import loader
        return loader(exp, focus, model)
    from popview.analysis.replay import replay
    return (lambda: replay(exp, focus)), REPLAY_MISSING


def process_level_note(x: FocusInputs, callpath: bool = False) -> str | None:
    """Names the master time that is neither useful, OpenMP nor MPI, when it matters (>= 1 % of R).
    In a call-path focus, the part of R in which a process's master is not inside the call path
    at all (another process is in it longer) is named apart: it is imbalance between processes."""
    if x.runtime <= 0 or not x.n_threads:
        return None
    lost = x.other_lost
    notes = []
    if callpath:
        absent = np.clip(x.runtime - x.cat[x.masters].sum(axis=1), 0.0, lost)
        lost = lost - absent
        worst = int(absent.argmax())
        if absent[worst] >= 0.01 * x.runtime:
            notes.append(f"process {worst}'s master is inside the call path {absent[worst]:.4g} s "
                         f"({absent[worst] / x.runtime:.1%} of R) less than R, the longest process's time in it: "
                         "the MPI level counts that as load imbalance between processes")
    worst = int(lost.argmax())
    if lost[worst] >= 0.01 * x.runtime:
        notes.append(f"process {worst} spends {lost[worst]:.4g} s ({lost[worst] / x.runtime:.1%} of R) neither "
                     "computing, nor in OpenMP, nor in MPI (not yet created, idle, file I/O or unrecorded): the MPI "
                     "level counts it as lost, as POP MPI does, so the OpenMP factors do not")
    return "; ".join(notes) or None


SETUP_SHARE = 0.25       # MPI_Init over this share of R on some process: the run measures its set-up


def setup_warning(exp, focus: Focus, runtime: float) -> str | None:
    """Says when MPI_Init dominates a whole-run focus, and what focus leaves it out."""
    if focus.kind != "whole" or runtime <= 0:
        return None
    prof = exp.profile()
    init = [cp for cp in range(prof.n_callpaths) if prof.name(cp).startswith("MPI_Init")]
    if not init or not prof.has("time"):
        return None
    per_loc = sum(prof.by_location("time", cp, True) for cp in init)
    share = float(per_loc.max()) / runtime
    if share < SETUP_SHARE:
        return None
    auto, why = propose_focus(exp)
    hint = (f"the automatic focus ({auto.label()}) leaves it out" if auto.kind != "whole" else
            f"the automatic focus finds no repeating region ({why}); choose a window or call path after MPI_Init")
    return (f"MPI_Init takes {share:.0%} of the run on some process: the whole-run figures measure start-up, "
            f"not the program's parallel work; {hint}")


def _point_superlinear_at_clock(roots, frequency: float) -> None:
    """A 'superlinear computation scalability' warning (cache effects, less redundant work) says
    when the frequency scalability carries the excess: tum-pos-gccg metis 8 ranks read global
    efficiency 116 % put down to cache effects while its clock rate read 2.5x the reference's."""
    for root in roots:
        for _, node in root.walk():
            node.warnings = [w + (f"; but the frequency scalability is {frequency:.0%}, above 100 % too: an "
                                  "implausible clock rate, not less work, may make the excess (see its warning)")
                             if "superlinear" in w else w for w in node.warnings]


def run_name(exp) -> str:
    """'name (shape)' of a run, as a series labels runs of one shape apart."""
    label, name = getattr(exp, "label", "") or "this run", getattr(exp, "name", "")
    return f"{name} ({label})" if name and name != label else label


def metrics(exp, model: str = "pop-mpi", focus=None, reference=None, scaling: str = "auto",
            use_replay: bool = True) -> MetricTree:
    """The metric tree of `model` for `exp` and `focus`; scalabilities against `reference`
    (default: the run itself)."""
    module = models.get(model)
    focus = as_focus(focus)
    if (info := algebra_meaning.algebra_info(exp)) and info["operation"] == "difference":
        delta = algebra_meaning.difference_metrics(exp, model, focus, scaling=scaling, use_replay=use_replay)
        if delta is not None:
            return delta
    notes = []
    if focus.kind == "auto":
        focus, why = propose_focus(exp)
        notes.append(f"automatic focus: {focus.label()} - {why}")
    no_reference = None
    if focus.kind == "window" and reference is not None and reference is not exp:
        from popview.analysis.focus_map import carry
        mapped, why = carry(exp, focus, [reference])
        notes.append(why)
        if mapped is None:
            reference, no_reference = None, why
        else:
            focus = mapped
    x = focus_inputs(exp, focus)
    notes += x.notes
    if model.startswith("hybrid") and (note := process_level_note(x, focus.kind == "callpath")):
        notes.append(note)
    if reference is None or reference is exp:
        ref, ref_is_self, ref_label = x, True, "this run"
        alone = reference is None
    else:
        ref = focus_inputs(reference, reference_focus(focus, reference))
        ref_is_self, ref_label, alone = False, getattr(reference, "label", "reference"), False
    if scaling == "auto":
        scaling, why = guess_scaling([x], ref)
        if not ref_is_self:
            notes.append(why)
    if alone and no_reference is None and model not in ("computation", "io"):
        notes.append("scalabilities are against this run itself (give a reference or a series to compare)")
    loader, reason = _replay_loader(exp, focus, module.MODEL.id) if use_replay else (None, "replay not requested")
    ctx = Context(x=x, ref=ref, ref_label=ref_label, ref_is_self=ref_is_self, scaling=scaling,
                  replay_loader=loader, replay_reason=reason, no_reference=no_reference)
    roots = [evaluate(spec, ctx) for spec in module.MODEL.roots]
    if roots and model not in ("computation", "io") and (setup := setup_warning(exp, focus, x.runtime)):
        roots[0].warnings.append(setup)
    post = getattr(module, "POST", {})
    for root in roots:
        for _, node in list(root.walk()):
            if node.id in post:
                post[node.id](ctx, node)
    if not ref_is_self:
        from popview.analysis.models.scalability import frequency_warning
        for root in roots:
            for _, node in root.walk():
                if node.id == "frequency_scalability" and (w := frequency_warning(
                        node, run_name(exp), run_name(reference))):
                    node.warnings.append(w)
                    _point_superlinear_at_clock(roots, node.value)
    if hasattr(module, "NO_MPI_NAMES") and without_mpi(exp, x):
        relabel_without_mpi(roots, module.NO_MPI_NAMES, getattr(module, "NO_MPI_UNAVAILABLE", NO_MPI_UNAVAILABLE))
    if hasattr(module, "NO_MPI_NAMES") and (word := thread_word(exp)):      # the hybrid and critical-path trees
        relabel_threads(roots, word)
    if ctx._replay is not None:
        rp = ctx._replay
        notes += [f"replay: {n}" for n in getattr(rp, "notes", [])]
        if getattr(rp, "approximate", False):
            notes.append("the replay is approximate: serialisation / transfer figures are estimates")
    tree = MetricTree(model=module.MODEL.id, title=module.MODEL.title, experiment=getattr(exp, "label", ""),
                      focus=focus.label(), roots=roots, notes=notes)
    return algebra_meaning.adjust(exp, tree) if info else tree
