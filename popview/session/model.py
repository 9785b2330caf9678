"""The session model: what an analysis consists of, as plain data.

A Session lists the open experiments (by path and fingerprint), the current
view state, the window layout, bookmarks (named snapshots of the view state)
and annotations (notes on a call path, a location, a time range or a whole
experiment). It knows nothing of Qt; the GUI fills it and restores from it.

View state layout (also used by bookmarks)::

    {"app":   {"current": "e1", "focus": {...}, "metric": "time",
               "callpath": 3, "location": 0, "value_mode": "absolute",
               "reference": null, "time_window": [t0, t1]},
     "panes": {"<pane id>": {...whatever the pane's view_state() returned}}}
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ANNOTATION_KINDS = ("callpath", "location", "time_range", "experiment")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class ExperimentRef:
    """An open experiment: where its source was and what it contained."""

    id: str
    path: str                      # absolute path of the source
    fingerprint: str | None = None
    label: str = ""

    def resolved(self) -> Path:
        return Path(self.path)


@dataclass
class Bookmark:
    id: str
    name: str
    view: dict
    note: str = ""
    created: str = field(default_factory=now_iso)


@dataclass
class Annotation:
    """A note on a call path, a location, a time range or a whole experiment.

    callpath / location are ids in the experiment's profile and system tree;
    t0, t1 are ns from the start of the run (time_range; location optional).
    """

    id: str
    kind: str
    text: str
    experiment: str | None = None
    callpath: int | None = None
    location: int | None = None
    t0: int | None = None
    t1: int | None = None
    color: str | None = None

    def problem(self) -> str | None:
        """What makes this annotation meaningless, or None."""
        if self.kind not in ANNOTATION_KINDS:
            return f"kind {self.kind!r} is not one of {', '.join(ANNOTATION_KINDS)}"
        if self.kind == "callpath" and self.callpath is None:
            return "a call-path annotation needs 'callpath'"
        if self.kind == "location" and self.location is None:
            return "a location annotation needs 'location'"
        if self.kind == "time_range" and (self.t0 is None or self.t1 is None or self.t1 <= self.t0):
            return "a time-range annotation needs t0 < t1"
        if self.kind == "experiment" and self.experiment is None:
            return "an experiment annotation needs 'experiment'"
        return None


@dataclass
class Session:
    experiments: list[ExperimentRef] = field(default_factory=list)
    view: dict = field(default_factory=lambda: {"app": {}, "panes": {}})
    layout: dict = field(default_factory=dict)
    bookmarks: list[Bookmark] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    origin: str | None = None      # for recovery files: the session file they belong to

    # ---- experiments ---------------------------------------------------
    def ref_for(self, source) -> ExperimentRef | None:
        """The experiment reference whose source is `source` (a path)."""
        target = os.path.abspath(source)
        return next((r for r in self.experiments if os.path.abspath(r.path) == target), None)

    def add_experiment(self, source, fingerprint: str | None = None, label: str = "") -> ExperimentRef:
        ref = self.ref_for(source)
        if ref is None:
            ref = ExperimentRef(self._new_id("e", self.experiments), os.path.abspath(source), fingerprint, label)
            self.experiments.append(ref)
        return ref

    def remove_experiment(self, ref_id: str) -> None:
        """Forget an experiment together with the annotations attached to it."""
        self.experiments = [r for r in self.experiments if r.id != ref_id]
        self.annotations = [a for a in self.annotations if a.experiment != ref_id]

    # ---- bookmarks -----------------------------------------------------
    def add_bookmark(self, name: str, view: dict, note: str = "") -> Bookmark:
        bm = Bookmark(self._new_id("b", self.bookmarks), name, view, note)
        self.bookmarks.append(bm)
        return bm

    def bookmark(self, bm_id: str) -> Bookmark:
        return next(b for b in self.bookmarks if b.id == bm_id)

    def remove_bookmark(self, bm_id: str) -> None:
        self.bookmarks = [b for b in self.bookmarks if b.id != bm_id]

    def move_bookmark(self, bm_id: str, new_index: int) -> None:
        bm = self.bookmark(bm_id)
        self.bookmarks.remove(bm)
        self.bookmarks.insert(max(0, min(new_index, len(self.bookmarks))), bm)

    # ---- annotations ---------------------------------------------------
    def add_annotation(self, kind: str, text: str, **target) -> Annotation:
        ann = Annotation(self._new_id("a", self.annotations), kind, text, **target)
        problem = ann.problem()
        if problem:
            raise ValueError(problem)
        self.annotations.append(ann)
        return ann

    def annotation(self, ann_id: str) -> Annotation:
        return next(a for a in self.annotations if a.id == ann_id)

    def remove_annotation(self, ann_id: str) -> None:
        self.annotations = [a for a in self.annotations if a.id != ann_id]

    def annotations_for(self, source, kind: str | None = None) -> list[Annotation]:
        """Annotations on the experiment read from `source` (optionally of one kind)."""
        ref = self.ref_for(source)
        if ref is None:
            return []
        return [a for a in self.annotations if a.experiment == ref.id and (kind is None or a.kind == kind)]

    @staticmethod
    def _new_id(prefix: str, items) -> str:
        used = {i.id for i in items}
        return next(f"{prefix}{n}" for n in itertools.count(1) if f"{prefix}{n}" not in used)
