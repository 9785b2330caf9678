"""A run as the window names it: its name and shape, and its trace's format where two open
runs would read the same (the heat Score-P and Extrae 2x2 runs both read 'hyb_2x2 (2x2)':
the stacked timelines, the Advisor's header and the window's title could not tell which)."""
from __future__ import annotations

from collections import Counter


def run_title(exp) -> str:
    """The run's name and shape: 'hyb_2x2 (2x2)'."""
    return f"{exp.name} ({exp.label})"


def run_titles(exps) -> dict[int, str]:
    """Each run's title by id(exp): run_title, and the trace's format where two runs of `exps`
    would read the same: 'hyb_2x2 (2x2, otf2)' and 'hyb_2x2 (2x2, paraver)', as the Experiments
    pane's Format column."""
    plain = {id(e): run_title(e) for e in exps}
    seen = Counter(plain.values())

    def told_apart(e) -> str:
        fmt = getattr(getattr(e, "definitions", None), "source_format", "") or ""
        return f"{e.name} ({e.label}, {fmt})" if fmt else plain[id(e)]
    return {id(e): told_apart(e) if seen[plain[id(e)]] > 1 else plain[id(e)] for e in exps}


def titled(exp, exps) -> str:
    """`exp`'s title among the open runs `exps` (run_titles)."""
    return run_titles(list(exps) + ([exp] if all(e is not exp for e in exps) else []))[id(exp)]
