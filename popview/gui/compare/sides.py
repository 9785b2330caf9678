"""The two sides of the compare view: each its own AppState, so the existing
tree panes show one run each; selections follow from one side to the other
(metrics by id, call paths by their chain of region names, locations by index)."""
from __future__ import annotations

import numpy as np

from popview.gui.state import AppState
from popview.gui.trees.source import callpath_map, profile_values


def side_state(exp, other, parent, difference: bool) -> AppState:
    """A state showing `exp`; with `difference`, its values are exp - other."""
    state = AppState(parent)
    state.experiments = [exp, other]
    state.reference = other
    state.value_mode = "difference" if difference else "absolute"
    return state


class SelectionLink:
    """Keeps the metric, call path and location selected on both sides the same."""

    def __init__(self, a: AppState, b: AppState):
        self.a, self.b = a, b
        self._busy = False
        self._maps: dict = {}
        a.metricSelected.connect(lambda m: self._follow(b.select_metric, m))
        b.metricSelected.connect(lambda m: self._follow(a.select_metric, m))
        a.callpathSelected.connect(lambda cp: self._follow(b.select_callpath, self.mapped(a, b, cp)))
        b.callpathSelected.connect(lambda cp: self._follow(a.select_callpath, self.mapped(b, a, cp)))
        a.locationSelected.connect(lambda loc: self._follow(b.select_location, loc))
        b.locationSelected.connect(lambda loc: self._follow(a.select_location, loc))
        a.selectionScopeChanged.connect(lambda: self._follow(
            lambda _x: b.set_selection_scope(a.metric_exclusive, a.callpath_exclusive), None))

    def mapped(self, src: AppState, dst: AppState, cp: int) -> int:
        """The call path of `dst`'s run that is `cp` of `src`'s (-1 when it has none)."""
        if cp < 0:
            return -1
        key = (id(src.current), id(dst.current))
        if key not in self._maps:
            pv, ref = profile_values(src.current), profile_values(dst.current)
            self._maps[key] = callpath_map(pv, ref).copy() if pv is not None and ref is not None else np.zeros(0)
        m = self._maps[key]
        return int(m[cp]) if cp < len(m) else -1

    def _follow(self, apply, value) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            apply(value)
        finally:
            self._busy = False
