"""Converting small hand-written traces: every record kind, every problem."""
import gzip
import os

import numpy as np
import pytest

import popview
from popview.readers.errors import InputError
from tests.paraver.prvtext import BODY, write_trace


def test_records_and_definitions(tmp_path, cache_dir):
    exp = popview.open(write_trace(tmp_path), cache_dir=cache_dir)
    r, d = exp.reader, exp.definitions
    assert exp.label == "2x1" and d.t_end == 1000
    states = r.read("states")
    assert states["loc"].tolist() == [0, 0, 1, 1]
    assert states["begin"].tolist() == [0, 600, 0, 800]
    assert states["state"].tolist() == [1, 13, 1, 13]
    ev = r.read("events", locations=[1])
    assert ev["type"].tolist() == [60000019, 50000002, 42000050, 42000059, 50000002, 60000019]
    assert ev["value"].tolist() == [1, 10, 2400, 800, 0, 0]
    msg = r.read("messages")
    assert msg["send_loc"].tolist() == [0] and msg["recv_loc"].tolist() == [1]
    assert (msg["send_time"][0], msg["send_phys"][0], msg["recv_time"][0], msg["recv_phys"][0]) == (100, 110, 300, 310)
    assert (msg["size"][0], msg["tag"][0]) == (64, 7)
    assert d.nodes == ["nodeA"] and [loc.name for loc in d.locations] == ["THREAD 1.1.1", "THREAD 1.2.1"]
    assert d.paradigms == ["mpi"]
    assert set(d.counters) == {"PAPI_TOT_INS", "PAPI_TOT_CYC"}
    assert d.communicators == [{"appl": 0, "id": 1, "tasks": [0, 1]}]
    exp.close()


def test_call_paths_nest_mpi_inside_user_function(tmp_path, cache_dir):
    with popview.open(write_trace(tmp_path), cache_dir=cache_dir) as exp:
        d = exp.definitions
        calls = exp.reader.read("calls")
        names = [d.callpath_name(cp) for cp in calls["callpath"]]
        assert names == ["main_loop", "main_loop/MPI_Allreduce", "main_loop", "main_loop/MPI_Allreduce"]
        assert calls["begin"].tolist() == [0, 600, 0, 800]
        assert calls["end"].tolist() == [1000, 1000, 1000, 1000]
        assert calls["depth"].tolist() == [0, 1, 0, 1]
        roles = {d.regions[r].name: d.regions[r].role for r in d.callpath_region}
        assert roles["MPI_Allreduce"] == "collective"


def test_unsorted_records_are_sorted_and_warned(tmp_path, cache_dir):
    lines = BODY.strip().split("\n")
    body = "\n".join([lines[1], lines[0]] + lines[2:]) + "\n"
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        assert exp.reader.read("states", locations=[0])["begin"].tolist() == [0, 600]
        assert any("not in time order" in w for w in exp.definitions.warnings)


def test_gzip_trace_reads_the_same(tmp_path, cache_dir):
    plain = write_trace(tmp_path / "a")
    gz = tmp_path / "a" / "g.prv.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    for ext in (".pcf", ".row"):
        (tmp_path / "a" / f"g{ext}").write_bytes(plain.with_suffix(ext).read_bytes())
    with popview.open(plain, cache_dir=cache_dir) as a, popview.open(gz, cache_dir=cache_dir) as b:
        for table in ("states", "events", "messages", "calls"):
            ra, rb = a.reader.read(table), b.reader.read(table)
            for col in ra:
                assert np.array_equal(ra[col], rb[col]), (table, col)


def test_open_state_end_and_multiple_units(tmp_path, cache_dir):
    header = "#Paraver (d):50:1(1):1:1(1:1),0\n"   # microseconds
    body = "1:1:1:1:1:10:-1:1\n"
    with popview.open(write_trace(tmp_path, body=body, header=header, pcf=None, row=None), cache_dir=cache_dir) as exp:
        s = exp.reader.read("states")
        assert s["begin"].tolist() == [10_000] and s["end"].tolist() == [50_000]
        w = " ".join(exp.definitions.warnings)
        assert "no .pcf" in w and "no .row" in w
        assert exp.definitions.locations[0].name == "THREAD 1.1.1"


def test_multi_pair_events_and_hybrid_threads(tmp_path, cache_dir):
    header = "#Paraver (d):100_ns:1(4):1:2(2:1,2:1),0\n"
    body = ("1:1:1:1:1:0:100:1\n1:2:1:1:2:0:100:7\n1:3:1:2:1:0:100:1\n1:4:1:2:2:0:100:0\n"
            "2:1:1:1:1:5:60000001:3:60000018:9:42000050:10\n2:1:1:1:1:50:60000018:0:60000001:0\n")
    with popview.open(write_trace(tmp_path, body=body, header=header), cache_dir=cache_dir) as exp:
        assert exp.label == "2x2"
        assert exp.reader.count("events") == 5
        assert set(exp.definitions.paradigms) == {"openmp"}
        assert exp.definitions.location_process().tolist() == [0, 0, 1, 1]


# ---- bad input ---------------------------------------------------------

@pytest.mark.parametrize("body,problem,line", [
    ("1:1:1:1:1:0:100:1\n1:1:1:1:1:garbage\n", "malformed record", 4),
    ("1:1:1:1:1:0:100:1\n9:1:1:1:1:0:1:1\n", "unknown record type", 4),
    ("1:1:1:1:1:0:100:1\n1:1:1:1:1:500:400:1\n", "ends before it begins", 4),
    ("1:1:1:1:1:0:100:1\n1:1:1:7:1:0:100:1\n", "task or thread the header does not have", 4),
    ("1:1:1:1:1:0:100:1\n1:1:1:1:3:0:100:1\n", "task or thread the header does not have", 4),
    ("1:1:1:1:1:0:100:1\n2:1:1:1:1:5000:1:1\n", "after the header's end time", 4),
    ("1:1:1:1:1:0:100:1\n2:1:1:1:1:10:1\n", "malformed record", 4),
    ("1:1:1:1:1:0:100:1\n3:1:1:1:1:1:1:1:1:2:1:5\n", "malformed record", 4),
])
def test_bad_records_are_counted_with_file_and_line(tmp_path, cache_dir, body, problem, line):
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        warnings = [w for w in exp.definitions.warnings if problem in w]
        assert warnings, exp.definitions.warnings
        assert "t.prv" in warnings[0] and f"first at line {line}" in warnings[0]
        assert exp.reader.count("states") == 1


def test_many_bad_lines_are_summarised(tmp_path, cache_dir):
    body = "1:1:1:1:1:0:100:1\n" + "x:bad\n" * 500
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        bad = [w for w in exp.definitions.warnings if "unknown record type" in w]
        assert len(bad) == 1 and "500 x" in bad[0]


def test_truncated_last_line(tmp_path, cache_dir):
    body = "1:1:1:1:1:0:100:1\n1:2:1:2:1:0:1"
    with popview.open(write_trace(tmp_path, body=body), cache_dir=cache_dir) as exp:
        w = " ".join(exp.definitions.warnings)
        assert "no newline" in w and "malformed record (first at line 4)" in w


@pytest.mark.parametrize("content,fragment", [
    (b"", "empty file"),
    (b"#Paraver (d):100_ns:1(1):1:1(1:1),0\n", "no valid records"),
    (b"#Paraver (d):100_ns:1(1):1:1(1:1),0\nzzz\n", "no valid records"),
    (b"\x00\x01\x02binary\xff\xfe" * 10, "not a Paraver"),
    (b"#Paraver (d):100_ns:1(1):1:1(1:1),0\n\x00\xff\x00\xff\n", "no valid records"),
])
def test_fatal_inputs_raise_a_clear_error_and_leave_no_cache(tmp_path, cache_dir, content, fragment):
    p = tmp_path / "bad.prv"
    p.write_bytes(content)
    with pytest.raises(InputError) as err:
        popview.open(p, cache_dir=cache_dir)
    assert "bad.prv" in str(err.value) and fragment in str(err.value)
    assert os.listdir(cache_dir) == []


def test_directory_and_missing_path(tmp_path, cache_dir):
    with pytest.raises(InputError, match="directory without a trace"):
        popview.open(tmp_path, cache_dir=cache_dir)
    with pytest.raises(InputError, match="no such file"):
        popview.open(tmp_path / "nope.prv", cache_dir=cache_dir)


def test_unknown_header_is_rejected(tmp_path, cache_dir):
    p = tmp_path / "x.prv"
    p.write_text("#Paraver (d):100_ns:1(1):2:1(1:1),0\n1:1:1:1:1:0:100:1\n")
    with pytest.raises(InputError, match="line 1: header announces 2 applications"):
        popview.open(p, cache_dir=cache_dir)


def test_cli_exit_codes(tmp_path, cache_dir, capsys):
    from popview.cli import main

    good = write_trace(tmp_path)
    assert main(["info", str(good), "--cache-dir", str(cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 processes x 1 thread, 1 node, 1 application" in out and "PAPI_TOT_INS" in out and "paradigms   mpi" in out
    bad = tmp_path / "bad.prv"
    bad.write_text("nonsense\n")
    assert main(["info", str(bad), "--cache-dir", str(cache_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.prv" in err
    assert main(["convert", str(good), "--cache-dir", str(cache_dir)]) == 0
    assert "cache up to date" in capsys.readouterr().out


@pytest.mark.parametrize("size, spread", [(0, 1), (1, 1), (5000, 7), (5000, 100000), (300, 10**9)])
def test_distinct_event_types_equal_numpy_unique(size, spread):
    from popview.readers.paraver.body import distinct

    values = np.random.default_rng(size).integers(-spread, spread, size).astype(np.int32)
    assert sorted(distinct(values).tolist()) == np.unique(values).tolist()


def test_each_thread_s_cpu_and_the_nodes_cpus_for_paraver_s_cpu_rows(tmp_path, cache_dir):
    d = popview.open(write_trace(tmp_path), cache_dir=cache_dir).definitions
    assert d.flags["thread_cpus"] == [0, 1] and d.flags["cpus_per_node"] == [2]          # 0-based CPUs
    assert d.flags["cpu_names"] == ["1.nodeA", "2.nodeA"] and d.flags["node_names"] == ["nodeA"]
    moved = BODY.replace("2:2:1:2:1:1000:", "2:1:1:2:1:1000:")       # thread 1.2.1's last event on CPU 1
    d = popview.open(write_trace(tmp_path / "moved", body=moved), cache_dir=cache_dir).definitions
    assert d.flags["thread_cpus"] == [0, -1]


def test_cpus_of_blocks_merge_as_one():
    from popview.readers.paraver.body import NO_CPU_YET, SEVERAL_CPUS, merge_cpus

    a = np.array([NO_CPU_YET, 3, 3, 1, NO_CPU_YET])
    b = np.array([2, NO_CPU_YET, 3, 2, NO_CPU_YET])
    assert merge_cpus(a, b).tolist() == [2, 3, 3, SEVERAL_CPUS, NO_CPU_YET]


def test_a_gzip_trace_cut_short_says_so(tmp_path, cache_dir):
    """A .prv.gz whose download or copy stopped said 'cannot read: Compressed file ended before
    the end-of-stream marker was reached' (Python's words): the file is named, and what that means."""
    import random

    from popview.readers import InputError

    rng = random.Random(3)
    body = "".join(f"1:1:1:1:1:{i * 10}:{i * 10 + 10}:{rng.choice((1, 3))}\n" for i in range(50000))
    header = "#Paraver (01/02/2024 at 10:00):500000_ns:1(1):1:1(1:1),0\n"
    data = gzip.compress((header + body).encode())
    gz = tmp_path / "cut" / "g.prv.gz"
    gz.parent.mkdir()
    gz.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"g\.prv\.gz: the compressed data end early \(a truncated \.gz file\?\)"):
        popview.open(gz, cache_dir=cache_dir)
