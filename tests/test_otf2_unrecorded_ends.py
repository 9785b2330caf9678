"""An OTF2 run whose clock properties reach well beyond its records says so. APEX 1.2.0
writes global offset 0 and trace length 584.9 ms (its own start to its end) while its
events span 20.3-571.0 ms: `popview info` showed 584.9 ms without a word, and the
whole-run figures counted 34 ms without records. The duration stays the definitions'
(OTF2's trace length is a span that includes every event, as Vampir shows it)."""
from __future__ import annotations

from pathlib import Path

import pytest

from popview.readers.otf2.conversion import unrecorded_ends

APEX = Path("/work/shared/traces/apex-otf2/OTF2_archive/APEX.otf2")
MS = 1_000_000


def test_time_beyond_the_records_is_said():
    note = unrecorded_ends(584_888_000, [20_344_000, 571_033_000], 0)
    assert note is not None
    assert "trace length 584.9 ms" in note and "20.34-571 ms" in note
    assert "20.3 ms before the first record and 13.9 ms after the last (5.8% of the run)" in note


def test_a_score_p_span_says_nothing():
    # heat 1x2 Score-P: events 9.7 us to 1995.4625 ms, trace length 1995.4695 ms
    assert unrecorded_ends(1_995_469_540, [9_681, 1_995_462_536], 5_732_965_646_279) is None
    assert unrecorded_ends(1000 * MS, [None, None], 0) is None


@pytest.mark.skipif(not APEX.exists(), reason="shared traces absent")
def test_apex_info_explains_its_duration(tmp_path, capsys):
    from popview.cli import main
    assert main(["info", str(APEX), "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "duration    584.888 ms" in out
    assert "records span 20.34-571 ms" in out and "hold no records" in out
