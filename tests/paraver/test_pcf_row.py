from popview.readers.paraver.pcf import parse_pcf
from popview.readers.paraver.row import parse_row
from tests.paraver.prvtext import PCF, ROW


def test_values_block_shared_by_several_types(tmp_path):
    p = tmp_path / "a.pcf"
    p.write_text(PCF)
    pcf = parse_pcf(p)
    assert pcf.event_types[50000001].values[3] == "MPI_Send"
    assert pcf.event_types[50000002].values[3] == "MPI_Send"   # same block: both types get the values
    assert pcf.event_types[50000002].values[10] == "MPI_Allreduce"
    assert pcf.event_types[42000050].values == {}
    assert pcf.event_types[60000019].values == {0: "End", 1: "main_loop"}
    assert pcf.states[13] == "Group Communication"
    assert pcf.state_colors[3] == (255, 0, 0)
    assert pcf.options["UNITS"] == "NANOSEC"


def test_bad_pcf_lines_are_warned_not_fatal(tmp_path):
    p = tmp_path / "b.pcf"
    p.write_text("STATES\nx Running\n1 Running\n")
    pcf = parse_pcf(p)
    assert pcf.states == {1: "Running"}
    assert "line 2" in pcf.warnings[0]


def test_row_levels(tmp_path):
    p = tmp_path / "a.row"
    p.write_text(ROW + "\nLEVEL TASK SIZE 2\nrank0\nrank1\n")
    levels = parse_row(p)
    assert levels["NODE"] == ["nodeA"]
    assert levels["THREAD"] == ["THREAD 1.1.1", "THREAD 1.2.1"]
    assert levels["CPU"] == ["1.nodeA", "2.nodeA"]
    assert levels["TASK"] == ["rank0", "rank1"]


def test_a_pcf_or_row_that_is_none_is_said_so(tmp_path):
    """A binary or foreign file beside the trace under the .pcf's name was taken without a word
    (generic names, no warning); a .row naming other threads than the trace's the same."""
    import os

    from popview.experiment import open as open_experiment
    from tests.paraver.prvtext import write_trace

    prv = write_trace(tmp_path / "t")
    prv.with_suffix(".pcf").write_bytes(os.urandom(3000).replace(b"\n", b" "))
    prv.with_suffix(".row").write_text("LEVEL THREAD SIZE 1\nTHREAD 1.1.1\n")
    with open_experiment(prv, tmp_path / "cache") as exp:
        warned = exp.definitions.warnings
        assert any(w.startswith("t.pcf: no Paraver section in it (not a .pcf?)") for w in warned), warned
        assert "t.row: names 1 threads, the trace has 2: generic thread names" in warned, warned
        assert exp.definitions.flags["pcf"] is False
    prv.with_suffix(".row").write_bytes(b"\x00\x01garbage")
    with open_experiment(prv, tmp_path / "cache2") as exp:
        assert any(w.startswith("t.row: no LEVEL section in it (not a .row?)") for w in exp.definitions.warnings)
