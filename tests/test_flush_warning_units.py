"""The flush warning writes its time in a readable unit: the Advisor of heat 2x2 read
'(0.00083 s, 0.0063 % ...)' beside trees writing '830 µs'."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from popview.analysis.focus import Focus
from popview.analysis.report import warnings as warn


def test_flush_time_in_a_readable_unit(monkeypatch):
    monkeypatch.setattr(warn, "_flush_intervals", lambda exp: (np.array([1_000_000]), np.array([1_830_000])))
    monkeypatch.setattr(warn, "_focus_intervals", lambda exp, focus: (np.array([0]), np.array([3_000_000_000])))
    exp = SimpleNamespace(definitions=SimpleNamespace(locations=[SimpleNamespace(kind="thread")] * 4))
    text = warn._flushing_sentence(exp, Focus.whole())
    assert "(830 us, " in text and "0.00083 s" not in text
