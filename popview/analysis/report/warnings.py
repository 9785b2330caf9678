"""Warnings worth reading before trusting a metric table."""
from __future__ import annotations

from popview.analysis.report import nodes


def collect(exp, trees: list) -> list[str]:
    """The engine's notes and node warnings of every MetricTree, inconsistent
    (> 100 %) efficiencies, and what the trace itself says about how it was
    recorded (burst mode, flushing)."""
    out: list[str] = []

    def add(text: str) -> None:
        if text and text not in out:
            out.append(text)

    for tree in trees:
        for w in tree.notes:
            add(str(w))
        for _, node in tree.walk():
            for w in getattr(node, "warnings", None) or ():
                add(str(w))
            v = nodes.value(node)
            if v is not None and getattr(node, "kind", "") == "efficiency" and v > 1.0 + 1e-6:
                add(f"{node.name} is {v * 100:.1f} %, above 100 %: the inputs are inconsistent "
                    "(check clock synchronisation and the focus of analysis).")
    flags = exp.definitions.flags if exp is not None else {}
    if flags.get("burst_mode"):
        add("Burst-mode trace: only computation bursts were recorded, so communication "
            "metrics rest on what is missing between the bursts.")
    if flags.get("flushing") and not any("flush" in w.lower() for w in out):
        add("The trace contains buffer flushes by the tracer; time spent flushing "
            "is neither useful computation nor communication.")
    return out
