"""Cube4 export (popview.readers.cube.export): read back by popview's own Cube reader and by
pycubexr, on synthetic profiles, an algebra result and the real TeaLeaf profile."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis import algebra
from popview.readers.cube.export import write_cubex
from popview.model.definitions import Definitions, Location, Process, Region
from popview.model.profile import MetricDef, MetricValues, Profile
from popview.readers.cube import load
from popview.testing.synthetic_profile import random_profile, small_definitions, small_profile

pycubexr = pytest.importorskip("pycubexr")

TEALEAF = "archer2-scalasca/scorep_tea_leaf_baseline_8x12_trace/scout.cubex"


def assert_same_totals(p: Profile, q: Profile, rel: float = 1e-9) -> int:
    """Every metric with values: same exclusive and inclusive total per call path."""
    assert q.n_callpaths == p.n_callpaths and q.n_locations == p.n_locations
    assert [q.name(c) for c in range(q.n_callpaths)] == [p.name(c) for c in range(p.n_callpaths)]
    checked = 0
    for m in p.metrics:
        if m.id not in p.values:
            continue
        for which in ("exclusive_totals", "inclusive_totals"):
            ours, back = getattr(p, which)(m.id), getattr(q, which)(m.id)
            np.testing.assert_allclose(back, ours, rtol=rel, atol=rel * max(1.0, float(np.abs(ours).max(initial=0))),
                                       err_msg=f"{m.id} {which}")
        checked += 1
    return checked


def pycubexr_exclusive(path, metric_ids: list[str]) -> dict[str, np.ndarray]:
    """Exclusive total per cnode id of each metric, as pycubexr reads the file."""
    out = {}
    with pycubexr.CubexParser(path) as cube:
        cnodes = sorted(cube.all_cnodes(), key=lambda c: c.id)
        assert len(cube.get_locations()) == values_locations(cube, metric_ids[0])
        for ident in metric_ids:
            metric = cube.get_metric_by_name(ident)
            values = cube.get_metric_values(metric)
            out[ident] = np.array([values.cnode_values(c, convert_to_exclusive=True).sum() for c in cnodes])
    return out


def values_locations(cube, ident: str) -> int:
    return cube.get_metric_values(cube.get_metric_by_name(ident)).num_locations()


def test_small_profile_round_trip_with_its_system_tree(tmp_path):
    p, d = small_profile(), small_definitions()
    e = write_cubex(tmp_path / "small.cubex", p, d)
    assert e.system_tree == "definitions" and e.metrics[0] == "time" and not e.notes
    parsed, q, warnings = load(tmp_path / "small.cubex")
    assert not warnings
    assert assert_same_totals(p, q) == 7
    for m in p.metrics:                               # per location too: the system tree keeps the order
        np.testing.assert_array_equal(q.matrix(m.id), p.matrix(m.id))
    assert [m.parent for m in q.metrics] == [m.parent for m in p.metrics]
    assert [(m.name, m.unit) for m in q.metrics] == [(m.name, m.unit) for m in p.metrics]
    assert parsed.nodes == ["n0", "n1"]
    assert [(x.name, x.process, x.thread, x.kind) for x in parsed.locations] == \
        [(x.name, x.process, x.thread, x.kind) for x in d.locations]
    assert [(r.name, r.paradigm, r.role) for r in q.regions] == [(r.name, r.paradigm, r.role) for r in p.regions]


def test_random_profile_through_pycubexr(tmp_path):
    p = random_profile(3000, 48, seed=3)
    path = tmp_path / "random.cubex"
    e = write_cubex(path, p)
    assert e.system_tree == "flat"
    _, q, _ = load(path)
    assert assert_same_totals(p, q) == 3
    theirs = pycubexr_exclusive(path, ["time", "comp", "visits"])
    for ident, values in theirs.items():
        np.testing.assert_allclose(values, p.exclusive_totals(ident), rtol=1e-12, err_msg=ident)


def test_locations_out_of_system_tree_order_and_hostile_names(tmp_path):
    """Locations listed rank-interleaved are written in system-tree order (Cube ids follow it);
    names with XML markup and control characters are escaped."""
    regions = [Region('main<&>"x"', file="dir/\"it's\".f90"), Region("f\x01g"), Region("MPI_Send", "mpi", "point2point")]
    locs = [Location("p0 t0", 0, 0), Location("p1 t0", 1, 0), Location("p0 t1", 0, 1), Location("p1 t1", 1, 1)]
    d = Definitions(nodes=["node <a>"], processes=[Process("rank 0", 0, rank=0), Process("rank 1", 0, rank=1)],
                    locations=locs)
    dense = np.arange(12, dtype=float).reshape(3, 4) + 1
    p = Profile(regions, [-1, 0, 0], [0, 1, 2], 4, [MetricDef("time", "Time & more", "sec", "a < b")],
                {"time": MetricValues.from_dense(dense)})
    write_cubex(tmp_path / "x.cubex", p, d)
    parsed, q, _ = load(tmp_path / "x.cubex")
    assert q.regions[0].name == 'main<&>"x"' and q.regions[1].name == "f\ufffdg"
    assert q.regions[0].file == "dir/\"it's\".f90"
    assert q.metrics[0].name == "Time & more" and q.metrics[0].description == "a < b"
    assert [x.name for x in parsed.locations] == ["p0 t0", "p0 t1", "p1 t0", "p1 t1"]
    np.testing.assert_array_equal(q.matrix("time"), dense[:, [0, 2, 1, 3]])


def test_cube_constraints_processes_without_locations_and_topologies(tmp_path):
    """CubeLib refuses a location group without locations and coordinates out of range: neither
    is written; a profile without metrics is refused."""
    p = small_profile()
    d = small_definitions()
    d.processes.append(d.processes[0].__class__("idle rank", node=1, rank=2))
    d.topologies = [{"name": "grid", "dims": [2, 2], "periodic": [False, True], "dim_names": ["x", "y"],
                     "coords": {"0": [0, 0], "1": [0, 1], "2": [1, 0], "3": [1, 5], "4": [-1, 0]}},
                    {"name": "empty", "dims": [], "coords": {}}]
    write_cubex(tmp_path / "c.cubex", p, d)
    parsed, _, _ = load(tmp_path / "c.cubex")
    assert [x.name for x in parsed.processes] == ["rank 0", "rank 1"]
    assert len(parsed.topologies) == 1
    topo = parsed.topologies[0]
    assert topo["dims"] == [2, 2] and topo["periodic"] == [False, True] and topo["dim_names"] == ["x", "y"]
    assert topo["coords"] == {"0": [0, 0], "1": [0, 1], "2": [1, 0]}
    empty = Profile(p.regions, p.callpath_parent, p.callpath_region, p.n_locations)
    with pytest.raises(ValueError, match="nothing to export"):
        write_cubex(tmp_path / "e.cubex", empty)
    assert not (tmp_path / "e.cubex").exists()


def test_metrics_without_values_are_left_out_and_children_move_up(tmp_path):
    p = small_profile()
    del p.values["mpi"]                              # as a CubePL-derived metric popview does not evaluate
    e = write_cubex(tmp_path / "m.cubex", p, small_definitions())
    assert "mpi" not in e.metrics and "left out" in e.notes[0]
    _, q, _ = load(tmp_path / "m.cubex")
    parents = {m.id: m.parent for m in q.metrics}
    assert parents["mpi_p2p"] == "time" and parents["mpi_collective"] == "time"


def test_max_metric_keeps_its_aggregation(tmp_path):
    dense = np.array([[3.0, 0.0], [5.0, 1.0], [0.0, 2.0]])
    p = Profile([Region("a"), Region("b"), Region("c")], [-1, 0, 1], [0, 1, 2], 2,
                [MetricDef("max_time", "Max", "sec", aggregation="max")],
                {"max_time": MetricValues.from_dense(dense)})
    write_cubex(tmp_path / "max.cubex", p)
    _, q, _ = load(tmp_path / "max.cubex")
    assert q.metrics[0].aggregation == "max"
    np.testing.assert_array_equal(q.inclusive_totals("max_time"), [5.0, 5.0, 2.0])


def test_algebra_result_exports(tmp_path):
    a, b = small_profile(), small_profile()
    d = algebra.difference(a, b)
    write_cubex(tmp_path / "zero.cubex", d.profile, small_definitions())
    _, q, _ = load(tmp_path / "zero.cubex")
    for m in q.metrics:
        assert not np.any(q.matrix(m.id)), m.id


def test_the_target_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    target = tmp_path / "t.cubex"
    target.write_bytes(b"old")
    import popview.readers.cube.export as cubex

    def broken(*a, **k):
        raise RuntimeError("disk full")
    monkeypatch.setattr(cubex, "_metric_data", broken)
    with pytest.raises(RuntimeError):
        write_cubex(target, small_profile())
    assert target.read_bytes() == b"old"
    assert [f.name for f in tmp_path.iterdir()] == ["t.cubex"]


def test_tealeaf_profile_round_trip(shared_traces, tmp_path):
    src = shared_traces / TEALEAF
    if not src.is_file():
        pytest.skip(f"{src} not available")
    parsed, p, _ = load(src)
    from popview.readers.cube import definitions
    defs = definitions(parsed, p)
    out = tmp_path / "tealeaf.cubex"
    e = write_cubex(out, p, defs)
    assert e.system_tree == "definitions" and e.n_locations == 96
    parsed2, q, _ = load(out)
    assert len(parsed2.processes) == 8 and parsed2.nodes == parsed.nodes
    assert assert_same_totals(p, q) >= 20
    np.testing.assert_allclose(q.matrix("time"), p.matrix("time"), rtol=1e-12)
    assert parsed2.topologies and parsed2.topologies[0]["dims"] == parsed.topologies[0]["dims"]
    sums = [m.id for m in p.metrics if m.id in p.values and m.aggregation == "sum"]
    theirs = pycubexr_exclusive(out, sums)
    for ident in sums:
        ours = p.exclusive_totals(ident)
        np.testing.assert_allclose(theirs[ident], ours, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(ours).max()),
                                   err_msg=ident)
