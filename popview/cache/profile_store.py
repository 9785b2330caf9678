"""A Profile inside the cache: one HDF5 group holding the CSR columns of
every metric concatenated (a handful of datasets whatever the number of
metrics, so writing and opening stay fast) and the definitions as JSON.

    profile/
        attrs: n_locations
        callpath_parent, callpath_region   int32 (n_callpaths)
        metrics_json, regions_json         uint8 (JSON lists of MetricDef, Region)
        stored                             int32 (k): positions in metrics_json of the metrics with values
        row_offsets                        int64 (k, n_callpaths + 1), each row relative to its metric's entries
        entry_offsets                      int64 (k + 1): where each metric's entries start in loc / value
        loc, value                         int32 / float64 (all entries)
"""
from __future__ import annotations

import json

import h5py
import numpy as np

from popview.cache.integrity import checked
from popview.cache.writer import compression
from popview.model.definitions import Region
from popview.model.plain import as_plain
from popview.model.profile import MetricDef, MetricValues, Profile


def _dataset(group: h5py.Group, name: str, data) -> None:
    data = np.asarray(data)
    extra = compression() if data.size > 1024 else checked()
    group.create_dataset(name, data=data, chunks=True, **extra)


def _json(group: h5py.Group, name: str, obj) -> None:
    payload = json.dumps(obj, separators=(",", ":")).encode()
    _dataset(group, name, np.frombuffer(payload, dtype=np.uint8))


def _load_json(group: h5py.Group, name: str):
    return json.loads(group[name][:].tobytes())


def write_profile(group: h5py.Group, profile: Profile) -> None:
    """Write `profile` into an empty group."""
    group.attrs["n_locations"] = profile.n_locations
    _dataset(group, "callpath_parent", profile.callpath_parent.astype(np.int32))
    _dataset(group, "callpath_region", profile.callpath_region.astype(np.int32))
    _json(group, "metrics_json", [as_plain(m) for m in profile.metrics])
    _json(group, "regions_json", [as_plain(r) for r in profile.regions])
    stored = [i for i, m in enumerate(profile.metrics) if m.id in profile.values]
    columns = [profile.values[profile.metrics[i].id] for i in stored]
    sizes = [len(mv.loc) for mv in columns]
    entry_offsets = np.zeros(len(columns) + 1, np.int64)
    np.cumsum(sizes, out=entry_offsets[1:])
    _dataset(group, "stored", np.array(stored, np.int32))
    _dataset(group, "entry_offsets", entry_offsets)
    _dataset(group, "row_offsets", np.array([mv.row_offsets for mv in columns], np.int64).reshape(
        len(columns), profile.n_callpaths + 1))
    _dataset(group, "loc", np.concatenate([mv.loc for mv in columns] or [np.zeros(0)]).astype(np.int32))
    _dataset(group, "value", np.concatenate([mv.value for mv in columns] or [np.zeros(0)]).astype(np.float64))


def read_profile(group: h5py.Group) -> Profile:
    """The Profile stored in `group`."""
    metrics = [MetricDef(**d) for d in _load_json(group, "metrics_json")]
    regions = [Region(**d) for d in _load_json(group, "regions_json")]
    profile = Profile(regions=regions, callpath_parent=group["callpath_parent"][:],
                      callpath_region=group["callpath_region"][:], n_locations=int(group.attrs["n_locations"]),
                      metrics=metrics)
    entry_offsets, row_offsets = group["entry_offsets"][:], group["row_offsets"][:]
    loc, value = group["loc"][:], group["value"][:]
    for k, i in enumerate(group["stored"][:].tolist()):
        a, b = int(entry_offsets[k]), int(entry_offsets[k + 1])
        profile.values[metrics[i].id] = MetricValues(row_offsets[k], loc[a:b], value[a:b])
    return profile


def metric_ids(group: h5py.Group) -> list[str]:
    """Ids of the stored metrics, without reading any values."""
    return [d["id"] for d in _load_json(group, "metrics_json")]
