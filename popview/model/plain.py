"""dataclasses.asdict, faster: the same result (the same keys in the same order, the same
containers, a deep copy of anything but plain values), without asdict's copy.deepcopy of
every string and number. Writing a conversion's definitions and profile (a thousand
small dataclasses) cost 0.05 s of CPU in asdict, 7 % of a 21.6 k-event archive's."""
from __future__ import annotations

import copy
from dataclasses import fields, is_dataclass

_ATOMS = (str, int, float, bool, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}


def as_plain(obj):
    """dataclasses.asdict(obj) for a dataclass instance; the same conversion for any value."""
    kind = type(obj)
    if kind in _ATOMS:
        return obj
    names = _FIELDS.get(kind)
    if names is None and is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS[kind] = tuple(f.name for f in fields(obj))
    if names is not None:
        return {name: as_plain(getattr(obj, name)) for name in names}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):       # a named tuple
        return kind(*[as_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return kind(as_plain(v) for v in obj)
    if isinstance(obj, dict):
        return kind((as_plain(k), as_plain(v)) for k, v in obj.items())
    return copy.deepcopy(obj)
