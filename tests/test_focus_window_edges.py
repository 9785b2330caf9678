"""A time window at the edges of the run, and focus strings that are not foci.

A window reaching past the run's end (or before its start) counted the time
without records as lost: `window:0:100` on popview-heat 2x2 (3.28 s) read a
parallel efficiency of 0.6 %, and a window wholly after the end gave a tree of
"the replay failed: index 0 is out of bounds". Now the window is cut to the run
(with a note) and a window outside it is refused with the run's extent. Bad
focus strings said "could not convert string to float: ''" or "not enough
values to unpack (expected 3, got 1)".
"""
from __future__ import annotations

import pytest

import popview
from popview.analysis.focus import Focus
from popview.analysis.gather import FocusError
from tests.paraver.prvtext import HEADER, write_trace

# two threads Running for the whole run (1000 ns)
BODY = """1:1:1:1:1:0:1000:1
1:2:1:2:1:0:1000:1
"""


@pytest.fixture
def exp(tmp_path, cache_dir):
    with popview.open(write_trace(tmp_path, body=BODY, header=HEADER), cache_dir=cache_dir) as e:
        yield e


@pytest.mark.parametrize("t0, t1", [(500, 5000), (-400, 500), (-10, 10_000)])
def test_a_window_past_the_run_is_cut_to_it(exp, t0, t1):
    assert exp.info()["duration_ns"] == 1000
    for model in ("pop-mpi", "hybrid-additive", "critical-path"):
        tree = exp.metrics(model, Focus.window(t0, t1))
        assert tree.value("parallel_efficiency") == pytest.approx(1.0), model    # 0.11 for (500, 5000) before
        assert any("was cut to the run" in n for n in tree.notes), tree.notes
    tree = exp.metrics("pop-mpi", Focus.window(t0, t1))
    assert tree.value("transfer_efficiency") == pytest.approx(1.0)               # the replay cuts it alike


def test_a_window_inside_the_run_has_no_note(exp):
    tree = exp.metrics("pop-mpi", Focus.window(100, 900))
    assert tree.value("parallel_efficiency") == pytest.approx(1.0)
    assert not any("cut to the run" in n for n in tree.notes)


@pytest.mark.parametrize("t0, t1", [(1000, 2000), (5000, 6000), (-20, -10)])
def test_a_window_outside_the_run_is_refused(exp, t0, t1):
    with pytest.raises(FocusError, match=r"lies outside the run \(0 s - 1e-06 s\)"):
        exp.metrics("pop-mpi", Focus.window(t0, t1))


@pytest.mark.parametrize("text", ["window:", "window:1", "window:a:b", "window:1:2:3", "window:nan:1",
                                  "window:0:inf", "window:1e400:2"])
def test_bad_windows_say_what_a_window_is(text):
    with pytest.raises(ValueError, match=r"a time window is window:T0:T1, two times in seconds"):
        Focus.parse(text)


def test_a_reversed_window_says_so():
    with pytest.raises(ValueError, match="end must come after its start"):
        Focus.parse("window:2:1")


@pytest.mark.parametrize("text", ["iterations:main", "iterations:main:3", "iterations:main:x:y",
                                  "iterations::1:2", "iterations:main:1.5:2"])
def test_bad_iterations_say_what_iterations_are(text):
    with pytest.raises(ValueError, match=r"iterations are iterations:PATH:I:J"):
        Focus.parse(text)


def test_good_foci_still_parse():
    assert Focus.parse("window:1.5:2") == Focus.window(1_500_000_000, 2_000_000_000)
    assert Focus.parse("iterations:main/a:b:3:7") == Focus.iterations("main/a:b", 3, 7)
    assert Focus.parse("callpath:main/x") == Focus.on_callpath("main/x")


def test_a_missing_call_path_names_the_nearest(tmp_path, cache_dir):
    """'callpath:mpi_allreduce' said "no call path 'mpi_allreduce'" (in two word orders, by path)."""
    from tests.paraver.prvtext import BODY
    with popview.open(write_trace(tmp_path, body=BODY, header=HEADER), cache_dir=cache_dir) as e:
        for text in ("callpath:MAIN_LOOP", "iterations:main_Loop:0:0"):
            with pytest.raises(FocusError, match=r"no call path '\w+'; did you mean 'main_loop'\?"):
                e.metrics("pop-mpi", Focus.parse(text))
        with pytest.raises(FocusError, match=r"call paths are region names joined by '/'"):
            e.metrics("pop-mpi", Focus.parse("callpath:zzz"))


def test_a_window_outside_a_series_first_run_is_said_so(tmp_path, cache_dir):
    """`popview metrics extrae/ --focus window:5:6` (runs of 2.0, 1.5 and 3.3 s) said the window
    "holds no whole iterations of a repeating region": a series reads a window on its first run,
    and one wholly outside it is refused with that run's extent, as a single run's is."""
    from popview.analysis.focus_map import common_focus

    runs = [popview.open(write_trace(tmp_path / name, body=BODY, header=HEADER), cache_dir=cache_dir)
            for name in ("a", "b")]
    try:
        with pytest.raises(FocusError, match=r"the window 5e-06 s - 6e-06 s lies outside the run \(0 s - 1e-06 s\)"):
            common_focus(runs, Focus.window(5000, 6000))
    finally:
        for e in runs:
            e.close()
