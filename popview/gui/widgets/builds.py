"""A pane's builds of a run's companion file (the timeline overview, the window sums):
one lane per run, each shown in the pane with its progress and Cancel (JobProgress)
until it ends. The Timeline pane and the Advisor build them this way."""
from __future__ import annotations

from popview.gui.jobs import Lane
from popview.gui.widgets.progress import JobProgress

CANCELLED = "cancelled"     # the result of a build its Cancel stopped (nothing was kept)


def overview_ready(exp) -> bool:
    """Whether a timeline of `exp` draws without building its overview: open, none needed,
    or known not to be writable (the timeline then says why, building nothing)."""
    return getattr(exp, "timeline_prepared", True) or getattr(exp, "timeline_failure", None) is not None


def _run(prepare, job):
    """In the lane: prepare(progress, cancel); CANCELLED when the Cancel stopped it."""
    from popview.cache.progress import Cancelled

    try:
        prepare(job.progress, job.cancel)
    except Cancelled:
        return CANCELLED
    return None


class PaneBuilds:
    """The builds of `what` ("timeline overview") a pane runs, in `layout`. `done(exp,
    result, error)` is called in the GUI thread when one ends (result CANCELLED after its
    Cancel); `progressed(exp, fraction)` as it goes, when given."""

    def __init__(self, owner, layout, what: str, done, progressed=None):
        self._owner, self._layout, self._what = owner, layout, what
        self._done, self._progressed = done, progressed
        self._lanes: dict[int, Lane] = {}
        self._entries: dict[int, JobProgress] = {}

    def __bool__(self) -> bool:
        return bool(self._lanes)

    def __contains__(self, exp) -> bool:
        return id(exp) in self._lanes

    def start(self, exp, prepare) -> None:
        """prepare(progress, cancel) in a lane of its own, unless this run's build runs."""
        key = id(exp)
        if key in self._lanes:
            return
        lane = self._lanes[key] = Lane(self._owner, f"{self._what} of {exp.name}")
        if self._progressed is not None:
            lane.progressed.connect(lambda fraction, _text, e=exp: self._progressed(e, fraction))
        entry = self._entries[key] = JobProgress(
            lane, self._owner, name=f"Building the {self._what} of {exp.name}",
            what=f"building the {self._what} of {exp.name} (nothing is kept)", stop=lambda e=exp: self.stop(e))
        self._layout.addWidget(entry)
        entry.show()
        lane.submit(lambda job: _run(prepare, job), lambda result, error, e=exp: self._ended(e, result, error))

    def stop(self, exp) -> None:
        """The Cancel: the build stops at its next progress report, leaving no file
        (popview.cache.companion); one still waiting for its turn ends now."""
        lane = self._lanes.get(id(exp))
        if lane is not None and lane.stop():
            self._ended(exp, CANCELLED, None)

    def cancel_all_but(self, keep: set[int]) -> None:
        """Builds of runs no longer shown (ids not in `keep`) stop, leaving nothing, unreported."""
        for key in [k for k in self._lanes if k not in keep]:
            self._lanes.pop(key).cancel()
            self._drop(key)

    def _ended(self, exp, result, error) -> None:
        self._lanes.pop(id(exp), None)
        self._drop(id(exp))
        self._done(exp, result, error)

    def _drop(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._layout.removeWidget(entry)
            entry.hide()
            entry.deleteLater()
