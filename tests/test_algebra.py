"""Performance algebra on profiles, closed form: diff with itself is zero, the mean
of copies is the copy, merge of disjoint counters is the whole run, misaligned
call trees give the union, and runs of different shapes are refused."""
from __future__ import annotations

import numpy as np
import pytest

from popview.analysis import algebra
from popview.model.definitions import Region
from popview.model.profile import MetricDef, MetricValues, Profile

TIME = MetricDef("time", "Time", "sec")
INS = MetricDef("PAPI_TOT_INS", "Instructions", "occ")
CYC = MetricDef("PAPI_TOT_CYC", "Cycles", "occ")
MAXT = MetricDef("max_time", "Maximum time", "sec", aggregation="max")


def profile(paths: list[str], values: dict[str, np.ndarray], n_loc: int = 3, metrics=(TIME, INS, CYC)) -> Profile:
    """A profile whose call paths are given in pre-order as 'main/solve' strings."""
    names = sorted({part for p in paths for part in p.split("/")})
    regions = [Region(n) for n in names]
    parent, region, index = [], [], {}
    for p in paths:
        head, _, last = p.rpartition("/")
        index[p] = len(parent)
        parent.append(index[head] if head else -1)
        region.append(names.index(last))
    prof = Profile(regions=regions, callpath_parent=np.array(parent), callpath_region=np.array(region),
                   n_locations=n_loc, metrics=[m for m in metrics if m.id in values])
    prof.values = {k: MetricValues.from_dense(v) for k, v in values.items()}
    return prof


PATHS = ["main", "main/init", "main/solve", "main/solve/MPI_Allreduce"]
rng = np.random.default_rng(7)
DATA = {m: rng.integers(1, 100, (4, 3)).astype(float) for m in ("time", "PAPI_TOT_INS", "PAPI_TOT_CYC")}


def test_difference_with_itself_is_zero_everywhere():
    p = profile(PATHS, DATA)
    d = algebra.difference(p, p)
    for m in DATA:
        assert not d.profile.values[m].value.size
        assert np.all(d.profile.inclusive_totals(m) == 0)
    assert d.presence.all()


def test_mean_of_copies_is_the_copy_and_min_max_too():
    p = profile(PATHS, DATA)
    for result in (algebra.mean([p, p, p]), algebra.minimum([p, p]), algebra.maximum([p, p])):
        for m in DATA:
            np.testing.assert_allclose(result.profile.matrix(m), p.matrix(m))


def test_mean_min_max_of_two_runs():
    a, b = profile(PATHS, {"time": DATA["time"]}), profile(PATHS, {"time": 3 * DATA["time"]})
    np.testing.assert_allclose(algebra.mean([a, b]).profile.matrix("time"), 2 * DATA["time"])
    np.testing.assert_allclose(algebra.minimum([a, b]).profile.matrix("time"), DATA["time"])
    np.testing.assert_allclose(algebra.maximum([a, b]).profile.matrix("time"), 3 * DATA["time"])
    np.testing.assert_allclose(algebra.difference(b, a).profile.matrix("time"), 2 * DATA["time"])


def test_merge_of_disjoint_counters_is_the_whole_run():
    whole = profile(PATHS, DATA)
    ins_run = profile(PATHS, {"time": DATA["time"], "PAPI_TOT_INS": DATA["PAPI_TOT_INS"]})
    cyc_run = profile(PATHS, {"time": DATA["time"] + 1, "PAPI_TOT_CYC": DATA["PAPI_TOT_CYC"]})
    merged = algebra.merge([ins_run, cyc_run]).profile
    assert sorted(merged.values) == sorted(DATA)
    for m in DATA:
        np.testing.assert_allclose(merged.matrix(m), whole.matrix(m))       # time from the first run


def test_misaligned_trees_give_the_union_with_presence():
    a = profile(["main", "main/init", "main/solve"], {"time": np.array([[1., 0, 0], [2, 2, 2], [5, 5, 5]])})
    b = profile(["main", "main/solve", "main/solve/MPI_Wait", "main/output"],
                {"time": np.array([[1., 0, 0], [4, 4, 4], [1, 1, 1], [3, 0, 0]])})
    d = algebra.difference(b, a)
    paths = [d.profile.path(c) for c in range(d.profile.n_callpaths)]
    # the first run's order first, then what only the others have
    assert paths == ["main", "main/solve", "main/solve/MPI_Wait", "main/output", "main/init"]
    assert [paths[c] for c in d.only_in(0)] == ["main/solve/MPI_Wait", "main/output"]
    assert [paths[c] for c in d.only_in(1)] == ["main/init"]
    np.testing.assert_allclose(d.profile.exclusive_totals("time"), [0, -3, 3, 3, -6])
    np.testing.assert_allclose(d.profile.inclusive_totals("time"), [-3, 0, 3, 3, -6])


def test_different_shapes_are_refused_unless_collapsed():
    a = profile(PATHS, {"time": DATA["time"]}, n_loc=3)
    b = profile(PATHS, {"time": np.ones((4, 2))}, n_loc=2)
    with pytest.raises(algebra.AlgebraError, match=r"different numbers of locations \(3, 2\).*collapse"):
        algebra.difference(a, b)
    d = algebra.difference(a, b, collapse="run")
    np.testing.assert_allclose(d.profile.matrix("time")[:, 0], DATA["time"].sum(axis=1) - 2)
    procs = algebra.difference(a, b, collapse="process", loc_process=[np.array([0, 0, 1]), np.array([0, 1])])
    np.testing.assert_allclose(procs.profile.matrix("time"),
                               np.c_[DATA["time"][:, :2].sum(axis=1) - 1, DATA["time"][:, 2] - 1])


def test_extremal_metrics_are_left_out_with_a_note():
    a = profile(PATHS, {"time": DATA["time"], "max_time": DATA["time"]}, metrics=(TIME, MAXT))
    d = algebra.difference(a, a)
    assert "max_time" not in d.profile.values
    assert any("max_time" in n and "min / max" in n for n in d.notes)


def test_merging_sorted_runs_equals_sorting_them_all():
    """The one-pass merge (runs whose keys come sorted) and the sort of every entry agree,
    duplicates inside a run and exact zeros included; unsorted runs take the sort."""
    from popview.analysis.algebra import _coalesce, _coalesce_runs

    rng = np.random.default_rng(7)
    out = Profile(regions=[Region("r")] * 50, callpath_parent=np.r_[-1, np.zeros(49, np.int64)],
                  callpath_region=np.zeros(50, np.int64), n_locations=30)
    runs = [np.sort(rng.integers(0, 50 * 30, 400)) for _ in range(3)]
    values = [rng.integers(-3, 4, 400).astype(float) for _ in range(3)]      # zeros and cancellations
    for keys in (runs, [rng.permutation(k) for k in runs]):
        merged = _coalesce_runs(out, keys, values)
        everything = np.concatenate(keys)
        sorted_all = _coalesce(out, everything // 30, everything % 30, np.concatenate(values))
        assert np.array_equal(merged.row_offsets, sorted_all.row_offsets)
        assert np.array_equal(merged.loc, sorted_all.loc)
        assert np.allclose(merged.value, sorted_all.value, rtol=0, atol=1e-12)
        assert not np.any(merged.value == 0)
