"""Metric trees of a variant for one experiment and focus."""
from __future__ import annotations


def variant(exp, variant, focus, reference=None, series=None, scaling: str = "auto") -> list:
    """The MetricTree of every model of `variant` (computation / I/O has two);
    scalabilities against `reference` (None: the run itself). `series`: the runs `exp` and
    `reference` belong to; strong or weak scaling is then the series' one decision
    (popview.analysis.metrics.series_scaling, as the Scaling pane takes it), its reason first
    in the notes, not a guess from this run and the reference alone. `scaling`: strong or weak as the
    user chose it, or auto (guessed over the series)."""
    if reference is None or not series:
        return [exp.metrics(m, focus, reference=reference, scaling=scaling) for m in variant.models]
    from popview.analysis.metrics import series_scaling
    runs = list(series) + [r for r in (exp, reference) if all(r is not e for e in series)]
    kind, why = series_scaling(runs, focus, reference, scaling)
    trees = [exp.metrics(m, focus, reference=reference, scaling=kind) for m in variant.models]
    clock = clock_note(runs, focus)
    for t in trees:
        t.notes.insert(0, f"{why} (over the series of {len(runs)} runs)")
        if clock and t.model != "io":
            t.notes.append(clock)
    return trees


def clock_note(runs, focus) -> str | None:
    """The series' note on clock rates that differ implausibly (Series.clock_note), for the
    Advisor, which compares one run with the reference among the series' runs."""
    from popview.analysis.gather import FocusError
    from popview.analysis.metrics import focus_inputs, reference_focus, run_name
    from popview.analysis.models.scalability import clock_rate, clock_spread_note
    rates = []
    for e in runs:
        try:
            rates.append((run_name(e), clock_rate(focus_inputs(e, reference_focus(focus, e)))))
        except (FocusError, ValueError, KeyError):
            rates.append((run_name(e), None))
    return clock_spread_note(rates)
