"""Rotating hardware counter sets (Extrae's event 41999999): a counter is read
only while its set is active. SPEC 444.namd (bsc-folding) reads PAPI_TOT_CYC
during 31.6 % of its useful time; dividing its cycles by all of it gave a
clock rate of 0.76 GHz instead of 2.40 GHz, and its instructions were those
of a third of the run. Synthetic traces: two ranks, short Running states,
set 1 (cycles, instructions) for the first half, set 2 (L1 misses) after."""
from __future__ import annotations

import pytest

import popview
from popview.analysis.focus import Focus
from tests.paraver.prvtext import HEADER, PCF, write_trace

SET_PCF = PCF + """
EVENT_TYPE
7  42000000 PAPI_L1_DCM [L1D cache misses]
7  41999999 Active hardware counter set
"""


def _body(long_state: bool = False) -> str:
    """Each rank Running 0-1000 in rows of 100 ns (one row when `long_state`); set 1 until 500
    (200 cycles and 300 instructions a row: 2 GHz, IPC 1.5), set 2 after (5 L1 misses a row)."""
    lines = []
    for task in (1, 2):
        rows = [(0, 1000)] if long_state else [(b, b + 100) for b in range(0, 1000, 100)]
        lines += [f"1:{task}:1:{task}:1:{b}:{e}:1" for b, e in rows]
        events = [f"2:{task}:1:{task}:1:0:41999999:1"]
        for t in range(100, 1001, 100):
            if t <= 500:
                events.append(f"2:{task}:1:{task}:1:{t}:42000059:200:42000050:300"
                              + (":41999999:2:42000000:0" if t == 500 else ""))
            else:
                events.append(f"2:{task}:1:{task}:1:{t}:42000000:5")
        lines += events
    return "\n".join(lines) + "\n"


@pytest.fixture
def exp(tmp_path, cache_dir):
    with popview.open(write_trace(tmp_path, body=_body(), header=HEADER, pcf=SET_PCF), cache_dir=cache_dir) as e:
        yield e


def test_clock_rate_divides_by_the_time_the_cycles_were_read(exp):
    tree = exp.metrics("computation", "whole")
    assert tree.value("clock_rate") == pytest.approx(2.0)            # 1.0 GHz on the old code
    assert tree.value("ipc") == pytest.approx(1.5)
    # 2 ranks x 5 rows x 300 read in half the useful time: 6,000 over the whole of it (3,000 before)
    assert tree.value("useful_instructions") == pytest.approx(6000)
    assert any("counter sets rotate" in n and "PAPI_TOT_CYC 50.0%" in n for n in tree.notes), tree.notes


@pytest.mark.parametrize("t0, t1, share", [(0, 400, 1.0), (300, 800, 0.4)])
def test_a_window_counts_the_share_read_in_it(exp, t0, t1, share):
    tree = exp.metrics("computation", Focus.window(t0, t1))
    assert tree.value("clock_rate") == pytest.approx(2.0)            # 0.8 GHz for 300-800 before
    node = next(n for _, n in tree.walk() if n.id == "clock_rate")
    assert node.inputs.get("PAPI_TOT_CYC_read_share", 1.0) == pytest.approx(share)


def test_a_window_without_the_set_says_why(exp):
    node = next(n for _, n in exp.metrics("computation", Focus.window(600, 900)).walk() if n.id == "clock_rate")
    assert node.value is None and "was not read" in node.reason


def test_frequency_scalability_compares_read_time(tmp_path, cache_dir):
    """A run that reads its cycles all the time against one that rotates: same 2 GHz, scalability 1."""
    steady = _body().replace(":41999999:2:42000000:0", "")
    for t in range(600, 1001, 100):
        for task in (1, 2):
            steady = steady.replace(f"2:{task}:1:{task}:1:{t}:42000000:5",
                                    f"2:{task}:1:{task}:1:{t}:42000059:200:42000050:300")
    a = popview.open(write_trace(tmp_path / "a", body=steady, header=HEADER, pcf=SET_PCF), cache_dir=cache_dir)
    b = popview.open(write_trace(tmp_path / "b", body=_body(), header=HEADER, pcf=SET_PCF), cache_dir=cache_dir)
    tree = b.metrics("pop-mpi", "whole", reference=a)
    assert tree.value("frequency_scalability") == pytest.approx(1.0)      # 0.5 before
    assert tree.value("instruction_scalability") == pytest.approx(1.0)    # 2.0 before
    assert tree.value("ipc_scalability") == pytest.approx(1.0)


def test_a_state_across_a_set_change_makes_window_counters_unknown(tmp_path, cache_dir):
    """One Running state over the whole run (namd): a window's counters are that state's readings
    pro-rated by time, the share read in the window is not known."""
    with popview.open(write_trace(tmp_path, body=_body(long_state=True), header=HEADER, pcf=SET_PCF),
                      cache_dir=cache_dir) as e:
        assert e.metrics("computation", "whole").value("clock_rate") == pytest.approx(2.0)
        node = next(n for _, n in e.metrics("computation", Focus.window(0, 400)).walk() if n.id == "clock_rate")
        assert node.value is None and "spans a set change" in node.reason



def test_a_rotation_that_starts_after_the_first_million_events_is_found(tmp_path, cache_dir):
    """Only the first location's first 2^20 events were looked at for a second set change:
    a run whose rotation starts later (here after 1.2 M events: set 1, cycles and
    instructions, for 6/7 of the run, then set 2) was taken for one set, its cycles divided
    by all the useful time (1.71 GHz instead of 2.0). The whole trace is scanned now."""
    import numpy as np

    from popview.analysis import counter_sets
    from popview.testing import synthetic

    trace = synthetic.write_rotating_sets(tmp_path / "late.prv", rows_before=600_000, rows_after=100_000)
    with popview.open(trace, cache_dir=cache_dir) as exp:
        types = exp.reader.read("events", columns=["type"])["type"]
        changes = np.flatnonzero(types == counter_sets.SET_EVENT)
        assert len(changes) == 2 and changes[0] < 1 << 20 < changes[1], changes      # the rotation starts late
        assert counter_sets.periods(exp).rotating == {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM"}
        tree = exp.metrics("computation", "whole")
        assert tree.value("clock_rate") == pytest.approx(2.0)           # 1.714 GHz on the old code
        assert tree.value("ipc") == pytest.approx(1.5)
        assert any("counter sets rotate" in n and "PAPI_TOT_CYC 85.7%" in n for n in tree.notes), tree.notes
