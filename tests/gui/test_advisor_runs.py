"""Which open runs the Advisor and the scaling view compare."""
from __future__ import annotations

from popview.gui.advisor.runs import series_runs
from popview.gui.state import AppState


class Run:
    def __init__(self, name: str, processes: int):
        self.name, self.processes = name, processes

    def shape(self):
        return self.processes, 1


def _state(*runs, series=None):
    state = AppState()
    for run in runs:
        state.add_experiment(run, series)
    return state


def test_loose_runs_named_alike_are_compared_smallest_first(qtbot):
    big, small = Run("epoch_16proc", 16), Run("epoch_4proc", 4)
    state = _state(big, small)
    assert series_runs(state) == [small, big]


def test_unrelated_loose_runs_are_not_each_others_reference(qtbot):
    stencil, pingpong = Run("tracer_stencil4d", 32), Run("ping-pong", 2)
    state = _state(stencil, pingpong)
    assert series_runs(state) == [stencil]
    state.set_current(pingpong)
    assert series_runs(state) == [pingpong]


def test_a_series_holds_its_runs_whatever_their_names(qtbot):
    a, b = Run("first", 8), Run("second", 2)
    assert series_runs(_state(a, b, series="mine")) == [b, a]


class View(Run):
    """A Score-P trace or the profile beside it: same folder, same shape."""

    def __init__(self, folder: str, processes: int, is_trace: bool):
        super().__init__(folder, processes)
        self.is_trace = is_trace
        self.source = f"/runs/{folder}/" + ("traces.otf2" if is_trace else "profile.cubex")


def test_a_profile_is_compared_with_the_reference_runs_profile(qtbot):
    """The 2x2 profile's scalabilities were against the 1x2 trace in the window (the trace kept
    unless current) while `popview metrics` compares profiles with profiles."""
    t1, p1, t2, p2 = View("hyb_1", 1, True), View("hyb_1", 1, False), View("hyb_2", 2, True), View("hyb_2", 2, False)
    state = _state(t1, p1, t2, p2, series="scorep")
    state.set_current(p2)
    assert series_runs(state) == [p1, p2]
    state.set_current(t2)
    assert series_runs(state) == [t1, t2]
