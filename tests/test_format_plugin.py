"""A fourth format is one package plus one registry line (tests/toy_format): it
opens, converts into the cache, names its run, shows in the file patterns and
gives POP metrics computed from its states, with nothing else in popview
changed."""
from __future__ import annotations

import pytest

import popview
from popview import readers
from tests.toy_format import HEADER

# two processes, one thread each, over 1000 ns: process 0 computes 900 ns and waits
# 100 ns, process 1 computes 600 ns and waits 400 ns
ROWS = """process,thread,begin_ns,end_ns,state
0,0,0,900,1
0,0,900,1000,3
1,0,0,600,1
1,0,600,1000,3
"""


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.setattr(readers, "READERS", list(readers.READERS))
    readers.register("tests.toy_format")
    path = tmp_path / "run_2procs.states.csv"
    path.write_text(HEADER + "\n" + ROWS)
    return path


def test_the_registry_knows_the_toy(toy):
    assert readers.reader_for(toy)[0] == "toy-states"
    assert "*.states.csv" in readers.file_patterns()
    assert readers.described().endswith("or a toy states CSV (.states.csv)")


def test_the_toy_opens_and_gives_pop_metrics(toy, cache_dir):
    from popview.analysis.metrics import metrics

    with popview.open(toy, cache_dir=cache_dir) as exp:
        assert exp.name == "run_2procs"
        assert exp.is_trace
        assert exp.shape() == (2, 1)
        tree = metrics(exp, "pop-mpi", focus="whole")
        # useful 900 and 600 ns of 1000: LB = 750 / 900, CommE = 900 / 1000, PE = 750 / 1000
        assert tree.value("load_balance") == pytest.approx(750 / 900)
        assert tree.value("communication_efficiency") == pytest.approx(0.9)
        assert tree.value("parallel_efficiency") == pytest.approx(0.75)
