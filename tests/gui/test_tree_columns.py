"""Tree columns as read on real numbers: an 11-digit counter is never cut, a narrow pane
scrolls instead of cutting a short metric name."""
from __future__ import annotations

from PySide6.QtCore import Qt

from popview.gui.state import AppState
from popview.gui.trees import MetricTreePane
from popview.model.profile import MetricDef, MetricValues
from popview.testing.synthetic_profile import SMALL_COMP, ProfileExperiment, small_definitions, small_profile


def test_big_counters_and_short_names_are_not_elided(qtbot):
    profile = small_profile()
    profile.metrics.append(MetricDef("PAPI_TOT_INS", "PAPI_TOT_INS", "occ"))
    profile.values["PAPI_TOT_INS"] = MetricValues.from_dense(SMALL_COMP * 4e9)   # ~ 1e11 in total
    state = AppState()
    pane = MetricTreePane(state)
    qtbot.addWidget(pane)
    pane.resize(230, 300)
    pane.show()
    state.add_experiment(ProfileExperiment(profile, small_definitions(), name="counters"))
    qtbot.waitExposed(pane)
    qtbot.wait(50)
    model, header, metrics = pane.model, pane.view.header(), pane.view.fontMetrics()
    texts = [model.index(r, 1).data() for r in range(model.rowCount())]
    widest = max(texts, key=metrics.horizontalAdvance)
    assert len(widest.split()[0].replace(",", "")) >= 11            # e.g. 93,242,514,399 occ
    assert header.sectionSize(1) >= metrics.horizontalAdvance(widest) + 8
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert "Time" in names[0]
    assert header.sectionSize(0) >= metrics.horizontalAdvance("Time (sec)")
    assert model.headerData(1, Qt.Orientation.Horizontal)
