"""Where the trees get their numbers: the experiment's profile, cached per experiment."""
from __future__ import annotations

import weakref

import numpy as np

from popview.failures import one_line
from popview.gui.trees.values import ProfileValues

STORED_PROFILES = ("profile", "cumulative/profile")   # cache groups a converter may write

_values: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_last_map: list = []           # [ProfileValues, reference ProfileValues, mapping]


def profile_values(exp) -> ProfileValues | None:
    """The ProfileValues of an experiment (None if it has no profile; see unavailable_reason)."""
    if exp is None:
        return None
    hit = _values.get(exp)
    if hit is None:
        try:
            profile = load_profile(exp)
        except Exception:  # noqa: BLE001 - the reason is shown by unavailable_reason
            return None
        if profile is None:
            return None
        hit = _values[exp] = ProfileValues(profile)
    return hit


def load_profile(exp):
    """exp.profile(), or the profile stored in its cache by the converter."""
    getter = getattr(exp, "profile", None)
    if callable(getter):
        return getter()
    reader = getattr(exp, "reader", None)
    if reader is not None:
        for name in STORED_PROFILES:
            if (profile := reader.profile(name)) is not None:
                return profile
    return None


def unavailable_reason(exp) -> str:
    """Why an experiment has no profile to show."""
    if exp is None:
        return "No experiment open: drop a trace or a profile here."
    try:
        profile = load_profile(exp)
    except Exception as exc:  # noqa: BLE001 - shown to the user
        return f"{exp.name}: no profile: {one_line(exc)}"
    if profile is None:
        return f"{exp.name}: the cache holds no profile of this {exp.format} experiment."
    return f"{exp.name}: the experiment has no profile."


def callpath_keys(pv: ProfileValues, root_by_position: bool = False) -> list[tuple]:
    """A hashable name path per call path (pre-order: parents come first).
    With root_by_position, roots are keyed by their rank among the roots, not
    their name (two builds of one program often differ only in its name)."""
    p = pv.profile
    names = [r.name for r in p.regions]
    keys: list[tuple] = [()] * p.n_callpaths
    n_roots = 0
    for cp, (parent, region) in enumerate(zip(p.callpath_parent.tolist(), p.callpath_region.tolist())):
        if parent >= 0:
            keys[cp] = keys[parent] + (names[region],)
        elif root_by_position:
            keys[cp] = (n_roots,)
            n_roots += 1
        else:
            keys[cp] = (names[region],)
    return keys


def callpath_map(pv: ProfileValues, ref: ProfileValues) -> np.ndarray:
    """For each call path of `pv`, the same path in `ref` (-1 when absent).
    The last pair is kept (with the objects themselves, so a reused id cannot match)."""
    if _last_map and _last_map[0] is pv and _last_map[1] is ref:
        return _last_map[2]
    mapping = _map_by_keys(pv, ref, False)
    same_roots = len(pv.profile.roots()) == len(ref.profile.roots())
    if same_roots and len(mapping) and (mapping >= 0).mean() < 0.5:
        mapping = _map_by_keys(pv, ref, True)
    _last_map[:] = [pv, ref, mapping]
    return mapping


def _map_by_keys(pv: ProfileValues, ref: ProfileValues, root_by_position: bool) -> np.ndarray:
    where = {k: i for i, k in enumerate(callpath_keys(ref, root_by_position))}
    return np.array([where.get(k, -1) for k in callpath_keys(pv, root_by_position)], np.int64)
