"""The Profile's storage in the cache: a round trip keeps every value and definition."""
from __future__ import annotations

import h5py
import numpy as np

from popview.cache.profile_store import metric_ids, read_profile, write_profile
from popview.model.definitions import Region
from popview.model.profile import MetricDef, MetricValues, Profile


def sample_profile() -> Profile:
    regions = [Region("main"), Region("MPI_Send", paradigm="mpi", role="point2point", file="a.c", line=3)]
    p = Profile(regions=regions, callpath_parent=[-1, 0, 0], callpath_region=[0, 1, 1], n_locations=3)
    p.metrics = [MetricDef("time", "Time", unit="sec", description="all time"),
                 MetricDef("derived_only", "Not evaluated", parent="time"),
                 MetricDef("max_time", "Max", aggregation="max", kind="stored"),
                 MetricDef("mpi", "MPI", parent="time", kind="derived")]
    p.values["time"] = MetricValues.from_dense(np.array([[1.0, 0, 2], [0, 0, 0], [0.5, 1e300, 2.0**64]]))
    p.values["max_time"] = MetricValues.from_dense(np.zeros((3, 3)))
    p.values["mpi"] = MetricValues.from_dense(np.array([[0, 0, 0], [0, 0, 0], [0.5, 0, 0]]))
    return p


def test_round_trip(tmp_path):
    original = sample_profile()
    with h5py.File(tmp_path / "c.h5", "w") as f:
        write_profile(f.create_group("profile"), original)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert metric_ids(f["profile"]) == ["time", "derived_only", "max_time", "mpi"]
        back = read_profile(f["profile"])
    assert back.metrics == original.metrics and back.regions == original.regions
    np.testing.assert_array_equal(back.callpath_parent, original.callpath_parent)
    assert set(back.values) == {"time", "max_time", "mpi"} and not back.has("derived_only")
    for m in back.values:
        np.testing.assert_array_equal(back.matrix(m), original.matrix(m))
    assert back.inclusive_totals("time")[0] == original.inclusive_totals("time")[0]


def test_profile_without_values(tmp_path):
    p = Profile(regions=[Region("main")], callpath_parent=[-1], callpath_region=[0], n_locations=1,
                metrics=[MetricDef("x", "X")])
    with h5py.File(tmp_path / "c.h5", "w") as f:
        write_profile(f.create_group("profile"), p)
    with h5py.File(tmp_path / "c.h5", "r") as f:
        back = read_profile(f["profile"])
    assert back.values == {} and [m.id for m in back.metrics] == ["x"]
