"""Cube reader on the real .cubex files under ../shared/traces, checked
against the reference values of their MANIFEST and of cube_dump / pycubexr."""
from __future__ import annotations

import csv
import time

import numpy as np
import pytest

import popview
from popview.cache.profile_store import read_profile
from popview.commands.info import render
from popview.model.profile import preorder
from popview.readers.cube import load
from popview.readers.cube.hierarchy import LEAVES

pytestmark = pytest.mark.shared


def cube_files(shared_traces):
    return sorted(shared_traces.rglob("*.cubex"))


def test_every_cubex_opens_and_is_summarised(shared_traces, tmp_path):
    files = cube_files(shared_traces)
    assert len(files) >= 70
    for path in files:
        with popview.open(path, cache_dir=tmp_path / "cache") as exp:
            info = exp.info()
            assert info["format"] == "cube" and info["regions"] > 0 and info["callpaths"] > 0, path
            assert sum(info["locations"].values()) > 0 and info["metrics"], path
            text = render(info)
            assert "metrics" in text and "locations" in text
            profile = read_profile(exp.reader.h5["profile"])
            assert profile.n_callpaths == info["callpaths"]
            np.testing.assert_array_equal(profile.callpath_parent, exp.definitions.callpath_parent)


def callpath_of_cnode(parsed) -> dict[int, int]:
    new = preorder(parsed.cnode_parent)
    return {cid: int(new[i]) for i, cid in enumerate(parsed.cnode_ids.tolist())}


@pytest.mark.parametrize("name", ["blast.p64.r1/profile.cubex", "time.p4.n2000.x1.r0/profile.cubex",
                                  "call_tree_test/call_tree_test.cubex"])
@pytest.mark.parametrize("kind", ["excl", "incl"])
def test_values_equal_cube_dump_csv(shared_traces, name, kind):
    """incl.csv / excl.csv: one row per (cnode id, location id), one column per metric."""
    path = shared_traces / "pycubexr" / name
    parsed, profile, _ = load(path)
    with open(path.parent / f"{kind}.csv", newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    table = np.array([[float(x) for x in r] for r in rows[1:]])
    cp_of = callpath_of_cnode(parsed)
    cps = np.array([cp_of[int(c)] for c in table[:, 0]])
    locs = np.argsort(parsed.location_ids)[table[:, 1].astype(int)]
    checked = 0
    for column, metric in enumerate(header[2:], start=2):
        ours = profile.matrix(metric, inclusive=kind == "incl")[cps, locs]
        theirs = table[:, column]
        if kind == "incl" and profile.metric(metric).aggregation == "min":
            # cube_dump counts a sub-call path a location never visited as a minimum of 0;
            # popview takes the minimum over the visited ones (see docs/formats-cube.md)
            assert (ours >= theirs - 1e-9).all(), f"{name} {metric}"
            ours, theirs = ours[theirs > 0], theirs[theirs > 0]
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-9, err_msg=f"{name} {kind} {metric}")
        checked += 1
    assert checked >= 6


def test_minimum_and_maximum_metrics_are_not_summed(shared_traces, tmp_path):
    """mini-lpt (720 ranks): Maximum Inclusive Time is the longest single visit, never a sum over
    ranks and call paths; it cannot exceed the longest per-rank time of the root."""
    with popview.open(shared_traces / "cubegui-llm-thesis/real_world_profiles/mini-lpt-720-profile.cubex",
                      cache_dir=tmp_path) as exp:
        prof = exp.profile()
        root = int(prof.roots()[0])
        per_rank = prof.by_location("time", root)
        longest = prof.inclusive_totals("max_time")[root]
        shortest = prof.inclusive_totals("min_time")[root]
        assert prof.metric("max_time").aggregation == "max"
        assert 0 < longest <= per_rank.max() * (1 + 1e-9) < prof.inclusive_totals("time")[root] / 100
        assert longest == pytest.approx(prof.by_location("max_time", root).max())
        assert 0 < shortest <= longest
        assert prof.exclusive_totals("max_time")[root] == pytest.approx(prof.matrix("max_time")[root].max())


def test_kripke_visits_per_cnode(shared_traces):
    """MANIFEST 4.5 (pycubexr test_kripke.py): big-endian BG/Q file."""
    parsed, profile, _ = load(shared_traces / "pycubexr/kripke.p8.d2.g32.r1/profile.cubex")
    cp_of = callpath_of_cnode(parsed)
    order = [cp_of[c] for c in sorted(cp_of)]
    exclusive = profile.exclusive_totals("visits")[order]
    assert exclusive.tolist() == [8, 8, 33, 16, 8, 8000, 8000, 8000, 8000, 96000, 169025, 96000, 8000, 8]
    assert profile.inclusive_totals("visits")[order][:5].tolist() == [401106, 8, 33, 16, 401033]
    assert profile.inclusive_totals("time")[order[0]] == pytest.approx(148.63150991125, rel=1e-12)


@pytest.mark.parametrize("name, seconds", [
    ("scorep_bt-mz_C_8x6_sum.def/profile.cubex", 1888.3528), ("scorep_bt-mz_C_8x6_sum.filt/profile.cubex", 563.2024),
    ("scorep_bt-mz_C_8x6_sum.hwc/profile.cubex", 578.4650), ("scorep_bt-mz_C_8x6_trace/profile.cubex", 565.8291),
    ("scorep_bt-mz_C_8x6_trace/scout.cubex", 575.4619), ("scorep_bt-mz_sum/profile.cubex", 1901.2921),
    ("scorep_tea_leaf_baseline_8x12_sum/profile.cubex", 8633.3880),
    ("scorep_tea_leaf_baseline_8x12_trace/scout.cubex", 8859.1088),
    ("scorep_tea_leaf_optimized_8x12_trace/scout.cubex", 8586.7348),
])
def test_archer2_root_inclusive_time(shared_traces, name, seconds):
    """MANIFEST 4.1: pycubexr root-inclusive time (= scorep-score ALL)."""
    _, profile, _ = load(shared_traces / "archer2-scalasca" / name)
    assert profile.inclusive_totals("time")[profile.roots()].sum() == pytest.approx(seconds, abs=1e-4)


def test_scorep_score_groups(shared_traces):
    """scorep.score of sum.def: MPI 7.24 s; the derived tree adds up to time."""
    _, p, _ = load(shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_sum.def/profile.cubex")
    roots = p.roots()
    assert p.inclusive_totals("mpi")[roots].sum() == pytest.approx(7.24, abs=0.005)
    assert p.inclusive_totals("omp")[roots].sum() > 100


@pytest.mark.parametrize("name", [
    "archer2-scalasca/scorep_bt-mz_C_8x6_sum.def/profile.cubex",
    "cubegui-llm-thesis/benchmark_profiles/tealeaf-profile.cubex",
    "tum-pos-gccg/cojack/scorep-cojack-classical-64/profile.cubex",
    "archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex",
])
def test_derived_time_hierarchy_adds_up(shared_traces, name):
    _, p, _ = load(shared_traces / name)
    time_ = p.matrix("time")
    parts = sum(p.matrix(m) for m in ("comp", "mpi", "omp", "io", "other"))
    np.testing.assert_allclose(parts, time_, rtol=1e-12, atol=1e-9)
    for parent in ("mpi", "omp"):
        kids = [m.id for m in p.metrics if m.parent == parent and m.id in LEAVES]   # a stored one too
        np.testing.assert_allclose(sum(p.matrix(k) for k in kids), p.matrix(parent), atol=1e-9)
    assert p.inclusive_totals("mpi")[p.roots()].sum() > 0


def test_scalasca_wait_states_sit_under_their_part_of_time(shared_traces):
    """As Cube shows a Scalasca report: Late Sender under point-to-point, implicit-barrier waiting
    under OpenMP synchronisation, fork / join management under OpenMP (no longer computation)."""
    _, p, _ = load(shared_traces / "tauonk-btmz/scorep_bt-mz_B_8x4_trace/scout.cubex")
    parent = {m.id: m.parent for m in p.metrics}
    assert parent["mpi_latesender"] == "mpi_p2p" and parent["mpi_latesender_wo"] == "mpi_latesender"
    assert parent["mpi_barrier_wait"] == "mpi_sync" and parent["omp_ibarrier_wait"] == "omp_sync"
    assert parent["omp_management"] == "omp" and parent["omp_fork"] == "omp_management"
    for child, part in (("mpi_latesender", "mpi_p2p"), ("omp_ibarrier_wait", "omp_sync"), ("omp_management", "omp")):
        assert (p.matrix(child) <= p.matrix(part) + 1e-9).all(), child
    total = p.inclusive_totals
    root = p.roots()
    assert total("omp_management")[root].sum() == pytest.approx(18.9039, abs=1e-4)
    assert total("comp")[root].sum() == pytest.approx(833.2476 - 18.9039, abs=1e-3)


def test_remapped_idle_threads_match_the_remapper(shared_traces):
    """summary.cubex is the remapped profile.cubex of the same run (MANIFEST 4.2)."""
    base = shared_traces / "tauonk-btmz/scorep_bt-mz_B_8x4_trace"
    _, raw, _ = load(base / "profile.cubex")
    _, remapped, _ = load(base / "summary.cubex")
    np.testing.assert_array_equal(raw.callpath_parent, remapped.callpath_parent)
    np.testing.assert_allclose(raw.matrix("time"), remapped.matrix("execution"), atol=1e-9)
    expected = remapped.matrix("omp_idle_threads") - remapped.matrix("omp_limited_parallelism")
    np.testing.assert_allclose(raw.matrix("omp_idle_threads"), expected, atol=1e-9)
    np.testing.assert_allclose(raw.matrix("mpi"), remapped.matrix("mpi"), atol=1e-9)
    np.testing.assert_allclose(raw.matrix("omp_sync"), remapped.matrix("omp_synchronization"), atol=1e-9)


def test_remapped_and_scout_files_keep_their_own_metrics(shared_traces):
    base = shared_traces / "tauonk-btmz/scorep_bt-mz_B_8x4_trace"
    _, summary, _ = load(base / "summary.cubex")
    assert not any(m.kind == "derived" for m in summary.metrics)
    assert {m.id: m.parent for m in summary.metrics}["mpi_point2point"] == "mpi_communication"
    _, scout, _ = load(shared_traces / "archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex")
    ids = {m.id for m in scout.metrics}
    assert {"mpi_latesender", "critical_path", "delay_latesender", "omp_management"} <= ids
    assert scout.metric("omp_management").kind == "stored"
    assert scout.inclusive_totals("omp_management")[0] > 0


def test_wrapped_hardware_counters_survive(shared_traces):
    """MANIFEST 4.5 hw_counter: values of 2^64-1 stay large and non-negative."""
    _, p, _ = load(shared_traces / "pycubexr/hw_counter/L2_DCM_negative.cubex")
    huge = 0
    for m in ("PAPI_L1_DCM", "PAPI_L2_DCM"):
        values = p.values[m].value
        assert (values >= 0).all()
        huge += int((values >= 2.0**64 - 1).sum())
    assert huge > 0


def test_cube_4_0_profiles(shared_traces):
    """tum-pos-gccg: the old machine/node/process/thread tree pycubexr rejects."""
    parsed, p, _ = load(shared_traces / "tum-pos-gccg/pent/scorep-pent-metis-64/profile.cubex")
    assert len(parsed.processes) == 64 and p.n_locations == 64
    assert {loc.thread for loc in parsed.locations} == {0}      # <rank> of a 4.0 thread is global
    assert {"PAPI_TOT_CYC", "PAPI_FP_INS", "bytes_sent"} <= set(p.values)
    assert p.inclusive_totals("time")[0] == pytest.approx(252.0996, abs=1e-3)
    assert p.inclusive_totals("mpi_p2p")[0] > 0 and p.inclusive_totals("mpi_collective")[0] > 0


def test_gzip_anchor_and_zcubex(shared_traces):
    """extrap single_parameter: gzip-compressed anchor, ZCUBEX data (MANIFEST 4.4)."""
    _, p, _ = load(shared_traces / "extrap/cubeset/single_parameter/mm.x100y1z1.r1/profile.cubex")
    assert sorted(p.path(c, "->") for c in range(p.n_callpaths)) == ["main", "main->init_mat", "main->mat_mul",
                                                                        "main->zero_mat"]
    assert {"visits", "time", "min_time", "max_time", "PAPI_FP_OPS", "PAPI_L3_TCM", "PAPI_L2_TCM"} <= set(p.values)


def test_simple_threaded_exact_values(shared_traces):
    """extrap simple_threaded (MANIFEST 4.4), f = 3: Extra-P's mean over the locations with a value."""
    _, p, _ = load(shared_traces / "extrap/cubeset/simple_threaded/example.f3/cube-example3.cubex")

    def mean(metric, path):
        values = p.by_location(metric, p.find(path))
        return values[values != 0].mean()

    assert mean("time", "main/foo") == pytest.approx(4.95 * 3)
    assert mean("time", "main/bar") == pytest.approx(4.15 * 3)
    assert mean("time", "main/omp parallel") == pytest.approx(3.3 * 3)
    assert (mean("visits", "main/foo"), mean("visits", "main/omp parallel"), mean("visits", "main/zero")) == (8, 18, 1)


def test_data_types_and_unsupported_ones(shared_traces):
    _, p, warnings = load(shared_traces / "pycubexr/test_only_files/cube-values_example.cubex")
    for dtype in ("INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64", "DOUBLE"):
        assert p.has(dtype), dtype
    assert p.metric("MINDOUBLE").aggregation == "min" and p.metric("MAXDOUBLE").aggregation == "max"
    for dtype in ("HISTOGRAM", "NDOUBLES", "SCALE_FUNC", "COMPLEX", "TAU_ATOMIC"):
        assert any(dtype in w and "not support" in w for w in warnings), dtype


def test_checksum_bug_file_loads_with_warning(shared_traces):
    _, p, warnings = load(shared_traces / "pycubexr/bt-mz_sum.p2.r1/cube4.8_with_checksum_bug.cubex")
    assert any("checksum" in w for w in warnings)
    assert p.inclusive_totals("time")[0] == pytest.approx(400.5324, abs=1e-4)


def test_mini_lpt_720_ranks_loads_fast(shared_traces, tmp_path):
    """Reading the archive into a Profile is the reader's share of opening it."""
    path = shared_traces / "cubegui-llm-thesis/real_world_profiles/mini-lpt-720-profile.cubex"
    start = time.perf_counter()
    parsed, profile, _ = load(path)
    elapsed = time.perf_counter() - start
    assert len(parsed.processes) == 720 and profile.n_callpaths == 72
    assert profile.inclusive_totals("time")[0] == pytest.approx(346561.89, abs=0.01)
    assert elapsed < 2.0, f"{elapsed:.2f} s"
    with popview.open(path, cache_dir=tmp_path) as exp:
        assert {"cycles", "instructions"} <= set(exp.info()["counters"])


def test_against_pycubexr(shared_traces):
    """Exclusive values of every numeric metric equal pycubexr's on files of each writer."""
    pycubexr = pytest.importorskip("pycubexr")
    names = ["pycubexr/blast.p64.r1/profile.cubex", "tauonk-btmz/scorep_bt-mz_B_8x4_trace/summary.cubex",
             "archer2-scalasca/scorep_bt-mz_C_8x6_trace/scout.cubex",
             "cubegui-llm-thesis/benchmark_profiles/tealeaf-profile.cubex"]
    for name in names:
        path = shared_traces / name
        parsed, p, _ = load(path)
        cp_of = callpath_of_cnode(parsed)
        columns = np.argsort(parsed.location_ids)
        with pycubexr.CubexParser(path) as cube:
            for metric in cube.get_metrics():
                if metric.data_type in ("MINDOUBLE", "MAXDOUBLE") or not p.has(metric.name):
                    continue
                try:
                    values = cube.get_metric_values(metric, allow_full_uint64_values=True)
                except (pycubexr.utils.exceptions.MissingMetricError, AssertionError):
                    continue        # no data, or an empty index pycubexr refuses (popview reads it as zeros)
                ours = p.matrix(metric.name)
                for cnode in cube.all_cnodes():
                    theirs = np.asarray(values.cnode_values(cnode, convert_to_exclusive=True), float)
                    np.testing.assert_allclose(ours[cp_of[cnode.id]][columns], theirs, rtol=1e-9, atol=1e-9,
                                               err_msg=f"{name} {metric.name}")


def test_popview_info_command(shared_traces, cache_dir, capsys):
    """`popview info` on a Scalasca experiment directory picks its trace analysis report."""
    from popview.cli import main

    directory = shared_traces / "tauonk-btmz/scorep_bt-mz_B_8x4_trace"
    assert main(["info", str(directory), "--cache-dir", str(cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "format      cube (Cube 4.3.2)" in out
    assert "8 processes x 4 threads" in out and "32 thread" in out
    assert "metrics     93: time, visits, mpi_finalize_wait" in out
