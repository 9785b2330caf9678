"""Cube reader on small .cubex archives built here: layout variants (byte
order, ZCUBEX, gzip anchor, index enumeration), the derived time hierarchy
and every kind of bad input."""
from __future__ import annotations

import gzip
import io
import random
import tarfile
import zlib

import numpy as np
import pytest

import popview
from popview.cache.profile_store import read_profile
from popview.readers.cube import load
from popview.readers.errors import InputError

# Call tree: main > [foo > [MPI_Send], !$omp parallel > [!$omp implicit barrier]]
# Pre-order ids 0..4; CubeLib's "children first" order for inclusive metrics is 0, 1, 3, 2, 4.
REGIONS = [("main", "user", "function"), ("foo", "compiler", "function"), ("MPI_Send", "mpi", "point2point"),
           ("!$omp parallel @a.c:1", "openmp", "parallel"), ("!$omp implicit barrier @a.c:9", "openmp", "implicit barrier")]
PARENT = np.array([-1, 0, 1, 0, 3])
CHILDREN_FIRST = [0, 1, 3, 2, 4]
# Exclusive time (call path x location); locations: rank 0 threads 0/1, rank 1 threads 0/1.
TIME = np.array([[1.0, 0.0, 1.5, 0.0],
                 [2.0, 0.25, 2.5, 0.0],
                 [0.5, 0.0, 0.75, 0.0],
                 [4.0, 3.5, 4.5, 3.0],
                 [0.25, 0.5, 0.125, 1.0]])
VISITS = np.array([[1, 0, 1, 0], [3, 1, 3, 0], [10, 0, 12, 0], [2, 2, 2, 2], [2, 2, 2, 2]], np.uint64)


def inclusive(excl: np.ndarray) -> np.ndarray:
    incl = excl.astype(np.float64).copy()
    for cp in range(len(PARENT) - 1, 0, -1):
        incl[PARENT[cp]] += incl[cp]
    return incl


def cnode_xml(cp: int = 0) -> str:
    kids = "".join(cnode_xml(c) for c in np.flatnonzero(PARENT == cp))
    return f'<cnode id="{cp}" calleeId="{cp}">{kids}</cnode>'


def anchor_xml(extra_metric: str = "", version: str = "4.4") -> str:
    regions = "".join(
        f'<region id="{i}" mod="a.c" begin="{i + 1}" end="99"><name>{n}</name><mangled_name>{n}</mangled_name>'
        f"<paradigm>{p}</paradigm><role>{r}</role><url></url><descr></descr></region>"
        for i, (n, p, r) in enumerate(REGIONS))
    groups = "".join(
        f"<locationgroup Id=\"{g}\"><name>MPI Rank {g}</name><rank>{g}</rank><type>process</type>"
        + "".join(f'<location Id="{2 * g + t}"><name>thread {t}</name><rank>{t}</rank><type>thread</type></location>'
                  for t in range(2)) + "</locationgroup>" for g in range(2))
    coords = "".join(f'<coord locId="{i}">{i // 2} {i % 2}</coord>' for i in range(4))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<cube version="{version}"><attr key="Creator" value="Score-P 9.9"/>
<metrics>
<metric id="0" type="EXCLUSIVE"><disp_name>Visits</disp_name><uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom><url></url><descr>Number of visits</descr></metric>
<metric id="1" type="INCLUSIVE"><disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom><url></url><descr>Total time</descr></metric>
{extra_metric}
</metrics>
<program>{regions}{cnode_xml()}</program>
<system><systemtreenode Id="0"><name>machine</name><class>machine</class>
<systemtreenode Id="1"><name>node0</name><class>node</class>{groups}</systemtreenode></systemtreenode>
<topologies><cart name="Grid" ndims="2"><dim name="X" size="2" periodic="true"/><dim name="Y" size="2" periodic="false"/>
{coords}</cart></topologies></system></cube>"""


def index_bytes(rows: list[int], order: str = "<") -> bytes:
    i4, i2 = np.dtype("i4").newbyteorder(order), np.dtype("i2").newbyteorder(order)
    return (b"CUBEX.INDEX" + np.array([1], i4).tobytes() + np.array([0], i2).tobytes() + b"\x01"
            + np.array([len(rows)], i4).tobytes() + np.array(rows, i4).tobytes())


def data_bytes(values: np.ndarray, dtype: str, order: str = "<", compressed: bool = False) -> bytes:
    raw = np.ascontiguousarray(values, np.dtype(dtype).newbyteorder(order)).tobytes()
    if not compressed:
        return b"CUBEX.DATA" + raw
    i8 = np.dtype("i8").newbyteorder(order)
    half = len(raw) // 2
    segments = [zlib.compress(raw[:half]), zlib.compress(raw[half:])]
    table = np.array([[0, 0, len(segments[0])], [half, len(segments[0]), len(segments[1])]], i8)
    return b"ZCUBEX.DATA" + np.array([2], i8).tobytes() + table.tobytes() + b"".join(segments)


def members(order: str = "<", compressed: bool = False, gz_anchor: bool = False) -> dict[str, bytes]:
    anchor = anchor_xml().encode()
    return {
        "anchor.xml": gzip.compress(anchor) if gz_anchor else anchor,
        "0.index": index_bytes(list(range(5)), order),
        "0.data": data_bytes(VISITS, "u8", order, compressed),
        "1.index": index_bytes(list(range(5)), order),
        "1.data": data_bytes(inclusive(TIME)[CHILDREN_FIRST], "f8", order, compressed),
    }


def write_cubex(path, content: dict[str, bytes]) -> None:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in content.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("compressed", [False, True])
def test_values_round_trip_every_layout(tmp_path, order, compressed):
    path = tmp_path / "p.cubex"
    write_cubex(path, members(order, compressed, gz_anchor=compressed))
    _, profile, warnings = load(path)
    assert warnings == []
    np.testing.assert_allclose(profile.matrix("time"), TIME, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(profile.matrix("visits"), VISITS.astype(float))
    np.testing.assert_allclose(profile.inclusive_totals("time"), inclusive(TIME).sum(axis=1))
    assert profile.path(2) == "main/foo/MPI_Send"


def test_location_ids_order_the_data_columns(tmp_path):
    """Columns follow location Ids, which need not follow the system tree."""
    content = members()
    swapped = content["anchor.xml"].decode().replace('<location Id="1">', '<location Id="X">') \
        .replace('<location Id="2">', '<location Id="1">').replace('<location Id="X">', '<location Id="2">')
    content["anchor.xml"] = swapped.encode()
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    _, profile, _ = load(path)
    np.testing.assert_allclose(profile.matrix("time"), TIME[:, [0, 2, 1, 3]])


def test_derived_time_hierarchy_follows_paradigms_and_roles(tmp_path):
    path = tmp_path / "p.cubex"
    write_cubex(path, members())
    _, p, _ = load(path)
    worker = np.array([False, True, False, True])
    outside_parallel = np.array([True, True, True, False, False])
    idle = outside_parallel[:, None] & worker[None, :]
    np.testing.assert_allclose(p.matrix("mpi_p2p"), np.where(idle, 0, TIME) * (np.arange(5) == 2)[:, None])
    np.testing.assert_allclose(p.matrix("omp_sync"), TIME * (np.arange(5) == 4)[:, None])
    np.testing.assert_allclose(p.matrix("omp_idle"), np.where(idle, TIME, 0))
    parts = sum(p.matrix(m) for m in ("comp", "mpi", "omp", "io", "other"))
    np.testing.assert_allclose(parts, TIME, atol=1e-12)
    master = np.array([0, 0, 2, 2])
    np.testing.assert_allclose(p.matrix("omp_idle_threads"), np.where(idle, TIME[:, master] - TIME, 0))
    assert {m.id: m.parent for m in p.metrics}["mpi_p2p"] == "mpi"
    assert all(m.kind == "derived" for m in p.metrics if m.id in ("comp", "mpi", "omp", "omp_idle"))


def test_convert_into_cache_and_read_back(tmp_path, cache_dir):
    path = tmp_path / "p.cubex"
    write_cubex(path, members())
    with popview.open(path, cache_dir=cache_dir) as exp:
        d = exp.definitions
        assert (d.source_format, d.tool, exp.label) == ("cube", "Score-P 9.9", "2x2")
        assert [r.paradigm for r in d.regions] == [r[1] for r in REGIONS]
        np.testing.assert_array_equal(d.callpath_parent, PARENT)
        assert d.topologies == [{"name": "Grid", "dims": [2, 2], "periodic": [True, False], "dim_names": ["X", "Y"],
                                 "coords": {"0": [0, 0], "1": [0, 1], "2": [1, 0], "3": [1, 1]}}]
        info = exp.info()
        assert info["metrics"][:2] == ["visits", "time"] and "comp" in info["metrics"]
        assert info["callpaths"] == 5
        profile = read_profile(exp.reader.h5["profile"])
    np.testing.assert_allclose(profile.matrix("time"), TIME)
    assert profile.metric("time").unit == "sec"
    assert [r.name for r in profile.regions] == [r[0] for r in REGIONS]


def test_unsupported_data_type_is_a_warning(tmp_path):
    extra = ('<metric id="2" type="EXCLUSIVE"><disp_name>H</disp_name><uniq_name>hist</uniq_name>'
             "<dtype>HISTOGRAM(5)</dtype><uom></uom><url></url><descr></descr></metric>")
    content = members()
    content["anchor.xml"] = anchor_xml(extra).encode()
    content["2.index"] = index_bytes(list(range(5)))
    content["2.data"] = data_bytes(np.zeros((5, 4 * 7)), "f8")
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    _, profile, warnings = load(path)
    assert not profile.has("hist")
    assert any("HISTOGRAM(5)" in w and "not support" in w for w in warnings)


def test_accelerator_locations_are_gpu_locations(tmp_path):
    content = members()
    text = content["anchor.xml"].decode()
    content["anchor.xml"] = text.replace('<location Id="3"><name>thread 1</name><rank>1</rank><type>thread</type>',
                                         '<location Id="3"><name>CUDA[0:7]</name><rank>1</rank><type>accelerator</type>').encode()
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    parsed, profile, _ = load(path)
    assert [loc.kind for loc in parsed.locations] == ["thread", "thread", "thread", "gpu"]
    assert profile.matrix("omp_idle")[:, 3].sum() == 0          # a GPU stream is not an idle OpenMP thread


def test_old_cube_4_0_system_tree_and_inferred_roles(tmp_path):
    text = anchor_xml(version="4.0")
    start, end = text.index("<system>"), text.index("</system>")
    system = ('<system><machine Id="0"><name>m</name><node Id="0"><name>n0</name>'
              + "".join(f'<process Id="{g}"><name>MPI Rank {g}</name><rank>{g}</rank>'
                        + "".join(f'<thread Id="{2 * g + t}"><name>t{t}</name><rank>{t}</rank></thread>' for t in range(2))
                        + "</process>" for g in range(2))
              + "</node></machine><topologies></topologies>")
    text = text[:start] + system + text[end:]
    text = text.replace("<paradigm>mpi</paradigm><role>point2point</role><url></url><descr></descr>",
                        "<url></url><descr>mpi</descr>")
    content = members()
    content["anchor.xml"] = text.encode()
    path = tmp_path / "old.cubex"
    write_cubex(path, content)
    parsed, profile, _ = load(path)
    assert [loc.thread for loc in parsed.locations] == [0, 1, 0, 1]
    assert parsed.nodes == ["n0"] and [p.node for p in parsed.processes] == [0, 0]
    assert (parsed.regions[2].paradigm, parsed.regions[2].role) == ("mpi", "point2point")
    assert profile.matrix("mpi_p2p")[2, 0] == TIME[2, 0]


# ---- bad input ---------------------------------------------------------------------------------

def expect_error(tmp_path, path, *fragments):
    before = set(tmp_path.parent.rglob("*"))
    with pytest.raises(InputError) as err:
        load(path)
    message = str(err.value)
    assert str(path) in message
    for f in fragments:
        assert f in message, message
    assert set(tmp_path.parent.rglob("*")) == before      # nothing extracted or written anywhere
    return message


def test_not_a_tar(tmp_path):
    path = tmp_path / "junk.cubex"
    path.write_bytes(b"this is not a tar archive at all" * 40)
    expect_error(tmp_path, path, "not a Cube archive")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.cubex"
    path.write_bytes(b"")
    expect_error(tmp_path, path, "not a Cube archive")


@pytest.mark.parametrize("member", ["anchor.xml", "1.data", "1.index"])
def test_missing_member(tmp_path, member):
    content = members()
    del content[member]
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    expect_error(tmp_path, path, member, "missing")


@pytest.mark.parametrize("name", ["../evil.xml", "/etc/evil.xml", "a/../../evil.xml"])
def test_unsafe_member_names(tmp_path, name):
    path = tmp_path / "p.cubex"
    write_cubex(path, {**members(), name: b"x"})
    expect_error(tmp_path, path, "unsafe tar member name")
    assert not (tmp_path.parent / "evil.xml").exists()


def test_truncated_archive(tmp_path):
    path = tmp_path / "p.cubex"
    write_cubex(path, members())
    raw = path.read_bytes()
    end = raw.index(b"CUBEX.DATA") + 40                    # cut inside the first data member
    path.write_bytes(raw[:end])
    expect_error(tmp_path, path, "truncated")


def test_data_shorter_than_index(tmp_path):
    content = members()
    content["1.data"] = content["1.data"][:-16]
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    expect_error(tmp_path, path, "1.data", "index announces")


def test_index_naming_unknown_call_paths(tmp_path):
    content = members()
    content["1.index"] = index_bytes([0, 1, 2, 3, 99])
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    expect_error(tmp_path, path, "1.index", "call paths")


def test_corrupt_compressed_data(tmp_path):
    content = members(compressed=True)
    data = bytearray(content["1.data"])
    data[-10:] = b"\0" * 10
    content["1.data"] = bytes(data)
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    expect_error(tmp_path, path, "1.data")


def test_broken_xml(tmp_path):
    path = tmp_path / "p.cubex"
    write_cubex(path, {**members(), "anchor.xml": anchor_xml().encode()[:-40]})
    expect_error(tmp_path, path, "anchor.xml", "not well-formed")


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE cube [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<cube version="4.4"><attr key="Creator" value="&d;"/></cube>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE cube [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<cube version="4.4"><attr key="Creator" value="&secret;"/></cube>"""


@pytest.mark.parametrize("xml", [BILLION_LAUGHS, EXTERNAL_ENTITY], ids=["billion-laughs", "external-entity"])
def test_hostile_xml_is_refused(tmp_path, xml):
    path = tmp_path / "p.cubex"
    write_cubex(path, {**members(), "anchor.xml": xml.encode()})
    expect_error(tmp_path, path, "anchor.xml refused")


def test_bad_checksum_is_read_with_a_warning(tmp_path):
    path = tmp_path / "p.cubex"
    write_cubex(path, members())
    raw = bytearray(path.read_bytes())
    raw[148:156] = b"0000001\0"                             # first header: wrong checksum
    path.write_bytes(bytes(raw))
    _, profile, warnings = load(path)
    assert any("checksum" in w for w in warnings)
    np.testing.assert_allclose(profile.matrix("time"), TIME)


def test_convert_failure_leaves_no_cache(tmp_path, cache_dir):
    content = members()
    content["1.data"] = content["1.data"][:-16]
    path = tmp_path / "p.cubex"
    write_cubex(path, content)
    with pytest.raises(InputError):
        popview.open(path, cache_dir=cache_dir)
    assert list(cache_dir.rglob("*.h5")) == [] and not list(cache_dir.rglob("*.tmp"))


def test_corrupted_archives_fail_cleanly(tmp_path):
    """Random byte damage anywhere: either it loads or InputError says why; nothing else escapes."""
    path = tmp_path / "p.cubex"
    write_cubex(path, members(compressed=True))
    base = path.read_bytes()
    anchor_start, anchor_end = base.index(b"<metrics>"), base.index(b"</system>")
    rng = random.Random(7)
    for _ in range(400):
        raw = bytearray(base)
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 4)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        elif rng.random() < 0.5:
            raw = raw[:rng.randrange(len(raw))]
        else:
            raw[rng.randrange(anchor_start, anchor_end)] = rng.choice(b'<>"=/ 0123456789xyz&;')
        path.write_bytes(bytes(raw))
        try:
            load(path)
        except InputError as exc:
            assert str(path) in str(exc)
