"""Runs of one application at several scales: scalabilities against a
reference run (by default the one with the fewest processing elements),
strong or weak scaling guessed from the instruction counts, and the
Basic-Analysis-style table (metrics as rows, runs as columns)."""
from __future__ import annotations

from pathlib import Path

from popview.analysis.metrics import as_focus, decide_scaling, focus_inputs, metrics, reference_focus
from popview.analysis.node import MetricNode, MetricTree


class Series:
    def __init__(self, runs, reference=None, scaling: str = "auto", focus=None, cache_dir=None,
                 use_replay: bool = True):
        import popview
        self.experiments = [r if hasattr(r, "reader") else popview.open(r, cache_dir=cache_dir) for r in runs]
        if not self.experiments:
            raise ValueError("a series needs at least one run")
        self.focus, self.focus_note = self._common_focus(as_focus(focus))
        self.use_replay = use_replay
        self.inputs = [focus_inputs(e, self.focus) for e in self.experiments]
        self.reference = self._reference(reference)
        ref_inputs = self.inputs[self.experiments.index(self.reference)]
        self.scaling, self.scaling_reason = decide_scaling(self.inputs, ref_inputs, scaling)
        self._trees: dict[str, list[MetricTree]] = {}

    def _common_focus(self, focus):
        from popview.analysis.focus_map import common_focus
        return common_focus(self.experiments, focus)

    def _reference(self, reference):
        if reference is None:
            n = [x.n_threads for x in self.inputs]
            return self.experiments[n.index(min(n))]
        if isinstance(reference, int):
            return self.experiments[reference]
        if hasattr(reference, "reader"):
            if reference not in self.experiments:
                self.experiments.insert(0, reference)
                self.inputs.insert(0, focus_inputs(reference, reference_focus(self.focus, reference)))
            return reference
        want = Path(reference).resolve()
        for e in self.experiments:
            if Path(e.source).resolve() == want:
                return e
        raise ValueError(f"the reference {reference} is not one of the runs")

    @property
    def labels(self) -> list[str]:
        """The shapes (1x2, 2x2), else with the runs' names; a trace and the profile of one run
        (same folder and shape) apart by their kind: "2x2 trace", "2x2 profile"; runs of one
        shape and name from two tools by their format ("2x2 paraver", "2x2 otf2"); else numbered."""
        from popview.runs import view_kind
        for labels in ([e.label for e in self.experiments],
                       [f"{e.name} ({e.label})" for e in self.experiments],
                       [f"{e.label} {view_kind(e)}" for e in self.experiments],
                       [f"{e.label} {getattr(e, 'format', '')}" for e in self.experiments]):
            if len(set(labels)) == len(labels):
                return labels
        return [f"{e.label} #{i}" for i, e in enumerate(self.experiments, 1)]

    def reference_of(self, exp):
        """The run `exp` is compared with: the reference run, seen the way `exp` is. A trace and
        the profile of one run are two views of it, never each other's reference (the trace's
        global efficiency read "not available from this profile" and its computation scalability
        154 %, against its own profile): a profile is compared with the reference run's profile
        when it is among the runs, a trace with its trace."""
        from popview.runs import same_run, view_kind
        if same_run(exp, self.reference):
            return exp
        twin = next((e for e in self.experiments if same_run(e, self.reference)), None)
        if twin is not None and view_kind(twin) == view_kind(exp):
            return twin
        return self.reference

    def trees(self, model: str = "pop-mpi") -> list[MetricTree]:
        if model not in self._trees:
            out = []
            for e in self.experiments:
                t = metrics(e, model, self.focus, reference=self.reference_of(e), scaling=self.scaling,
                            use_replay=self.use_replay)
                t.notes.insert(0, self.scaling_reason)
                if model != "io" and (clock := self.clock_note()):
                    t.notes.append(clock)
                if self.focus_note:
                    t.notes.insert(0, self.focus_note)
                if model not in ("computation", "io"):
                    t.roots.append(self._speedup(e))
                out.append(t)
            self._trees[model] = out
        return self._trees[model]

    def clock_note(self) -> str | None:
        """Says when the runs' clock rates during useful computation differ implausibly (> 1.5x)."""
        from popview.analysis.models.scalability import clock_rate, clock_spread_note
        return clock_spread_note([(lab, clock_rate(x)) for lab, x in zip(self.labels, self.inputs)])

    def _speedup(self, exp) -> MetricNode:
        x = self.inputs[self.experiments.index(exp)]
        ref = self.inputs[self.experiments.index(self.reference_of(exp))]
        weak = x.n_threads / ref.n_threads if self.scaling == "weak" else 1.0
        node = MetricNode("speedup", "Speedup", "How much faster than the reference run",
                          "strong: R_ref / R; weak: R_ref / R x n / n_ref", kind="value")
        if x.runtime > 0 and ref.runtime > 0:
            node.value = ref.runtime / x.runtime * weak
            node.inputs = {"runtime_s": x.runtime, "runtime_ref_s": ref.runtime, "weak_factor": weak}
        else:
            node.reason = "a run of the series has no duration"
        return node

    def table(self, model: str = "pop-mpi", extra: tuple[str, ...] = ("computation",)):
        """DataFrame: one row per metric (pre-order), one column per run; plus ipc / clock_rate rows."""
        import pandas as pd
        trees = self.trees(model)
        rows, index = [], []
        for depth, node in trees[0].walk():
            index.append(node.id)
            rows.append({"name": "  " * depth + node.name, "kind": node.kind,
                         **{lab: t.value(node.id) for lab, t in zip(self.labels, trees)}})
        for m in extra:
            for depth, node in self.trees(m)[0].walk():
                if node.id in ("ipc", "clock_rate"):
                    index.append(node.id)
                    rows.append({"name": node.name, "kind": node.kind,
                                 **{lab: t.value(node.id) for lab, t in zip(self.labels, self.trees(m))}})
        return pd.DataFrame(rows, index=pd.Index(index, name="id"))


def series(runs, reference=None, scaling: str = "auto", focus=None, cache_dir=None, use_replay: bool = True) -> Series:
    """Open (if needed) and compare runs of one application: `popview.series([...])`."""
    return Series(runs, reference=reference, scaling=scaling, focus=focus, cache_dir=cache_dir, use_replay=use_replay)
