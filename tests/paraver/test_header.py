import pytest

from popview.readers.errors import InputError
from popview.readers.paraver.header import parse_communicator, parse_header


def test_modern_header_with_cpus_and_comms():
    h = parse_header("#Paraver (09/10/2019 at 16:09):11528373565_ns:1(2):1:2(1:1,1:1),3", "x.prv")
    assert h.date == "09/10/2019 at 16:09"
    assert h.end_time == 11528373565 and h.unit_ns == 1.0
    assert h.cpus_per_node == [2]
    assert [[t.threads for t in app] for app in h.applications] == [[1, 1]]
    assert h.n_communicators == 3


def test_uneven_node_mapping():
    h = parse_header("#Paraver (25/10/2018 at 14:04):1871482775_ns:4(13,1,1,1):1:"
                     "16(1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:2,1:3,1:4),17", "p.prv")
    nodes = [t.node for t in h.applications[0]]
    assert nodes[:13] == [0] * 13 and nodes[13:] == [1, 2, 3]
    assert h.cpus_per_node == [13, 1, 1, 1]


def test_old_header_without_unit_is_microseconds():
    h = parse_header("#Paraver (26/01/04 at 16:35):260199:4:1:4(1:1,1:2,1:3,1:4),8", "q.prv")
    assert h.unit_ns == 1000.0 and h.end_time == 260199
    assert h.cpus_per_node == [1, 1, 1, 1]
    assert h.n_locations == 4


@pytest.mark.parametrize("suffix,unit", [("_ns", 1.0), ("_us", 1000.0), ("_ms", 1e6), ("", 1000.0)])
def test_time_units(suffix, unit):
    assert parse_header(f"#Paraver (d):5{suffix}:1(1):1:1(1:1),0", "u.prv").unit_ns == unit


def test_two_applications():
    h = parse_header("#Paraver (21/01/2022 at 16:37):1616378951_ns:1(20):2:8(1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1),"
                     "12(1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1,1:1),14", "two.prv")
    assert [len(a) for a in h.applications] == [8, 12]
    assert h.n_communicators == 14


def test_threads_per_task():
    h = parse_header("#Paraver (d):100_ns:2(4,4):1:2(4:1,4:2),0", "h.prv")
    assert [t.threads for t in h.applications[0]] == [4, 4]
    assert [t.node for t in h.applications[0]] == [0, 1]


@pytest.mark.parametrize("line,fragment", [
    ("hello world", "not a Paraver trace"),
    ("#Paraver (d):abc_ns:1(1):1:1(1:1),0", "end time is not an integer"),
    ("#Paraver (d):100_ns:1(1):2:1(1:1),0", "announces 2 applications"),
    ("#Paraver (d):100_ns:2(1):1:1(1:1),0", "does not match its CPU list"),
    ("#Paraver (d):100_ns", "fields"),
])
def test_bad_headers_name_the_problem(line, fragment):
    with pytest.raises(InputError) as err:
        parse_header(line, "bad.prv")
    assert "bad.prv" in str(err.value) and "line 1" in str(err.value)
    assert fragment in str(err.value)


def test_communicator_line():
    assert parse_communicator("c:1:2:3:1:4:5") == {"appl": 0, "id": 2, "tasks": [0, 3, 4]}
    assert parse_communicator("c:x") is None
