"""A Profile inside the cache: one HDF5 group, the CSR columns of each
metric in a subgroup and the metric definitions as JSON.

    profile/
        attrs: n_locations
        callpath_parent, callpath_region        int32
        metrics_json, regions_json              uint8 (JSON lists of MetricDef, Region)
        values/<index>/row_offsets, loc, value   (index = position in metrics_json)
"""
from __future__ import annotations

import json
from dataclasses import asdict

import h5py
import numpy as np

from popview.cache.writer import compression
from popview.model.definitions import Region
from popview.model.profile import MetricDef, MetricValues, Profile


def _dataset(group: h5py.Group, name: str, data: np.ndarray) -> None:
    data = np.asarray(data)
    extra = compression() if data.size > 1024 else {}
    group.create_dataset(name, data=data, chunks=True if extra else None, **extra)


def _json(group: h5py.Group, name: str, obj) -> None:
    payload = json.dumps(obj, separators=(",", ":")).encode()
    _dataset(group, name, np.frombuffer(payload, dtype=np.uint8))


def write_profile(group: h5py.Group, profile: Profile) -> None:
    """Write `profile` into an empty group."""
    group.attrs["n_locations"] = profile.n_locations
    _dataset(group, "callpath_parent", profile.callpath_parent.astype(np.int32))
    _dataset(group, "callpath_region", profile.callpath_region.astype(np.int32))
    _json(group, "metrics_json", [asdict(m) for m in profile.metrics])
    _json(group, "regions_json", [asdict(r) for r in profile.regions])
    values = group.create_group("values")
    for i, m in enumerate(profile.metrics):
        mv = profile.values.get(m.id)
        if mv is None:
            continue
        g = values.create_group(str(i))
        _dataset(g, "row_offsets", mv.row_offsets.astype(np.int64))
        _dataset(g, "loc", mv.loc.astype(np.int32))
        _dataset(g, "value", mv.value.astype(np.float64))


def read_profile(group: h5py.Group) -> Profile:
    """The Profile stored in `group`."""
    metrics = [MetricDef(**d) for d in json.loads(group["metrics_json"][:].tobytes())]
    regions = [Region(**d) for d in json.loads(group["regions_json"][:].tobytes())]
    profile = Profile(regions=regions, callpath_parent=group["callpath_parent"][:],
                      callpath_region=group["callpath_region"][:], n_locations=int(group.attrs["n_locations"]),
                      metrics=metrics)
    values = group["values"]
    for i, m in enumerate(metrics):
        if str(i) in values:
            g = values[str(i)]
            profile.values[m.id] = MetricValues(g["row_offsets"][:], g["loc"][:], g["value"][:])
    return profile


def metric_ids(group: h5py.Group) -> list[str]:
    """Ids of the stored metrics, without reading any values."""
    return [d["id"] for d in json.loads(group["metrics_json"][:].tobytes())]
