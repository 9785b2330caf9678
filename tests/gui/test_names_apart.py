"""Names cut to fit a column stay told apart from their siblings (popview.gui.widgets.apart)."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from popview.gui.widgets.apart import cut_apart

SIBLINGS = [
    ["Pthread Mutex Lock Contention", "Pthread Condition Lock Contention"],          # middle cut fails
    ["MPI P2P send synchronizations", "MPI P2P recv synchronizations"],              # right cut fails
    ["PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_L1_DCM", "PAPI_L2_DCM"],
    ["Region bt-mz_C.8/bt/ITERATION/exch_qbc/copy_x_face/!$omp parallel @exch_qbc.f:255",
     "Region bt-mz_C.8/bt/exch_qbc/copy_x_face/!$omp parallel @exch_qbc.f:255"],   # both ends alike
]


@pytest.mark.parametrize("names", SIBLINGS)
@pytest.mark.parametrize("room", [70, 110, 160])
def test_cut_names_differ_and_fit(qapp, names, room):
    metrics = QFontMetrics(QFont())
    shown = [cut_apart(n, names, room, metrics) for n in names]
    assert len(set(shown)) == len(names), shown
    assert all(metrics.horizontalAdvance(s) <= room for s in shown), shown


def test_a_name_that_fits_is_whole_and_a_lone_name_is_cut_at_the_right(qapp):
    metrics = QFontMetrics(QFont())
    assert cut_apart("Time", ["Time", "Visits"], 200, metrics) == "Time"
    lone = cut_apart("MPI collective synchronizations", [], 80, metrics)
    assert lone.startswith("MPI") and lone.endswith("\u2026")
